// Host side of sort: checks, the padded row length and the launches: one workgroup a row, or
// the passes of long rows (sort_kernel.h).
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

// Arguments of one launch: L is the local network's length (the padded row, or a piece).
std::vector<int64_t> outputArgs(int64_t n, int64_t l, int64_t k, int64_t j, char* keys, char* idx,
                                const TensorView& values, const TensorView& indices,
                                const TensorView& in) {
  const int64_t p = paddedLength(n);
  std::vector<int64_t> args{
      n, l, k, j, reinterpret_cast<int64_t>(keys), reinterpret_cast<int64_t>(idx), 8 * p};
  addOperand(args, in);
  addOperand(args, values);
  addOperand(args, indices);
  int64_t at = 0;
  for (int64_t bytes : {8 * l, 8 * l, 8 * l, 8 * l, l, l, l}) {
    args.push_back(at);
    at += bytes;
  }
  return args;
}

void run(const LaunchContext& ctx, const detail::SortShape& shape, const std::vector<int64_t>& args,
         std::pair<int64_t, int64_t> grid) {
  const KernelRef fn =
      cachedKernel(ctx.device, shape.key(), [&] { return detail::buildSortKernel(shape); });
  launch(ctx, fn, {static_cast<uint32_t>(grid.first), static_cast<uint32_t>(grid.second), 1}, args);
}

}  // namespace

int64_t sortRowCapacity(int device) {
  const auto bytes = static_cast<int64_t>(scratchpadBytes(device));
  int64_t p = 1;
  while (detail::sortScratchpadBytes(2 * p) <= bytes) p *= 2;
  return p;
}

void sort(const LaunchContext& ctx, const TensorView& values, const TensorView& indices,
          const TensorView& in, bool descending, const Workspace& workspace) {
  if (in.sizes.size() != 2 || in.strides.size() != 2) {
    fail("rows must be 2-D [R, N], got sizes " + sizesText(in.sizes));
  }
  for (int64_t s : in.sizes) {
    if (s < 0) fail("negative size in " + sizesText(in.sizes));
  }
  if (values.data == nullptr && indices.data == nullptr) fail("no output to write");
  // Float keys are ordered through their f32 bits: f64 keys would be rounded.
  if (in.dtype == DType::F64) fail("f64 rows are not supported (keys are ordered as f32)");
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
  const int64_t p = paddedLength(n);
  detail::SortShape shape{in.dtype, descending, values.data != nullptr, indices.data != nullptr};
  if (n <= capacity) {
    run(ctx, shape, outputArgs(n, p, 0, 0, nullptr, nullptr, values, indices, in), {rows, 1});
    return;
  }
  if (!workspace) {
    fail("rows of " + std::to_string(n) + " elements exceed the " + std::to_string(capacity) +
         " a workgroup sorts, and no workspace was given");
  }
  auto* keys = static_cast<char*>(workspace(static_cast<size_t>(rows * p * 16)));
  char* idx = keys + rows * p * 8;
  const int64_t l = capacity, pieces = p / l;
  auto pass = [&](detail::SortPass kind, bool last, int64_t k, int64_t j) {
    shape.pass = kind;
    shape.last = last;
    run(ctx, shape, outputArgs(n, l, k, j, keys, idx, values, indices, in), {pieces, rows});
  };
  pass(detail::SortPass::Chunk, false, 0, 0);
  for (int64_t k = 2 * l; k <= p; k *= 2) {
    for (int64_t j = k / 2; j >= l; j /= 2) pass(detail::SortPass::Step, false, k, j);
    pass(detail::SortPass::Merge, k == p, k, 0);
  }
}

}  // namespace mimic::ops
