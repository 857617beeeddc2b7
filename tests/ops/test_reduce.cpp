// reduce (torch_backend/ops/reduce.h) against a host reference: every kind and dtype, reduced
// dims leading, middle, trailing and non-adjacent, strided / transposed / broadcast / negative /
// sliding-window inputs, strided outputs, long rows in several tiles, NaN and ties, empty inputs
// and the error paths.
#include "reduce_test.h"

namespace {

using namespace reducetest;

class ReduceTest : public OpsTest {};

TEST_F(ReduceTest, EveryKindAndDtypeOverTrailingLeadingAndMiddleDims) {
  std::mt19937 rng(1);
  const std::vector<std::vector<int>> dimSets = {{2}, {0}, {1}, {0, 2}, {0, 1, 2}};
  for (DType t : kAllTypes) {
    for (ReduceKind kind : kAllKinds) {
      for (const auto& dims : dimSets) {
        SCOPED_TRACE(std::string(mimic::isa::dtypeName(t)) + " kind " +
                     std::to_string(static_cast<int>(kind)) + " dims " +
                     std::to_string(dims.size()) + "/" + std::to_string(dims[0]));
        Strided in(t, {5, 7, 13});
        fillFor(in, kind, rng);
        expectReduce(in, dims, kind, outTypeFor(kind, t));
      }
    }
  }
}

TEST_F(ReduceTest, LongRowsSpanSeveralTiles) {
  // 64 KiB of scratchpad holds two tiles of about 7.6K f32 each: these rows take several tiles.
  std::mt19937 rng(2);
  for (ReduceKind kind : kAllKinds) {
    Strided in(DType::F32, {3, 40001});
    fillFor(in, kind, rng);
    expectReduce(in, {1}, kind, outTypeFor(kind, DType::F32));
  }
  Strided half(DType::F16, {100003});
  fillRandom(half, rng, -1, 1);
  expectReduce(half, {0}, ReduceKind::Sum, DType::F32);
  Strided tall(DType::F32, {20001, 3});  // columns layout, many row chunks
  fillRandom(tall, rng, -1, 1);
  expectReduce(tall, {0}, ReduceKind::Sum, DType::F32);
  expectReduce(tall, {0}, ReduceKind::Max, DType::F32);
}

TEST_F(ReduceTest, SumConvertsToTheOutputDtype) {
  std::mt19937 rng(3);
  Strided bools(DType::U8, {9, 300});
  fillRandom(bools, rng, 0, 1);
  expectReduce(bools, {1}, ReduceKind::Sum, DType::I64);
  Strided halfs(DType::BF16, {4, 50});
  fillRandom(halfs, rng, -1, 1);
  expectReduce(halfs, {1}, ReduceKind::Sum, DType::F32);
  expectReduce(halfs, {0}, ReduceKind::Sum, DType::F16);
  Strided ints(DType::I32, {2, 3});
  ints.storage = {2147483647, 1, 5, -2147483648.0, -1, 7};
  expectReduce(ints, {1}, ReduceKind::Sum, DType::I64);  // no i32 overflow: i64 accumulation
  expectReduce(ints, {1}, ReduceKind::Sum, DType::I32);  // then wraps in the conversion
  expectReduce(ints, {0}, ReduceKind::Prod, DType::I64);
}

TEST_F(ReduceTest, StridedTransposedBroadcastAndNegativeInputs) {
  std::mt19937 rng(4);
  for (ReduceKind kind : kAllKinds) {
    const DType t = kind == ReduceKind::Prod ? DType::F32 : DType::BF16;
    Strided transposed(t, {11, 6, 9}, {1, 99, 11});
    fillFor(transposed, kind, rng);
    expectReduce(transposed, {0}, kind, outTypeFor(kind, t));
    expectReduce(transposed, {1, 2}, kind, outTypeFor(kind, t));
    Strided broadcast(t, {4, 5, 6}, {6, 0, 1});
    fillFor(broadcast, kind, rng);
    expectReduce(broadcast, {1}, kind, outTypeFor(kind, t));
    expectReduce(broadcast, {0, 2}, kind, outTypeFor(kind, t));
    Strided negative(t, {7, 8}, {-8, -1});
    fillFor(negative, kind, rng);
    expectReduce(negative, {1}, kind, outTypeFor(kind, t));
    expectReduce(negative, {0}, kind, outTypeFor(kind, t));
  }
}

TEST_F(ReduceTest, StridedKeepdimOutputs) {
  std::mt19937 rng(5);
  Strided in(DType::F32, {6, 5, 4});
  fillRandom(in, rng, -1, 1);
  expectReduce(in, {1}, ReduceKind::Sum, DType::F32, outStrides({1, 100, 6}));   // transposed out
  expectReduce(in, {0, 2}, ReduceKind::Max, DType::F32, outStrides({0, 3, 0}));  // padded out
  expectReduce(in, {2}, ReduceKind::ArgMin, DType::I64,
               outStrides({-7, -1, 50}));  // negative out strides
}

TEST_F(ReduceTest, ManyDimsUseTheGridAndTheOuterLoop) {
  // Padded strides keep the 7 dims from coalescing: more kept and reduced dims than one DMA
  // descriptor has.
  std::mt19937 rng(6);
  const std::vector<int64_t> sizes = {3, 2, 3, 2, 3, 2, 3};
  std::vector<int64_t> strides(sizes.size());
  int64_t stride = 1;
  for (int d = 6; d >= 0; --d) {
    strides[d] = stride;
    stride *= sizes[d] + 1;
  }
  for (ReduceKind kind : kAllKinds) {
    for (const std::vector<int>& dims : {std::vector<int>{0, 2, 4, 6}, std::vector<int>{1, 3, 5},
                                         std::vector<int>{0, 1, 3, 4, 6}}) {
      Strided in(DType::F32, sizes, strides);
      fillFor(in, kind, rng);
      expectReduce(in, dims, kind, outTypeFor(kind, DType::F32));
    }
  }
}

TEST_F(ReduceTest, SlidingWindowPooling) {
  // max_pool2d / avg_pool2d: a 3x3 window with stride 2 over [2, 3, 9, 11] as an as_strided view
  // [N, C, OH, OW, KH, KW] with overlapping windows.
  std::mt19937 rng(7);
  for (DType t : {DType::F32, DType::F16}) {
    Strided in(t, {2, 3, 4, 5, 3, 3}, {297, 99, 22, 2, 11, 1});
    fillRandom(in, rng, -1, 1);
    expectReduce(in, {4, 5}, ReduceKind::Max, t);
    expectReduce(in, {4, 5}, ReduceKind::ArgMax, DType::I64);
    expectReduce(in, {4, 5}, ReduceKind::Sum, DType::F32);
  }
}

TEST_F(ReduceTest, NaNPropagatesAndItsFirstIndexWins) {
  for (ReduceKind kind : kAllKinds) {
    if (kind == ReduceKind::Sum || kind == ReduceKind::Prod) continue;
    for (DType t : {DType::F32, DType::BF16}) {
      // Row 0: NaN early; row 1: NaN in a later tile; row 2: two NaNs in different tiles;
      // row 3: none.
      Strided in(t, {4, 33000});
      std::mt19937 rng(8);
      fillRandom(in, rng, -1, 1);
      in.at(0 * 33000 + 5) = kNaN;
      in.at(1 * 33000 + 30000) = kNaN;
      in.at(2 * 33000 + 20000) = kNaN;
      in.at(2 * 33000 + 32000) = kNaN;
      expectReduce(in, {1}, kind, outTypeFor(kind, t));
      expectReduce(in, {0, 1}, kind, outTypeFor(kind, t));
      Strided small(t, {3, 4});
      small.storage = {1, kNaN, 3, kNaN, 5, 6, 7, 8, 9, 10, 11, 12};
      expectReduce(small, {0}, kind, outTypeFor(kind, t));
    }
  }
}

TEST_F(ReduceTest, TiesGiveTheFirstIndex) {
  for (ReduceKind kind : {ReduceKind::ArgMax, ReduceKind::ArgMin}) {
    for (DType t : {DType::F32, DType::I32, DType::U8}) {
      Strided in(t, {2, 40000});  // the extremes repeat in the first and last tiles
      std::fill(in.storage.begin(), in.storage.end(), 5);
      for (int64_t i : {int64_t{100}, int64_t{39000}}) {
        in.at(i) = 9;
        in.at(40000 + i) = 1;
      }
      expectReduce(in, {1}, kind, DType::I64);
      Strided flat(t, {6});
      flat.storage = {3, 1, 3, 1, 3, 1};
      expectReduce(flat, {0}, kind, DType::I64);
    }
  }
}

TEST_F(ReduceTest, EmptyInputs) {
  Strided none(DType::F32, {3, 0, 4});
  expectReduce(none, {1}, ReduceKind::Sum, DType::F32);
  expectReduce(none, {0, 1}, ReduceKind::Prod, DType::F16);
  expectReduce(none, {1}, ReduceKind::Sum, DType::I64);
  // An empty out launches nothing, even for kinds without identity.
  expectReduce(none, {0}, ReduceKind::Max, DType::F32);
  expectReduce(none, {2}, ReduceKind::ArgMax, DType::I64);
  for (ReduceKind kind :
       {ReduceKind::Max, ReduceKind::Min, ReduceKind::ArgMax, ReduceKind::ArgMin}) {
    Strided out(isArg(kind) ? DType::I64 : DType::F32, {3, 1, 4});
    EXPECT_THROW(mimic::ops::reduce({}, out.view(), none.view(), {1}, kind), std::invalid_argument);
  }
}

TEST_F(ReduceTest, NoReducedDimsCopyConverts) {
  std::mt19937 rng(9);
  Strided in(DType::F32, {5, 6}, {1, 5});
  fillRandom(in, rng, -100, 100);
  expectReduce(in, {}, ReduceKind::Sum, DType::F16);
  expectReduce(in, {}, ReduceKind::Max, DType::F32);
  expectReduce(in, {}, ReduceKind::ArgMin, DType::I64);
  Strided ones(DType::I32, {1, 7, 1});  // reducing size-1 dims only
  fillRandom(ones, rng, -5, 5);
  expectReduce(ones, {0, 2}, ReduceKind::Prod, DType::I32);
  Strided scalar(DType::F32, {});
  scalar.storage = {2.5};
  expectReduce(scalar, {}, ReduceKind::Sum, DType::F32);
}

TEST_F(ReduceTest, BadArgumentsThrowInvalidArgument) {
  Strided in(DType::F32, {4, 5});
  Strided out(DType::F32, {4, 1});
  Strided flat(DType::F32, {1, 1});
  Strided idx(DType::I64, {4, 1});
  Strided rank3(DType::F32, {4, 1, 1});
  auto call = [&](const Strided& o, std::vector<int> dims, ReduceKind kind) {
    mimic::ops::reduce({}, o.view(), in.view(), dims, kind);
  };
  EXPECT_THROW(call(out, {2}, ReduceKind::Sum), std::invalid_argument);      // dim out of range
  EXPECT_THROW(call(flat, {1, 0}, ReduceKind::Sum), std::invalid_argument);  // unsorted
  EXPECT_THROW(call(flat, {1, 1}, ReduceKind::Sum), std::invalid_argument);  // repeated
  EXPECT_THROW(call(out, {0}, ReduceKind::Sum), std::invalid_argument);      // out sizes
  EXPECT_THROW(call(rank3, {1}, ReduceKind::Sum), std::invalid_argument);    // out rank
  EXPECT_THROW(call(idx, {1}, ReduceKind::Max), std::invalid_argument);      // max dtype
  EXPECT_THROW(call(out, {1}, ReduceKind::ArgMax), std::invalid_argument);   // index dtype
  mimic::ops::TensorView bad = in.view();
  bad.strides.pop_back();
  EXPECT_THROW(mimic::ops::reduce({}, out.view(), bad, {1}, ReduceKind::Sum),
               std::invalid_argument);
}

}  // namespace
