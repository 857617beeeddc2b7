// Test helpers for ops on strided views (reduce, gemm): element encoding for every dtype, device
// buffers holding a view's storage, and index arithmetic over sizes and strides.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "../driver/driver_helpers.h"
#include "sim/isa/scalar_literal.h"
#include "torch_backend/ops/tensor_view.h"

namespace stridedtest {

using mimic::isa::DType;

class OpsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(mimicInitWithPreset(0, "tiny", ""), MIMIC_SUCCESS); }
};

inline int sizeOf(DType t) {
  return mimic::isa::dtypeSize(t);
}

// Writes `v` as one element of type t (floats round to nearest even; ints wrap from int64).
inline void encode(double v, DType t, uint8_t* p) {
  if (mimic::isa::isFloat(t)) {
    const uint64_t bits = mimic::isa::floatToBits(v, t);
    std::memcpy(p, &bits, sizeOf(t));  // little-endian: the low bytes
    return;
  }
  const int64_t i = static_cast<int64_t>(v);
  std::memcpy(p, &i, sizeOf(t));
}

inline double decode(DType t, const uint8_t* p) {
  if (mimic::isa::isFloat(t)) {
    uint64_t bits = 0;
    std::memcpy(&bits, p, sizeOf(t));
    return mimic::isa::bitsToFloat(bits, t);
  }
  switch (t) {
    case DType::I32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::I64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    default:
      return *p;
  }
}

// The value `v` becomes once stored as t.
inline double roundTo(double v, DType t) {
  uint8_t b[8] = {};
  encode(v, t, b);
  return decode(t, b);
}

// A host copy of a view's storage and the device allocation holding it. Element i of the
// storage is at storage offset i; the view's first element is at `base` (so negative strides
// work).
struct Strided {
  DType type = DType::F32;
  std::vector<int64_t> sizes, strides;
  int64_t base = 0;
  std::vector<double> storage;
  void* device = nullptr;

  Strided(DType t, std::vector<int64_t> sz, std::vector<int64_t> st = {}) : type(t), sizes(sz) {
    strides = st.empty() ? mimic::ops::contiguousStrides(sizes) : st;
    int64_t low = 0, high = 0;
    bool empty = false;
    for (size_t d = 0; d < sizes.size(); ++d) {
      empty |= sizes[d] == 0;
      const int64_t span = (sizes[d] - 1) * strides[d];
      low += std::min<int64_t>(0, span);
      high += std::max<int64_t>(0, span);
    }
    if (empty) low = high = 0;
    base = -low;
    storage.assign(high - low + 1, 0.0);
    device = deviceAlloc(storage.size() * sizeOf(t) + 8);
  }
  ~Strided() { mimicMemFree(device); }
  Strided(const Strided&) = delete;
  Strided& operator=(const Strided&) = delete;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    return n;
  }
  // Storage offset of the element with the given row-major linear index in the view.
  int64_t offsetOf(int64_t linear) const {
    int64_t off = base;
    for (int d = static_cast<int>(sizes.size()) - 1; d >= 0; --d) {
      off += (linear % sizes[d]) * strides[d];
      linear /= sizes[d];
    }
    return off;
  }
  double& at(int64_t linear) { return storage[offsetOf(linear)]; }

  mimic::ops::TensorView view() const {
    auto* first = static_cast<uint8_t*>(device) + base * sizeOf(type);
    return {first, type, sizes, strides};
  }
  void upload() {
    std::vector<uint8_t> bytes(storage.size() * sizeOf(type));
    for (size_t i = 0; i < storage.size(); ++i) encode(storage[i], type, &bytes[i * sizeOf(type)]);
    ASSERT_EQ(mimicMemcpy(device, bytes.data(), bytes.size()), MIMIC_SUCCESS);
  }
  void download() {
    ASSERT_EQ(mimicDeviceSynchronize(0), MIMIC_SUCCESS);
    std::vector<uint8_t> bytes(storage.size() * sizeOf(type));
    ASSERT_EQ(mimicMemcpy(bytes.data(), device, bytes.size()), MIMIC_SUCCESS);
    for (size_t i = 0; i < storage.size(); ++i) storage[i] = decode(type, &bytes[i * sizeOf(type)]);
  }
};

// Random values stored exactly in t: floats in [lo, hi], ints in [lo, hi] (whole numbers).
inline double randomValue(std::mt19937& rng, DType t, double lo, double hi) {
  if (mimic::isa::isFloat(t))
    return roundTo(std::uniform_real_distribution<double>(lo, hi)(rng), t);
  return static_cast<double>(std::uniform_int_distribution<int64_t>(static_cast<int64_t>(lo),
                                                                    static_cast<int64_t>(hi))(rng));
}

inline void fillRandom(Strided& s, std::mt19937& rng, double lo, double hi) {
  for (double& v : s.storage) v = randomValue(rng, s.type, lo, hi);
}

}  // namespace stridedtest
