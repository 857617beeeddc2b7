#include "sanitizer.h"

#include <cstdio>
#include <fstream>

#include <unistd.h>

#include "errors.h"

namespace mimic::driver {
namespace {

constexpr size_t kNames = 65536;

struct Tool {
  const char* name;
  unsigned bit;
};
constexpr Tool kTools[] = {{"memcheck", MIMIC_SANITIZE_MEMCHECK},
                           {"racecheck", MIMIC_SANITIZE_RACECHECK},
                           {"initcheck", MIMIC_SANITIZE_INITCHECK},
                           {"leakcheck", MIMIC_SANITIZE_LEAKCHECK}};

// The tool whose report a finding is, and the finding's name in the JSON report.
const char* toolOf(FindingKind kind) {
  switch (kind) {
    case FindingKind::Race:
      return "racecheck";
    case FindingKind::UninitializedRead:
      return "initcheck";
    case FindingKind::Leak:
      return "leakcheck";
    case FindingKind::OutOfBounds:
    case FindingKind::UseAfterFree:
    case FindingKind::DoubleFree:
      break;
  }
  return "memcheck";
}

const char* kindName(FindingKind kind) {
  constexpr const char* names[kFindingKinds] = {
      "out_of_bounds", "use_after_free", "double_free", "uninitialized_read", "race", "leak"};
  return names[static_cast<int>(kind)];
}

std::string jsonString(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

unsigned Sanitizer::parseTools(const std::string& list) {
  unsigned tools = 0;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    const std::string name = list.substr(start, comma - start);
    start = comma + 1;
    if (name.empty()) continue;
    unsigned bit = 0;
    for (const Tool& tool : kTools)
      if (name == tool.name) bit = tool.bit;
    if (name == "all")
      bit = MIMIC_SANITIZE_MEMCHECK | MIMIC_SANITIZE_RACECHECK | MIMIC_SANITIZE_INITCHECK |
            MIMIC_SANITIZE_LEAKCHECK;
    if (bit == 0) {
      fail(MIMIC_ERROR_INVALID_VALUE, "'" + name +
                                          "' is not a sanitizer tool (memcheck, racecheck, "
                                          "initcheck, leakcheck or all)");
    }
    tools |= bit;
  }
  return tools;
}

std::string Sanitizer::toolNames(unsigned tools) {
  std::string names;
  for (const Tool& tool : kTools) {
    if (tools & tool.bit) names += (names.empty() ? "" : ",") + std::string(tool.name);
  }
  return names;
}

void Sanitizer::nameCorrelation(uint64_t id, const std::string& name) {
  if (tools() == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  names_[id] = name;
  if (names_.size() > kNames) names_.erase(names_.begin());  // ids grow: the oldest goes
}

std::string Sanitizer::hostOp(uint64_t correlation) const {
  if (correlation == 0) return "";
  std::lock_guard<std::mutex> lock(mutex_);
  const auto name = names_.find(correlation);
  return name == names_.end() ? "" : ", host op " + name->second;
}

bool Sanitizer::report(FindingKind kind, const std::string& key, const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!reported_.insert(std::string(kindName(kind)) + "|" + key).second) return false;
    ++counts_[static_cast<int>(kind)];
    messages_.push_back({kind, message});
  }
  std::fprintf(stderr, "mimic %s: %s\n", toolOf(kind), message.c_str());
  return true;
}

uint64_t Sanitizer::count(FindingKind kind) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counts_[static_cast<int>(kind)];
}

void Sanitizer::findings(mimicSanitizerFindings* out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  out->outOfBounds = counts_[static_cast<int>(FindingKind::OutOfBounds)];
  out->useAfterFree = counts_[static_cast<int>(FindingKind::UseAfterFree)];
  out->doubleFree = counts_[static_cast<int>(FindingKind::DoubleFree)];
  out->uninitializedRead = counts_[static_cast<int>(FindingKind::UninitializedRead)];
  out->race = counts_[static_cast<int>(FindingKind::Race)];
  out->leak = counts_[static_cast<int>(FindingKind::Leak)];
  out->total = 0;
  for (uint64_t n : counts_) out->total += n;
}

void Sanitizer::finish(const std::string& reportPath) const {
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t total = 0;
  std::string byKind;
  for (int k = 0; k < kFindingKinds; ++k) {
    total += counts_[k];
    if (counts_[k]) {
      byKind += (byKind.empty() ? " (" : ", ") + std::to_string(counts_[k]) + " " +
                kindName(static_cast<FindingKind>(k));
    }
  }
  if (!byKind.empty()) byKind += ")";
  std::fprintf(stderr, "mimic sanitizer (%s): %llu finding%s%s\n", toolNames(tools()).c_str(),
               static_cast<unsigned long long>(total), total == 1 ? "" : "s", byKind.c_str());
  if (reportPath.empty()) return;
  std::string path = reportPath;
  const size_t pid = path.find("%p");  // one file per process, as LLVM_PROFILE_FILE does
  if (pid != std::string::npos) path.replace(pid, 2, std::to_string(getpid()));
  std::ofstream out(path);
  out << "{\n  \"tools\": " << jsonString(toolNames(tools())) << ",\n  \"total\": " << total
      << ",\n  \"counts\": {";
  for (int k = 0; k < kFindingKinds; ++k) {
    out << (k ? ", " : "") << '"' << kindName(static_cast<FindingKind>(k)) << "\": " << counts_[k];
  }
  out << "},\n  \"findings\": [";
  for (size_t i = 0; i < messages_.size(); ++i) {
    out << (i ? ",\n    " : "\n    ") << "{\"kind\": \"" << kindName(messages_[i].first)
        << "\", \"tool\": \"" << toolOf(messages_[i].first)
        << "\", \"message\": " << jsonString(messages_[i].second) << "}";
  }
  out << (messages_.empty() ? "]\n}\n" : "\n  ]\n}\n");
  if (!out) {
    std::fprintf(stderr, "mimic sanitizer: cannot write MIMIC_SANITIZE_REPORT '%s'\n",
                 path.c_str());
  }
}

}  // namespace mimic::driver
