// Shared by the collectives tests: a 4-device tiny system, communicators, typed host buffers
// with the device's f16/bf16 rounding, and a host reference for every reduction.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "mimic/mimic_collectives.h"

#define EXPECT_COLL(expected, call)                                                     \
  do {                                                                                  \
    mimicResult collActual_ = (call);                                                   \
    EXPECT_EQ(collActual_, expected)                                                    \
        << #call << " returned " << mimicCollGetErrorName(collActual_) << ", expected " \
        << mimicCollGetErrorName(expected);                                             \
  } while (0)
#define ASSERT_COLL_OK(call) ASSERT_EQ((call), MIMIC_SUCCESS) << #call << ": " << collDetail()

inline std::string collDetail() {
  const char* detail = nullptr;
  mimicCollGetErrorDetail(&detail);
  return detail ? detail : "";
}

constexpr int kDevices = 4;

class CollTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(mimicInitWithPreset(0, "tiny", "system.num_devices=4"), MIMIC_SUCCESS);
  }
};

// n communicators on devices 0..n-1 (or on `devices`) and one queue per device.
struct Clique {
  explicit Clique(int n) : Clique(allDevices(n)) {}
  explicit Clique(const std::vector<int>& devices) : comms(devices.size()), queues(devices.size()) {
    const int n = int(devices.size());
    EXPECT_EQ(mimicCommInitAll(comms.data(), n, devices.data()), MIMIC_SUCCESS) << collDetail();
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(mimicQueueCreate(devices[r], 0, MIMIC_QUEUE_PRIORITY_LOW, &queues[r]),
                MIMIC_SUCCESS);
    }
  }
  static std::vector<int> allDevices(int n) {
    std::vector<int> d(n);
    for (int i = 0; i < n; ++i) d[i] = i;
    return d;
  }
  ~Clique() {
    for (mimicComm c : comms) EXPECT_EQ(mimicCommDestroy(c), MIMIC_SUCCESS);
    for (mimicQueue q : queues) EXPECT_EQ(mimicQueueDestroy(q), MIMIC_SUCCESS);
  }
  int size() const { return int(comms.size()); }
  void synchronize() {
    for (mimicQueue q : queues) EXPECT_EQ(mimicQueueSynchronize(q), MIMIC_SUCCESS);
  }
  std::vector<mimicComm> comms;
  std::vector<mimicQueue> queues;
};

inline size_t typeSize(mimicDataType t) {
  static constexpr size_t kSizes[] = {4, 2, 2, 4, 8, 1};
  return kSizes[t];
}
inline bool isFloat(mimicDataType t) {
  return t <= mimicBfloat16;
}

// IEEE binary16 and bfloat16 from f32, round to nearest even (as the device rounds).
inline uint16_t toBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f)) return uint16_t(u >> 16 | 0x40);
  return uint16_t((u + 0x7fff + (u >> 16 & 1)) >> 16);
}
inline float fromBf16(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint16_t toF16(float f) {
  const _Float16 h = _Float16(f);  // GCC converts with round to nearest even
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}
inline float fromF16(uint16_t bits) {
  _Float16 h;
  std::memcpy(&h, &bits, 2);
  return float(h);
}

// Typed access to a byte buffer of elements of type t.
inline double getValue(mimicDataType t, const std::vector<uint8_t>& b, size_t i) {
  const uint8_t* p = b.data() + i * typeSize(t);
  switch (t) {
    case mimicFloat32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case mimicFloat16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return fromF16(v);
    }
    case mimicBfloat16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return fromBf16(v);
    }
    case mimicInt32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case mimicInt64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return double(v);
    }
    case mimicUint8:
      return *p;
  }
  return 0;
}
// Stores v (exactly representable for ints; rounded from f32 for the floats).
inline void setValue(mimicDataType t, std::vector<uint8_t>& b, size_t i, double v) {
  uint8_t* p = b.data() + i * typeSize(t);
  switch (t) {
    case mimicFloat32: {
      float f = float(v);
      std::memcpy(p, &f, 4);
      break;
    }
    case mimicFloat16: {
      uint16_t h = toF16(float(v));
      std::memcpy(p, &h, 2);
      break;
    }
    case mimicBfloat16: {
      uint16_t h = toBf16(float(v));
      std::memcpy(p, &h, 2);
      break;
    }
    case mimicInt32: {
      int32_t x = int32_t(v);
      std::memcpy(p, &x, 4);
      break;
    }
    case mimicInt64: {
      int64_t x = int64_t(v);
      std::memcpy(p, &x, 8);
      break;
    }
    case mimicUint8:
      *p = uint8_t(int64_t(v));
      break;
  }
}

// Inputs whose reduction over up to 4 ranks is exact in every type, so that any order of
// evaluation gives the same bits: small integers (products of 1, 2 and -1; u8 non-negative).
inline std::vector<uint8_t> makeInput(mimicDataType t, mimicReduceOp op, size_t count, int seed) {
  std::mt19937 rng(uint32_t(seed * 7919 + int(t) * 31 + int(op)));
  std::vector<uint8_t> b(count * typeSize(t));
  for (size_t i = 0; i < count; ++i) {
    int v;
    if (op == mimicProd) {
      static const int kSigned[] = {1, 2, -1}, kUnsigned[] = {1, 2, 3};
      v = (t == mimicUint8 ? kUnsigned : kSigned)[rng() % 3];
    } else if (op == mimicMin || op == mimicMax) {
      v = int(rng() % 101) - (t == mimicUint8 ? 0 : 50);
    } else {
      v = int(rng() % 7) - (t == mimicUint8 ? 0 : 3);
    }
    setValue(t, b, i, v);
  }
  return b;
}

// The reduction of inputs[r][i] over r, with the device's semantics for Avg (sum / n in the
// type: f32 division, then rounding to f16/bf16; integers truncate).
inline double reduceRef(mimicDataType t, mimicReduceOp op,
                        const std::vector<std::vector<uint8_t>>& in, size_t i) {
  double acc = getValue(t, in[0], i);
  for (size_t r = 1; r < in.size(); ++r) {
    const double v = getValue(t, in[r], i);
    switch (op) {
      case mimicSum:
      case mimicAvg:
        acc += v;
        break;
      case mimicProd:
        acc *= v;
        break;
      case mimicMin:
        acc = std::min(acc, v);
        break;
      case mimicMax:
        acc = std::max(acc, v);
        break;
    }
  }
  if (op == mimicAvg && in.size() > 1) {
    const double n = double(in.size());
    if (isFloat(t)) return double(float(acc) / float(n));
    if (t == mimicUint8) return double(int64_t(acc) % 256 / int64_t(n));
    return double(int64_t(acc) / int64_t(n));
  }
  return acc;
}

inline void* devAlloc(int device, size_t bytes) {
  void* p = nullptr;
  EXPECT_EQ(mimicMemAlloc(device, bytes ? bytes : 1, &p), MIMIC_SUCCESS);
  return p;
}
inline void toDevice(void* dev, const std::vector<uint8_t>& host) {
  if (!host.empty()) {
    EXPECT_EQ(mimicMemcpy(dev, host.data(), host.size()), MIMIC_SUCCESS);
  }
}
inline std::vector<uint8_t> fromDevice(const void* dev, size_t bytes) {
  std::vector<uint8_t> host(bytes);
  if (bytes) {
    EXPECT_EQ(mimicMemcpy(host.data(), dev, bytes), MIMIC_SUCCESS);
  }
  return host;
}
