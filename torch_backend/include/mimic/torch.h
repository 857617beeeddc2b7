// mimic/torch.h: what a PyTorch extension (a custom op in C++) needs to run its own kernels on
// mimic tensors, in the manner of at::cuda's stream functions:
//
//   mimic::torch::DeviceGuard guard(x.device());        // the tensor's device becomes current
//   mimicQueue queue = mimic::torch::getCurrentQueue();  // the current stream's driver queue
//   MIMIC_TORCH_CHECK(mimicLaunchKernel(fn, grid, &args, sizeof args, queue));
//
// A mimic tensor's data_ptr() is its device address, ready to be a kernel argument. Work queued
// on getCurrentQueue() is ordered with the built-in ops of the same stream, as on CUDA.
// Link the extension with libmimic_torch.so (beside torch_mimic/__init__.py; CMake:
// mimic::torch) and import torch_mimic before loading it.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/Stream.h>
#include <c10/core/StreamGuard.h>

#include "mimic/mimic.h"

namespace mimic::torch {

// PyTorch's name for the mimic device type (torch.device("privateuseone") in Python).
constexpr c10::DeviceType kDeviceType = c10::DeviceType::PrivateUse1;

// The devices, and the calling thread's current one (torch_mimic.current_device()). These start
// the driver if it has not started yet.
int deviceCount();
int currentDevice();
void setCurrentDevice(int device);  // throws c10::Error for an index out of range

// The thread's current stream of `device` (-1: the current device), as
// torch_mimic.current_stream(device) in Python.
c10::Stream getCurrentStream(int device = -1);
// Stream 0 of the device, where ops run unless a stream is set.
c10::Stream getDefaultStream(int device = -1);
void setCurrentStream(const c10::Stream& stream);

// The stream <-> queue mapping. Each stream has a driver queue of its own; the mapping lasts as
// long as the process. Both throw c10::Error for a stream or queue that is not mimic's.
mimicQueue queueOf(const c10::Stream& stream);
c10::Stream streamOf(int device, mimicQueue queue);

// The queue of the current stream of `device` (-1: the current device): where an extension's
// kernels go, like at::cuda::getCurrentCUDAStream().stream().
inline mimicQueue getCurrentQueue(int device = -1) {
  return queueOf(getCurrentStream(device));
}

// Throws c10::Error naming `call`, the driver's error and its detail when `result` is an error.
void check(mimicResult result, const char* call);

// Makes a device current for a scope, and restores the previous one at its end.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) : guard_(c10::Device(kDeviceType, c10::DeviceIndex(device))) {}
  explicit DeviceGuard(c10::Device device) : guard_(device) {}

 private:
  c10::DeviceGuard guard_;
};

// Makes a stream (and its device) current for a scope, like c10::cuda::CUDAStreamGuard.
using StreamGuard = c10::StreamGuard;

}  // namespace mimic::torch

#ifndef MIMIC_TORCH_CHECK
#define MIMIC_TORCH_CHECK(call) ::mimic::torch::check((call), #call)
#endif
