#include "call_log.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "errors.h"

namespace mimic::driver {
namespace {

enum class RecordKind : uint8_t { Call = 1, HostTaskEnd = 2, DeviceRanges = 3 };

// More devices than a system can have: a larger count is a corrupted record.
constexpr uint32_t kMaxDevices = MIMIC_MAX_DEVICES;

struct CallInfo {
  const char* name;
  size_t arguments;
};

// Indexed by CallId - 1; the arguments each hook passes (see call_recorder.h).
constexpr CallInfo kCalls[] = {
    {"mimicMemAlloc", 3},          {"mimicMemFree", 1},          {"mimicHostAlloc", 2},
    {"mimicHostFree", 1},          {"mimicMemcpy", 3},           {"mimicMemcpyAsync", 4},
    {"mimicMemcpyPeerAsync", 6},   {"mimicMemsetAsync", 4},      {"mimicQueueCreate", 4},
    {"mimicQueueDestroy", 1},      {"mimicQueueQuery", 1},       {"mimicQueueSynchronize", 1},
    {"mimicQueueWaitEvent", 2},    {"mimicLaunchHostFunc", 2},   {"mimicLaunchHostTask", 2},
    {"mimicEventCreate", 3},       {"mimicEventDestroy", 1},     {"mimicEventRecord", 2},
    {"mimicEventQuery", 1},        {"mimicEventSynchronize", 1}, {"mimicEventElapsedTime", 3},
    {"mimicEventGetTimestamp", 2}, {"mimicModuleLoad", 4},       {"mimicModuleUnload", 1},
    {"mimicModuleGetFunction", 3}, {"mimicLaunchKernel", 7},     {"mimicQueueGetKernelCounters", 2},
    {"mimicDeviceSynchronize", 1}, {"mimicDeviceReset", 1},      {"mimicGetSimTime", 1},
    {"mimicQueueBeginRange", 3},   {"mimicQueueEndRange", 2},    {"mimicDebugInjectFault", 2},
    {"mimicDebugSetFaults", 1},
};
static_assert(std::size(kCalls) == size_t(CallId::End) - 1, "one entry per CallId");

bool knownCall(uint16_t id) {
  return id >= 1 && id < uint16_t(CallId::End);
}

std::string headerError(const std::string& path, const std::string& what) {
  return "call log '" + path + "': " + what;
}

void readHeader(ByteReader& in, const std::string& path, CallLogHeader* header) {
  char magic[sizeof kCallLogMagic];
  for (char& c : magic) c = static_cast<char>(in.u8());
  if (std::memcmp(magic, kCallLogMagic, sizeof magic) != 0) {
    fail(MIMIC_ERROR_INVALID_CALL_LOG,
         headerError(path, "not a mimic call log (it does not start with \"MIMICLOG\")"));
  }
  const uint32_t version = in.u32();
  if (version != kCallLogVersion) {
    fail(MIMIC_ERROR_UNSUPPORTED_CALL_LOG_VERSION,
         headerError(path, "format version " + std::to_string(version) +
                               "; this driver reads version " + std::to_string(kCallLogVersion)));
  }
  header->preset = in.text();
  header->overrides = in.text();
  header->faults = in.text();
  header->numDevices = in.text();
}

void readRecord(ByteReader& body, CallLog* log, const std::string& where) {
  const uint8_t kind = body.u8();
  if (kind == uint8_t(RecordKind::HostTaskEnd)) {
    LoggedHostTaskEnd end{};
    end.launchCall = body.u64();
    end.startNs = body.u64();
    end.endNs = body.u64();
    log->hostTaskEnds.push_back(end);
    return;
  }
  if (kind == uint8_t(RecordKind::DeviceRanges)) {
    const uint32_t count = body.u32();
    if (count > kMaxDevices) {
      fail(MIMIC_ERROR_INVALID_CALL_LOG, where + " has " + std::to_string(count) + " devices");
    }
    log->deviceRanges.clear();
    for (uint32_t d = 0; d < count; ++d) {
      const uint64_t base = body.u64();
      log->deviceRanges.push_back({base, body.u64()});
    }
    return;
  }
  if (kind != uint8_t(RecordKind::Call)) {
    fail(MIMIC_ERROR_INVALID_CALL_LOG, where + " has an unknown kind " + std::to_string(kind));
  }
  LoggedCall call;
  const uint8_t low = body.u8();
  const uint8_t high = body.u8();
  const uint16_t id = uint16_t(low | high << 8);
  if (!knownCall(id)) {
    fail(MIMIC_ERROR_INVALID_CALL_LOG, where + " names an unknown function " + std::to_string(id));
  }
  call.id = CallId(id);
  call.result = mimicResult(int32_t(body.u32()));
  call.correlation = body.u64();
  const size_t arguments = body.u8();
  if (arguments != callArgumentCount(call.id)) {
    fail(MIMIC_ERROR_INVALID_CALL_LOG, where + " (" + callName(call.id) + ") has " +
                                           std::to_string(arguments) + " arguments, not " +
                                           std::to_string(callArgumentCount(call.id)));
  }
  for (size_t i = 0; i < arguments; ++i) call.args.push_back(body.u64());
  call.payload = body.blob();
  if (!body.atEnd()) {
    fail(MIMIC_ERROR_INVALID_CALL_LOG, where + " is longer than its fields");
  }
  log->calls.push_back(std::move(call));
}

}  // namespace

const char* callName(CallId id) {
  return knownCall(uint16_t(id)) ? kCalls[size_t(id) - 1].name : "an unknown call";
}

size_t callArgumentCount(CallId id) {
  return knownCall(uint16_t(id)) ? kCalls[size_t(id) - 1].arguments : 0;
}

CallLog readCallLog(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    fail(MIMIC_ERROR_CALL_LOG_UNREADABLE,
         headerError(path, std::string("cannot be opened: ") + std::strerror(errno)));
  }
  const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(file),
                                   std::istreambuf_iterator<char>()};
  if (file.bad()) fail(MIMIC_ERROR_CALL_LOG_UNREADABLE, headerError(path, "read error"));
  CallLog log;
  ByteReader in(bytes.data(), bytes.size(), headerError(path, "truncated header"));
  readHeader(in, path, &log.header);
  size_t offset = in.offset();
  for (uint64_t record = 1; offset < bytes.size(); ++record) {
    const std::string where = headerError(
        path, "record " + std::to_string(record) + " at byte " + std::to_string(offset));
    ByteReader length(bytes.data() + offset, bytes.size() - offset, where + " is truncated");
    const uint64_t size = length.u64();
    offset += sizeof size;
    if (size > bytes.size() - offset) {
      fail(MIMIC_ERROR_INVALID_CALL_LOG, where + " is truncated: it needs " + std::to_string(size) +
                                             " bytes, the file has " +
                                             std::to_string(bytes.size() - offset) + " left");
    }
    ByteReader body(bytes.data() + offset, size, where + " is shorter than its fields");
    readRecord(body, &log, where);
    offset += size;
  }
  if (log.deviceRanges.empty()) {
    fail(MIMIC_ERROR_INVALID_CALL_LOG, headerError(path,
                                                   "no record says where the devices' "
                                                   "address ranges lay"));
  }
  return log;
}

CallLogWriter::CallLogWriter(const std::string& path, const CallLogHeader& header) {
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_) {
    fail(MIMIC_ERROR_CALL_LOG_UNREADABLE, "cannot create '" + path + "': " + std::strerror(errno));
  }
  ByteWriter out;
  out.raw(kCallLogMagic, sizeof kCallLogMagic);
  out.u32(kCallLogVersion);
  for (const std::string* s :
       {&header.preset, &header.overrides, &header.faults, &header.numDevices}) {
    out.text(*s);
  }
  std::fwrite(out.bytes().data(), 1, out.bytes().size(), file_);
  std::fflush(file_);
}

CallLogWriter::~CallLogWriter() {
  if (file_) std::fclose(file_);
}

uint64_t CallLogWriter::appendCall(const LoggedCall& call) {
  ByteWriter body;
  body.u8(uint8_t(RecordKind::Call));
  body.u8(uint8_t(uint16_t(call.id) & 0xff));
  body.u8(uint8_t(uint16_t(call.id) >> 8));
  body.u32(uint32_t(call.result));
  body.u64(call.correlation);
  body.u8(uint8_t(call.args.size()));
  for (uint64_t a : call.args) body.u64(a);
  body.blob(call.payload.data(), call.payload.size());
  std::lock_guard<std::mutex> lock(mutex_);
  appendRecord(body.bytes());
  return ++calls_;
}

void CallLogWriter::appendHostTaskEnd(const LoggedHostTaskEnd& end) {
  ByteWriter body;
  body.u8(uint8_t(RecordKind::HostTaskEnd));
  body.u64(end.launchCall);
  body.u64(end.startNs);
  body.u64(end.endNs);
  std::lock_guard<std::mutex> lock(mutex_);
  appendRecord(body.bytes());
}

void CallLogWriter::appendDeviceRanges(const std::vector<LoggedDeviceRange>& ranges) {
  ByteWriter body;
  body.u8(uint8_t(RecordKind::DeviceRanges));
  body.u32(uint32_t(ranges.size()));
  for (const LoggedDeviceRange& r : ranges) {
    body.u64(r.base);
    body.u64(r.size);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  appendRecord(body.bytes());
}

uint64_t CallLogWriter::callsAppended() {
  std::lock_guard<std::mutex> lock(mutex_);
  return calls_;
}

void CallLogWriter::appendRecord(const std::vector<uint8_t>& body) {
  const uint64_t size = body.size();
  std::fwrite(&size, sizeof size, 1, file_);
  std::fwrite(body.data(), 1, body.size(), file_);
  std::fflush(file_);
}

void ByteWriter::blob(const void* data, size_t size) {
  u64(size);
  raw(data, size);
}

void ByteWriter::raw(const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  if (size > 0) bytes_.insert(bytes_.end(), p, p + size);
}

void ByteReader::take(void* out, size_t size) {
  if (size > size_ - offset_) fail(MIMIC_ERROR_INVALID_CALL_LOG, what_);
  if (size > 0) std::memcpy(out, data_ + offset_, size);
  offset_ += size;
}

uint8_t ByteReader::u8() {
  uint8_t v = 0;
  take(&v, sizeof v);
  return v;
}

uint32_t ByteReader::u32() {
  uint32_t v = 0;
  take(&v, sizeof v);
  return v;
}

uint64_t ByteReader::u64() {
  uint64_t v = 0;
  take(&v, sizeof v);
  return v;
}

std::vector<uint8_t> ByteReader::blob() {
  const uint64_t size = u64();
  if (size > size_ - offset_) fail(MIMIC_ERROR_INVALID_CALL_LOG, what_);
  std::vector<uint8_t> out(data_ + offset_, data_ + offset_ + size);
  offset_ += size;
  return out;
}

std::string ByteReader::text() {
  const std::vector<uint8_t> bytes = blob();
  return std::string(bytes.begin(), bytes.end());
}

uint64_t fnv1a64(const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) {
    hash ^= p[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

}  // namespace mimic::driver
