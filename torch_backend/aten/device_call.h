// Running an op kernel from an aten kernel: failures become the errors PyTorch users expect,
// naming the aten overload (and, through the driver's detail, the device kernel).
#pragma once

#include <ATen/core/Tensor.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "mimic/mimic.hpp"
#include "torch_backend/ops/reduce.h"

namespace mimic::torch_backend::aten {

// Runs `body`: a device failure (mimic::Error) becomes a c10::Error, inputs the op kernel
// cannot take (std::invalid_argument) a c10::NotImplementedError.
template <typename Body>
void onDevice(const std::string& op, const Body& body) {
  try {
    body();
  } catch (const mimic::Error& e) {
    TORCH_CHECK(false, "mimic: ", op, " failed on the device: ", e.what());
  } catch (const std::invalid_argument& e) {
    TORCH_CHECK_NOT_IMPLEMENTED(false, "mimic: ", op, ": ", e.what());
  }
}

// The reduce kernel's kind of a name of the op table: sum prod max min argmax argmin. Throws
// c10::Error naming an unknown one.
ops::ReduceKind reduceKindOf(std::string_view kind);

// ops::reduce over `in` into `out` (keepdim layout) on the current stream of out's device. A
// split reduction's workspace comes from the caching allocator and is released on return: the
// stream orders its reuse after the kernels.
void reduceOnDevice(const std::string& op, const at::Tensor& out, const at::Tensor& in,
                    const std::vector<int>& dims, ops::ReduceKind kind,
                    const ops::ReduceFusion& fusion = {});

}  // namespace mimic::torch_backend::aten
