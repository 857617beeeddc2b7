// Split reductions give identical bits and simulated times whatever the number of host threads.
// Each run is a child process of a test that never initialises mimic itself: a child forked
// from a process with a running simulation could not start its own.
#include "reduce_test.h"

namespace {

using namespace reducetest;

// Runs split reductions of float data (sum, dot, 2-norm, mean, argmax, a sum of few rows) on
// their own queue and returns the results' bits and the simulated end time.
std::vector<uint64_t> splitProgram() {
  std::vector<uint64_t> words;
  if (mimicInitWithPreset(0, "tiny", kSplittingTiny) != MIMIC_SUCCESS) return words;
  constexpr int64_t n = 1500000;
  std::mt19937 rng(16);
  Strided x(DType::F32, {n}), y(DType::F32, {n});
  fillRandom(x, rng, -1, 1);
  fillRandom(y, rng, -1, 1);
  x.upload();
  y.upload();
  Strided results(DType::F32, {10});  // four f32, an i64 at word 4, three f32 at word 6
  mimicQueue queue = nullptr;
  if (mimicQueueCreate(0, 0, MIMIC_QUEUE_PRIORITY_LOW, &queue) != MIMIC_SUCCESS) return words;
  DeviceWorkspace workspace;
  auto one = [&](int i, DType t = DType::F32) {
    mimic::ops::TensorView v{static_cast<uint8_t*>(results.device) + 4 * i, t, {1}, {1}};
    return v;
  };
  const mimic::ops::LaunchContext ctx{0, queue};
  using mimic::ops::ReduceFusion;
  mimic::ops::reduce(ctx, one(0), x.view(), {0}, ReduceKind::Sum, workspace.get());
  mimic::ops::reduce(ctx, one(1), x.view(), {0}, ReduceKind::Sum, workspace.get(),
                     ReduceFusion{ReduceMap::Mul, y.view()});
  mimic::ops::reduce(ctx, one(2), x.view(), {0}, ReduceKind::Sum, workspace.get(),
                     ReduceFusion{ReduceMap::Square, {}, 1, true});
  mimic::ops::reduce(ctx, one(3), x.view(), {0}, ReduceKind::Sum, workspace.get(),
                     ReduceFusion{ReduceMap::Identity, {}, static_cast<double>(n)});
  mimic::ops::reduce(ctx, one(4, DType::I64), x.view(), {0}, ReduceKind::ArgMax, workspace.get());
  mimic::ops::TensorView rows{x.device, DType::F32, {3, n / 3}, {n / 3, 1}};
  mimic::ops::TensorView rowSums{
      static_cast<uint8_t*>(results.device) + 4 * 6, DType::F32, {3, 1}, {1, 1}};
  mimic::ops::reduce(ctx, rowSums, rows, {1}, ReduceKind::Sum, workspace.get());
  if (mimicQueueSynchronize(queue) != MIMIC_SUCCESS) return words;
  std::vector<uint32_t> bits(9);
  mimicMemcpy(bits.data(), results.device, bits.size() * 4);
  words.assign(bits.begin(), bits.end());
  uint64_t now = 0;
  mimicGetSimTime(&now);
  words.push_back(now);
  words.push_back(workspace.allocations());
  return words;
}

TEST(ReduceSplitDeterminismTest, OneHostThreadAndTheDefaultGiveIdenticalBitsAndTimes) {
  unsetenv("MIMIC_HOST_THREADS");
  const std::vector<uint64_t> one = runInChild(splitProgram, "MIMIC_HOST_THREADS", "1");
  ASSERT_EQ(one.size(), 11u);
  EXPECT_EQ(one.back(), 6u);  // every reduction was split
  EXPECT_EQ(runInChild(splitProgram), one);
  EXPECT_EQ(runInChild(splitProgram, "MIMIC_HOST_THREADS", "1"), one);
}

}  // namespace
