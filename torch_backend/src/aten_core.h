// What the op registrations share with the backend's core (aten_core.cpp).
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>

namespace mimic::torch_backend {

// A new contiguous tensor on `device` from the caching allocator, without a dispatcher call:
// what aten::empty does for the device, at a fraction of its host cost.
at::Tensor emptyOnDevice(at::IntArrayRef size, at::ScalarType dtype, at::Device device);
// Runs `op` on CPU copies of its arguments through the counted fallback (MIMIC_FALLBACK
// applies: counted, warned once, or refused).
void cpuFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

}  // namespace mimic::torch_backend
