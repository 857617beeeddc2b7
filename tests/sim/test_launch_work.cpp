#include <gtest/gtest.h>

#include "sim/launch_work.h"

namespace mimic::sim {
namespace {

using exec::TraceOp;

exec::WorkgroupTrace traceOf(uint64_t issueCycles, int dmas) {
  exec::WorkgroupTrace trace{{TraceOp::Kind::Issue, isa::Pipe::Scalar, 0, issueCycles}};
  for (int t = 1; t <= dmas; ++t)
    trace.push_back({TraceOp::Kind::DmaLoad, isa::Pipe::Dma, static_cast<uint32_t>(t), 4096});
  trace.push_back({TraceOp::Kind::Barrier, isa::Pipe::Scalar, 0, 0});
  return trace;
}

std::vector<exec::DmaRegion> regionsOf(uint64_t address, int64_t count, int dmas) {
  std::vector<exec::DmaRegion> regions(dmas);
  for (int i = 0; i < dmas; ++i) {
    regions[i].address = address + 4096 * i;
    regions[i].descriptor.count[0] = count;
    regions[i].descriptor.hbmStride[0] = 4;
  }
  return regions;
}

// What a workgroup added is what the timing model reads back, whichever traces and descriptor
// lists it shares with others.
TEST(LaunchWorkTest, GivesBackEachWorkgroupsTraceAndRegions) {
  // A grid's edge workgroups differ from the rest, and not only from their neighbours.
  const int dmas[] = {2, 2, 1, 2, 1};
  std::vector<exec::WorkgroupTrace> traces;
  std::vector<std::vector<exec::DmaRegion>> regions;
  for (int w = 0; w < 5; ++w) {
    traces.push_back(traceOf(dmas[w] == 2 ? 10 : 7, dmas[w]));
    regions.push_back(regionsOf(0x10000 * (w + 1), dmas[w] == 2 ? 1024 : 16, dmas[w]));
  }
  LaunchWork work;
  for (int w = 0; w < 5; ++w) work.add(traces[w], regions[w]);
  work.finish();

  ASSERT_EQ(work.size(), 5u);
  for (size_t w = 0; w < 5; ++w) {
    EXPECT_EQ(work.trace(w), traces[w]) << "workgroup " << w;
    for (uint32_t token = 1; token <= regions[w].size(); ++token) {
      EXPECT_EQ(work.region(w, token), regions[w][token - 1]) << "workgroup " << w;
    }
  }
}

TEST(LaunchWorkTest, StoresEachDistinctTraceOnce) {
  LaunchWork work;
  const exec::WorkgroupTrace wide = traceOf(10, 1), edge = traceOf(7, 1);
  for (const exec::WorkgroupTrace* trace : {&wide, &wide, &edge, &wide, &edge}) {
    work.add(*trace, regionsOf(0, 1024, 1));
  }
  work.finish();
  EXPECT_EQ(&work.trace(0), &work.trace(1));
  EXPECT_EQ(&work.trace(0), &work.trace(3));
  EXPECT_EQ(&work.trace(2), &work.trace(4));
  EXPECT_NE(&work.trace(0), &work.trace(2));
}

}  // namespace
}  // namespace mimic::sim
