// Counts the ops that ran through the boxed CPU fallback, and applies MIMIC_FALLBACK:
// `warn` (default) warns once per op, `silent` only counts, `error` refuses to fall back.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace mimic::torch_backend {

enum class FallbackPolicy { Silent, Warn, Error };

FallbackPolicy fallbackPolicy();  // throws c10::Error for an unknown MIMIC_FALLBACK value
// Called before `op` (e.g. "aten::add.Tensor") runs on the CPU: counts it, warns the first time
// under `warn`, and throws c10::Error naming the op under `error`.
void noteFallback(const std::string& op);
std::map<std::string, int64_t> fallbackCounts();
void resetFallbackCounts();

}  // namespace mimic::torch_backend
