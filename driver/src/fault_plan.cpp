#include "fault_plan.h"

#include <cstdlib>
#include <map>
#include <sstream>

#include "errors.h"

namespace mimic::driver {
namespace {

uint64_t parseNumber(const std::string& key, const std::string& text) {
  static const std::map<std::string, uint64_t> units = {
      {"", 1}, {"KiB", uint64_t{1} << 10}, {"MiB", uint64_t{1} << 20}, {"GiB", uint64_t{1} << 30}};
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  const auto unit = units.find(end ? std::string(end) : "");
  if (text.empty() || end == text.c_str() || unit == units.end() || value == 0 || text[0] == '-') {
    fail(MIMIC_ERROR_INVALID_VALUE, "fault '" + key + "' needs a positive whole number" +
                                        " (sizes may end in KiB, MiB or GiB), not '" + text + "'");
  }
  return uint64_t(value) * unit->second;
}

}  // namespace

FaultPlan FaultPlan::parse(const std::string& spec) {
  const std::map<std::string, uint64_t FaultPlan::*> keys = {
      {"oom_at_alloc", &FaultPlan::oomAtAlloc},
      {"oom_above_bytes", &FaultPlan::oomAboveBytes},
      {"ecc_at_kernel", &FaultPlan::eccAtKernel},
      {"hang_at_kernel", &FaultPlan::hangAtKernel},
      {"lost_at_kernel", &FaultPlan::lostAtKernel},
      {"ecc_at_ns", &FaultPlan::eccAtNs},
      {"lost_at_ns", &FaultPlan::lostAtNs},
      {"die_at_collective", &FaultPlan::dieAtCollective}};
  FaultPlan plan;
  std::stringstream items(spec);
  std::string item;
  while (std::getline(items, item, ',')) {
    if (item.empty()) continue;
    const size_t equals = item.find('=');
    const std::string key = item.substr(0, equals);
    const auto field = keys.find(key);
    if (field == keys.end()) {
      std::string known;
      for (const auto& [name, member] : keys) known += (known.empty() ? "" : ", ") + name;
      fail(MIMIC_ERROR_INVALID_VALUE, "unknown fault '" + key + "' (known: " + known + ")");
    }
    if (equals == std::string::npos) {
      fail(MIMIC_ERROR_INVALID_VALUE, "fault '" + key + "' needs a value: " + key + "=N");
    }
    plan.*(field->second) = parseNumber(key, item.substr(equals + 1));
  }
  return plan;
}

void FaultInjector::set(const FaultPlan& plan) {
  std::lock_guard<std::mutex> lock(mutex_);
  plan_ = plan;
  allocations_ = 0;
  kernels_ = 0;
}

std::string FaultInjector::allocationFault(uint64_t bytes, uint64_t bytesInUse) {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t n = ++allocations_;
  if (plan_.oomAtAlloc == n) {
    return "injected fault: allocation " + std::to_string(n) + " fails (oom_at_alloc)";
  }
  if (plan_.oomAboveBytes && bytesInUse + bytes > plan_.oomAboveBytes) {
    return "injected fault: " + std::to_string(bytes) + " more bytes would take the device to " +
           std::to_string(bytesInUse + bytes) +
           ", above oom_above_bytes=" + std::to_string(plan_.oomAboveBytes);
  }
  return "";
}

mimicResult FaultInjector::kernelFault(std::string* why) {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t n = ++kernels_;
  const struct {
    uint64_t at;
    mimicResult code;
    const char* what;
  } faults[] = {
      {plan_.eccAtKernel, MIMIC_ERROR_ECC_UNCORRECTABLE,
       "an uncorrectable ECC error (ecc_at_kernel)"},
      {plan_.hangAtKernel, MIMIC_ERROR_LAUNCH_TIMEOUT,
       "a hang, stopped by the watchdog (hang_at_kernel)"},
      {plan_.lostAtKernel, MIMIC_ERROR_DEVICE_LOST, "the loss of the device (lost_at_kernel)"},
  };
  for (const auto& fault : faults) {
    if (fault.at != n) continue;
    *why = "injected fault: kernel " + std::to_string(n) + " ended in " + fault.what;
    return fault.code;
  }
  return MIMIC_SUCCESS;
}

}  // namespace mimic::driver
