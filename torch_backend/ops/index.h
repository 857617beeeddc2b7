// Indexing ops for the PyTorch backend: index_select, gather, scatter / scatter_add, index_add
// and index_put, on strided views of any rank.
//
// Common rules:
// - Value dtypes: F32, F16, BF16, I32, I64, U8 (u8 adds wrap modulo 256). Index tensors are I32
//   or I64 device tensors with any strides (0 broadcasts). Value tensors may have any strides;
//   an in-place `self` must not overlap itself (no stride-0 dims of size > 1).
// - Dims may be negative (counted from the end). A 0-d tensor counts as 1-d of size 1.
// - Each call launches its kernels on ctx.queue and returns; nothing is read back.
// - Index values are checked on the device. An index outside the dimension (after wrapping, for
//   indexPut) never touches memory: the kernel faults on purpose with a DMA from HBM address 0,
//   which makes the device's sticky error MIMIC_ERROR_ILLEGAL_ADDRESS, reported by the next
//   synchronizing call, with a detail naming the kernel ("index_select_f32", ...) and "HBM
//   range [0x0, 0x1)". Elements written before the fault stay written; mimicDeviceReset clears
//   the error. When there is nothing to move (an empty slice), indices are not read at all.
// - Duplicate indices: the copying ops write in row-major index order, so the last write wins;
//   the accumulating ones add every contribution, in row-major index order (F32, I32, I64 with
//   AtomicAdd, which the device applies in workgroup order; F16, BF16, U8 by reading, adding
//   and writing back, item after item). Results are deterministic and, for distinct indices,
//   equal to torch on the CPU; scaled f32 adds (alpha other than a power of two) may differ
//   from torch in the last bit, since torch fuses the multiply-add.
// - Throws std::invalid_argument naming the op and the bad value for bad dims, ranks, sizes or
//   dtypes, and mimic::Error when a launch fails.
#pragma once

#include <vector>

#include "torch_backend/ops/tensor_view.h"

namespace mimic::ops {

// out = in.index_select(dim, index): index is 1-D (or 0-d), out has in's sizes except
// out.sizes[dim] == index.numel(). Each index selects a slice of in, moved with one DMA per
// index (whole rows for an embedding lookup of a [V, D] table).
void indexSelect(const LaunchContext& ctx, const TensorView& out, const TensorView& in, int dim,
                 const TensorView& index);

// torch.gather: out[i][j][k] = in[i][index[i][j][k]][k] for dim 1, etc. index, in and out have
// the same rank; out has index's sizes; index.sizes[d] <= in.sizes[d] for d != dim.
void gather(const LaunchContext& ctx, const TensorView& out, const TensorView& in, int dim,
            const TensorView& index);

// torch.Tensor.scatter_ (accumulate = false: the last write in row-major index order wins) and
// scatter_add_ (accumulate = true): self[index[i][j]][j] = / += src[i][j] for dim 0, in place.
// index, src and self have the same rank; index.sizes[d] <= src.sizes[d] for every d and
// <= self.sizes[d] for d != dim.
void scatter(const LaunchContext& ctx, const TensorView& self, int dim, const TensorView& index,
             const TensorView& src, bool accumulate);

// self.index_add_(dim, index, source, alpha=alpha), in place: index is 1-D (or 0-d), source has
// self's sizes except source.sizes[dim] == index.numel(). For integer dtypes alpha must be an
// integer. Each index adds a whole slice (a row of an embedding gradient) at once.
void indexAdd(const LaunchContext& ctx, const TensorView& self, int dim, const TensorView& index,
              const TensorView& source, double alpha);

// self[indices[0], indices[1], ...] = values (+= with accumulate), in place. The indices (1 to
// self.dim() of them) all have the same sizes P and index the leading dims of self; values has
// sizes P + self.sizes[indices.size():]. Negative indices wrap (index + size), as torch does.
void indexPut(const LaunchContext& ctx, const TensorView& self,
              const std::vector<TensorView>& indices, const TensorView& values, bool accumulate);

}  // namespace mimic::ops
