// The sanitizer's shared part (MIMIC_SANITIZE or mimicDebugSetSanitizer): which tools are on,
// the names of correlation ids (the host ops that issued commands), and the findings. Every
// distinct finding is printed once on stderr and counted by kind; at exit a summary line is
// printed and, with MIMIC_SANITIZE_REPORT, the findings are written as JSON.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "mimic/mimic_debug.h"

namespace mimic::driver {

enum class FindingKind { OutOfBounds, UseAfterFree, DoubleFree, UninitializedRead, Race, Leak };
constexpr int kFindingKinds = 6;

class Sanitizer {
 public:
  // Parses "memcheck,racecheck,..." into MIMIC_SANITIZE_* bits; throws ApiError naming an
  // unknown tool.
  static unsigned parseTools(const std::string& list);
  static std::string toolNames(unsigned tools);

  unsigned tools() const { return tools_.load(std::memory_order_relaxed); }
  bool on(unsigned tool) const { return (tools() & tool) != 0; }
  void setTools(unsigned tools) { tools_ = tools; }
  // Correlation names are kept only while some tool is on.
  void nameCorrelation(uint64_t id, const std::string& name);
  // ", host op aten::mul (model.py:12)" for a named correlation id, else "".
  std::string hostOp(uint64_t correlation) const;
  // Prints and counts a finding unless one with the same key was reported before.
  bool report(FindingKind kind, const std::string& key, const std::string& message);
  void findings(mimicSanitizerFindings* out) const;
  uint64_t count(FindingKind kind) const;
  // At exit: the summary line, and the JSON report if MIMIC_SANITIZE_REPORT names a file.
  void finish(const std::string& reportPath) const;

 private:
  std::atomic<unsigned> tools_{0};
  mutable std::mutex mutex_;
  std::array<uint64_t, kFindingKinds> counts_{};
  std::set<std::string> reported_;
  std::vector<std::pair<FindingKind, std::string>> messages_;
  std::map<uint64_t, std::string> names_;  // correlation id -> host op, the most recent ones
};

}  // namespace mimic::driver
