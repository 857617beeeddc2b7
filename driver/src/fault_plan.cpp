#include "fault_plan.h"

#include <cctype>
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

// A cap keeps the slowest link's transfer times far inside 64-bit nanoseconds.
constexpr double kMaxSlowLinkFactor = 1000;

double parseSlowLinkFactor(const std::string& key, const std::string& text) {
  char* end = nullptr;
  const double factor = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(factor > 1 && factor <= kMaxSlowLinkFactor)) {
    fail(MIMIC_ERROR_INVALID_VALUE, "fault '" + key + "' needs a number above 1 and at most " +
                                        std::to_string(int(kMaxSlowLinkFactor)) +
                                        " (the slow-down), not '" + text + "'");
  }
  return factor;
}

// "A-B": two different devices of the system.
void parseDevicePair(const std::string& key, const std::string& text, int numDevices,
                     FaultPlan& plan) {
  const auto device = [&](const std::string& part) {
    char* end = nullptr;
    const long value = std::strtol(part.c_str(), &end, 10);
    const bool whole =
        !part.empty() && std::isdigit(static_cast<unsigned char>(part[0])) && *end == '\0';
    return whole && value < numDevices ? int(value) : -1;
  };
  const size_t dash = text.find('-');
  const int a = dash == std::string::npos ? -1 : device(text.substr(0, dash));
  const int b = dash == std::string::npos ? -1 : device(text.substr(dash + 1));
  if (a < 0 || b < 0 || a == b) {
    fail(MIMIC_ERROR_INVALID_VALUE,
         "fault '" + key + "' needs two different devices A-B, each below " +
             std::to_string(numDevices) + " (the number of devices), not '" + text + "'");
  }
  plan.slowLinkDeviceA = a;
  plan.slowLinkDeviceB = b;
}

}  // namespace

FaultPlan FaultPlan::parse(const std::string& spec, int numDevices) {
  const std::map<std::string, uint64_t FaultPlan::*> keys = {
      {"oom_at_alloc", &FaultPlan::oomAtAlloc},
      {"oom_above_bytes", &FaultPlan::oomAboveBytes},
      {"ecc_at_kernel", &FaultPlan::eccAtKernel},
      {"hang_at_kernel", &FaultPlan::hangAtKernel},
      {"lost_at_kernel", &FaultPlan::lostAtKernel},
      {"ecc_at_ns", &FaultPlan::eccAtNs},
      {"lost_at_ns", &FaultPlan::lostAtNs},
      {"die_at_collective", &FaultPlan::dieAtCollective}};
  const std::string slowLink = "slow_link", slowLinkBetween = "slow_link_between";
  FaultPlan plan;
  std::stringstream items(spec);
  std::string item;
  while (std::getline(items, item, ',')) {
    if (item.empty()) continue;
    const size_t equals = item.find('=');
    const std::string key = item.substr(0, equals);
    const auto field = keys.find(key);
    if (field == keys.end() && key != slowLink && key != slowLinkBetween) {
      std::string known;
      for (const auto& [name, member] : keys) known += (known.empty() ? "" : ", ") + name;
      fail(MIMIC_ERROR_INVALID_VALUE, "unknown fault '" + key + "' (known: " + known + ", " +
                                          slowLink + ", " + slowLinkBetween + ")");
    }
    if (equals == std::string::npos) {
      fail(MIMIC_ERROR_INVALID_VALUE, "fault '" + key + "' needs a value: " + key + "=N");
    }
    const std::string value = item.substr(equals + 1);
    if (key == slowLink) {
      plan.slowLinkFactor = parseSlowLinkFactor(key, value);
    } else if (key == slowLinkBetween) {
      parseDevicePair(key, value, numDevices, plan);
    } else {
      plan.*(field->second) = parseNumber(key, value);
    }
  }
  if (plan.slowLinkDeviceA >= 0 && plan.slowLinkFactor == 1) {
    fail(MIMIC_ERROR_INVALID_VALUE,
         "fault '" + slowLinkBetween + "' needs '" + slowLink + "=F' (how much slower)");
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

double FaultInjector::slowLinkFactor() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return plan_.slowLinkFactor;
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
