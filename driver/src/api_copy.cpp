// mimicMemcpy, mimicMemcpyAsync, mimicMemcpyPeerAsync, mimicMemsetAsync, mimicMemGetHostView.
//
// The bytes move when the command is submitted (functional order is submission order, see
// DESIGN.md); the simulation then decides when the copy starts and ends. In timing-only mode
// only small copies and fills move bytes (timing_mode_transfers.h); a larger copy into host
// memory writes zeros there, and every copy into host memory is counted as a placeholder; the
// commands are the same, so the times are too.
#include <cstring>

#include "call_recorder.h"
#include "runtime.h"
#include "sim/device.h"
#include "timing_mode_transfers.h"

using namespace mimic::driver;
using mimic::sim::Command;
using mimic::sim::CommandKind;
using mimic::sim::TransferKind;

namespace {

// One side of a copy, validated.
struct Endpoint {
  int device = -1;       // -1: host memory
  uint64_t address = 0;  // the device address
  bool pinned = false;
  uint8_t* bytes = nullptr;  // where the driver reads or writes them
};

// The sanitizer's name for a command reaching `argument` of `call`.
std::string commandName(const char* call, const char* argument) {
  return std::string(call) + "'s " + argument;
}

Endpoint resolve(Runtime& rt, const void* pointer, size_t count, const char* argument,
                 const char* call) {
  requireNotNull(pointer, argument);
  Endpoint end;
  end.device = rt.deviceOfAddress(pointer);
  if (end.device < 0) {
    void* base = nullptr;
    size_t size = 0;
    end.pinned = rt.findPinned(pointer, count, &base, &size);
    end.bytes = static_cast<uint8_t*>(const_cast<void*>(pointer));
    return end;
  }
  rt.checkSticky(end.device);
  mimic::sim::DeviceMemory& memory = rt.sim().device(end.device).memory();
  const uint64_t address = reinterpret_cast<uint64_t>(pointer);
  mimic::sim::Allocation a;
  const bool write = std::strcmp(argument, "src") != 0;
  if (!memory.find(address, &a)) {
    rt.memcheck().onInvalidAddress(end.device, address, write ? "writes" : "reads",
                                   commandName(call, argument), Tracer::correlation());
    fail(MIMIC_ERROR_INVALID_DEVICE_POINTER, std::string(argument) + " " + hexAddress(pointer) +
                                                 " is not inside a live allocation of device " +
                                                 std::to_string(end.device));
  }
  const uint64_t available = a.base + a.size - address;
  if (count > available) {
    if (rt.memcheck().checking()) {
      rt.memcheck().onAccesses(end.device, {{address, address + count, write}},
                               commandName(call, argument), Tracer::correlation());
    }
    fail(MIMIC_ERROR_OUT_OF_BOUNDS,
         std::string(argument) + " range of " + std::to_string(count) + " bytes at " +
             hexAddress(pointer) + " runs " + std::to_string(count - available) +
             " bytes past the end of its " + std::to_string(a.size) + "-byte allocation");
  }
  end.bytes = memory.hostView(address);
  end.address = address;
  return end;
}

TransferKind transferKind(const Endpoint& dst, const Endpoint& src) {
  if (dst.device < 0 && src.device < 0) return TransferKind::HostToHost;
  if (src.device < 0) return TransferKind::HostToDevice;
  if (dst.device < 0) return TransferKind::DeviceToHost;
  return dst.device == src.device ? TransferKind::DeviceToDevice : TransferKind::Peer;
}

// The device whose default queue a copy uses when the caller names none.
int homeDevice(const Endpoint& dst, const Endpoint& src) {
  if (dst.device >= 0) return dst.device;
  return src.device >= 0 ? src.device : 0;
}

void checkQueueDevice(const QueueState& q, const Endpoint& dst, const Endpoint& src) {
  if (dst.device < 0 && src.device < 0) return;
  if (q.device == dst.device || q.device == src.device) return;
  fail(MIMIC_ERROR_WRONG_DEVICE, "the queue belongs to device " + std::to_string(q.device) +
                                     ", which holds neither side of the copy");
}

void moveBytes(Runtime& rt, const Endpoint& dst, const Endpoint& src, size_t bytes) {
  if (movesBytes(rt.config().timingOnly, bytes) || (dst.device < 0 && src.device < 0)) {
    std::memmove(dst.bytes, src.bytes, bytes);
  } else if (dst.device < 0) {
    std::memset(dst.bytes, 0, bytes);
  }
  if (rt.config().timingOnly && dst.device < 0 && src.device >= 0) rt.countPlaceholderCopy(bytes);
}

// Moves the bytes, then queues the timed transfer. Returns its completion.
std::shared_ptr<mimic::sim::Completion> enqueueCopy(Runtime& rt, const Endpoint& dst,
                                                    const Endpoint& src, size_t bytes,
                                                    QueueState& queue, const char* call) {
  if (bytes == 0) fail(MIMIC_ERROR_INVALID_SIZE, "bytes is 0");
  checkQueueDevice(queue, dst, src);
  moveBytes(rt, dst, src, bytes);
  auto cmd = std::make_unique<Command>();
  cmd->kind = CommandKind::Transfer;
  cmd->transfer = transferKind(dst, src);
  cmd->bytes = bytes;
  cmd->srcDevice = src.device;
  cmd->dstDevice = dst.device;
  cmd->hostPinned = cmd->transfer == TransferKind::HostToDevice   ? src.pinned
                    : cmd->transfer == TransferKind::DeviceToHost ? dst.pinned
                                                                  : true;
  if (rt.racecheck().enabled()) {
    std::vector<DeviceAccess> accesses;
    if (src.device >= 0) accesses.push_back({src.device, src.address, src.address + bytes, false});
    if (dst.device >= 0) accesses.push_back({dst.device, dst.address, dst.address + bytes, true});
    rt.racecheck().onCommand(queue.id, accesses, call, Tracer::correlation());
  }
  if (rt.memcheck().checking()) {
    if (src.device >= 0) {
      rt.memcheck().onAccesses(src.device, {{src.address, src.address + bytes, false}},
                               commandName(call, "src"), Tracer::correlation());
    }
    if (dst.device >= 0) {
      rt.memcheck().onAccesses(dst.device, {{dst.address, dst.address + bytes, true}},
                               commandName(call, "dst"), Tracer::correlation());
    }
  }
  return rt.submit(queue, std::move(cmd));
}

}  // namespace

extern "C" {

mimicResult mimicMemcpy(void* dst, const void* src, size_t bytes) {
  RecordedCall call(CallId::Memcpy, {dst, src, bytes});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           Endpoint to = resolve(rt, dst, bytes, "dst", "mimicMemcpy");
           Endpoint from = resolve(rt, src, bytes, "src", "mimicMemcpy");
           if (bytes == 0) fail(MIMIC_ERROR_INVALID_SIZE, "bytes is 0");
           if (to.device < 0 && from.device < 0) {
             std::memmove(to.bytes, from.bytes, bytes);
             return MIMIC_SUCCESS;
           }
           auto queue = rt.queue(nullptr, homeDevice(to, from));
           rt.wait({enqueueCopy(rt, to, from, bytes, *queue, "mimicMemcpy")});
           rt.checkSticky(queue->device);
           return MIMIC_SUCCESS;
         });
}

mimicResult mimicMemcpyAsync(void* dst, const void* src, size_t bytes, mimicQueue queue) {
  RecordedCall call(CallId::MemcpyAsync, {dst, src, bytes, queue});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           Endpoint to = resolve(rt, dst, bytes, "dst", "mimicMemcpyAsync");
           Endpoint from = resolve(rt, src, bytes, "src", "mimicMemcpyAsync");
           auto q = rt.queue(queue, homeDevice(to, from));
           auto completion = enqueueCopy(rt, to, from, bytes, *q, "mimicMemcpyAsync");
           if (to.device < 0 && from.device >= 0 && !to.pinned) {
             // Into pageable memory the driver must finish before returning, as real drivers do.
             rt.wait({completion});
             rt.checkSticky(q->device);
           }
           return MIMIC_SUCCESS;
         });
}

mimicResult mimicMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice,
                                 size_t bytes, mimicQueue queue) {
  RecordedCall call(CallId::MemcpyPeerAsync, {dst, dstDevice, src, srcDevice, bytes, queue});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           rt.checkDevice(dstDevice, "dstDevice");
           rt.checkDevice(srcDevice, "srcDevice");
           Endpoint to = resolve(rt, dst, bytes, "dst", "mimicMemcpyPeerAsync");
           Endpoint from = resolve(rt, src, bytes, "src", "mimicMemcpyPeerAsync");
           if (to.device != dstDevice) {
             fail(MIMIC_ERROR_WRONG_DEVICE,
                  "dst " + hexAddress(dst) + " is not on device " + std::to_string(dstDevice));
           }
           if (from.device != srcDevice) {
             fail(MIMIC_ERROR_WRONG_DEVICE,
                  "src " + hexAddress(src) + " is not on device " + std::to_string(srcDevice));
           }
           auto q = rt.queue(queue, dstDevice);
           enqueueCopy(rt, to, from, bytes, *q, "mimicMemcpyPeerAsync");
           return MIMIC_SUCCESS;
         });
}

mimicResult mimicMemsetAsync(void* dptr, int value, size_t bytes, mimicQueue queue) {
  RecordedCall call(CallId::MemsetAsync, {dptr, value, bytes, queue});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           Endpoint target = resolve(rt, dptr, bytes, "dptr", "mimicMemsetAsync");
           if (target.device < 0) {
             fail(MIMIC_ERROR_INVALID_DEVICE_POINTER,
                  "dptr " + hexAddress(dptr) + " is host memory, not a device pointer");
           }
           if (value < -128 || value > 255) {
             fail(MIMIC_ERROR_INVALID_VALUE, "value " + std::to_string(value) + " is not a byte");
           }
           if (bytes == 0) fail(MIMIC_ERROR_INVALID_SIZE, "bytes is 0");
           auto q = rt.queue(queue, target.device);
           if (q->device != target.device) {
             fail(MIMIC_ERROR_WRONG_DEVICE, "the queue belongs to device " +
                                                std::to_string(q->device) + ", dptr to device " +
                                                std::to_string(target.device));
           }
           if (movesBytes(rt.config().timingOnly, bytes)) std::memset(target.bytes, value, bytes);
           auto cmd = std::make_unique<Command>();
           cmd->kind = CommandKind::Transfer;
           cmd->transfer = TransferKind::Fill;
           cmd->bytes = bytes;
           cmd->dstDevice = target.device;
           if (rt.racecheck().enabled()) {
             rt.racecheck().onCommand(
                 q->id, {{target.device, target.address, target.address + bytes, true}},
                 "mimicMemsetAsync", Tracer::correlation());
           }
           if (rt.memcheck().checking()) {
             rt.memcheck().onAccesses(target.device,
                                      {{target.address, target.address + bytes, true}},
                                      "mimicMemsetAsync", Tracer::correlation());
           }
           rt.submit(*q, std::move(cmd));
           return MIMIC_SUCCESS;
         });
}

mimicResult mimicMemGetHostView(const void* dptr, size_t bytes, void** view) {
  return guarded(__func__, [&](Runtime& rt) {
    requireNotNull(view, "view");
    if (bytes == 0) fail(MIMIC_ERROR_INVALID_SIZE, "bytes is 0");
    const Endpoint end = resolve(rt, dptr, bytes, "dptr", "mimicMemGetHostView");
    if (end.device < 0) {
      fail(MIMIC_ERROR_INVALID_DEVICE_POINTER,
           "dptr " + hexAddress(dptr) + " is host memory, not a device allocation");
    }
    if (rt.memcheck().tracking()) {
      rt.memcheck().onHostView(end.device, end.address, end.address + bytes);
    }
    *view = end.bytes;
    return MIMIC_SUCCESS;
  });
}

}  // extern "C"
