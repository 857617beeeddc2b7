// mimicMem*, mimicHost*, mimicPointerGetAttributes.
#include <sys/mman.h>

#include "call_recorder.h"
#include "runtime.h"
#include "sim/device.h"

using namespace mimic::driver;

extern "C" {

mimicResult mimicMemAlloc(int device, size_t bytes, void** dptr) {
  RecordedCall call(CallId::MemAlloc, {device, bytes, dptr});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           requireNotNull(dptr, "dptr");
           rt.checkDevice(device);
           mimic::sim::DeviceMemory& memory = rt.sim().device(device).memory();
           if (bytes == 0) fail(MIMIC_ERROR_INVALID_SIZE, "bytes is 0");
           // Out of memory whatever the size, as CUDA answers: PyTorch's caching allocator
           // frees its cache and retries on this code only.
           if (bytes > memory.capacity()) {
             fail(MIMIC_ERROR_OUT_OF_MEMORY,
                  "cannot allocate " + std::to_string(bytes) + " bytes on device " +
                      std::to_string(device) + ": they exceed the device's " +
                      std::to_string(memory.capacity()) + "-byte capacity");
           }
           const std::string injected =
               rt.faults().allocationFault(bytes, memory.stats().bytesInUse);
           if (!injected.empty()) fail(MIMIC_ERROR_OUT_OF_MEMORY, injected);
           uint64_t address = memory.allocate(bytes);
           if (address == 0) {
             fail(MIMIC_ERROR_OUT_OF_MEMORY, "cannot allocate " + std::to_string(bytes) +
                                                 " bytes on device " + std::to_string(device) +
                                                 ": " + std::to_string(memory.freeBytes()) +
                                                 " bytes free, largest free block " +
                                                 std::to_string(memory.largestFreeBlock()));
           }
           *dptr = reinterpret_cast<void*>(address);
           rt.memcheck().onAlloc(device, address, bytes);
           rt.traceHostActivity(MIMIC_ACTIVITY_ALLOC, device, bytes);
           return MIMIC_SUCCESS;
         });
}

mimicResult mimicMemFree(void* dptr) {
  RecordedCall call(CallId::MemFree, {dptr});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           requireNotNull(dptr, "dptr");
           int device = rt.deviceOfAddress(dptr);
           if (device < 0) {
             fail(MIMIC_ERROR_INVALID_DEVICE_POINTER,
                  hexAddress(dptr) + " is not a device pointer");
           }
           rt.checkSticky(device);
           rt.waitForDevice(device);
           rt.checkSticky(device);
           using FreeResult = mimic::sim::DeviceMemory::FreeResult;
           mimic::sim::DeviceMemory& memory = rt.sim().device(device).memory();
           mimic::sim::Allocation allocation{};
           memory.find(reinterpret_cast<uint64_t>(dptr), &allocation);
           switch (memory.release(reinterpret_cast<uint64_t>(dptr))) {
             case FreeResult::Freed:
               rt.traceHostActivity(MIMIC_ACTIVITY_FREE, device, allocation.size);
               if (rt.racecheck().enabled())
                 rt.racecheck().onFree(device, allocation.base, allocation.size);
               rt.memcheck().onFree(device, allocation.base);
               break;
             case FreeResult::AlreadyFreed:
               rt.memcheck().onDoubleFree(device, reinterpret_cast<uint64_t>(dptr), "mimicMemFree");
               fail(MIMIC_ERROR_DOUBLE_FREE, hexAddress(dptr) + " was already freed");
             case FreeResult::NotAnAllocation:
               fail(MIMIC_ERROR_INVALID_DEVICE_POINTER,
                    hexAddress(dptr) + " is not the start of an allocation on device " +
                        std::to_string(device));
           }
           return MIMIC_SUCCESS;
         });
}

mimicResult mimicMemGetInfo(int device, size_t* freeBytes, size_t* totalBytes) {
  return guarded(__func__, [&](Runtime& rt) {
    requireNotNull(freeBytes, "freeBytes");
    requireNotNull(totalBytes, "totalBytes");
    rt.checkDevice(device);
    const mimic::sim::DeviceMemory& memory = rt.sim().device(device).memory();
    *freeBytes = memory.freeBytes();
    *totalBytes = memory.capacity();
    return MIMIC_SUCCESS;
  });
}

mimicResult mimicHostAlloc(size_t bytes, void** hptr) {
  RecordedCall call(CallId::HostAlloc, {bytes, hptr});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           requireNotNull(hptr, "hptr");
           if (bytes == 0) fail(MIMIC_ERROR_INVALID_SIZE, "bytes is 0");
           void* p =
               mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
           if (p == MAP_FAILED) {
             fail(MIMIC_ERROR_HOST_OUT_OF_MEMORY,
                  "cannot allocate " + std::to_string(bytes) + " bytes of pinned host memory");
           }
           rt.addPinned(p, bytes);
           *hptr = p;
           return MIMIC_SUCCESS;
         });
}

mimicResult mimicHostFree(void* hptr) {
  RecordedCall call(CallId::HostFree, {hptr});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           requireNotNull(hptr, "hptr");
           size_t bytes = 0;
           if (!rt.removePinned(hptr, &bytes)) {
             fail(MIMIC_ERROR_INVALID_HOST_POINTER,
                  hexAddress(hptr) + " is not the start of a live mimicHostAlloc allocation");
           }
           munmap(hptr, bytes);
           return MIMIC_SUCCESS;
         });
}

mimicResult mimicPointerGetAttributes(const void* ptr, mimicPointerAttributes* attrs) {
  return guarded(__func__, [&](Runtime& rt) {
    requireNotNull(ptr, "ptr");
    requireNotNull(attrs, "attrs");
    mimicPointerAttributes a{MIMIC_MEMORY_TYPE_PAGEABLE, -1, nullptr, 0};
    void* base = nullptr;
    size_t size = 0;
    int device = rt.deviceOfAddress(ptr);
    if (device >= 0) {
      mimic::sim::Allocation allocation;
      if (!rt.sim().device(device).memory().find(reinterpret_cast<uint64_t>(ptr), &allocation)) {
        fail(MIMIC_ERROR_INVALID_DEVICE_POINTER,
             hexAddress(ptr) + " is in device " + std::to_string(device) +
                 "'s address range but not in a live allocation");
      }
      a = {MIMIC_MEMORY_TYPE_DEVICE, device, reinterpret_cast<void*>(allocation.base),
           allocation.size};
    } else if (rt.findPinned(ptr, 1, &base, &size)) {
      a = {MIMIC_MEMORY_TYPE_PINNED, -1, base, size};
    }
    *attrs = a;
    return MIMIC_SUCCESS;
  });
}

}  // extern "C"
