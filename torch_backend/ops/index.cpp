#include "torch_backend/ops/index.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "torch_backend/ops/index_plan.h"

namespace mimic::ops {
namespace {

using detail::DataOperand;
using detail::IndexedCopy;
using detail::IndexMode;
using detail::IndexOperand;
using detail::ItemOrder;
using isa::DType;

[[noreturn]] void fail(const char* op, const std::string& what) {
  throw std::invalid_argument(std::string(op) + ": " + what);
}

std::string sizesText(const std::vector<int64_t>& sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

// The view with a 0-d tensor as 1-d of size 1, after checking its shape is well formed.
TensorView checked(const char* op, const char* name, const TensorView& v) {
  if (v.sizes.size() != v.strides.size()) {
    fail(op, std::string(name) + " has " + std::to_string(v.sizes.size()) + " sizes but " +
                 std::to_string(v.strides.size()) + " strides");
  }
  for (int64_t s : v.sizes) {
    if (s < 0) fail(op, std::string(name) + " has a negative size: " + sizesText(v.sizes));
  }
  if (int(v.dtype) >= isa::kNumDTypes) fail(op, std::string(name) + " has an invalid dtype");
  TensorView out = v;
  if (out.sizes.empty()) {
    out.sizes = {1};
    out.strides = {0};
  }
  return out;
}

TensorView checkedIndex(const char* op, const char* name, const TensorView& v) {
  if (v.dtype != DType::I32 && v.dtype != DType::I64) {
    fail(op, std::string(name) + " must be i32 or i64, not " + isa::dtypeName(v.dtype));
  }
  return checked(op, name, v);
}

// An in-place target must not reach one element through two positions.
void checkNoInternalOverlap(const char* op, const TensorView& self) {
  for (int d = 0; d < self.dim(); ++d) {
    if (self.strides[d] == 0 && self.sizes[d] > 1) {
      fail(op, "self overlaps itself (stride 0 in dim " + std::to_string(d) + ")");
    }
  }
}

void checkSameDtype(const char* op, const TensorView& a, const char* aName, const TensorView& b,
                    const char* bName) {
  if (a.dtype != b.dtype) {
    fail(op, std::string(aName) + " is " + isa::dtypeName(a.dtype) + " but " + bName + " is " +
                 isa::dtypeName(b.dtype));
  }
}

int wrapDim(const char* op, int dim, int rank) {
  if (dim < -rank || dim >= rank) {
    fail(op, "dim " + std::to_string(dim) + " out of range for a " + std::to_string(rank) +
                 "-d tensor");
  }
  return dim < 0 ? dim + rank : dim;
}

void checkRank(const char* op, const TensorView& a, const char* aName, int rank) {
  if (a.dim() != rank) {
    fail(op, std::string(aName) + " has " + std::to_string(a.dim()) + " dims, expected " +
                 std::to_string(rank));
  }
}

// The sizes or strides without entry `d`.
std::vector<int64_t> without(const std::vector<int64_t>& v, int d) {
  std::vector<int64_t> out = v;
  out.erase(out.begin() + d);
  return out;
}

// A 1-d (or 0-d) index over one dim of the indexed tensor.
IndexOperand listIndex(const TensorView& index, int64_t dimSize, int64_t dimStride) {
  return {index.data, index.dtype, {index.strides[0]}, dimSize, dimStride};
}

IndexMode addMode(DType t) {
  return t == DType::F32 || t == DType::I32 || t == DType::I64 ? IndexMode::AtomicAdd
                                                               : IndexMode::OrderedAdd;
}

// v's entries in the order of `dims` (a permutation).
std::vector<int64_t> permuted(const std::vector<int64_t>& v, const std::vector<int>& dims) {
  std::vector<int64_t> out;
  for (int d : dims) out.push_back(v[d]);
  return out;
}

}  // namespace

void indexSelect(const LaunchContext& ctx, const TensorView& outView, const TensorView& inView,
                 int dim, const TensorView& indexView) {
  const char* op = "index_select";
  const TensorView out = checked(op, "out", outView), in = checked(op, "in", inView);
  const TensorView index = checkedIndex(op, "index", indexView);
  if (indexView.dim() > 1) fail(op, "index must be 1-d, got sizes " + sizesText(index.sizes));
  checkSameDtype(op, out, "out", in, "in");
  checkRank(op, out, "out", in.dim());
  const int d = wrapDim(op, dim, in.dim());
  std::vector<int64_t> expected = in.sizes;
  expected[d] = index.sizes[0];
  if (out.sizes != expected) {
    fail(op, "out has sizes " + sizesText(out.sizes) + ", expected " + sizesText(expected));
  }
  IndexedCopy c;
  c.op = op;
  c.mode = IndexMode::Gather;
  c.dtype = in.dtype;
  c.itemSizes = {index.sizes[0]};
  c.blockSizes = without(in.sizes, d);
  c.indices = {listIndex(index, in.sizes[d], in.strides[d])};
  c.indexed = {in.data, {0}, without(in.strides, d)};
  c.item = {out.data, {out.strides[d]}, without(out.strides, d)};
  detail::runIndexedCopy(ctx, c);
}

void gather(const LaunchContext& ctx, const TensorView& outView, const TensorView& inView, int dim,
            const TensorView& indexView) {
  const char* op = "gather";
  const TensorView out = checked(op, "out", outView), in = checked(op, "in", inView);
  const TensorView index = checkedIndex(op, "index", indexView);
  checkSameDtype(op, out, "out", in, "in");
  checkRank(op, index, "index", in.dim());
  checkRank(op, out, "out", in.dim());
  const int d = wrapDim(op, dim, in.dim());
  if (out.sizes != index.sizes) {
    fail(op, "out has sizes " + sizesText(out.sizes) + ", index " + sizesText(index.sizes));
  }
  for (int k = 0; k < in.dim(); ++k) {
    if (k != d && index.sizes[k] > in.sizes[k]) {
      fail(op, "index sizes " + sizesText(index.sizes) + " exceed in sizes " + sizesText(in.sizes) +
                   " in dim " + std::to_string(k));
    }
  }
  IndexedCopy c;
  c.op = op;
  c.mode = IndexMode::Gather;
  c.dtype = in.dtype;
  c.itemSizes = index.sizes;
  c.indices = {{index.data, index.dtype, index.strides, in.sizes[d], in.strides[d]}};
  c.indexed = {in.data, in.strides, {}};
  c.indexed.itemStrides[d] = 0;
  c.item = {out.data, out.strides, {}};
  detail::runIndexedCopy(ctx, c);
}

void scatter(const LaunchContext& ctx, const TensorView& selfView, int dim,
             const TensorView& indexView, const TensorView& srcView, bool accumulate) {
  const char* op = accumulate ? "scatter_add" : "scatter";
  const TensorView self = checked(op, "self", selfView), src = checked(op, "src", srcView);
  const TensorView index = checkedIndex(op, "index", indexView);
  checkSameDtype(op, self, "self", src, "src");
  checkRank(op, index, "index", self.dim());
  checkRank(op, src, "src", self.dim());
  checkNoInternalOverlap(op, self);
  const int d = wrapDim(op, dim, self.dim());
  for (int k = 0; k < self.dim(); ++k) {
    if (index.sizes[k] > src.sizes[k] || (k != d && index.sizes[k] > self.sizes[k])) {
      fail(op, "index sizes " + sizesText(index.sizes) + " exceed src sizes " +
                   sizesText(src.sizes) + " or self sizes " + sizesText(self.sizes) + " in dim " +
                   std::to_string(k));
    }
  }
  IndexedCopy c;
  c.op = op;
  c.mode = accumulate ? addMode(self.dtype) : IndexMode::Put;
  c.dtype = self.dtype;
  // In-order modes take the scatter dim innermost: one workgroup then owns each set of items
  // that can hit the same element of self.
  c.order = c.mode == IndexMode::AtomicAdd ? ItemOrder::Any : ItemOrder::SerialInner;
  std::vector<int> dims;
  for (int k = 0; k < self.dim(); ++k) {
    if (k != d || c.order == ItemOrder::Any) dims.push_back(k);
  }
  if (c.order != ItemOrder::Any) dims.push_back(d);
  std::vector<int64_t> selfStrides = self.strides;
  selfStrides[d] = 0;
  c.itemSizes = permuted(index.sizes, dims);
  c.indices = {
      {index.data, index.dtype, permuted(index.strides, dims), self.sizes[d], self.strides[d]}};
  c.indexed = {self.data, permuted(selfStrides, dims), {}};
  c.item = {src.data, permuted(src.strides, dims), {}};
  detail::runIndexedCopy(ctx, c);
}

void indexAdd(const LaunchContext& ctx, const TensorView& selfView, int dim,
              const TensorView& indexView, const TensorView& sourceView, double alpha) {
  const char* op = "index_add";
  const TensorView self = checked(op, "self", selfView);
  const TensorView source = checked(op, "source", sourceView);
  const TensorView index = checkedIndex(op, "index", indexView);
  if (indexView.dim() > 1) fail(op, "index must be 1-d, got sizes " + sizesText(index.sizes));
  checkSameDtype(op, self, "self", source, "source");
  checkRank(op, source, "source", self.dim());
  checkNoInternalOverlap(op, self);
  const int d = wrapDim(op, dim, self.dim());
  std::vector<int64_t> expected = self.sizes;
  expected[d] = index.sizes[0];
  if (source.sizes != expected) {
    fail(op, "source has sizes " + sizesText(source.sizes) + ", expected " + sizesText(expected));
  }
  if (!isa::isFloat(self.dtype) && alpha != std::trunc(alpha)) {
    fail(op,
         "alpha " + std::to_string(alpha) + " is not an integer for " + isa::dtypeName(self.dtype));
  }
  IndexedCopy c;
  c.op = op;
  c.mode = addMode(self.dtype);
  c.order = c.mode == IndexMode::AtomicAdd ? ItemOrder::Any : ItemOrder::Serial;
  c.dtype = self.dtype;
  c.alpha = alpha;
  c.itemSizes = {index.sizes[0]};
  c.blockSizes = without(self.sizes, d);
  c.indices = {listIndex(index, self.sizes[d], self.strides[d])};
  c.indexed = {self.data, {0}, without(self.strides, d)};
  c.item = {source.data, {source.strides[d]}, without(source.strides, d)};
  detail::runIndexedCopy(ctx, c);
}

void indexPut(const LaunchContext& ctx, const TensorView& self,
              const std::vector<TensorView>& indices, const TensorView& values, bool accumulate) {
  const char* op = accumulate ? "index_put_acc" : "index_put";
  checked(op, "self", self);
  checked(op, "values", values);
  const size_t m = indices.size();
  if (m == 0 || int(m) > self.dim()) {
    fail(op, std::to_string(m) + " indices for a " + std::to_string(self.dim()) + "-d self");
  }
  checkSameDtype(op, self, "self", values, "values");
  checkNoInternalOverlap(op, self);
  const std::vector<int64_t>& items = indices[0].sizes;
  IndexedCopy c;
  for (size_t k = 0; k < m; ++k) {
    const std::string name = "indices[" + std::to_string(k) + "]";
    checkedIndex(op, name.c_str(), indices[k]);
    if (indices[k].sizes != items) {
      fail(op,
           name + " has sizes " + sizesText(indices[k].sizes) + ", indices[0] " + sizesText(items));
    }
    c.indices.push_back(
        {indices[k].data, indices[k].dtype, indices[k].strides, self.sizes[k], self.strides[k]});
  }
  std::vector<int64_t> expected = items;
  expected.insert(expected.end(), self.sizes.begin() + m, self.sizes.end());
  if (values.sizes != expected) {
    fail(op, "values has sizes " + sizesText(values.sizes) + ", expected " + sizesText(expected));
  }
  const size_t p = items.size();
  c.op = op;
  c.mode = accumulate ? addMode(self.dtype) : IndexMode::Put;
  c.order = c.mode == IndexMode::AtomicAdd ? ItemOrder::Any : ItemOrder::Serial;
  c.dtype = self.dtype;
  c.wrapNegative = true;
  c.itemSizes = items;
  c.blockSizes.assign(self.sizes.begin() + m, self.sizes.end());
  c.indexed = {
      self.data, std::vector<int64_t>(p, 0), {self.strides.begin() + m, self.strides.end()}};
  c.item = {values.data,
            {values.strides.begin(), values.strides.begin() + p},
            {values.strides.begin() + p, values.strides.end()}};
  detail::runIndexedCopy(ctx, c);
}

}  // namespace mimic::ops
