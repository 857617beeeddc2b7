// Helpers for the reduce tests (torch_backend/ops/reduce.h): the host reference of every kind
// with the fused maps, divisor and square root; running reduce on Strided views and checking
// every output element; and a workspace from the driver for split reductions.
#pragma once

#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "strided_host.h"
#include "torch_backend/ops/reduce.h"

namespace reducetest {

using namespace stridedtest;
using mimic::ops::ReduceKind;
using mimic::ops::ReduceMap;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kF32Unit = 0x1p-24;  // unit roundoff of f32
const DType kAllTypes[] = {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64, DType::U8};
const ReduceKind kAllKinds[] = {ReduceKind::Sum, ReduceKind::Prod,   ReduceKind::Max,
                                ReduceKind::Min, ReduceKind::ArgMax, ReduceKind::ArgMin};

inline bool isArg(ReduceKind k) {
  return k == ReduceKind::ArgMax || k == ReduceKind::ArgMin;
}

inline std::string kindName(ReduceKind k) {
  static const char* const kNames[] = {"sum", "prod", "max", "min", "argmax", "argmin"};
  return kNames[static_cast<int>(k)];
}

// The dtype reduce writes for a kind: the input's, except indices (i64).
inline DType outTypeFor(ReduceKind kind, DType in) {
  return isArg(kind) ? DType::I64 : in;
}

inline std::vector<int64_t> keepdimSizes(const std::vector<int64_t>& sizes,
                                         const std::vector<int>& dims) {
  std::vector<int64_t> out = sizes;
  for (int d : dims) out[d] = 1;
  return out;
}

// Device memory for split reductions, released once the device's work is done (mimicMemFree
// waits for it). Counts the calls that asked for memory: the ones that were split.
class DeviceWorkspace {
 public:
  DeviceWorkspace() = default;
  DeviceWorkspace(const DeviceWorkspace&) = delete;
  DeviceWorkspace& operator=(const DeviceWorkspace&) = delete;
  ~DeviceWorkspace() {
    for (void* p : blocks_) mimicMemFree(p);
  }
  mimic::ops::Workspace get() {
    return [this](size_t bytes) {
      blocks_.push_back(deviceAlloc(bytes));
      return blocks_.back();
    };
  }
  size_t allocations() const { return blocks_.size(); }

 private:
  std::vector<void*> blocks_;
};

struct Options {
  std::vector<int64_t> outStrides;  // contiguous if empty
  DeviceWorkspace* workspace = nullptr;
  ReduceMap map = ReduceMap::Identity;
  Strided* other = nullptr;  // the second operand of ReduceMap::Mul and SquaredDifference
  double divisor = 1;
  bool sqrt = false;
  // Float data whose sums are whole numbers below 2^24 in magnitude at every step: f32 sums
  // are then exact in any order, and the result is the correctly rounded one.
  bool exact = false;
};

// The tiny preset with DMA engines slower than its HBM (4 x 20 GB/s against 100 GB/s), as on the
// large presets: a split then pays from a few tens of KiB. On plain tiny one compute unit streams
// faster than HBM, so nothing is split.
constexpr const char* kSplittingTiny = "compute.dma_bandwidth_gbps=20";

class SplittingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(mimicInitWithPreset(0, "tiny", kSplittingTiny), MIMIC_SUCCESS);
  }
};

// Options for exact data, with a workspace to observe whether the call was split.
inline Options exactOptions(DeviceWorkspace* workspace = nullptr) {
  Options o;
  o.workspace = workspace;
  o.exact = true;
  return o;
}

inline Options outStrides(std::vector<int64_t> strides) {
  Options o;
  o.outStrides = std::move(strides);
  return o;
}

// The reference for out element `o` (row-major over the keepdim sizes); `bound` is the allowed
// absolute error.
struct Reference {
  double value;
  double bound;
};

// Rounds a float sum's value and bound through divisor, square root and output conversion.
inline Reference finishFloatSum(double sum, double bound, const Options& opt, DType outT) {
  const double outEps = outT == DType::F16 ? 1e-3 : outT == DType::BF16 ? 8e-3 : 1.2e-7;
  if (opt.exact) {  // every step is one correctly rounded f32 operation
    double v = roundTo(sum, DType::F32);
    if (opt.divisor != 1) v = roundTo(v / opt.divisor, DType::F32);
    if (opt.sqrt) v = roundTo(std::sqrt(v), DType::F32);
    return {roundTo(v, outT), 0};
  }
  double v = sum / opt.divisor, b = bound / std::fabs(opt.divisor);
  if (opt.divisor != 1) b += kF32Unit * std::fabs(v);
  if (opt.sqrt) {
    const double hi = std::sqrt(v + b), lo = std::sqrt(std::max(0.0, v - b));
    v = std::sqrt(v);
    b = std::max(hi - v, v - lo) + kF32Unit * v;
  }
  return {v, b + outEps * std::fabs(v)};
}

inline Reference referenceAt(Strided& in, const std::vector<int>& dims, ReduceKind kind, DType outT,
                             int64_t o, const Options& opt = {}) {
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
  const bool fused = opt.map != ReduceMap::Identity || opt.divisor != 1 || opt.sqrt || opt.exact;
  double sum = 0, absSum = 0, prod = 1, best = 0;
  uint64_t isum = 0, iprod = 1;  // wrapping i64 accumulation
  int64_t bestIndex = -1;
  for (int64_t r = 0; r < count; ++r) {
    int64_t rest = r;
    for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
      index[*it] = rest % in.sizes[*it];
      rest /= in.sizes[*it];
    }
    int64_t off = in.base, otherOff = opt.other ? opt.other->base : 0;
    for (int d = 0; d < rank; ++d) {
      off += index[d] * in.strides[d];
      if (opt.other) otherOff += index[d] * opt.other->strides[d];
    }
    double x = in.storage[off];
    if (opt.map == ReduceMap::Abs) x = std::fabs(x);
    if (opt.map == ReduceMap::Square) x = x * x;
    if (opt.map == ReduceMap::SquaredDifference) {
      const double d = x - opt.other->storage[otherOff];
      x = d * d;
    }
    if (opt.map == ReduceMap::Mul) {
      const double y = opt.other->storage[otherOff];
      isum += static_cast<uint64_t>(static_cast<int64_t>(isFloat ? 0 : x)) *
              static_cast<uint64_t>(static_cast<int64_t>(isFloat ? 0 : y));
      x *= y;
    } else {
      isum += static_cast<uint64_t>(static_cast<int64_t>(isFloat ? 0 : x));
    }
    sum += x;
    absSum += std::fabs(x);
    prod *= x;
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
      if (!fused) return {sum, 2e-6 * absSum + outEps * std::fabs(sum)};
      // Any summation order of `count` terms (each a rounded product for Mul) is within
      // (count + 1) units of roundoff of the absolute sum; a squared difference rounds the
      // difference and its square, 3 units of each term.
      return finishFloatSum(
          sum, (count + (opt.map == ReduceMap::SquaredDifference ? 3 : 1)) * kF32Unit * absSum, opt,
          outT);
    case ReduceKind::Prod:
      if (!isFloat) return {roundTo(static_cast<double>(static_cast<int64_t>(iprod)), outT), 0};
      if (opt.exact) return {roundTo(prod, outT), 0};
      return {prod, (2e-6 * count + outEps) * std::fabs(prod)};
    case ReduceKind::Max:
    case ReduceKind::Min:
      return {best, 0};
    default:
      return {static_cast<double>(bestIndex), 0};
  }
}

// Runs reduce on `in` (already filled) into a fresh out, and checks every element of the view
// and that nothing outside it was written.
inline void expectReduce(Strided& in, const std::vector<int>& dims, ReduceKind kind, DType outT,
                         const Options& opt = {}) {
  Strided out(outT, keepdimSizes(in.sizes, dims), opt.outStrides);
  constexpr double kSentinel = 77;
  std::fill(out.storage.begin(), out.storage.end(), kSentinel);
  out.upload();
  in.upload();
  mimic::ops::ReduceFusion fusion;
  fusion.map = opt.map;
  if (opt.other) {
    opt.other->upload();
    fusion.other = opt.other->view();
  }
  fusion.divisor = opt.divisor;
  fusion.sqrt = opt.sqrt;
  DeviceWorkspace own;
  mimic::ops::reduce({}, out.view(), in.view(), dims, kind,
                     (opt.workspace ? opt.workspace : &own)->get(), fusion);
  out.download();
  std::set<int64_t> inView;
  for (int64_t o = 0; o < out.numel(); ++o) {
    inView.insert(out.offsetOf(o));
    const Reference ref = referenceAt(in, dims, kind, outT, o, opt);
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

// Values for a kind: products stay near 1, integers small enough to tie often.
inline void fillFor(Strided& s, ReduceKind kind, std::mt19937& rng) {
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

// Whole numbers in [lo, hi] (u8: in [0, hi]) for Sum, Max, Min and their args, which tie often;
// for Prod ones with a few factors of 2 and -1 (3 for u8). Float sums of them are exact while
// the absolute sum stays below 2^24.
inline void fillExact(Strided& s, ReduceKind kind, std::mt19937& rng, int lo = -3, int hi = 3) {
  if (kind != ReduceKind::Prod) {
    std::uniform_int_distribution<int> value(s.type == DType::U8 ? 0 : lo, hi);
    for (double& v : s.storage) v = value(rng);
    return;
  }
  std::fill(s.storage.begin(), s.storage.end(), 1.0);
  std::uniform_int_distribution<size_t> at(0, s.storage.size() - 1);
  for (int i = 0; i < 12; ++i) s.storage[at(rng)] = 2;
  for (int i = 0; i < 3; ++i) s.storage[at(rng)] = s.type == DType::U8 ? 3 : -1;
}

}  // namespace reducetest
