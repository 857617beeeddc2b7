// Tensor copies in every direction (host to device, device to host, within a device, between
// devices), for any dtypes and layouts. Device work goes on the current stream of the device
// involved; blocking copies wait for it, non-blocking ones are ordered by that stream.
#pragma once

#include <ATen/core/Tensor.h>

namespace mimic::torch_backend {

void copyTensor(const at::Tensor& dst, const at::Tensor& src, bool nonBlocking);

}  // namespace mimic::torch_backend
