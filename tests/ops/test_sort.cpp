// Sort (torch_backend/ops/sort.h) against std::stable_sort: exact values and indices for every
// dtype, ascending and descending, ties (stability), NaN and signed zeros, padded and
// power-of-two rows up to the scratchpad's capacity, strided views, one output only, and the
// errors.
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "reduce_test.h"
#include "strided_host.h"
#include "torch_backend/ops/sort.h"

namespace {

using namespace stridedtest;
using reducetest::DeviceWorkspace;

class SortTest : public OpsTest {};

// PyTorch's CPU order: NaN largest, -0 equal to +0.
bool before(double a, double b, bool descending) {
  if (descending) std::swap(a, b);
  return (!std::isnan(a) && std::isnan(b)) || a < b;
}

struct Case {
  DType type = DType::F32;
  int64_t rows = 1, n = 1;
  bool descending = false;
  bool transposed = false;  // the rows are the columns of a [N, R] buffer
  double lo = -8, hi = 8;   // few distinct values: many ties
  bool nans = false;
};

void expectSorted(const Case& k, uint32_t seed = 1) {
  SCOPED_TRACE(std::string(mimic::isa::dtypeName(k.type)) + " [" + std::to_string(k.rows) + ", " +
               std::to_string(k.n) + "]" + (k.descending ? " descending" : "") +
               (k.transposed ? " transposed" : ""));
  std::mt19937 rng(seed);
  const std::vector<int64_t> strides =
      k.transposed ? std::vector<int64_t>{1, k.rows} : std::vector<int64_t>{};
  Strided in(k.type, {k.rows, k.n}, strides), values(k.type, {k.rows, k.n}),
      indices(DType::I64, {k.rows, k.n}, strides);
  fillRandom(in, rng, k.lo, k.hi);
  if (k.nans) {
    for (double& v : in.storage) {
      const int pick = static_cast<int>(rng() % 8);
      if (pick == 0) v = std::numeric_limits<double>::quiet_NaN();
      if (pick == 1) v = -0.0;
      if (pick == 2) v = pick % 2 ? INFINITY : -INFINITY;
    }
  }
  in.upload();
  DeviceWorkspace workspace;
  mimic::ops::sort({}, values.view(), indices.view(), in.view(), k.descending, workspace.get());
  EXPECT_EQ(workspace.allocations(), k.n > mimic::ops::sortRowCapacity(0) ? 1u : 0u);
  values.download();
  indices.download();
  for (int64_t r = 0; r < k.rows; ++r) {
    std::vector<int64_t> order(k.n);
    std::iota(order.begin(), order.end(), 0);
    auto x = [&](int64_t i) { return in.at(r * k.n + i); };
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return before(x(a), x(b), k.descending); });
    for (int64_t i = 0; i < k.n; ++i) {
      ASSERT_EQ(indices.at(r * k.n + i), order[i]) << "row " << r << " position " << i;
      const double expected = x(order[i]), got = values.at(r * k.n + i);
      if (std::isnan(expected)) {
        ASSERT_TRUE(std::isnan(got)) << "row " << r << " position " << i;
      } else {
        ASSERT_EQ(got, expected) << "row " << r << " position " << i;
      }
    }
  }
}

TEST_F(SortTest, EveryDtypeBothDirections) {
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64, DType::U8}) {
    for (bool descending : {false, true}) {
      const double lo = t == DType::U8 ? 0 : -8;
      expectSorted({t, 3, 37, descending, false, lo, 8});
      expectSorted({t, 2, 64, descending, false, lo, t == DType::U8 ? 255.0 : 1000.0});
    }
  }
}

TEST_F(SortTest, NaNInfinitiesAndSignedZeros) {
  for (DType t : {DType::F32, DType::F16, DType::BF16}) {
    for (bool descending : {false, true}) expectSorted({t, 4, 50, descending, false, -2, 2, true});
  }
}

TEST_F(SortTest, ShortRowsAndTheCapacity) {
  const int64_t capacity = mimic::ops::sortRowCapacity(0);
  for (int64_t n :
       {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{5}, int64_t{255}, capacity - 1, capacity}) {
    expectSorted({DType::F32, 2, n, n % 2 == 1, false, -1e6, 1e6});
  }
}

// Rows longer than the scratchpad holds: the passes over the workspace, with pieces that hold
// only padding (4 capacity + 5 pads to 8 pieces, the last 3 past the row).
TEST_F(SortTest, LongRowsInPasses) {
  const int64_t capacity = mimic::ops::sortRowCapacity(0);
  expectSorted({DType::F32, 2, capacity + 1, false, false, -100, 100});
  expectSorted({DType::F32, 1, 2 * capacity, true, true, -3, 3, true});
  expectSorted({DType::I64, 3, 4 * capacity + 5, false, false, -1e12, 1e12});
  expectSorted({DType::BF16, 1, 3 * capacity, true, false, -50, 50, true});
  expectSorted({DType::U8, 2, 2 * capacity + 7, false, true, 0, 255});
}

TEST_F(SortTest, ManyRowsAndStridedViews) {
  expectSorted({DType::F32, 300, 7, false, true});
  expectSorted({DType::I64, 5, 100, true, true, -1e15, 1e15});
}

TEST_F(SortTest, IntegerExtremes) {
  Strided in(DType::I64, {1, 4}), values(DType::I64, {1, 4}), indices(DType::I64, {1, 4});
  in.upload();  // zeros, then the extremes written as bytes (doubles cannot hold them)
  const int64_t raw[4] = {std::numeric_limits<int64_t>::max(), 0,
                          std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  ASSERT_EQ(mimicMemcpy(in.device, raw, sizeof raw), MIMIC_SUCCESS);
  mimic::ops::sort({}, values.view(), indices.view(), in.view(), false);
  values.download();
  indices.download();
  int64_t sorted[4];
  ASSERT_EQ(mimicMemcpy(sorted, values.device, sizeof sorted), MIMIC_SUCCESS);
  EXPECT_EQ(sorted[0], raw[2]);
  EXPECT_EQ(sorted[1], 0);
  EXPECT_EQ(sorted[2], raw[0]);
  EXPECT_EQ(sorted[3], raw[0]);
  EXPECT_EQ(indices.storage, (std::vector<double>{2, 1, 0, 3}));
}

TEST_F(SortTest, OneOutputOnly) {
  Strided in(DType::F32, {2, 9}), indices(DType::I64, {2, 9}), values(DType::F32, {2, 9});
  std::mt19937 rng(3);
  fillRandom(in, rng, -3, 3);
  in.upload();
  mimic::ops::sort({}, {}, indices.view(), in.view(), false);
  mimic::ops::sort({}, values.view(), {}, in.view(), false);
  indices.download();
  values.download();
  for (int64_t r = 0; r < 2; ++r) {
    for (int64_t i = 0; i < 9; ++i) {
      EXPECT_EQ(values.at(r * 9 + i), in.at(r * 9 + static_cast<int64_t>(indices.at(r * 9 + i))));
    }
  }
}

TEST_F(SortTest, Errors) {
  const int64_t capacity = mimic::ops::sortRowCapacity(0);
  Strided in(DType::F32, {1, capacity + 1}), values(DType::F32, {1, capacity + 1}),
      wrong(DType::I32, {1, capacity + 1}), small(DType::F32, {1, 3}), flat(DType::F32, {4});
  EXPECT_THROW(mimic::ops::sort({}, values.view(), {}, in.view(), false), std::invalid_argument);
  EXPECT_THROW(mimic::ops::sort({}, wrong.view(), {}, in.view(), false), std::invalid_argument);
  EXPECT_THROW(mimic::ops::sort({}, {}, values.view(), in.view(), false), std::invalid_argument);
  EXPECT_THROW(mimic::ops::sort({}, small.view(), {}, in.view(), false), std::invalid_argument);
  EXPECT_THROW(mimic::ops::sort({}, flat.view(), {}, flat.view(), false), std::invalid_argument);
  EXPECT_THROW(mimic::ops::sort({}, {}, {}, in.view(), false), std::invalid_argument);
}

TEST_F(SortTest, EmptyRowsLaunchNothing) {
  Strided in(DType::F32, {0, 5}), values(DType::F32, {0, 5});
  EXPECT_NO_THROW(mimic::ops::sort({}, values.view(), {}, in.view(), false));
}

}  // namespace
