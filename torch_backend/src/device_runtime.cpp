#include "torch_backend/src/device_runtime.h"

#include <c10/util/Exception.h>

#include <array>
#include <mutex>
#include <string>
#include <vector>

namespace mimic::torch_backend {
namespace {

constexpr int kMaxDevices = MIMIC_MAX_DEVICES;

std::once_flag initOnce;
mimicResult initResult = MIMIC_SUCCESS;
std::string initDetail;

thread_local int threadDevice = 0;
thread_local std::array<c10::StreamId, kMaxDevices> threadStreams{};

std::mutex queuesMutex;
// Stream id 0 -> queues[0], created on first use. It is a queue of its own rather than the
// driver's NULL queue, because a NULL queue names a device only through the call's arguments.
std::array<std::vector<mimicQueue>, kMaxDevices> streamQueues;

void initialiseOnce() {
  std::call_once(initOnce, [] {
    initResult = mimicInit(0);
    if (initResult != MIMIC_SUCCESS) {
      const char* detail = "";
      mimicGetErrorDetail(&detail);
      initDetail = detail ? detail : "";
    }
  });
}

void checkDeviceIndex(int device) {
  const int count = deviceCountNoThrow();
  TORCH_CHECK(device >= 0 && device < count, "mimic: device index ", device,
              " is out of range; this process has ", count, " mimic device(s)");
}

// The device's streams, with the default stream's queue created first. Caller holds queuesMutex.
std::vector<mimicQueue>& queuesOf(int device) {
  auto& queues = streamQueues[device];
  if (queues.empty()) {
    checkDeviceIndex(device);
    mimicQueue queue = nullptr;
    MIMIC_TORCH_CHECK(mimicQueueCreate(device, 0, MIMIC_QUEUE_PRIORITY_LOW, &queue));
    queues.push_back(queue);
  }
  return queues;
}

}  // namespace

void checkDriver(mimicResult result, const char* call) {
  if (result == MIMIC_SUCCESS) return;
  const char* detail = "";
  mimicGetErrorDetail(&detail);
  TORCH_CHECK(false, "mimic: ", call, " failed with ", mimicGetErrorName(result), " (",
              mimicGetErrorString(result), ")", (detail && *detail) ? ": " : "",
              detail ? detail : "");
}

void ensureInitialized() {
  initialiseOnce();
  TORCH_CHECK(initResult == MIMIC_SUCCESS,
              "mimic: the simulated system could not start: ", mimicGetErrorName(initResult), ": ",
              initDetail);
}

int deviceCountNoThrow() {
  initialiseOnce();
  if (initResult != MIMIC_SUCCESS) return 0;
  int count = 0;
  return mimicDeviceGetCount(&count) == MIMIC_SUCCESS ? count : 0;
}

int currentDevice() {
  return threadDevice;
}

void setCurrentDevice(int device) {
  checkDeviceIndex(device);
  threadDevice = device;
}

c10::Device deviceOf(int index) {
  return c10::Device(kDeviceType, static_cast<c10::DeviceIndex>(index));
}

c10::Stream currentStream(int device) {
  return c10::Stream(c10::Stream::UNSAFE, deviceOf(device), threadStreams.at(device));
}

void setCurrentStream(const c10::Stream& stream) {
  queueOf(stream);  // validates the id
  threadStreams.at(stream.device_index()) = stream.id();
}

c10::Stream createStream(int device, int priority) {
  mimicQueue queue = nullptr;
  MIMIC_TORCH_CHECK(mimicQueueCreate(device, 0, priority, &queue));
  std::lock_guard<std::mutex> lock(queuesMutex);
  auto& queues = queuesOf(device);
  queues.push_back(queue);
  return c10::Stream(c10::Stream::UNSAFE, deviceOf(device),
                     static_cast<c10::StreamId>(queues.size() - 1));
}

mimicQueue queueOf(const c10::Stream& stream) {
  const int device = stream.device_index();
  TORCH_CHECK(stream.device_type() == kDeviceType && device >= 0 && device < kMaxDevices,
              "mimic: ", stream, " is not a mimic stream");
  std::lock_guard<std::mutex> lock(queuesMutex);
  const auto& queues = queuesOf(device);
  TORCH_CHECK(stream.id() >= 0 && stream.id() < static_cast<c10::StreamId>(queues.size()),
              "mimic: stream id ", stream.id(), " was never created on device ", device);
  return queues[stream.id()];
}

}  // namespace mimic::torch_backend
