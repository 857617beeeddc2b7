// The bounds checks of the device's index kernels: the kernels address memory with the index
// values they are given, so each op checks them before its launch, with the CPU's errors. The
// values are read through the simulator's view of device memory (simulatorValues): no command,
// no sync and no simulated time, as a real kernel's device-side check. Timing mode has no
// values to check, and checks nothing.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

namespace mimic::torch_backend::aten {

// dim wrapped as PyTorch wraps it; a 0-d tensor counts as 1-d.
int64_t wrapDim(int64_t dim, int64_t rank);
// The size of the dim of self that an index indexes; a 0-d self counts as 1-d.
int64_t indexedSize(const at::Tensor& self, int64_t dim);
// index_add's and embedding's check, with the CPU's IndexError.
void checkSelectBounds(const at::Tensor& index, int64_t size);
// index_select's (another message for dim 1 of 2 or more dims, as the CPU's kernel).
void checkIndexSelectBounds(const at::Tensor& self, int64_t dim, const at::Tensor& index);
// gather's and scatter's check, with the CPU's RuntimeError.
void checkGatherBounds(const at::Tensor& index, int64_t dim, int64_t size);
// Advanced indexing's check of the indices (broadcast to one shape) on self's leading dims.
void checkAdvancedBounds(const at::Tensor& self, const std::vector<at::Tensor>& indices);

}  // namespace mimic::torch_backend::aten
