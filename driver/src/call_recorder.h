// Recording of the driver call log (MIMIC_RECORD; format in call_log.h). Each API function that
// changes device state or simulated time starts with a RecordedCall and hands it its result:
//
//   RecordedCall call(CallId::MemAlloc, {device, bytes, dptr});
//   return call.result = guarded(__func__, [&](Runtime& rt) { ... });
//
// While recording, a call holds the recording lock from entry to return, so calls of several
// host threads are logged, and take effect, in the order they entered the driver. When the call
// returns, the RecordedCall appends its record: arguments, result, outputs and data (see
// call_recorder.cpp). Without MIMIC_RECORD it costs one atomic load.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>

#include "call_log.h"
#include "mimic/mimic.h"

namespace mimic::driver {

// One recorded argument: an integer, or a pointer or handle as its value.
struct LogArg {
  template <typename T, std::enable_if_t<std::is_integral_v<T> || std::is_enum_v<T>, int> = 0>
  LogArg(T v) : value(static_cast<uint64_t>(v)) {}
  LogArg(const void* p) : value(reinterpret_cast<uintptr_t>(p)) {}
  uint64_t value;
};

// How a pointer argument of a copy or fill was classified; the replay substitutes its own host
// memory of the same kind.
enum class PointerKind : uint8_t { Null = 0, Device = 1, Pinned = 2, Pageable = 3 };

class RecordedCall {
 public:
  RecordedCall(CallId id, std::initializer_list<LogArg> args);
  ~RecordedCall();
  RecordedCall(const RecordedCall&) = delete;
  RecordedCall& operator=(const RecordedCall&) = delete;

  // mimicLaunchHostTask: routes the task through a wrapper that logs the end time it returns.
  void wrapHostTask(uint64_t (**fn)(void*, uint64_t), void** userData);

  mimicResult result = MIMIC_SUCCESS;

 private:
  static constexpr size_t kMaxArgs = 8;
  CallId id_;
  bool active_ = false;
  uint64_t args_[kMaxArgs];  // the first argCount_ are set, and only while recording
  size_t argCount_ = 0;
  uint64_t correlation_ = 0;
  void* wrappedTask_ = nullptr;  // freed here if the launch failed
  std::unique_lock<std::mutex> lock_;
};

// The log MIMIC_RECORD names, with its header written; null when `path` is empty. Throws
// ApiError (MIMIC_ERROR_CALL_LOG_UNREADABLE) if the file cannot be created.
std::unique_ptr<CallLogWriter> openCallLog(const std::string& path, const CallLogHeader& header);
// Starts appending calls to `log` (null: does nothing). mimicInit calls it once the runtime
// exists, so that the first logged call finds it.
void startRecording(std::unique_ptr<CallLogWriter> log);

}  // namespace mimic::driver
