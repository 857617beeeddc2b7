// Reductions with few outputs split over the compute units (torch_backend/ops/reduce_split.h):
// sizes around the split's boundaries for every kind and dtype, extremes, ties and NaN in
// different parts, few outputs around the compute-unit count, loop dims, broadcast and negative
// strides and 16M elements.
#include "reduce_test.h"
#include "torch_backend/ops/kernel_cache.h"
#include "torch_backend/ops/reduce_split.h"

namespace {

using namespace reducetest;
namespace detail = mimic::ops::detail;

// The planner's view of a contiguous full reduction of n elements: the reduced chunk of its
// single pass, and the parts a split would cut it into (1: no split).
struct FullPlan {
  int64_t chunk, parts;
};

FullPlan fullPlan(int64_t n, DType t, ReduceKind kind) {
  detail::ReduceShape s;
  s.kind = kind;
  s.in = t;
  s.out = outTypeFor(kind, t);
  const bool accumulates = kind == ReduceKind::Sum || kind == ReduceKind::Prod;
  s.acc = !accumulates ? t : mimic::isa::isFloat(t) ? DType::F32 : DType::I64;
  const detail::Dims red{{n, 1, 0, 0}};
  return {detail::makePlan({}, red, s, 0, true).rc, detail::splitPlan({}, red, s, 0).parts};
}

// The smallest full reduction that is split.
int64_t splitThreshold(DType t, ReduceKind kind) {
  int64_t lo = 1, hi = int64_t{1} << 24;  // parts(lo) == 1 < parts(hi)
  while (hi - lo > 1) {
    const int64_t mid = (lo + hi) / 2;
    (fullPlan(mid, t, kind).parts > 1 ? hi : lo) = mid;
  }
  return hi;
}

class ReduceSplitTest : public SplittingTest {};

TEST_F(ReduceSplitTest, FullReductionsAroundTheBoundariesOfEveryKindAndDtype) {
  std::mt19937 rng(11);
  const int64_t units = mimic::ops::computeUnits(0);
  for (DType t : kAllTypes) {
    for (ReduceKind kind : kAllKinds) {
      const int64_t chunk = fullPlan(int64_t{1} << 22, t, kind).chunk;
      const int64_t threshold = splitThreshold(t, kind);
      for (int64_t n : {int64_t{1}, units - 1, units, units + 1, chunk - 1, chunk, chunk + 1,
                        2 * chunk + 1, threshold - 1, threshold, threshold + 1}) {
        SCOPED_TRACE(std::string(mimic::isa::dtypeName(t)) + " " + kindName(kind) + " n " +
                     std::to_string(n));
        Strided in(t, {n});
        fillExact(in, kind, rng);
        DeviceWorkspace workspace;
        expectReduce(in, {0}, kind, outTypeFor(kind, t), exactOptions(&workspace));
        EXPECT_EQ(workspace.allocations(), n >= threshold ? 1u : 0u);
      }
    }
  }
}

TEST_F(ReduceSplitTest, ExtremesTiesAndNaNInDifferentPartsGiveTheFirstIndex) {
  std::mt19937 rng(12);
  for (DType t : {DType::F32, DType::BF16, DType::I32}) {
    const int64_t n = 8 * splitThreshold(t, ReduceKind::ArgMax);
    const int64_t parts = fullPlan(n, t, ReduceKind::ArgMax).parts;
    ASSERT_GE(parts, 4);
    auto inPart = [&](int64_t part) { return n * part / parts + n / parts / 3; };
    Strided in(t, {n});
    fillExact(in, ReduceKind::Sum, rng);
    for (int64_t part : {parts - 1, int64_t{1}}) {  // equal extremes, the later part first
      in.at(inPart(part)) = 9;
      in.at(inPart(part) + 1) = -9;
    }
    for (ReduceKind kind : kAllKinds) {
      if (kind == ReduceKind::Prod) continue;
      SCOPED_TRACE(std::string(mimic::isa::dtypeName(t)) + " " + kindName(kind));
      expectReduce(in, {0}, kind, outTypeFor(kind, t), exactOptions());
    }
    if (!mimic::isa::isFloat(t)) continue;
    in.at(inPart(parts - 2)) = kNaN;
    in.at(inPart(2) + 7) = kNaN;
    for (ReduceKind kind :
         {ReduceKind::Max, ReduceKind::Min, ReduceKind::ArgMax, ReduceKind::ArgMin}) {
      SCOPED_TRACE(std::string("NaN ") + mimic::isa::dtypeName(t) + " " + kindName(kind));
      expectReduce(in, {0}, kind, outTypeFor(kind, t), exactOptions());
    }
  }
}

TEST_F(ReduceSplitTest, FewOutputsAroundTheComputeUnitCount) {
  // Rows: one workgroup per row, so fewer rows than units are split and more are not. Columns:
  // one workgroup holds every column, so all are split.
  std::mt19937 rng(13);
  const int64_t units = mimic::ops::computeUnits(0);
  const int64_t length = 200000;
  for (int64_t outputs : {units - 1, units, units + 1}) {
    for (ReduceKind kind : kAllKinds) {
      for (DType t : {DType::F32, DType::I32}) {
        SCOPED_TRACE(std::string(mimic::isa::dtypeName(t)) + " " + kindName(kind) + " outputs " +
                     std::to_string(outputs));
        Strided rows(t, {outputs, length});
        fillExact(rows, kind, rng);
        DeviceWorkspace rowsWorkspace;
        expectReduce(rows, {1}, kind, outTypeFor(kind, t), exactOptions(&rowsWorkspace));
        EXPECT_EQ(rowsWorkspace.allocations(), outputs < units ? 1u : 0u);
        if (isArg(kind)) continue;  // arg kinds use the rows layout
        Strided columns(t, {length, outputs});
        fillExact(columns, kind, rng);
        DeviceWorkspace columnsWorkspace;
        expectReduce(columns, {0}, kind, outTypeFor(kind, t), exactOptions(&columnsWorkspace));
        EXPECT_EQ(columnsWorkspace.allocations(), 1u);
      }
    }
  }
}

TEST_F(ReduceSplitTest, LoopDimsBroadcastNegativeAndTransposedInputs) {
  std::mt19937 rng(14);
  const int64_t n = 4 * splitThreshold(DType::F32, ReduceKind::Sum);
  for (ReduceKind kind : kAllKinds) {
    SCOPED_TRACE(kindName(kind));
    const DType out = outTypeFor(kind, DType::F32);
    // Padded strides keep the dims apart: the outer reduced dim is a loop of the tile sequence,
    // which the parts cut across.
    Strided looped(DType::F32, {3, 2, n / 2}, {2 * (n / 2 + 1) + 1, n / 2 + 1, 1});
    fillExact(looped, kind, rng);
    DeviceWorkspace workspace;
    expectReduce(looped, {0, 2}, kind, out, exactOptions(&workspace));
    EXPECT_EQ(workspace.allocations(), 1u);
    Strided broadcast(DType::F32, {4, n / 2}, {0, 1});
    fillExact(broadcast, kind, rng);
    expectReduce(broadcast, {0, 1}, kind, out, exactOptions());
    Strided negative(DType::F32, {n + 5}, {-1});
    fillExact(negative, kind, rng);
    expectReduce(negative, {0}, kind, out, exactOptions());
    Strided transposed(DType::F32, {700, n / 600}, {1, 700});
    fillExact(transposed, kind, rng);
    expectReduce(transposed, {0, 1}, kind, out, exactOptions());
    expectReduce(transposed, {1}, kind, out, exactOptions());
  }
}

TEST_F(ReduceSplitTest, SixteenMillionElements) {
  // f16 and u8 keep 16M elements within the tiny preset's 64 MiB; zeros and ones keep every
  // sum below 2^24, so exact.
  constexpr int64_t n = int64_t{1} << 24;
  std::mt19937 rng(15);
  {
    Strided halfs(DType::F16, {n});
    fillExact(halfs, ReduceKind::Sum, rng, 0, 1);
    halfs.at(n - 100) = 2;  // the first maximum, in the last part
    halfs.at(n - 10) = 2;
    DeviceWorkspace workspace;
    expectReduce(halfs, {0}, ReduceKind::Sum, DType::F32, exactOptions(&workspace));
    expectReduce(halfs, {0}, ReduceKind::ArgMax, DType::I64, exactOptions(&workspace));
    EXPECT_EQ(workspace.allocations(), 2u);
  }
  Strided bytes(DType::U8, {n}), others(DType::U8, {n});
  fillExact(bytes, ReduceKind::Sum, rng, 0, 255);
  fillExact(others, ReduceKind::Sum, rng, 0, 255);
  Options dot = exactOptions();
  dot.map = ReduceMap::Mul;
  dot.other = &others;
  expectReduce(bytes, {0}, ReduceKind::Sum, DType::I64, dot);
}

}  // namespace
