// Fused reductions (ReduceFusion in torch_backend/ops/reduce.h): a product with a second operand
// of its own strides (dot), absolute values and squares (norms), a divisor (mean) and a square
// root, in one pass and split, and the fusions each kind refuses.
#include <stdexcept>

#include "reduce_test.h"

namespace {

using namespace reducetest;

class ReduceFusedTest : public SplittingTest {};

Options fused(ReduceMap map, Strided* other = nullptr, double divisor = 1, bool sqrt = false) {
  Options o;
  o.map = map;
  o.other = other;
  o.divisor = divisor;
  o.sqrt = sqrt;
  return o;
}

TEST_F(ReduceFusedTest, DotOfEveryDtypeWithStridedNegativeAndBroadcastOperands) {
  std::mt19937 rng(21);
  for (DType t : kAllTypes) {
    for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{700001}}) {  // the last one is split
      SCOPED_TRACE(std::string(mimic::isa::dtypeName(t)) + " n " + std::to_string(n));
      Strided x(t, {n}), y(t, {n}, {2}), reversed(t, {n}, {-1}), same(t, {n}, {0});
      for (Strided* s : {&x, &y, &reversed, &same}) {
        if (mimic::isa::isFloat(t)) {
          fillRandom(*s, rng, -1, 1);
        } else {
          fillExact(*s, ReduceKind::Sum, rng, -5, 5);
        }
      }
      for (Strided* other : {&y, &reversed, &same}) {
        expectReduce(x, {0}, ReduceKind::Sum, t, fused(ReduceMap::Mul, other));
      }
    }
  }
}

TEST_F(ReduceFusedTest, DotsAlongRowsWithATransposedOperand) {
  std::mt19937 rng(22);
  for (DType t : {DType::F32, DType::BF16, DType::I64}) {
    Strided x(t, {5, 3000}), y(t, {5, 3000}, {1, 5});
    fillRandom(x, rng, -2, 2);
    fillRandom(y, rng, -2, 2);
    expectReduce(x, {1}, ReduceKind::Sum, t, fused(ReduceMap::Mul, &y));
    expectReduce(x, {0}, ReduceKind::Sum, DType::F32, fused(ReduceMap::Mul, &y));
  }
}

TEST_F(ReduceFusedTest, NormsAndMeansInOnePassAndSplit) {
  std::mt19937 rng(23);
  for (DType t : {DType::F32, DType::F16, DType::BF16}) {
    for (int64_t n : {int64_t{1}, int64_t{5000}, int64_t{600001}}) {
      SCOPED_TRACE(std::string(mimic::isa::dtypeName(t)) + " n " + std::to_string(n));
      Strided x(t, {n});
      fillRandom(x, rng, -2, 2);
      expectReduce(x, {0}, ReduceKind::Sum, DType::F32, fused(ReduceMap::Abs));  // 1-norm
      expectReduce(x, {0}, ReduceKind::Max, t, fused(ReduceMap::Abs));           // inf-norm
      expectReduce(x, {0}, ReduceKind::Min, t, fused(ReduceMap::Abs));           // -inf-norm
      expectReduce(x, {0}, ReduceKind::Sum, t, fused(ReduceMap::Square, nullptr, 1, true));
      expectReduce(x, {0}, ReduceKind::Sum, t, fused(ReduceMap::Identity, nullptr, n));  // mean
      Strided rows(t, {3, n}, {1, 3});
      fillRandom(rows, rng, -2, 2);
      expectReduce(rows, {1}, ReduceKind::Sum, DType::F32,
                   fused(ReduceMap::Square, nullptr, 7, true));
    }
  }
}

TEST_F(ReduceFusedTest, NaNPropagatesThroughTheMapsAndEmptyMeansAreNaN) {
  Strided x(DType::F32, {4, 9000});
  std::mt19937 rng(24);
  fillRandom(x, rng, -1, 1);
  x.at(1 * 9000 + 8000) = kNaN;
  for (ReduceKind kind : {ReduceKind::Sum, ReduceKind::Max, ReduceKind::Min}) {
    expectReduce(x, {1}, kind, DType::F32, fused(ReduceMap::Abs));
  }
  expectReduce(x, {1}, ReduceKind::Sum, DType::F32, fused(ReduceMap::Square, nullptr, 1, true));
  Strided none(DType::F16, {3, 0});
  expectReduce(none, {1}, ReduceKind::Sum, DType::F16, fused(ReduceMap::Identity, nullptr, 0));
  expectReduce(none, {1}, ReduceKind::Sum, DType::F32, fused(ReduceMap::Square, nullptr, 1, true));
  Strided noOther(DType::F16, {3, 0});
  expectReduce(none, {1}, ReduceKind::Sum, DType::F32, fused(ReduceMap::Mul, &noOther));
}

TEST_F(ReduceFusedTest, SquaredDifferencesWithStridedAndBroadcastOperandsInOnePassAndSplit) {
  std::mt19937 rng(25);
  for (DType t : {DType::F32, DType::F16, DType::BF16}) {
    for (int64_t n : {int64_t{1}, int64_t{5000}, int64_t{600001}}) {  // the last one is split
      SCOPED_TRACE(std::string(mimic::isa::dtypeName(t)) + " n " + std::to_string(n));
      Strided x(t, {n}), y(t, {n}, {2}), reversed(t, {n}, {-1}), same(t, {n}, {0});
      for (Strided* s : {&x, &y, &reversed, &same}) fillRandom(*s, rng, -2, 2);
      for (Strided* other : {&y, &reversed, &same}) {
        expectReduce(x, {0}, ReduceKind::Sum, DType::F32,
                     fused(ReduceMap::SquaredDifference, other, static_cast<double>(n)));
      }
    }
  }
  Strided x(DType::F32, {6, 700}), y(DType::F32, {6, 700}, {1, 6});  // along rows, transposed
  fillRandom(x, rng, -2, 2);
  fillRandom(y, rng, -2, 2);
  expectReduce(x, {1}, ReduceKind::Sum, DType::F32, fused(ReduceMap::SquaredDifference, &y));
  expectReduce(x, {0}, ReduceKind::Sum, DType::F32, fused(ReduceMap::SquaredDifference, &y));
}

TEST_F(ReduceFusedTest, FusionsAKindCannotTakeThrowInvalidArgument) {
  Strided x(DType::F32, {4, 5}), ints(DType::I32, {4, 5}), out(DType::F32, {4, 1});
  Strided index(DType::I64, {4, 1}), intOut(DType::I32, {4, 1}), halfs(DType::F16, {4, 5});
  Strided narrow(DType::F32, {4, 4});
  auto call = [](const Strided& o, const Strided& in, ReduceKind kind,
                 const mimic::ops::ReduceFusion& f) {
    mimic::ops::reduce({}, o.view(), in.view(), {1}, kind, {}, f);
  };
  using mimic::ops::ReduceFusion;
  const ReduceFusion abs{ReduceMap::Abs, {}}, square{ReduceMap::Square, {}};
  EXPECT_THROW(call(out, x, ReduceKind::Prod, abs), std::invalid_argument);
  EXPECT_THROW(call(index, x, ReduceKind::ArgMax, abs), std::invalid_argument);
  EXPECT_THROW(call(intOut, ints, ReduceKind::Sum, abs), std::invalid_argument);  // not float
  EXPECT_THROW(call(out, x, ReduceKind::Max, square), std::invalid_argument);
  EXPECT_THROW(call(out, x, ReduceKind::Sum, ReduceFusion{ReduceMap::Mul, {}}),
               std::invalid_argument);  // no operand
  EXPECT_THROW(call(out, x, ReduceKind::Max, ReduceFusion{ReduceMap::Mul, x.view()}),
               std::invalid_argument);
  EXPECT_THROW(call(out, x, ReduceKind::Sum, ReduceFusion{ReduceMap::Mul, halfs.view()}),
               std::invalid_argument);  // dtype
  EXPECT_THROW(call(out, x, ReduceKind::Sum, ReduceFusion{ReduceMap::Mul, narrow.view()}),
               std::invalid_argument);  // sizes
  EXPECT_THROW(call(out, x, ReduceKind::Sum, ReduceFusion{ReduceMap::Abs, x.view()}),
               std::invalid_argument);  // an operand the map does not read
  EXPECT_THROW(call(out, x, ReduceKind::Min, ReduceFusion{ReduceMap::SquaredDifference, x.view()}),
               std::invalid_argument);
  EXPECT_THROW(
      call(intOut, ints, ReduceKind::Sum, ReduceFusion{ReduceMap::SquaredDifference, ints.view()}),
      std::invalid_argument);  // not float
  EXPECT_THROW(call(out, x, ReduceKind::Sum, ReduceFusion{ReduceMap::SquaredDifference, {}}),
               std::invalid_argument);  // no operand
  EXPECT_THROW(call(intOut, ints, ReduceKind::Sum, ReduceFusion{ReduceMap::Identity, {}, 2}),
               std::invalid_argument);  // divisor of an integer sum
  EXPECT_THROW(call(out, x, ReduceKind::Max, ReduceFusion{ReduceMap::Identity, {}, 1, true}),
               std::invalid_argument);
}

}  // namespace
