// The driver API under arbitrary call sequences: allocations, frees (double ones included),
// fills and copies of every direction with arbitrary offsets and lengths, queues and events
// created, used and destroyed in any order, stale and made-up pointers and handles. Every call
// must return success or one of the codes its documentation lists; nothing may crash, and no
// device may fail (no kernel runs, so there is nothing to fail it).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "mimic/mimic.h"

namespace {

// Reads the input a few bytes at a time; past its end, zeros.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool done() const { return at_ >= size_; }
  uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
  uint32_t number(uint32_t limit) {  // 0 .. limit - 1
    const uint32_t value = uint32_t(byte()) | uint32_t(byte()) << 8;
    return limit ? value % limit : 0;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

[[noreturn]] void failWith(const char* what, mimicResult result) {
  const char* detail = "";
  mimicGetErrorDetail(&detail);
  std::fprintf(stderr, "%s returned %s: %s\n", what, mimicGetErrorName(result), detail);
  std::abort();
}

void expect(mimicResult result, std::initializer_list<mimicResult> allowed) {
  if (result == MIMIC_SUCCESS) return;
  for (mimicResult r : allowed)
    if (r == result) return;
  failWith("a call", result);  // an answer the documentation does not list
}

constexpr uint32_t kMaxBytes = 64 * 1024;

struct State {
  std::vector<void*> allocations;  // live or freed (freed ones stay, to be misused)
  std::vector<mimicQueue> queues;  // live or destroyed
  std::vector<mimicEvent> events;
  std::vector<uint8_t> host = std::vector<uint8_t>(kMaxBytes + 64);
  std::vector<bool> liveAllocation, liveQueue, liveEvent;
};

template <typename T>
size_t pick(Input& in, const std::vector<T>& items) {
  return in.number(uint32_t(items.size()));
}

// A pointer into a device's address range: an allocation, maybe freed, plus any offset (so
// maybe past its end). Never a made-up host address: the driver cannot tell those from real
// host memory, and a copy would really touch them.
void* devicePointer(Input& in, State& s) {
  if (s.allocations.empty()) return nullptr;
  return static_cast<uint8_t*>(s.allocations[pick(in, s.allocations)]) + in.number(kMaxBytes);
}

mimicQueue queue(Input& in, State& s) {
  if (s.queues.empty() || in.byte() % 4 == 0) return nullptr;
  return s.queues[pick(in, s.queues)];
}

void step(Input& in, State& s) {
  int device = in.byte() % 3;  // 2 is not a device of tiny
  switch (in.byte() % 12) {
    case 0: {
      void* p = nullptr;
      const mimicResult r = mimicMemAlloc(device, in.number(kMaxBytes), &p);
      expect(r, {MIMIC_ERROR_INVALID_DEVICE, MIMIC_ERROR_INVALID_SIZE});
      if (r == MIMIC_SUCCESS) {
        s.allocations.push_back(p);
        s.liveAllocation.push_back(true);
      }
      break;
    }
    case 1: {
      if (s.allocations.empty()) break;
      const size_t i = pick(in, s.allocations);
      const mimicResult r = mimicMemFree(s.allocations[i]);
      expect(r, {MIMIC_ERROR_DOUBLE_FREE, MIMIC_ERROR_INVALID_DEVICE_POINTER});
      // A stale pointer may free a later allocation that reuses its address.
      for (size_t j = 0; j < s.allocations.size() && r == MIMIC_SUCCESS; ++j)
        if (s.allocations[j] == s.allocations[i]) s.liveAllocation[j] = false;
      break;
    }
    case 2:
      expect(mimicMemsetAsync(devicePointer(in, s), int(in.number(400)) - 128, in.number(kMaxBytes),
                              queue(in, s)),
             {MIMIC_ERROR_NULL_POINTER, MIMIC_ERROR_INVALID_SIZE, MIMIC_ERROR_INVALID_VALUE,
              MIMIC_ERROR_INVALID_DEVICE_POINTER, MIMIC_ERROR_OUT_OF_BOUNDS,
              MIMIC_ERROR_INVALID_QUEUE, MIMIC_ERROR_WRONG_DEVICE});
      break;
    case 3:
    case 4:
    case 5: {
      void* dst = devicePointer(in, s);
      void* src = devicePointer(in, s);
      const int direction = in.byte() % 3;
      if (direction == 0) src = s.host.data() + in.number(64);
      if (direction == 1) dst = s.host.data() + in.number(64);
      const uint32_t bytes = in.number(kMaxBytes);
      const mimicResult r = in.byte() % 2 ? mimicMemcpy(dst, src, bytes)
                                          : mimicMemcpyAsync(dst, src, bytes, queue(in, s));
      expect(r, {MIMIC_ERROR_NULL_POINTER, MIMIC_ERROR_INVALID_SIZE,
                 MIMIC_ERROR_INVALID_DEVICE_POINTER, MIMIC_ERROR_OUT_OF_BOUNDS,
                 MIMIC_ERROR_INVALID_QUEUE, MIMIC_ERROR_WRONG_DEVICE});
      break;
    }
    case 6: {
      mimicQueue q = nullptr;
      const mimicResult r = mimicQueueCreate(device, 0, -int(in.byte() % 3), &q);
      expect(r, {MIMIC_ERROR_INVALID_DEVICE, MIMIC_ERROR_INVALID_PRIORITY});
      if (r == MIMIC_SUCCESS) {
        s.queues.push_back(q);
        s.liveQueue.push_back(true);
      }
      break;
    }
    case 7: {
      if (s.queues.empty()) break;
      const size_t i = pick(in, s.queues);
      const mimicResult r = mimicQueueDestroy(s.queues[i]);
      expect(r, {MIMIC_ERROR_INVALID_QUEUE});
      if (r == MIMIC_SUCCESS) s.liveQueue[i] = false;
      break;
    }
    case 8: {
      mimicEvent e = nullptr;
      const mimicResult r = mimicEventCreate(device, in.byte() % 3, &e);
      expect(r, {MIMIC_ERROR_INVALID_DEVICE, MIMIC_ERROR_INVALID_FLAGS});
      if (r == MIMIC_SUCCESS) {
        s.events.push_back(e);
        s.liveEvent.push_back(true);
      }
      break;
    }
    case 9: {
      if (s.events.empty()) break;
      const size_t i = pick(in, s.events);
      mimicEvent e = s.events[i];
      const std::initializer_list<mimicResult> eventErrors = {MIMIC_NOT_READY,
                                                              MIMIC_ERROR_INVALID_EVENT,
                                                              MIMIC_ERROR_INVALID_QUEUE,
                                                              MIMIC_ERROR_WRONG_DEVICE,
                                                              MIMIC_ERROR_EVENT_NOT_RECORDED,
                                                              MIMIC_ERROR_EVENT_TIMING_DISABLED,
                                                              MIMIC_ERROR_NULL_POINTER};
      float ms = 0;
      uint64_t ns = 0;
      switch (in.byte() % 6) {
        case 0:
          expect(mimicEventRecord(e, queue(in, s)), eventErrors);
          break;
        case 1:
          expect(mimicQueueWaitEvent(queue(in, s), e), eventErrors);
          break;
        case 2:
          expect(mimicEventQuery(e), eventErrors);
          break;
        case 3:
          expect(mimicEventSynchronize(e), eventErrors);
          break;
        case 4:
          expect(mimicEventElapsedTime(&ms, s.events[pick(in, s.events)], e), eventErrors);
          expect(mimicEventGetTimestamp(e, &ns), eventErrors);
          break;
        default: {
          const mimicResult r = mimicEventDestroy(e);
          expect(r, {MIMIC_ERROR_INVALID_EVENT});
          if (r == MIMIC_SUCCESS) s.liveEvent[i] = false;
        }
      }
      break;
    }
    case 10: {
      mimicPointerAttributes attributes{};
      expect(mimicPointerGetAttributes(devicePointer(in, s), &attributes),
             {MIMIC_ERROR_NULL_POINTER, MIMIC_ERROR_INVALID_DEVICE_POINTER});
      break;
    }
    default:
      expect(in.byte() % 2 ? mimicDeviceSynchronize(device) : mimicQueueSynchronize(queue(in, s)),
             {MIMIC_ERROR_INVALID_DEVICE, MIMIC_ERROR_INVALID_QUEUE});
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool initialised = mimicInitWithPreset(0, "tiny", nullptr) == MIMIC_SUCCESS;
  if (!initialised) std::abort();
  Input in(data, size);
  State s;
  for (int calls = 0; calls < 64 && !in.done(); ++calls) step(in, s);
  // Leave nothing behind for the next input; the devices must be healthy.
  for (int d = 0; d < 2; ++d) expect(mimicDeviceSynchronize(d), {});
  for (size_t i = 0; i < s.allocations.size(); ++i)
    if (s.liveAllocation[i]) expect(mimicMemFree(s.allocations[i]), {});
  for (size_t i = 0; i < s.queues.size(); ++i)
    if (s.liveQueue[i]) expect(mimicQueueDestroy(s.queues[i]), {});
  for (size_t i = 0; i < s.events.size(); ++i)
    if (s.liveEvent[i]) expect(mimicEventDestroy(s.events[i]), {});
  return 0;
}
