#include "torch_backend/src/fallback_counter.h"

#include <c10/util/Exception.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace mimic::torch_backend {
namespace {

std::mutex countsMutex;
std::map<std::string, int64_t> counts;

}  // namespace

FallbackPolicy fallbackPolicy() {
  static const FallbackPolicy policy = [] {
    const char* value = std::getenv("MIMIC_FALLBACK");
    if (!value || !*value || !std::strcmp(value, "warn")) return FallbackPolicy::Warn;
    if (!std::strcmp(value, "silent")) return FallbackPolicy::Silent;
    if (!std::strcmp(value, "error")) return FallbackPolicy::Error;
    TORCH_CHECK(false, "mimic: MIMIC_FALLBACK must be silent, warn or error, not '", value, "'");
  }();
  return policy;
}

void noteFallback(const std::string& op) {
  const FallbackPolicy policy = fallbackPolicy();
  TORCH_CHECK(policy != FallbackPolicy::Error, "mimic: ", op,
              " has no mimic kernel and MIMIC_FALLBACK=error forbids the CPU fallback");
  bool first;
  {
    std::lock_guard<std::mutex> lock(countsMutex);
    first = ++counts[op] == 1;
  }
  if (first && policy == FallbackPolicy::Warn) {
    TORCH_WARN("mimic: ", op, " has no mimic kernel; it runs on the CPU through the fallback ",
               "(set MIMIC_FALLBACK=silent to hide this, or error to forbid it)");
  }
}

std::map<std::string, int64_t> fallbackCounts() {
  std::lock_guard<std::mutex> lock(countsMutex);
  return counts;
}

void resetFallbackCounts() {
  std::lock_guard<std::mutex> lock(countsMutex);
  counts.clear();
}

}  // namespace mimic::torch_backend
