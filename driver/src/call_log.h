// The driver call log (MIMIC_RECORD, mimicDebugReplay): the calls a run made that change device
// state or simulated time, in the order they entered the driver, so that a replay can make the
// same calls on a fresh simulation of the same configuration.
//
// File format, version 1 (integers little-endian):
//   header   "MIMICLOG" (8 bytes), u32 version, then four strings (u32 length, bytes):
//            preset, overrides (as mimicInit applied them), fault plan (MIMIC_FAULTS),
//            MIMIC_NUM_DEVICES (informational: the overrides already hold it)
//   records  u64 body length, then the body, which starts with a u8 record kind:
//     Call         u16 function, i32 result, u64 correlation id of the calling thread,
//                  u8 argument count, that many u64 arguments (handles and pointers as the
//                  values of the recorded run; NULL-ness of output pointers as 0/1),
//                  u64 payload length and the payload (call_recorder.cpp says what it holds)
//     HostTaskEnd  u64 number of the mimicLaunchHostTask call (1-based among Call records),
//                  u64 simulated start, u64 end time the task's function returned
//     DeviceRanges u32 device count, then per device u64 base address and u64 size: where
//                  the recorded run's device address ranges lay (the first record). The host
//                  reserves them where it can, so the replay moves device addresses (pointer
//                  arguments, and 8-byte words of kernel arguments that fall in a range) to
//                  its own ranges, at the same offsets.
// Records are not checksummed: an edited argument or payload is found as a divergence of the
// replay, a broken length or kind as a corrupted log.
#pragma once

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "mimic/mimic.h"

namespace mimic::driver {

constexpr char kCallLogMagic[8] = {'M', 'I', 'M', 'I', 'C', 'L', 'O', 'G'};
constexpr uint32_t kCallLogVersion = 1;

enum class CallId : uint16_t {
  MemAlloc = 1,
  MemFree,
  HostAlloc,
  HostFree,
  Memcpy,
  MemcpyAsync,
  MemcpyPeerAsync,
  MemsetAsync,
  QueueCreate,
  QueueDestroy,
  QueueQuery,
  QueueSynchronize,
  QueueWaitEvent,
  LaunchHostFunc,
  LaunchHostTask,
  EventCreate,
  EventDestroy,
  EventRecord,
  EventQuery,
  EventSynchronize,
  EventElapsedTime,
  EventGetTimestamp,
  ModuleLoad,
  ModuleUnload,
  ModuleGetFunction,
  LaunchKernel,
  QueueGetKernelCounters,
  DeviceSynchronize,
  DeviceReset,
  GetSimTime,
  QueueBeginRange,
  QueueEndRange,
  DebugInjectFault,
  DebugSetFaults,
  End  // one past the last
};

// "mimicMemAlloc" and so on.
const char* callName(CallId id);
// How many u64 arguments a call of `id` records.
size_t callArgumentCount(CallId id);

struct CallLogHeader {
  std::string preset;
  std::string overrides;
  std::string faults;
  std::string numDevices;
};

struct LoggedCall {
  CallId id;
  mimicResult result;
  uint64_t correlation;
  std::vector<uint64_t> args;
  std::vector<uint8_t> payload;
};

struct LoggedHostTaskEnd {
  uint64_t launchCall;  // 1-based number of the mimicLaunchHostTask call
  uint64_t startNs;
  uint64_t endNs;
};

struct LoggedDeviceRange {
  uint64_t base;
  uint64_t size;
};

struct CallLog {
  CallLogHeader header;
  std::vector<LoggedDeviceRange> deviceRanges;
  std::vector<LoggedCall> calls;
  std::vector<LoggedHostTaskEnd> hostTaskEnds;
};

// Reads and checks a whole log. Throws ApiError: MIMIC_ERROR_CALL_LOG_UNREADABLE,
// MIMIC_ERROR_INVALID_CALL_LOG, MIMIC_ERROR_UNSUPPORTED_CALL_LOG_VERSION, each naming the path
// and what was wrong.
CallLog readCallLog(const std::string& path);

// Appends records to a log file; any thread may append. Each record is flushed at once, so the
// log survives a crash of the recorded run.
class CallLogWriter {
 public:
  // Creates (truncates) the file and writes the header. Throws ApiError
  // (MIMIC_ERROR_CALL_LOG_UNREADABLE) if it cannot be written.
  CallLogWriter(const std::string& path, const CallLogHeader& header);
  ~CallLogWriter();
  CallLogWriter(const CallLogWriter&) = delete;
  CallLogWriter& operator=(const CallLogWriter&) = delete;

  // Returns the call's 1-based number.
  uint64_t appendCall(const LoggedCall& call);
  void appendHostTaskEnd(const LoggedHostTaskEnd& end);
  void appendDeviceRanges(const std::vector<LoggedDeviceRange>& ranges);
  uint64_t callsAppended();

 private:
  void appendRecord(const std::vector<uint8_t>& body);

  std::mutex mutex_;
  std::FILE* file_ = nullptr;
  uint64_t calls_ = 0;
};

// Little-endian encoding of payload fields.
class ByteWriter {
 public:
  void u8(uint8_t v) { bytes_.push_back(v); }
  void u32(uint32_t v) { raw(&v, sizeof v); }
  void u64(uint64_t v) { raw(&v, sizeof v); }
  void blob(const void* data, size_t size);  // u64 size, then the bytes
  void text(const std::string& s) { blob(s.data(), s.size()); }
  void raw(const void* data, size_t size);
  std::vector<uint8_t>& bytes() { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

// Reads what ByteWriter wrote; reading past the end throws ApiError
// (MIMIC_ERROR_INVALID_CALL_LOG) naming `what`.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size, std::string what)
      : data_(data), size_(size), what_(std::move(what)) {}
  uint8_t u8();
  uint32_t u32();
  uint64_t u64();
  std::vector<uint8_t> blob();
  std::string text();
  bool atEnd() const { return offset_ == size_; }
  size_t offset() const { return offset_; }

 private:
  void take(void* out, size_t size);

  const uint8_t* data_;
  size_t size_;
  size_t offset_ = 0;
  std::string what_;
};

// FNV-1a, 64 bits: the fingerprint of device-to-host data.
uint64_t fnv1a64(const void* data, size_t size);

}  // namespace mimic::driver
