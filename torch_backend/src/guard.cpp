// The DeviceGuardImpl of PrivateUse1: devices, streams and events over the driver. Events are
// created lazily at their first record, as CUDA's guard does; the driver keeps an event's state
// alive while queued waits still refer to it, so destroyEvent may run at any time.
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "torch_backend/src/caching_allocator.h"
#include "torch_backend/src/device_runtime.h"

namespace mimic::torch_backend {
namespace {

mimicEvent asEvent(void* event) {
  return static_cast<mimicEvent>(event);
}

struct GuardImpl final : public c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kDeviceType; }

  c10::Device exchangeDevice(c10::Device device) const override {
    c10::Device old = getDevice();
    if (device.index() != old.index()) setDevice(device);
    return old;
  }
  c10::Device getDevice() const override { return deviceOf(currentDevice()); }
  void setDevice(c10::Device device) const override { setCurrentDevice(device.index()); }
  void uncheckedSetDevice(c10::Device device) const noexcept override {
    if (device.index() >= 0 && device.index() < deviceCountNoThrow()) {
      setCurrentDevice(device.index());
    }
  }

  c10::Stream getStream(c10::Device device) const noexcept override {
    return currentStream(device.index());
  }
  c10::Stream getDefaultStream(c10::Device device) const override {
    return c10::Stream(c10::Stream::DEFAULT, device);
  }
  c10::Stream getStreamFromGlobalPool(c10::Device device, bool highPriority) const override {
    return createStream(device.index(),
                        highPriority ? MIMIC_QUEUE_PRIORITY_HIGH : MIMIC_QUEUE_PRIORITY_LOW);
  }
  c10::Stream exchangeStream(c10::Stream stream) const noexcept override {
    c10::Stream old = currentStream(stream.device_index());
    setCurrentStream(stream);
    return old;
  }

  void record(void** event, const c10::Stream& stream, const c10::DeviceIndex device,
              const c10::EventFlag flag) const override {
    TORCH_CHECK(device == -1 || device == stream.device_index(), "mimic: event device ",
                int(device), " does not match the stream's device ", int(stream.device_index()));
    if (!*event) {
      mimicEvent created = nullptr;
      const unsigned flags = flag == c10::EventFlag::PYTORCH_DEFAULT ? MIMIC_EVENT_DISABLE_TIMING
                                                                     : MIMIC_EVENT_DEFAULT;
      MIMIC_TORCH_CHECK(mimicEventCreate(stream.device_index(), flags, &created));
      *event = created;
    }
    MIMIC_TORCH_CHECK(mimicEventRecord(asEvent(*event), queueOf(stream)));
  }
  void block(void* event, const c10::Stream& stream) const override {
    if (!event) return;  // never recorded: nothing to wait for, as on CUDA
    MIMIC_TORCH_CHECK(mimicQueueWaitEvent(queueOf(stream), asEvent(event)));
  }
  bool queryEvent(void* event) const override {
    if (!event) return true;
    mimicResult result = mimicEventQuery(asEvent(event));
    if (result == MIMIC_NOT_READY) return false;
    MIMIC_TORCH_CHECK(result);
    return true;
  }
  void destroyEvent(void* event, const c10::DeviceIndex) const noexcept override {
    if (event) mimicEventDestroy(asEvent(event));
  }

  c10::DeviceIndex deviceCount() const noexcept override {
    return static_cast<c10::DeviceIndex>(deviceCountNoThrow());
  }
  bool queryStream(const c10::Stream& stream) const override {
    mimicResult result = mimicQueueQuery(queueOf(stream));
    if (result == MIMIC_NOT_READY) return false;
    MIMIC_TORCH_CHECK(result);
    return true;
  }
  void synchronizeStream(const c10::Stream& stream) const override {
    MIMIC_TORCH_CHECK(mimicQueueSynchronize(queueOf(stream)));
  }
  void recordDataPtrOnStream(const c10::DataPtr& data, const c10::Stream& stream) const override {
    cachingAllocator().recordStream(data, stream);
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, GuardImpl);

}  // namespace
}  // namespace mimic::torch_backend
