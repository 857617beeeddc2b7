// The indexing and joining ops on the device's index kernels (torch_backend/ops/index.h):
// index_select, gather, scatter and scatter_add, index_add, advanced indexing and index_put with
// integer tensors on leading dims, embedding backward, and cat as copies into slices. The ops
// that only move elements also move complex64 as raw words, and the accumulating ones add its
// float32 halves; other dtypes the device does not compute in, and boolean masks (whose result
// size only the data knows), take the counted CPU fallback.
#include <ATen/MemoryOverlap.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/_index_put_impl_ops.h>
#include <ATen/ops/broadcast_tensors.h>
#include <ATen/ops/cat_ops.h>
#include <ATen/ops/embedding_dense_backward_ops.h>
#include <ATen/ops/full.h>
#include <ATen/ops/gather_ops.h>
#include <ATen/ops/index_add_ops.h>
#include <ATen/ops/index_ops.h>
#include <ATen/ops/index_put_ops.h>
#include <ATen/ops/index_select_ops.h>
#include <ATen/ops/scatter_add_ops.h>
#include <ATen/ops/scatter_ops.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <string>
#include <vector>

#include "torch_backend/aten/device_call.h"
#include "torch_backend/aten/index_bounds.h"
#include "torch_backend/aten/kernel_op_checks.h"
#include "torch_backend/ops/elementwise.h"
#include "torch_backend/ops/index.h"
#include "torch_backend/src/aten_core.h"
#include "torch_backend/src/tensor_bridge.h"

namespace mimic::torch_backend::aten {
namespace {

template <class Op>
using Fallback = at::native::call_fallback_fn<&cpuFallback, Op>;
using OptionalTensors = c10::List<c10::optional<at::Tensor>>;

// Ops that only move elements (selecting, gathering, writing without accumulating) also serve
// complex64, which the device does not compute in: they move its bits as 8-byte integers, which
// never converts them. (float64 and the other stored-only dtypes keep the counted fallback until
// the device computes in them.)
bool movable(const at::Tensor& t) {
  return computable(t) || (t.scalar_type() == at::kComplexFloat && !t.is_conj() && !t.is_neg());
}

ops::TensorView movedViewOf(const at::Tensor& t) {
  if (computable(t)) return viewOf(t);
  ops::TensorView view = rawViewOf(t);
  if (t.element_size() == 8) {  // one 8-byte word: rawViewOf's trailing word dim has size 1
    view.sizes.pop_back();
    view.strides.pop_back();
  }
  return view;
}

// complex64 accumulates as two float32 halves, the real parts and then the imaginary ones
// (with a real alpha): the adds of index_add and scatter_add are linear over the reals.
bool addsByParts(const at::Tensor& self, const at::Tensor& source) {
  const auto plain = [](const at::Tensor& t) {
    return t.scalar_type() == at::kComplexFloat && !t.is_conj() && !t.is_neg();
  };
  return plain(self) && plain(source);
}

void checkIndex(const at::Tensor& index, const char* name) {
  const at::ScalarType type = index.scalar_type();
  TORCH_CHECK(type == at::kLong || type == at::kInt || index.numel() == 0, name,
              "(): Expected dtype int32/int64 for index but got ", type);
}

at::Tensor toDevice(const at::Tensor& t, at::Device device) {
  return t.device() == device ? t : t.to(device, t.scalar_type());
}

// out = program(inputs..., scalars) with inputs broadcast to out's shape, computed in `type`'s
// compute dtype (float32 for the half types, uint8 for bool).
void elementwiseOnDevice(const char* op, const at::Tensor& out,
                         const std::vector<at::Tensor>& inputs, const std::string& program,
                         at::ScalarType type, const std::vector<ops::ScalarArg>& scalars) {
  if (out.numel() == 0) return;
  std::vector<ops::TensorView> views;
  for (const at::Tensor& input : inputs) {
    checkSameDevice(input, out, "elementwise");
    views.push_back(viewOf(input.sizes() == out.sizes() ? input : input.expand(out.sizes())));
  }
  if (type == at::kHalf || type == at::kBFloat16) type = at::kFloat;
  isa::DType compute;
  TORCH_CHECK(isaDTypeOf(type, &compute), "mimic: ", op, " cannot compute in ", type);
  onDevice(op, [&] {
    ops::elementwise(launchContextOf(out), viewOf(out), views, program, compute, scalars);
  });
}

// index with negative values counted from the end of a dim of `size`, as in Python.
at::Tensor wrappedIndex(const char* op, const at::Tensor& index, int64_t size) {
  at::Tensor wrapped = emptyOnDevice(index.sizes(), at::kLong, index.device());
  elementwiseOnDevice(op, wrapped, {index}, "x0 0 lt x0 s0 add x0 where", at::kLong, {size});
  return wrapped;
}

void checkIndexSelect(const at::Tensor& index) {
  checkIndex(index, "index_select");
  TORCH_CHECK_INDEX(index.dim() <= 1, "index_select(): Index is supposed to be a vector");
}

// self.index_select(dim, index) for a self of a dtype the device computes in.
at::Tensor indexSelectOnDevice(const char* op, const at::Tensor& self, int64_t dim,
                               const at::Tensor& index) {
  dim = wrapDim(dim, self.dim());
  const at::Tensor source = self.dim() > 0 ? self : self.view({1});
  std::vector<int64_t> sizes = source.sizes().vec();
  sizes[dim] = index.numel();
  at::Tensor out = emptyOnDevice(sizes, self.scalar_type(), self.device());
  if (out.numel() > 0) {
    const at::Tensor flat = toDevice(index.reshape({-1}), self.device());
    checkSameDevice(source, out, "index_select");
    checkSameDevice(flat, out, "index_select");
    onDevice(op, [&] {
      ops::indexSelect(launchContextOf(out), movedViewOf(out), movedViewOf(source),
                       static_cast<int>(dim), viewOf(flat));
    });
  }
  return self.dim() > 0 ? out : out.view(at::IntArrayRef());
}

at::Tensor indexSelect(const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  checkIndexSelect(index);
  if (!movable(self)) return Fallback<at::_ops::index_select>::call(self, dim, index);
  checkIndexSelectBounds(self, dim, index);
  return indexSelectOnDevice("aten::index_select", self, dim, index);
}

at::Tensor& indexSelectOut(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                           at::Tensor& out) {
  checkIndexSelect(index);
  if (!movable(self)) return Fallback<at::_ops::index_select_out>::call(self, dim, index, out);
  checkIndexSelectBounds(self, dim, index);
  const at::Tensor result = indexSelectOnDevice("aten::index_select.out", self, dim, index);
  prepareOut(out, result.sizes(), result.scalar_type());
  out.copy_(result);
  return out;
}

at::Tensor gather(const at::Tensor& self, int64_t dim, const at::Tensor& index, bool sparseGrad) {
  checkIndex(index, "gather");
  if (!movable(self)) return Fallback<at::_ops::gather>::call(self, dim, index, sparseGrad);
  dim = wrapDim(dim, self.dim());
  checkGatherBounds(index, dim, indexedSize(self, dim));
  at::Tensor out = emptyOnDevice(index.sizes(), self.scalar_type(), self.device());
  if (out.numel() > 0) {
    checkSameDevice(self, out, "gather");
    checkSameDevice(index, out, "gather");
    onDevice("aten::gather", [&] {
      ops::gather(launchContextOf(out), movedViewOf(out), movedViewOf(self), static_cast<int>(dim),
                  viewOf(index));
    });
  }
  return out;
}

// target's elements at index along dim become (or, accumulating, gain) src's: a tensor of
// target's dtype or, without one, `value` everywhere.
void scatterOnDevice(const char* op, const at::Tensor& target, int64_t dim, const at::Tensor& index,
                     const at::Tensor* src, const at::Scalar* value, bool accumulate) {
  if (index.numel() == 0) return;
  at::Tensor values;
  if (src) {
    TORCH_CHECK(src->scalar_type() == target.scalar_type(),
                "scatter(): Expected self.dtype to be equal to src.dtype");
    values = *src;
  } else {
    values = at::full(index.sizes(), *value, target.options());
  }
  dim = wrapDim(dim, target.dim());
  checkGatherBounds(index, dim, indexedSize(target, dim));
  checkSameDevice(index, target, "scatter");
  checkSameDevice(values, target, "scatter");
  onDevice(op, [&] {
    if (accumulate && !computable(target)) {
      for (int part = 0; part < 2; ++part) {
        ops::scatter(launchContextOf(target), complexPartOf(target, part), static_cast<int>(dim),
                     viewOf(index), complexPartOf(values, part), true);
      }
      return;
    }
    ops::scatter(launchContextOf(target), movedViewOf(target), static_cast<int>(dim), viewOf(index),
                 movedViewOf(values), accumulate);
  });
}

at::Tensor scatterSrc(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                      const at::Tensor& src) {
  checkIndex(index, "scatter");
  if (!movable(self)) return Fallback<at::_ops::scatter_src>::call(self, dim, index, src);
  at::Tensor target = self.clone();
  scatterOnDevice("aten::scatter.src", target, dim, index, &src, nullptr, false);
  return target;
}

at::Tensor scatterValue(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                        const at::Scalar& value) {
  checkIndex(index, "scatter");
  if (!movable(self)) return Fallback<at::_ops::scatter_value>::call(self, dim, index, value);
  at::Tensor target = self.clone();
  scatterOnDevice("aten::scatter.value", target, dim, index, nullptr, &value, false);
  return target;
}

at::Tensor& scatterSrc_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                        const at::Tensor& src) {
  checkIndex(index, "scatter");
  if (!movable(self)) return Fallback<at::_ops::scatter__src>::call(self, dim, index, src);
  scatterOnDevice("aten::scatter_.src", self, dim, index, &src, nullptr, false);
  return self;
}

at::Tensor& scatterValue_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                          const at::Scalar& value) {
  checkIndex(index, "scatter");
  if (!movable(self)) return Fallback<at::_ops::scatter__value>::call(self, dim, index, value);
  scatterOnDevice("aten::scatter_.value", self, dim, index, nullptr, &value, false);
  return self;
}

at::Tensor scatterAdd(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                      const at::Tensor& src) {
  checkIndex(index, "scatter");
  if (!computable(self) && !addsByParts(self, src)) {
    return Fallback<at::_ops::scatter_add>::call(self, dim, index, src);
  }
  at::Tensor target = self.clone();
  scatterOnDevice("aten::scatter_add", target, dim, index, &src, nullptr, true);
  return target;
}

at::Tensor& scatterAdd_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                        const at::Tensor& src) {
  checkIndex(index, "scatter");
  if (!computable(self) && !addsByParts(self, src)) {
    return Fallback<at::_ops::scatter_add_>::call(self, dim, index, src);
  }
  scatterOnDevice("aten::scatter_add_", self, dim, index, &src, nullptr, true);
  return self;
}

// target's slices at index along dim gain alpha times source's.
void indexAddOnDevice(const char* op, const at::Tensor& target, int64_t dim,
                      const at::Tensor& index, const at::Tensor& source, double alpha) {
  if (index.numel() == 0) return;
  dim = wrapDim(dim, target.dim());
  const at::Tensor flat = index.reshape({-1});
  checkSameDevice(flat, target, "index_add");
  checkSameDevice(source, target, "index_add");
  onDevice(op, [&] {
    if (!computable(target)) {
      for (int part = 0; part < 2; ++part) {
        ops::indexAdd(launchContextOf(target), complexPartOf(target, part), static_cast<int>(dim),
                      viewOf(flat), complexPartOf(source, part), alpha);
      }
      return;
    }
    ops::indexAdd(launchContextOf(target), viewOf(target), static_cast<int>(dim), viewOf(flat),
                  viewOf(source), alpha);
  });
}

at::Tensor indexAdd(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                    const at::Tensor& source, const at::Scalar& alpha) {
  checkIndex(index, "index_add");
  if (!(computable(self) && computable(source)) &&
      !(addsByParts(self, source) && !alpha.isComplex())) {
    return Fallback<at::_ops::index_add>::call(self, dim, index, source, alpha);
  }
  checkSelectBounds(index, indexedSize(self, dim));
  at::Tensor target = self.clone();
  indexAddOnDevice("aten::index_add", target, dim, index, source, alpha.toDouble());
  return target;
}

at::Tensor& indexAdd_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                      const at::Tensor& source, const at::Scalar& alpha) {
  checkIndex(index, "index_add");
  if (!(computable(self) && computable(source)) &&
      !(addsByParts(self, source) && !alpha.isComplex())) {
    return Fallback<at::_ops::index_add_>::call(self, dim, index, source, alpha);
  }
  checkSelectBounds(index, indexedSize(self, dim));
  indexAddOnDevice("aten::index_add_", self, dim, index, source, alpha.toDouble());
  return self;
}

bool given(const c10::optional<at::Tensor>& index) {
  return index.has_value() && index->defined();
}

// The CPU fallback moves Tensor and Tensor[] arguments to the CPU but not Tensor?[] ones: the
// index tensors go here, as the CPU kernel needs them beside the indexed tensor.
OptionalTensors onCpu(const OptionalTensors& indices) {
  OptionalTensors moved;
  moved.reserve(indices.size());
  for (size_t i = 0; i < indices.size(); ++i) {
    const c10::optional<at::Tensor> index = indices.get(i);
    moved.push_back(given(index) ? c10::optional<at::Tensor>(index->cpu()) : index);
  }
  return moved;
}

// The integer index tensors of an advanced-indexing call, broadcast to one shape and on self's
// device, when they index leading dims; nullopt for what the device does not index (boolean
// and byte masks, which need nonzero, whose size only the data knows; gaps between indices).
c10::optional<std::vector<at::Tensor>> leadingIndices(const at::Tensor& self,
                                                      const OptionalTensors& indices) {
  size_t count = indices.size();
  for (size_t i = 0; i < count; ++i) {
    const c10::optional<at::Tensor> index = indices.get(i);
    if (given(index) && (index->scalar_type() == at::kBool || index->scalar_type() == at::kByte)) {
      return c10::nullopt;
    }
  }
  while (count > 0 && !given(indices.get(count - 1))) --count;
  if (count == 0) return c10::nullopt;
  std::vector<at::Tensor> leading;
  for (size_t i = 0; i < count; ++i) {
    c10::optional<at::Tensor> index = indices.get(i);
    if (!given(index)) return c10::nullopt;
    leading.push_back(std::move(*index));
  }
  for (const at::Tensor& index : leading) {
    TORCH_CHECK_INDEX(index.scalar_type() == at::kLong,
                      "tensors used as indices must be long, byte or bool tensors");
  }
  TORCH_CHECK_INDEX(static_cast<int64_t>(count) <= self.dim(),
                    "too many indices for tensor of dimension ", self.dim());
  std::vector<at::Tensor> broadcast;
  try {
    broadcast = at::broadcast_tensors(leading);
  } catch (const c10::Error&) {
    std::string shapes;
    for (const at::Tensor& index : leading) {
      if (!shapes.empty()) shapes += ", ";
      shapes += shapeText(index.sizes());
    }
    TORCH_CHECK_INDEX(false, "shape mismatch: indexing tensors could not be broadcast together ",
                      "with shapes ", shapes);
  }
  for (at::Tensor& index : broadcast) index = toDevice(index, self.device());
  return broadcast;
}

// ATen's rule (check_indices_on_cpu_or_selfdevice): only device[{cpu, device} indices]. A CPU
// tensor indexed by mimic indices reaches this kernel through the indices' dispatch key.
void checkIndicesOnCpuOrSelfDevice(const at::Tensor& self, const OptionalTensors& indices) {
  for (size_t i = 0; i < indices.size(); ++i) {
    const c10::optional<at::Tensor> index = indices.get(i);
    TORCH_CHECK(!index.has_value() || !index->defined() || index->is_cpu() ||
                    index->device() == self.device(),
                "indices should be either on ", at::kCPU,
                " or on the same device as the indexed tensor (", self.device(), ")");
  }
}

at::Tensor index(const at::Tensor& self, const OptionalTensors& indices) {
  const char* op = "aten::index.Tensor";
  checkIndicesOnCpuOrSelfDevice(self, indices);
  c10::optional<std::vector<at::Tensor>> leading;
  if (movable(self)) leading = leadingIndices(self, indices);
  if (!leading) return Fallback<at::_ops::index_Tensor>::call(self, onCpu(indices));
  checkAdvancedBounds(self, *leading);
  // One linear index into the flattening of the indexed dims selects rows of the rest.
  const std::vector<int64_t> rest(self.sizes().begin() + static_cast<int64_t>(leading->size()),
                                  self.sizes().end());
  at::Tensor linear;
  at::Tensor source = self;
  if (leading->size() == 1) {
    linear = wrappedIndex(op, leading->front(), self.size(0));
  } else {
    linear = at::zeros(leading->front().sizes(), self.options().dtype(at::kLong));
    for (size_t d = 0; d < leading->size(); ++d) {
      const int64_t size = self.size(static_cast<int64_t>(d));
      elementwiseOnDevice(op, linear, {linear, wrappedIndex(op, (*leading)[d], size)},
                          "x0 s0 mul x1 add", at::kLong, {size});
    }
    std::vector<int64_t> rows{-1};
    rows.insert(rows.end(), rest.begin(), rest.end());
    source = self.reshape(rows);
  }
  std::vector<int64_t> sizes = linear.sizes().vec();
  sizes.insert(sizes.end(), rest.begin(), rest.end());
  return indexSelectOnDevice(op, source, 0, linear.reshape({-1})).view(sizes);
}

// self[indices] = values (+= with accumulate), values broadcast to the indexed shape.
void indexPutOnDevice(const char* op, const at::Tensor& self,
                      const std::vector<at::Tensor>& indices, const at::Tensor& values,
                      bool accumulate) {
  checkAdvancedBounds(self, indices);
  std::vector<int64_t> sizes = indices.front().sizes().vec();
  sizes.insert(sizes.end(), self.sizes().begin() + static_cast<int64_t>(indices.size()),
               self.sizes().end());
  const at::Tensor cast =
      values.scalar_type() == self.scalar_type() ? values : values.to(self.scalar_type());
  const at::Tensor expanded = cast.expand(sizes);
  if (expanded.numel() == 0) return;
  checkSameDevice(expanded, self, "index_put");
  std::vector<ops::TensorView> views;
  for (const at::Tensor& index : indices) {
    checkSameDevice(index, self, "index_put");
    views.push_back(viewOf(index));
  }
  onDevice(op, [&] {
    if (accumulate && !computable(self)) {
      for (int part = 0; part < 2; ++part) {
        ops::indexPut(launchContextOf(self), complexPartOf(self, part), views,
                      complexPartOf(expanded, part), true);
      }
      return;
    }
    ops::indexPut(launchContextOf(self), movedViewOf(self), views, movedViewOf(expanded),
                  accumulate);
  });
}

// The leading indices of an index_put that the device runs, or nullopt for the fallback.
c10::optional<std::vector<at::Tensor>> indexPutIndices(const at::Tensor& self,
                                                       const OptionalTensors& indices,
                                                       const at::Tensor& values, bool accumulate) {
  const bool device =
      accumulate ? (computable(self) && computable(values)) || addsByParts(self, values)
                 : movable(self) && values.scalar_type() == self.scalar_type() && movable(values);
  if (!device) return c10::nullopt;
  return leadingIndices(self, indices);
}

at::Tensor& indexPutImpl_(at::Tensor& self, const OptionalTensors& indices,
                          const at::Tensor& values, bool accumulate, bool unsafe) {
  const auto leading = indexPutIndices(self, indices, values, accumulate);
  if (!leading) {
    return Fallback<at::_ops::_index_put_impl_>::call(self, onCpu(indices), values, accumulate,
                                                      unsafe);
  }
  indexPutOnDevice("aten::_index_put_impl_", self, *leading, values, accumulate);
  return self;
}

at::Tensor& indexPut_(at::Tensor& self, const OptionalTensors& indices, const at::Tensor& values,
                      bool accumulate) {
  const auto leading = indexPutIndices(self, indices, values, accumulate);
  if (!leading) {
    return Fallback<at::_ops::index_put_>::call(self, onCpu(indices), values, accumulate);
  }
  indexPutOnDevice("aten::index_put_", self, *leading, values, accumulate);
  return self;
}

at::Tensor indexPut(const at::Tensor& self, const OptionalTensors& indices,
                    const at::Tensor& values, bool accumulate) {
  const auto leading = indexPutIndices(self, indices, values, accumulate);
  if (!leading) {
    return Fallback<at::_ops::index_put>::call(self, onCpu(indices), values, accumulate);
  }
  at::Tensor target = self.clone();
  indexPutOnDevice("aten::index_put", target, *leading, values, accumulate);
  return target;
}

// The weight's gradient: each row of grad_output accumulated at its index (rows of padding_idx
// zeroed first), one index_add.
at::Tensor embeddingDenseBackward(const at::Tensor& gradOutput, const at::Tensor& indices,
                                  c10::SymInt numWeights, int64_t paddingIdx,
                                  bool scaleGradByFreq) {
  const char* op = "aten::embedding_dense_backward";
  const auto fallback = [&] {
    return at::native::call_fallback_fn_symint<
        &cpuFallback, at::_ops::embedding_dense_backward>::call(gradOutput, indices, numWeights,
                                                                paddingIdx, scaleGradByFreq);
  };
  const bool padded = paddingIdx >= 0;
  if (scaleGradByFreq || (padded && !(computable(gradOutput) && computable(indices)))) {
    return fallback();
  }
  checkIndex(indices, "index_add");
  if (!computable(gradOutput)) return fallback();
  const int64_t width = gradOutput.size(-1);
  at::Tensor rows = gradOutput.reshape({-1, width});
  const at::Tensor flat = indices.reshape({-1});
  if (padded) {
    rows = rows.clone();
    elementwiseOnDevice(op, rows, {rows, flat.unsqueeze(1)}, "x1 s0 eq 0 x0 where",
                        rows.scalar_type(), {paddingIdx});
  }
  at::Tensor gradWeight = at::zeros({numWeights.expect_int(), width}, gradOutput.options());
  indexAddOnDevice(op, gradWeight, 0, flat, rows, 1);
  return gradWeight;
}

// The inputs cat joins (legacy 1-D empty tensors are skipped), the result's sizes and the
// wrapped dim; no inputs when every one was skipped.
struct CatLayout {
  std::vector<at::Tensor> inputs;
  std::vector<int64_t> sizes;
  int64_t dim = 0;
};

CatLayout catLayout(const at::ITensorListRef& tensors, int64_t dim) {
  CatLayout layout;
  std::vector<int64_t> positions;
  int64_t position = 0;
  for (const at::Tensor& t : tensors) {
    TORCH_CHECK(t.dim() > 0, "zero-dimensional tensor (at position ", position,
                ") cannot be concatenated");
    if (!(t.dim() == 1 && t.numel() == 0)) {
      layout.inputs.push_back(t);
      positions.push_back(position);
    }
    ++position;
  }
  if (layout.inputs.empty()) return layout;
  const at::Tensor& reference = layout.inputs.front();
  layout.dim = wrapDim(dim, reference.dim());
  layout.sizes = reference.sizes().vec();
  layout.sizes[layout.dim] = 0;
  for (size_t i = 0; i < layout.inputs.size(); ++i) {
    const at::Tensor& t = layout.inputs[i];
    TORCH_CHECK(t.dim() == reference.dim(), "Tensors must have same number of dimensions: got ",
                reference.dim(), " and ", t.dim());
    for (int64_t d = 0; d < t.dim(); ++d) {
      TORCH_CHECK(d == layout.dim || t.size(d) == reference.size(d),
                  "Sizes of tensors must match except in dimension ", layout.dim,
                  ". Expected size ", reference.size(d), " but got size ", t.size(d),
                  " for tensor number ", positions[i], " in the list.");
    }
    layout.sizes[layout.dim] += t.size(layout.dim);
  }
  return layout;
}

// Each input copied into its slice of out.
void catInto(const at::Tensor& out, const CatLayout& layout) {
  int64_t offset = 0;
  for (const at::Tensor& t : layout.inputs) {
    const int64_t size = t.size(layout.dim);
    if (size > 0) out.narrow(layout.dim, offset, size).copy_(t);
    offset += size;
  }
}

at::Tensor cat(const at::ITensorListRef& tensors, int64_t dim) {
  const CatLayout layout = catLayout(tensors, dim);
  c10::optional<at::ScalarType> dtype;
  c10::optional<at::Device> device;
  for (const at::Tensor& t : tensors) {
    dtype = dtype ? c10::promoteTypes(*dtype, t.scalar_type()) : t.scalar_type();
    if (!device && !t.is_cpu()) device = t.device();
  }
  if (layout.inputs.empty()) return emptyOnDevice({0}, *dtype, *device);
  at::Tensor out = emptyOnDevice(layout.sizes, *dtype, *device);
  catInto(out, layout);
  return out;
}

at::Tensor& catOut(const at::ITensorListRef& tensors, int64_t dim, at::Tensor& out) {
  const CatLayout layout = catLayout(tensors, dim);
  if (layout.inputs.empty()) return out;
  prepareOut(out, layout.sizes, out.scalar_type());
  // As the CPU's cat: writing a slice of out could overwrite an input not yet copied.
  at::assert_no_internal_overlap(out);
  for (const at::Tensor& t : layout.inputs) at::assert_no_overlap(out, t);
  catInto(out, layout);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  kernelOpEntry("index_select", "index", "index_select");
  m.impl("index_select", TORCH_FN(indexSelect));
  m.impl("index_select.out", TORCH_FN(indexSelectOut));
  kernelOpEntry("gather", "index", "gather");
  m.impl("gather", TORCH_FN(gather));
  kernelOpEntry("scatter", "index", "scatter");
  m.impl("scatter.src", TORCH_FN(scatterSrc));
  m.impl("scatter.value", TORCH_FN(scatterValue));
  m.impl("scatter_.src", TORCH_FN(scatterSrc_));
  m.impl("scatter_.value", TORCH_FN(scatterValue_));
  kernelOpEntry("scatter_add", "index", "scatter");
  m.impl("scatter_add", TORCH_FN(scatterAdd));
  m.impl("scatter_add_", TORCH_FN(scatterAdd_));
  kernelOpEntry("index_add", "index", "index_add");
  m.impl("index_add", TORCH_FN(indexAdd));
  m.impl("index_add_", TORCH_FN(indexAdd_));
  kernelOpEntry("index", "index", "index_select");
  m.impl("index.Tensor", TORCH_FN(index));
  kernelOpEntry("index_put", "index", "index_put");
  m.impl("_index_put_impl_", TORCH_FN(indexPutImpl_));
  m.impl("index_put_", TORCH_FN(indexPut_));
  m.impl("index_put", TORCH_FN(indexPut));
  kernelOpEntry("embedding_dense_backward", "index", "index_add");
  m.impl("embedding_dense_backward", TORCH_FN(embeddingDenseBackward));
  kernelOpEntry("cat", "index", "copy");
  m.impl("cat", TORCH_FN(cat));
  m.impl("cat.out", TORCH_FN(catOut));
}

}  // namespace mimic::torch_backend::aten
