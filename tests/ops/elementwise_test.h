// Device tensors and the checking harness of the elementwise tests: tensors of any layout
// (strided, broadcast, negative strides) over a device allocation, and `check`, which runs a
// program on the device and compares every element (and the bytes outside the output view)
// with the host reference of elementwise_reference.h.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "../driver/driver_helpers.h"
#include "elementwise_reference.h"
#include "mimic/mimic_trace.h"
#include "torch_backend/ops/elementwise.h"

using ewref::Num;
using mimic::isa::DType;
using mimic::ops::RandomKey;
using mimic::ops::TensorView;

constexpr DType kAllTypes[] = {DType::F32, DType::F16, DType::BF16,
                               DType::I32, DType::I64, DType::U8};
constexpr DType kFloatTypes[] = {DType::F32, DType::F16, DType::BF16};
constexpr DType kIntTypes[] = {DType::I32, DType::I64, DType::U8};

// The kernels `body` launches on device 0, counted from the activity trace.
inline int kernelLaunches(const std::function<void()>& body) {
  EXPECT_EQ(mimicTraceStart(1024), MIMIC_SUCCESS);
  body();
  EXPECT_EQ(mimicDeviceSynchronize(0), MIMIC_SUCCESS);
  EXPECT_EQ(mimicTraceStop(), MIMIC_SUCCESS);
  std::vector<mimicActivity> records(1024);
  size_t count = 0;
  EXPECT_EQ(mimicTraceRead(records.data(), records.size(), &count), MIMIC_SUCCESS);
  int kernels = 0;
  for (size_t i = 0; i < count; ++i) kernels += records[i].kind == MIMIC_ACTIVITY_KERNEL;
  return kernels;
}

// A view over a device allocation that holds exactly the elements the view can reach.
class Tensor {
 public:
  // Contiguous when `strides` is empty. Elements get `fill(k)`, k the allocation index.
  Tensor(DType type, std::vector<int64_t> sizes, std::vector<int64_t> strides = {},
         const std::function<Num(int64_t)>& fill = {})
      : type_(type), sizes_(std::move(sizes)), strides_(std::move(strides)) {
    if (strides_.empty()) strides_ = mimic::ops::contiguousStrides(sizes_);
    int64_t high = 0;
    for (size_t d = 0; d < sizes_.size(); ++d) {
      const int64_t span = (std::max<int64_t>(sizes_[d], 1) - 1) * strides_[d];
      (span < 0 ? offset_ : high) += span < 0 ? -span : span;
    }
    elements_ = offset_ + high + 1;
    bytes_.resize(elements_ * size());
    for (int64_t k = 0; k < elements_; ++k) {
      ewref::encode(fill ? fill(k) : Num{-77.0, 77}, type_, bytes_.data() + k * size());
    }
    device_ = deviceAlloc(bytes_.size());
    upload();
  }
  ~Tensor() { mimicMemFree(device_); }
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;

  TensorView view() const {
    return {static_cast<uint8_t*>(device_) + offset_ * size(), type_, sizes_, strides_};
  }
  void upload() { ASSERT_EQ(mimicMemcpy(device_, bytes_.data(), bytes_.size()), MIMIC_SUCCESS); }
  void download() { ASSERT_EQ(mimicMemcpy(bytes_.data(), device_, bytes_.size()), MIMIC_SUCCESS); }

  DType type() const { return type_; }
  const std::vector<int64_t>& sizes() const { return sizes_; }
  int64_t numel() const { return view().numel(); }
  int size() const { return mimic::isa::dtypeSize(type_); }
  int64_t elements() const { return elements_; }
  // The allocation index of the element at `index` (one per dim).
  int64_t position(const std::vector<int64_t>& index) const {
    int64_t k = offset_;
    for (size_t d = 0; d < index.size(); ++d) k += index[d] * strides_[d];
    return k;
  }
  Num at(int64_t k) const { return ewref::decode(bytes_.data() + k * size(), type_); }

 private:
  DType type_;
  std::vector<int64_t> sizes_, strides_;
  int64_t offset_ = 0, elements_ = 0;
  std::vector<uint8_t> bytes_;
  void* device_ = nullptr;
};

// Test values: floats k/4 in [-8, 8] (exact in every float type), ints in [-50, 50], u8 any.
inline std::function<Num(int64_t)> values(DType type, uint64_t salt) {
  return [type, salt](int64_t k) {
    const uint64_t h = (uint64_t(k) + salt * 7919) * 0x9E3779B97F4A7C15ull >> 40;
    if (mimic::isa::isFloat(type)) return Num{double(int64_t(h % 65) - 32) / 4.0, 0};
    if (type == DType::U8) return Num{0, int64_t(h % 256)};
    return Num{0, int64_t(h % 101) - 50};
  };
}

// Calls fn(index, row-major linear index) for every index of `sizes`.
inline void forEachIndex(const std::vector<int64_t>& sizes,
                         const std::function<void(const std::vector<int64_t>&, int64_t)>& fn) {
  int64_t total = 1;
  for (int64_t s : sizes) total *= s;
  std::vector<int64_t> index(sizes.size(), 0);
  for (int64_t linear = 0; linear < total; ++linear) {
    fn(index, linear);
    for (int d = static_cast<int>(sizes.size()) - 1; d >= 0; --d) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
  }
}

inline bool close(Num actual, Num expected, DType type, double tolerance) {
  if (ewref::isInt(type)) return actual.i == expected.i;
  if (std::isnan(expected.f)) return std::isnan(actual.f);
  if (actual.f == expected.f) return true;
  return std::fabs(actual.f - expected.f) <= tolerance * std::max(1.0, std::fabs(expected.f));
}

// Runs the program on the device and checks out against the reference: every element within
// `tolerance` (relative, floats; ints exact) and every byte outside out's view unchanged.
inline void check(const std::string& program, DType compute, const std::vector<Tensor*>& inputs,
                  Tensor& out, const std::vector<double>& scalars = {}, double tolerance = 0,
                  RandomKey random = {}) {
  std::vector<TensorView> views;
  ewref::Context c;
  c.compute = compute;
  for (Tensor* in : inputs) {
    views.push_back(in->view());
    c.inputTypes.push_back(in->type());
  }
  c.scalars = scalars;
  c.seed = random.seed;
  const std::vector<Num> before = [&] {
    std::vector<Num> v;
    for (int64_t k = 0; k < out.elements(); ++k) v.push_back(out.at(k));
    return v;
  }();
  mimic::ops::elementwise({}, out.view(), views, program, compute,
                          std::vector<mimic::ops::ScalarArg>(scalars.begin(), scalars.end()),
                          random);
  out.download();
  const std::vector<std::string> words = ewref::tokens(program);
  std::vector<bool> written(out.elements(), false);
  int failures = 0;
  forEachIndex(out.sizes(), [&](const std::vector<int64_t>& index, int64_t linear) {
    c.inputs.clear();
    for (Tensor* in : inputs) c.inputs.push_back(in->at(in->position(index)));
    c.counter = random.offset + uint64_t(linear);
    const Num expected = ewref::Evaluator(c).run(words, out.type());
    const int64_t k = out.position(index);
    written[k] = true;
    const Num actual = out.at(k);
    if (!close(actual, expected, out.type(), tolerance) && ++failures <= 5) {
      ADD_FAILURE() << "'" << program << "' compute " << mimic::isa::dtypeName(compute) << " out "
                    << mimic::isa::dtypeName(out.type()) << ": element " << linear << " is "
                    << actual.f << "/" << actual.i << ", expected " << expected.f << "/"
                    << expected.i;
    }
  });
  for (int64_t k = 0; k < out.elements(); ++k) {
    if (!written[k] && !close(out.at(k), before[k], out.type(), 0) && ++failures <= 5) {
      ADD_FAILURE() << "'" << program << "' wrote allocation element " << k
                    << " outside the output view";
    }
  }
  EXPECT_EQ(failures, 0) << program;
}
