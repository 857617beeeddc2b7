// reduce (torch_backend/ops/reduce.h) against a host reference: every kind and dtype, reduced
// dims leading, middle, trailing and non-adjacent, strided / transposed / broadcast / negative /
// sliding-window inputs, strided outputs, long rows in several tiles, NaN and ties, empty inputs
// and the error paths.
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

#include "strided_host.h"
#include "torch_backend/ops/reduce.h"

namespace {

using namespace stridedtest;
using mimic::ops::ReduceKind;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
const DType kAllTypes[] = {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64, DType::U8};

bool isArg(ReduceKind k) {
  return k == ReduceKind::ArgMax || k == ReduceKind::ArgMin;
}

std::vector<int64_t> keepdimSizes(const std::vector<int64_t>& sizes, const std::vector<int>& dims) {
  std::vector<int64_t> out = sizes;
  for (int d : dims) out[d] = 1;
  return out;
}

// The reference for out element `o` (row-major over the keepdim sizes); `bound` is the allowed
// absolute error.
struct Reference {
  double value;
  double bound;
};

Reference referenceAt(Strided& in, const std::vector<int>& dims, ReduceKind kind, DType outT,
                      int64_t o) {
  const int rank = static_cast<int>(in.sizes.size());
  std::vector<int64_t> index(rank, 0);
  const std::vector<int64_t> outSizes = keepdimSizes(in.sizes, dims);
  for (int d = rank - 1; d >= 0; --d) {
    index[d] = o % outSizes[d];
    o /= outSizes[d];
  }
  int64_t count = 1;
  for (int d : dims) count *= in.sizes[d];
  const bool isFloat = mimic::isa::isFloat(in.type);
  double sum = 0, absSum = 0, prod = 1, best = 0;
  uint64_t isum = 0, iprod = 1;  // wrapping i64 accumulation
  int64_t bestIndex = -1;
  for (int64_t r = 0; r < count; ++r) {
    int64_t rest = r;
    for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
      index[*it] = rest % in.sizes[*it];
      rest /= in.sizes[*it];
    }
    int64_t off = in.base;
    for (int d = 0; d < rank; ++d) off += index[d] * in.strides[d];
    const double x = in.storage[off];
    sum += x;
    absSum += std::fabs(x);
    prod *= x;
    isum += static_cast<uint64_t>(static_cast<int64_t>(isFloat ? 0 : x));
    iprod *= static_cast<uint64_t>(static_cast<int64_t>(isFloat ? 0 : x));
    const bool isMax = kind == ReduceKind::Max || kind == ReduceKind::ArgMax;
    const bool better =
        bestIndex < 0 || (std::isnan(x) && !std::isnan(best)) || (isMax ? x > best : x < best);
    if (better) {
      best = x;
      bestIndex = r;
    }
  }
  const double outEps = outT == DType::F16 ? 1e-3 : outT == DType::BF16 ? 8e-3 : 1.2e-7;
  switch (kind) {
    case ReduceKind::Sum:
      if (!isFloat) return {roundTo(static_cast<double>(static_cast<int64_t>(isum)), outT), 0};
      return {sum, 2e-6 * absSum + outEps * std::fabs(sum)};
    case ReduceKind::Prod:
      if (!isFloat) return {roundTo(static_cast<double>(static_cast<int64_t>(iprod)), outT), 0};
      return {prod, (2e-6 * count + outEps) * std::fabs(prod)};
    case ReduceKind::Max:
    case ReduceKind::Min:
      return {best, 0};
    default:
      return {static_cast<double>(bestIndex), 0};
  }
}

// Runs reduce on `in` (already filled) into a fresh out with `outStrides` (contiguous if empty),
// and checks every element of the view and that nothing outside it was written.
void expectReduce(Strided& in, const std::vector<int>& dims, ReduceKind kind, DType outT,
                  const std::vector<int64_t>& outStrides = {}) {
  Strided out(outT, keepdimSizes(in.sizes, dims), outStrides);
  constexpr double kSentinel = 77;
  std::fill(out.storage.begin(), out.storage.end(), kSentinel);
  out.upload();
  in.upload();
  mimic::ops::reduce({}, out.view(), in.view(), dims, kind);
  out.download();
  std::set<int64_t> inView;
  for (int64_t o = 0; o < out.numel(); ++o) {
    inView.insert(out.offsetOf(o));
    const Reference ref = referenceAt(in, dims, kind, outT, o);
    const double got = out.at(o);
    if (std::isnan(ref.value)) {
      EXPECT_TRUE(std::isnan(got)) << "out element " << o << " is " << got << ", expected NaN";
    } else {
      EXPECT_NEAR(got, ref.value, ref.bound) << "out element " << o;
    }
  }
  for (size_t i = 0; i < out.storage.size(); ++i) {
    if (!inView.count(static_cast<int64_t>(i))) {
      EXPECT_EQ(out.storage[i], kSentinel) << "storage element " << i << " outside the view";
    }
  }
}

// The dtype reduce writes for a kind: the input's, except indices (i64).
DType outTypeFor(ReduceKind kind, DType in) {
  return isArg(kind) ? DType::I64 : in;
}

// Values for a kind: products stay near 1, integers small enough to tie often.
void fillFor(Strided& s, ReduceKind kind, std::mt19937& rng) {
  const bool isFloat = mimic::isa::isFloat(s.type);
  if (kind == ReduceKind::Prod) {
    if (isFloat) return fillRandom(s, rng, 0.9, 1.1);
    for (double& v : s.storage)
      v = static_cast<double>(std::uniform_int_distribution<int>(1, 3)(rng) == 3 ? 2 : 1);
    return;
  }
  if (s.type == DType::U8) return fillRandom(s, rng, 0, 255);
  fillRandom(s, rng, isFloat ? -1 : -40, isFloat ? 1 : 40);
}

const ReduceKind kAllKinds[] = {ReduceKind::Sum, ReduceKind::Prod,   ReduceKind::Max,
                                ReduceKind::Min, ReduceKind::ArgMax, ReduceKind::ArgMin};

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
  // 64 KiB of scratchpad holds about 15K f32 per tile: these rows take three or more tiles.
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
  expectReduce(in, {1}, ReduceKind::Sum, DType::F32, {1, 100, 6});      // transposed out
  expectReduce(in, {0, 2}, ReduceKind::Max, DType::F32, {0, 3, 0});     // padded out
  expectReduce(in, {2}, ReduceKind::ArgMin, DType::I64, {-7, -1, 50});  // negative out strides
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
