// Helpers for the index op tests: host tensors with a device copy, any strides and dtype, whose
// whole storage is compared after an op (so writes outside the view show too), and the element
// arithmetic of the accumulating ops as the device does it.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "mimic/mimic.hpp"
#include "sim/isa/scalar_literal.h"
#include "torch_backend/ops/index.h"

namespace indextest {

using mimic::isa::DType;
using mimic::ops::TensorView;
using Sizes = std::vector<int64_t>;

const DType kAllTypes[] = {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64, DType::U8};

inline int64_t numelOf(const Sizes& sizes) {
  return std::accumulate(sizes.begin(), sizes.end(), int64_t{1}, std::multiplies<int64_t>());
}

// Calls fn(position) for every position of `sizes`, in row-major order.
inline void forEach(const Sizes& sizes, const std::function<void(const Sizes&)>& fn) {
  if (numelOf(sizes) == 0) return;
  Sizes p(sizes.size(), 0);
  while (true) {
    fn(p);
    int d = int(sizes.size()) - 1;
    while (d >= 0 && ++p[d] == sizes[d]) p[d--] = 0;
    if (d < 0) return;
  }
}

// The raw bits of a small value of type t: distinct, exact in every type, and for floats with
// a fraction so that rounding would show.
inline uint64_t valueBits(DType t, int64_t k) {
  switch (t) {
    case DType::F32:
    case DType::F16:
    case DType::BF16:
    case DType::F64:
      return mimic::isa::floatToBits(double(k % 97) * 0.25 - 7.5, t);
    case DType::I32:
      return uint32_t(int32_t(k * 7919 % 100003 - 50000));
    case DType::I64:
      return uint64_t(k * 1000003 % 1000000007 - 500000000) * 4099;
    case DType::U8:
    case DType::I8:
      return uint8_t(k * 37 + 11);
    case DType::I16:
      return uint16_t(k * 7919 % 60001);
  }
  return 0;
}

// self + alpha * v as the device computes it: f32 scales then adds (two roundings), f16/bf16
// fuse in f32 and round once, integers wrap.
inline uint64_t addBits(DType t, uint64_t self, uint64_t v, double alpha) {
  using mimic::isa::bitsToFloat;
  using mimic::isa::floatToBits;
  switch (t) {
    case DType::F32: {
      const float scaled =
          alpha == 1 ? float(bitsToFloat(v, t)) : float(bitsToFloat(v, t)) * float(alpha);
      return floatToBits(float(bitsToFloat(self, t)) + scaled, t);
    }
    case DType::F16:
    case DType::BF16:
      return floatToBits(
          std::fma(float(bitsToFloat(v, t)), float(alpha), float(bitsToFloat(self, t))), t);
    case DType::I32:
      return uint32_t(uint64_t(int64_t(int32_t(self))) +
                      uint64_t(int64_t(int32_t(v)) * int64_t(alpha)));
    case DType::I64:
      return self + v * uint64_t(int64_t(alpha));
    case DType::U8:
    case DType::I8:
      return uint8_t(self + v * uint64_t(int64_t(alpha)));
    case DType::I16:
      return uint16_t(self + v * uint64_t(int64_t(alpha)));
    case DType::F64: {
      const double scaled = alpha == 1 ? bitsToFloat(v, t) : bitsToFloat(v, t) * alpha;
      return floatToBits(bitsToFloat(self, t) + scaled, t);
    }
  }
  return 0;
}

// A strided view over its own device storage, mirrored on the host.
class Tensor {
 public:
  // Contiguous unless strides (non-negative) are given; the storage is the smallest that holds
  // the view (plus `offset` elements before it), filled with distinct values from `seed`.
  Tensor(DType t, Sizes sizes, Sizes strides = {}, int64_t offset = 0, int seed = 1)
      : dtype_(t), sizes_(std::move(sizes)), strides_(std::move(strides)), offset_(offset) {
    if (strides_.empty()) strides_ = mimic::ops::contiguousStrides(sizes_);
    int64_t span = 1;
    for (size_t d = 0; d < sizes_.size(); ++d) {
      if (sizes_[d] == 0) span = 0;
    }
    if (span) {
      for (size_t d = 0; d < sizes_.size(); ++d) span += (sizes_[d] - 1) * std::abs(strides_[d]);
    }
    storage_.resize(offset_ + std::max<int64_t>(span, 1));
    for (size_t i = 0; i < storage_.size(); ++i) storage_[i] = valueBits(t, int64_t(i) * 13 + seed);
    const size_t bytes = storage_.size() * elementBytes();
    MIMIC_CHECK(mimicMemAlloc(0, bytes, &device_));
    upload();
  }
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  ~Tensor() { mimicMemFree(device_); }  // fails harmlessly after a device reset

  // Makes this an index tensor: `values` in row-major order of the view (as i32 or i64).
  Tensor& setIndices(const std::vector<int64_t>& values) {
    int64_t k = 0;
    forEach(sizes_, [&](const Sizes& p) {
      at(p) = dtype_ == DType::I32 ? uint32_t(int32_t(values[k])) : uint64_t(values[k]);
      ++k;
    });
    upload();
    return *this;
  }

  TensorView view() const {
    TensorView v;
    v.data = static_cast<char*>(device_) + offset_ * elementBytes();
    v.dtype = dtype_;
    v.sizes = sizes_;
    v.strides = strides_;
    return v;
  }

  uint64_t& at(const Sizes& p) {  // a 0-d tensor ignores the position
    int64_t i = offset_;
    for (size_t d = 0; d < strides_.size(); ++d) i += p[d] * strides_[d];
    return storage_[i];
  }
  int64_t index(const Sizes& p) {  // an index tensor's value
    const uint64_t bits = at(p);
    return dtype_ == DType::I32 ? int64_t(int32_t(bits)) : int64_t(bits);
  }

  // The device storage, as bits per element.
  std::vector<uint64_t> download() const {
    std::vector<uint8_t> bytes(storage_.size() * elementBytes());
    MIMIC_CHECK(mimicMemcpy(bytes.data(), device_, bytes.size()));
    std::vector<uint64_t> out(storage_.size(), 0);
    for (size_t i = 0; i < out.size(); ++i) {
      std::memcpy(&out[i], bytes.data() + i * elementBytes(), elementBytes());
    }
    return out;
  }
  // The host storage: the expected result once the test has applied the op to it.
  const std::vector<uint64_t>& storage() const { return storage_; }
  const Sizes& sizes() const { return sizes_; }
  DType dtype() const { return dtype_; }

  void upload() {
    std::vector<uint8_t> bytes(storage_.size() * elementBytes());
    for (size_t i = 0; i < storage_.size(); ++i) {
      std::memcpy(bytes.data() + i * elementBytes(), &storage_[i], elementBytes());
    }
    MIMIC_CHECK(mimicMemcpy(device_, bytes.data(), bytes.size()));
  }

 private:
  size_t elementBytes() const { return size_t(mimic::isa::dtypeSize(dtype_)); }

  DType dtype_;
  Sizes sizes_, strides_;
  int64_t offset_;
  std::vector<uint64_t> storage_;
  void* device_ = nullptr;
};

// Device storage equals the host's expectation, element for element.
inline ::testing::AssertionResult matches(const Tensor& t) {
  const std::vector<uint64_t> got = t.download();
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != t.storage()[i]) {
      char text[96];
      std::snprintf(text, sizeof text, " storage element %zu is 0x%llx, expected 0x%llx", i,
                    static_cast<unsigned long long>(got[i]),
                    static_cast<unsigned long long>(t.storage()[i]));
      return ::testing::AssertionFailure() << mimic::isa::dtypeName(t.dtype()) << text;
    }
  }
  return ::testing::AssertionSuccess();
}

// Indices in [lo, hi) from a seed; with many draws over a small range there are duplicates.
inline std::vector<int64_t> randomIndices(size_t n, int64_t lo, int64_t hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<int64_t> v(n);
  for (int64_t& x : v) x = lo + int64_t(rng() % uint64_t(hi - lo));
  return v;
}

class IndexOps : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(mimicInitWithPreset(0, "tiny", ""), MIMIC_SUCCESS); }
  mimic::ops::LaunchContext ctx_;
};

// Column-major strides: a transposed layout of any rank.
inline Sizes transposed(const Sizes& sizes) {
  Sizes strides(sizes.size());
  int64_t s = 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    strides[d] = s;
    s *= sizes[d];
  }
  return strides;
}

// Every other element, with a gap after each row.
inline Sizes spread(const Sizes& sizes) {
  Sizes strides(sizes.size());
  int64_t s = 2;
  for (int d = int(sizes.size()) - 1; d >= 0; --d) {
    strides[d] = s;
    s = s * sizes[d] + 1;
  }
  return strides;
}

inline std::vector<Sizes> layouts(const Sizes& sizes) {
  return {{}, transposed(sizes), spread(sizes)};
}

}  // namespace indextest
