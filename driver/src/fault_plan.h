// Fault injection (mimicDebugSetFaults, MIMIC_FAULTS): a plan of failures the driver makes
// happen at a given allocation, kernel or simulated time. Counting is deterministic: the n-th
// allocation or kernel since the plan was set, over all devices, in call order.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "mimic/mimic.h"

namespace mimic::driver {

struct FaultPlan {
  uint64_t oomAtAlloc = 0;     // that allocation fails with MIMIC_ERROR_OUT_OF_MEMORY
  uint64_t oomAboveBytes = 0;  // allocations taking a device above this many bytes fail
  uint64_t eccAtKernel = 0;    // that kernel fails its device: ECC_UNCORRECTABLE
  uint64_t hangAtKernel = 0;   // that kernel hangs; the watchdog fails it: LAUNCH_TIMEOUT
  uint64_t lostAtKernel = 0;   // that kernel loses its device: DEVICE_LOST
  uint64_t eccAtNs = 0;        // every device fails at the first command from this time on
  uint64_t lostAtNs = 0;
  uint64_t dieAtCollective = 0;  // read by the c10d backend: the process exits there
  double slowLinkFactor = 1;     // device links run at 1/factor of their bandwidth
  int slowLinkDeviceA = -1;      // only the links between these two devices; -1: every link
  int slowLinkDeviceB = -1;

  // "key=value,key=value"; sizes take KiB/MiB/GiB. Throws ApiError (MIMIC_ERROR_INVALID_VALUE)
  // naming an unknown key or a bad value (slow_link_between must name two of numDevices).
  static FaultPlan parse(const std::string& spec, int numDevices);
};

class FaultInjector {
 public:
  void set(const FaultPlan& plan);
  // Why this allocation must fail, or "" (counts the allocation).
  std::string allocationFault(uint64_t bytes, uint64_t bytesInUse);
  // The sticky code this kernel must end with, or MIMIC_SUCCESS (counts the kernel).
  mimicResult kernelFault(std::string* why);
  // The plan's slow_link factor (1: none), which the c10d backend's time model applies.
  double slowLinkFactor() const;

 private:
  mutable std::mutex mutex_;
  FaultPlan plan_;
  uint64_t allocations_ = 0;
  uint64_t kernels_ = 0;
};

}  // namespace mimic::driver
