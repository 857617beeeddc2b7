// The torch layer's view of the driver: lazy initialisation, the current device of each host
// thread, and streams (c10::Stream ids) mapped onto driver queues. c10 headers only.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/Stream.h>

#include "mimic/mimic.h"

namespace mimic::torch_backend {

constexpr c10::DeviceType kDeviceType = c10::DeviceType::PrivateUse1;

// Initialises the driver once (mimicInit: MIMIC_PRESET, MIMIC_OVERRIDES, MIMIC_NUM_DEVICES).
// Throws c10::Error naming the driver's error if the configuration is bad.
void ensureInitialized();
// The number of devices; 0 (never an exception) when the driver cannot initialise, because the
// autograd engine asks every registered backend, even in CPU-only programs.
int deviceCountNoThrow();

int currentDevice();
void setCurrentDevice(int device);  // throws c10::Error for an index out of range
c10::Device deviceOf(int index);

// Stream 0 of each device is the driver's default queue; Stream objects created by the user get
// queues of their own, which live as long as the process (c10::Stream is a plain id).
c10::Stream currentStream(int device);
void setCurrentStream(const c10::Stream& stream);
c10::Stream createStream(int device, int priority);
mimicQueue queueOf(const c10::Stream& stream);  // throws c10::Error for an unknown stream id

// Throws c10::Error naming the call and the driver's detail message when `result` is an error.
void checkDriver(mimicResult result, const char* call);

}  // namespace mimic::torch_backend

#define MIMIC_TORCH_CHECK(call) ::mimic::torch_backend::checkDriver((call), #call)
