// mimicDebugReplay: re-issues a call log (call_log.h) through the public API on a simulation
// built from the log's header, and stops at the first call whose outcome differs.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "call_log.h"
#include "call_recorder.h"
#include "mimic/mimic_debug.h"

namespace mimic::driver {

class Replayer {
 public:
  explicit Replayer(CallLog log);
  // Builds the simulation (mimic must not be initialised yet), starts tracing if
  // traceCapacity > 0, then replays every call. Fills *result as far as it got, and throws
  // ApiError on the first divergence (MIMIC_ERROR_REPLAY_DIVERGED) or a malformed payload.
  void run(size_t traceCapacity, mimicReplayResult* result);

 private:
  struct PinnedBlock {
    uint64_t size;
    uint8_t* replayBase;
  };

  void initialize(size_t traceCapacity);
  mimicResult issue(const LoggedCall& call, ByteReader& payload);
  mimicResult issueTransfer(const LoggedCall& call, ByteReader& payload);
  mimicResult issueHostTask(const LoggedCall& call);
  void checkHostTasks();

  // Translations of the recorded run's values into this run's.
  template <typename Handle>
  Handle handle(uint64_t recorded) const;
  void mapHandle(uint64_t recorded, const void* replayed);
  uint64_t deviceAddress(uint64_t recorded) const;
  void* devicePointer(uint64_t recorded) const;
  void* hostMemory(PointerKind kind, uint64_t recorded, size_t bytes);

  [[noreturn]] void diverged(const std::string& what) const;
  template <typename T>
  void expectEqual(const char* what, T logged, T replayed) const;

  CallLog log_;
  uint64_t callNumber_ = 0;  // 1-based number of the call being replayed
  const LoggedCall* current_ = nullptr;
  std::vector<LoggedDeviceRange> deviceRanges_;  // this replay's, by device
  std::unordered_map<uint64_t, uint64_t> handles_;
  std::map<uint64_t, PinnedBlock> pinned_;                    // by the recorded base
  std::unordered_map<uint64_t, LoggedHostTaskEnd> taskEnds_;  // by launch call number
  std::vector<std::vector<uint8_t>> scratch_;  // pageable host memory of the current call
  size_t tasksChecked_ = 0;                    // host tasks whose start was compared with the log
};

}  // namespace mimic::driver
