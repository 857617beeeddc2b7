// Host side of sort: checks, the padded row length and the launch (one workgroup a row).
#include "torch_backend/ops/sort.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "torch_backend/ops/kernel_cache.h"
#include "torch_backend/ops/sort_kernel.h"

namespace mimic::ops {
namespace {

using isa::DType;

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("sort: " + what);
}

std::string sizesText(const std::vector<int64_t>& sizes) {
  std::string text = "[";
  for (size_t i = 0; i < sizes.size(); ++i) text += (i ? ", " : "") + std::to_string(sizes[i]);
  return text + "]";
}

void checkRows(const char* name, const TensorView& v, const std::vector<int64_t>& sizes) {
  if (v.sizes != sizes || v.strides.size() != 2) {
    fail(std::string(name) + " has sizes " + sizesText(v.sizes) + "; expected " + sizesText(sizes));
  }
}

int64_t paddedLength(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

void addOperand(std::vector<int64_t>& args, const TensorView& v) {
  const int64_t e = isa::dtypeSize(v.dtype);
  args.push_back(reinterpret_cast<int64_t>(v.data));
  args.push_back(v.data ? v.strides[0] * e : 0);
  args.push_back(v.data ? v.strides[1] * e : 0);
}

}  // namespace

int64_t sortRowCapacity(int device) {
  const auto bytes = static_cast<int64_t>(scratchpadBytes(device));
  int64_t p = 1;
  while (detail::sortScratchpadBytes(2 * p) <= bytes) p *= 2;
  return p;
}

void sort(const LaunchContext& ctx, const TensorView& values, const TensorView& indices,
          const TensorView& in, bool descending) {
  if (in.sizes.size() != 2 || in.strides.size() != 2) {
    fail("rows must be 2-D [R, N], got sizes " + sizesText(in.sizes));
  }
  for (int64_t s : in.sizes) {
    if (s < 0) fail("negative size in " + sizesText(in.sizes));
  }
  if (values.data == nullptr && indices.data == nullptr) fail("no output to write");
  if (values.data != nullptr) {
    checkRows("values", values, in.sizes);
    if (values.dtype != in.dtype) {
      fail(std::string("values have dtype ") + isa::dtypeName(values.dtype) + ", in has " +
           isa::dtypeName(in.dtype));
    }
  }
  if (indices.data != nullptr) {
    checkRows("indices", indices, in.sizes);
    if (indices.dtype != DType::I64) {
      fail(std::string("indices must be i64, got ") + isa::dtypeName(indices.dtype));
    }
  }
  const int64_t rows = in.sizes[0], n = in.sizes[1];
  if (rows == 0 || n == 0) return;
  const int64_t capacity = sortRowCapacity(ctx.device);
  if (n > capacity) {
    fail("rows of " + std::to_string(n) + " elements exceed the " + std::to_string(capacity) +
         " a workgroup sorts in the scratchpad");
  }
  const detail::SortShape shape{in.dtype, descending, values.data != nullptr,
                                indices.data != nullptr};
  const int64_t p = paddedLength(n);
  std::vector<int64_t> args{n, p};
  addOperand(args, in);
  addOperand(args, values);
  addOperand(args, indices);
  int64_t at = 0;
  for (int64_t bytes : {8 * p, 8 * p, 8 * p, 8 * p, p, p, p}) {
    args.push_back(at);
    at += bytes;
  }
  const KernelRef fn =
      cachedKernel(ctx.device, shape.key(), [&] { return detail::buildSortKernel(shape); });
  launch(ctx, fn, {static_cast<uint32_t>(rows), 1, 1}, args);
}

}  // namespace mimic::ops
