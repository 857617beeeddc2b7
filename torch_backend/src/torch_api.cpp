// The public C++ API of torch_backend/include/mimic/torch.h, over the backend's device runtime.
#include "torch_backend/src/device_runtime.h"

#include "torch_backend/include/mimic/torch.h"

namespace mimic::torch {
namespace {

int resolve(int device) {
  torch_backend::ensureInitialized();
  return device < 0 ? torch_backend::currentDevice() : device;
}

}  // namespace

int deviceCount() {
  torch_backend::ensureInitialized();
  return torch_backend::deviceCountNoThrow();
}

int currentDevice() {
  torch_backend::ensureInitialized();
  return torch_backend::currentDevice();
}

void setCurrentDevice(int device) {
  torch_backend::ensureInitialized();
  torch_backend::setCurrentDevice(device);
}

c10::Stream getCurrentStream(int device) {
  return torch_backend::currentStream(resolve(device));
}

c10::Stream getDefaultStream(int device) {
  return c10::Stream(c10::Stream::DEFAULT, torch_backend::deviceOf(resolve(device)));
}

void setCurrentStream(const c10::Stream& stream) {
  TORCH_CHECK(stream.device_type() == kDeviceType, "mimic: setCurrentStream: ", stream,
              " is not a stream of the mimic device");
  torch_backend::ensureInitialized();
  torch_backend::setCurrentStream(stream);
}

mimicQueue queueOf(const c10::Stream& stream) {
  TORCH_CHECK(stream.device_type() == kDeviceType, "mimic: queueOf: ", stream,
              " is not a stream of the mimic device");
  torch_backend::ensureInitialized();
  return torch_backend::queueOf(stream);
}

// The runtime maps stream ids 0, 1, ... onto queues and rejects the first id past the last
// stream, so the reverse lookup walks the ids until the runtime refuses one.
c10::Stream streamOf(int device, mimicQueue queue) {
  const c10::Device where = torch_backend::deviceOf(resolve(device));
  for (c10::StreamId id = 0;; ++id) {
    const c10::Stream stream(c10::Stream::UNSAFE, where, id);
    mimicQueue candidate = nullptr;
    try {
      candidate = torch_backend::queueOf(stream);
    } catch (const c10::Error&) {
      TORCH_CHECK(false, "mimic: streamOf: queue ", static_cast<const void*>(queue),
                  " is not the queue of a stream of mimic device ", int(where.index()),
                  " (queues created with mimicQueueCreate have no stream)");
    }
    if (candidate == queue) return stream;
  }
}

void check(mimicResult result, const char* call) {
  torch_backend::checkDriver(result, call);
}

}  // namespace mimic::torch
