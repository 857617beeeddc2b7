// Record and replay (MIMIC_RECORD, mimicDebugReplay): a replay of a recorded run gives the same
// trace, record for record, and the same failure at the same simulated time; bad logs and
// divergences are reported with their own codes. Recording and replaying each need a process
// of their own (one simulation per process), so both run in children; this process never
// initialises mimic.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "engine_test.h"
#include "mimic/mimic_debug.h"
#include "mimic/mimic_trace.h"
#include "scale_kernels.h"

namespace {

constexpr size_t kFloats = 2 * 256;  // two workgroups of scale2
constexpr size_t kBytes = kFloats * sizeof(float);
constexpr size_t kTraceCapacity = 1 << 16;
constexpr float kPayloadMarker = 1234.5f;       // the first float of the uploaded data
constexpr size_t kWordsPerRecord = 24 + 8 + 4;  // traceWords(): fields, name, busy

std::string logPath(const char* name) {
  return ::testing::TempDir() + "mimic_replay_" + name + "_" + std::to_string(getpid()) + ".log";
}

// Counts calls that did not return what the program expects; reported as the first value.
struct Checker {
  uint64_t failures = 0;
  void expect(mimicResult expected, mimicResult actual) {
    if (actual != expected) {
      std::fprintf(stderr, "expected %s, got %s\n", mimicGetErrorName(expected),
                   mimicGetErrorName(actual));
      ++failures;
    }
  }
  void ok(mimicResult actual) { expect(MIMIC_SUCCESS, actual); }
};

uint64_t endHostTask(void*, uint64_t startNs) {
  return startNs + 5000;
}

void appendWords(std::vector<uint64_t>* out, const void* data, size_t bytes) {
  for (size_t i = 0; i < bytes; i += 8) {
    uint64_t word = 0;
    std::memcpy(&word, static_cast<const uint8_t*>(data) + i, std::min<size_t>(8, bytes - i));
    out->push_back(word);
  }
}

// Every field of every trace record read now, as words.
std::vector<uint64_t> traceWords() {
  std::vector<uint64_t> words;
  std::vector<mimicActivity> records(1024);
  size_t count = 0;
  do {
    if (mimicTraceRead(records.data(), records.size(), &count) != MIMIC_SUCCESS) return {};
    for (size_t i = 0; i < count; ++i) {
      const mimicActivity& a = records[i];
      const mimicKernelCounters& c = a.counters;
      for (uint64_t v : {uint64_t(a.kind),
                         uint64_t(a.device),
                         a.queueId,
                         a.startNs,
                         a.endNs,
                         a.correlationId,
                         a.bytes,
                         uint64_t(a.copyKind),
                         uint64_t(a.hostPinned),
                         uint64_t(a.peerDevice),
                         uint64_t(a.grid.x),
                         uint64_t(a.grid.y),
                         uint64_t(a.grid.z),
                         c.workgroups,
                         c.instructions[0],
                         c.instructions[1],
                         c.instructions[2],
                         c.instructions[3],
                         c.flops,
                         c.hbmBytesRead,
                         c.hbmBytesWritten,
                         c.startNs,
                         c.endNs,
                         c.cycles}) {
        words.push_back(v);
      }
      appendWords(&words, a.name, sizeof a.name);
      appendWords(&words, c.busy, sizeof c.busy);
    }
  } while (count == records.size());
  return words;
}

// Two devices, two queues, copies of every kind, kernels, events, a range, a host function
// and a host task; returns {failures, final simulated time, trace words...}.
std::vector<uint64_t> recordedProgram() {
  Checker check;
  check.ok(mimicInitWithPreset(0, "tiny", nullptr));
  check.ok(mimicTraceStart(kTraceCapacity));
  mimicQueue q0 = newQueue(0);
  mimicQueue q1 = newQueue(1);
  mimicEvent uploaded = newEvent(0);
  mimicEvent done = newEvent(1);
  mimicFunction scale = assembleFunction(kScaleKernels, "scale2", 0);
  float* pinned = static_cast<float*>(pinnedAlloc(kBytes));
  for (size_t i = 0; i < kFloats; ++i) pinned[i] = i == 0 ? kPayloadMarker : float(i);
  void* in = deviceAlloc(kBytes, 0);
  void* out = deviceAlloc(kBytes, 0);
  void* peer = deviceAlloc(kBytes, 1);
  check.ok(mimicTraceSetCorrelationId(42, nullptr));
  check.ok(mimicQueueBeginRange(q0, 0, "step"));
  check.ok(mimicMemcpyAsync(in, pinned, kBytes, q0));
  const uint64_t kernelArgs[2] = {reinterpret_cast<uint64_t>(out), reinterpret_cast<uint64_t>(in)};
  check.ok(mimicLaunchKernel(scale, {2, 1, 1}, kernelArgs, sizeof kernelArgs, q0));
  check.ok(mimicLaunchHostTask(q0, endHostTask, nullptr));
  check.ok(mimicQueueEndRange(q0, 0));
  check.ok(mimicEventRecord(uploaded, q0));
  check.ok(mimicQueueWaitEvent(q1, uploaded));
  check.ok(mimicMemcpyPeerAsync(peer, 1, out, 0, kBytes, q1));
  check.ok(mimicLaunchHostFunc(q1, noOp, nullptr));
  check.ok(mimicMemsetAsync(out, 0, 64, q0));
  check.ok(mimicEventRecord(done, q1));
  check.ok(mimicTraceSetCorrelationId(0, nullptr));
  while (mimicEventQuery(done) == MIMIC_NOT_READY) {
  }
  std::vector<float> result(kFloats);
  check.ok(mimicMemcpy(result.data(), peer, kBytes));  // pageable: blocking
  if (result[1] != 2.0f) ++check.failures;
  uint64_t stamp = 0;
  check.ok(mimicEventGetTimestamp(done, &stamp));
  check.ok(mimicDeviceSynchronize(0));
  check.ok(mimicDeviceSynchronize(1));
  check.ok(mimicMemFree(in));
  std::vector<uint64_t> values{check.failures, simTime()};
  for (uint64_t w : traceWords()) values.push_back(w);
  return values;
}

// Two host threads, each with its own device, queue and correlation id, interleaving uploads,
// kernels and blocking downloads as the host schedules them; returns {failures, final
// simulated time, trace words...}. The interleaving differs from run to run; a replay must
// follow the recorded one.
std::vector<uint64_t> threadedProgram() {
  std::atomic<uint64_t> failures{0};
  auto ok = [&](mimicResult r) {
    if (r != MIMIC_SUCCESS) ++failures;
  };
  ok(mimicInitWithPreset(0, "tiny", nullptr));
  ok(mimicTraceStart(kTraceCapacity));
  mimicFunction scale[2] = {assembleFunction(kScaleKernels, "scale2", 0),
                            assembleFunction(kScaleKernels, "scale2", 1)};
  auto worker = [&](int device) {
    ok(mimicTraceSetCorrelationId(100 + device, nullptr));
    mimicQueue queue = newQueue(device);
    void* in = deviceAlloc(kBytes, device);
    void* out = deviceAlloc(kBytes, device);
    std::vector<float> host(kFloats, float(device + 1));
    const uint64_t args[2] = {reinterpret_cast<uint64_t>(out), reinterpret_cast<uint64_t>(in)};
    for (int i = 0; i < 10; ++i) {
      ok(mimicMemcpyAsync(in, host.data(), kBytes, queue));
      ok(mimicLaunchKernel(scale[device], {2, 1, 1}, args, sizeof args, queue));
      ok(mimicMemcpyAsync(host.data(), out, kBytes, queue));  // pageable: blocking
    }
    ok(mimicMemFree(in));
    ok(mimicMemFree(out));
  };
  std::thread first(worker, 0), second(worker, 1);
  first.join();
  second.join();
  std::vector<uint64_t> values{failures.load(), simTime()};
  for (uint64_t w : traceWords()) values.push_back(w);
  return values;
}

// Three kernels with ecc_at_kernel=3 planned; returns {failures, sync result, simulated time}.
std::vector<uint64_t> faultingProgram() {
  Checker check;
  setenv("MIMIC_FAULTS", "ecc_at_kernel=3", 1);
  check.ok(mimicInitWithPreset(0, "tiny", nullptr));
  mimicFunction empty = assembleFunction(kScaleKernels, "empty", 0);
  for (int i = 0; i < 3; ++i) check.ok(mimicLaunchKernel(empty, {1, 1, 1}, nullptr, 0, nullptr));
  const mimicResult sync = mimicDeviceSynchronize(0);
  return {check.failures, uint64_t(sync), simTime()};
}

// scale2 over two workgroups on an allocation for one: the second workgroup's access is past
// its end, and the device fails at the synchronize; returns {failures, sync result, time}.
std::vector<uint64_t> illegalAddressProgram() {
  Checker check;
  check.ok(mimicInitWithPreset(0, "tiny", nullptr));
  mimicFunction scale = assembleFunction(kScaleKernels, "scale2", 0);
  void* buffer = deviceAlloc(kBytes / 2, 0);
  const uint64_t args[2] = {reinterpret_cast<uint64_t>(buffer), reinterpret_cast<uint64_t>(buffer)};
  check.ok(mimicLaunchKernel(scale, {2, 1, 1}, args, sizeof args, nullptr));
  const mimicResult sync = mimicDeviceSynchronize(0);
  return {check.failures, uint64_t(sync), simTime()};
}

// One upload, one download, and a call that fails; returns {failures}.
std::vector<uint64_t> smallProgram() {
  Checker check;
  check.ok(mimicInitWithPreset(0, "tiny", nullptr));
  std::vector<float> host(kFloats, kPayloadMarker);
  void* dev = deviceAlloc(kBytes, 0);
  check.ok(mimicMemcpy(dev, host.data(), kBytes));
  check.expect(MIMIC_ERROR_INVALID_VALUE, mimicDebugSetFaults("bogus=1"));
  check.ok(mimicMemcpy(host.data(), dev, kBytes));
  return {check.failures};
}

struct Replayed {
  mimicResult result = MIMIC_SUCCESS;
  mimicReplayResult summary{};
  std::string detail;
  std::string failedDetail;  // summary.failedDetail
  std::vector<uint64_t> trace;
};

// Replays `path` in a child process.
Replayed replayInChild(const std::string& path, size_t traceCapacity = 0) {
  std::vector<uint64_t> words = runInChild([&] {
    mimicReplayResult summary{};
    const mimicResult r = mimicDebugReplay(path.c_str(), traceCapacity, &summary);
    std::vector<uint64_t> values{uint64_t(r),
                                 summary.callsInLog,
                                 summary.callsReplayed,
                                 summary.failedCall,
                                 uint64_t(summary.failedResult),
                                 summary.endSimTimeNs};
    const char* detail = "";
    mimicGetErrorDetail(&detail);
    for (const char* message : {detail, static_cast<const char*>(summary.failedDetail)}) {
      std::vector<uint64_t> text;
      appendWords(&text, message, std::strlen(message) + 1);
      values.push_back(text.size());
      values.insert(values.end(), text.begin(), text.end());
    }
    if (traceCapacity > 0) {
      for (uint64_t w : traceWords()) values.push_back(w);
    }
    return values;
  });
  Replayed out;
  if (words.size() < 7) return out;
  out.result = mimicResult(words[0]);
  out.summary.callsInLog = words[1];
  out.summary.callsReplayed = words[2];
  out.summary.failedCall = words[3];
  out.summary.failedResult = mimicResult(words[4]);
  out.summary.endSimTimeNs = words[5];
  const size_t textWords = words[6];
  out.detail = reinterpret_cast<const char*>(words.data() + 7);
  const size_t failedAt = 7 + textWords;
  out.failedDetail = reinterpret_cast<const char*>(words.data() + failedAt + 1);
  out.trace.assign(words.begin() + failedAt + 1 + words[failedAt], words.end());
  return out;
}

std::vector<uint8_t> readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeBytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

size_t findBytes(const std::vector<uint8_t>& bytes, const void* pattern, size_t size) {
  auto* p = static_cast<const uint8_t*>(pattern);
  auto it = std::search(bytes.begin(), bytes.end(), p, p + size);
  return it == bytes.end() ? std::string::npos : size_t(it - bytes.begin());
}

// Replays a copy of the log at `path` edited by `edit`, without tracing, in a child.
Replayed replayEdited(const std::string& path, const char* name,
                      const std::function<void(std::vector<uint8_t>&)>& edit) {
  std::vector<uint8_t> bytes = readBytes(path);
  edit(bytes);
  const std::string edited = logPath(name);
  writeBytes(edited, bytes);
  Replayed r = replayInChild(edited);
  std::remove(edited.c_str());
  return r;
}

mimicResult replayHere(const std::string& path, std::string* detail) {
  mimicReplayResult summary{};
  const mimicResult r = mimicDebugReplay(path.c_str(), 0, &summary);
  const char* text = "";
  mimicGetErrorDetail(&text);
  *detail = text;
  return r;
}

}  // namespace

TEST(Replay, ReproducesTheTraceExactly) {
  clearMimicEnvironment();
  const std::string path = logPath("trace");
  std::vector<uint64_t> original = runInChild(recordedProgram, "MIMIC_RECORD", path.c_str());
  ASSERT_GE(original.size(), 2u);
  ASSERT_EQ(original[0], 0u) << "the recorded program had failing calls";
  const std::vector<uint64_t> originalTrace(original.begin() + 2, original.end());
  ASSERT_GE(originalTrace.size(), kWordsPerRecord * 15) << "the program makes 15+ records";

  Replayed replay = replayInChild(path, kTraceCapacity);
  EXPECT_RESULT(MIMIC_SUCCESS, replay.result);
  EXPECT_EQ(replay.summary.callsReplayed, replay.summary.callsInLog) << replay.detail;
  EXPECT_EQ(replay.summary.failedCall, 0u);
  EXPECT_EQ(replay.summary.endSimTimeNs, original[1]);
  EXPECT_EQ(replay.trace, originalTrace);
  std::remove(path.c_str());
}

TEST(Replay, FollowsTheRecordedInterleavingOfThreads) {
  clearMimicEnvironment();
  const std::string path = logPath("threads");
  std::vector<uint64_t> original = runInChild(threadedProgram, "MIMIC_RECORD", path.c_str());
  ASSERT_GE(original.size(), 2u);
  ASSERT_EQ(original[0], 0u) << "the recorded program had failing calls";
  const std::vector<uint64_t> originalTrace(original.begin() + 2, original.end());
  ASSERT_GE(originalTrace.size(), kWordsPerRecord * 60);

  Replayed replay = replayInChild(path, kTraceCapacity);
  EXPECT_RESULT(MIMIC_SUCCESS, replay.result);
  EXPECT_EQ(replay.detail, "");
  EXPECT_EQ(replay.summary.endSimTimeNs, original[1]);
  EXPECT_EQ(replay.trace, originalTrace);
  std::remove(path.c_str());
}

// mimicActivityKind's names as mimic-replay prints them, by value.
constexpr const char* kKindNames[] = {"kernel",      "memcpy",       "memset",     "host_func",
                                      "host_task",   "event_record", "event_wait", "range",
                                      "synchronize", "alloc",        "free",       "collective"};

// The trace as mimic-replay --trace prints it, from words of traceWords().
std::string traceText(const std::vector<uint64_t>& words) {
  std::string text;
  for (size_t r = 0; r + kWordsPerRecord <= words.size(); r += kWordsPerRecord) {
    const uint64_t* w = &words[r];
    char name[65] = {};
    std::memcpy(name, w + 24, 64);
    char line[256];
    std::snprintf(line, sizeof line,
                  "kind=%s device=%d queue=%llu start=%llu end=%llu correlation=%llu bytes=%llu "
                  "name=%s\n",
                  kKindNames[w[0]], int(int64_t(w[1])), (unsigned long long)w[2],
                  (unsigned long long)w[3], (unsigned long long)w[4], (unsigned long long)w[5],
                  (unsigned long long)w[6], name);
    text += line;
  }
  return text;
}

// mimic-replay runs in a process started afresh, so its device address ranges lie elsewhere
// than the recorded run's: the replay moves them and still matches the trace.
TEST(Replay, TheToolReplaysInAFreshProcess) {
  clearMimicEnvironment();
  const std::string path = logPath("tool");
  std::vector<uint64_t> original = runInChild(recordedProgram, "MIMIC_RECORD", path.c_str());
  ASSERT_GE(original.size(), 2u);
  ASSERT_EQ(original[0], 0u);
  const std::string command = std::string(MIMIC_REPLAY_TOOL) + " " + path + " --trace 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
  EXPECT_EQ(pclose(pipe), 0) << output;
  const std::vector<uint64_t> trace(original.begin() + 2, original.end());
  const std::string summary = "simulated time " + std::to_string(original[1]) + " ns\n";
  EXPECT_EQ(output.substr(0, output.find("replayed ")), traceText(trace));
  EXPECT_NE(output.find(summary), std::string::npos) << output;
  std::remove(path.c_str());
}

TEST(Replay, RecordingChangesNoSimulatedTime) {
  clearMimicEnvironment();
  const std::string path = logPath("off");
  std::vector<uint64_t> recorded = runInChild(recordedProgram, "MIMIC_RECORD", path.c_str());
  std::remove(path.c_str());
  std::vector<uint64_t> plain = runInChild(recordedProgram);
  EXPECT_EQ(plain, recorded);
  std::ifstream file(path);
  EXPECT_FALSE(file.good()) << "a run without MIMIC_RECORD wrote " << path;
}

TEST(Replay, ReproducesAnInjectedFaultAtTheSameTime) {
  clearMimicEnvironment();
  const std::string path = logPath("ecc");
  std::vector<uint64_t> original = runInChild(faultingProgram, "MIMIC_RECORD", path.c_str());
  ASSERT_EQ(original.size(), 3u);
  ASSERT_EQ(original[0], 0u);
  ASSERT_EQ(mimicResult(original[1]), MIMIC_ERROR_ECC_UNCORRECTABLE);

  Replayed replay = replayInChild(path);
  EXPECT_RESULT(MIMIC_SUCCESS, replay.result);
  EXPECT_EQ(replay.summary.failedResult, MIMIC_ERROR_ECC_UNCORRECTABLE) << replay.detail;
  EXPECT_NE(replay.failedDetail.find("injected fault"), std::string::npos) << replay.failedDetail;
  // Calls: load, get function, three launches, the synchronize, mimicGetSimTime.
  EXPECT_EQ(replay.summary.callsInLog, 7u);
  EXPECT_EQ(replay.summary.failedCall, 6u);
  EXPECT_EQ(replay.summary.endSimTimeNs, original[2]);
  std::remove(path.c_str());
}

TEST(Replay, ReproducesAnIllegalAddressAtTheSameTime) {
  clearMimicEnvironment();
  const std::string path = logPath("illegal");
  std::vector<uint64_t> original = runInChild(illegalAddressProgram, "MIMIC_RECORD", path.c_str());
  ASSERT_EQ(original.size(), 3u);
  ASSERT_EQ(original[0], 0u);
  ASSERT_EQ(mimicResult(original[1]), MIMIC_ERROR_ILLEGAL_ADDRESS);

  Replayed replay = replayInChild(path);
  EXPECT_RESULT(MIMIC_SUCCESS, replay.result);
  EXPECT_EQ(replay.summary.failedResult, MIMIC_ERROR_ILLEGAL_ADDRESS) << replay.detail;
  // Calls: load, get function, alloc, launch, the synchronize, mimicGetSimTime.
  EXPECT_EQ(replay.summary.failedCall, 5u);
  EXPECT_EQ(replay.summary.endSimTimeNs, original[2]);
  std::remove(path.c_str());
}

TEST(Replay, AMissingFileIsUnreadable) {
  std::string detail;
  EXPECT_RESULT(MIMIC_ERROR_CALL_LOG_UNREADABLE, replayHere("/nonexistent/run.log", &detail));
  EXPECT_NE(detail.find("'/nonexistent/run.log'"), std::string::npos) << detail;
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicDebugReplay(nullptr, 0, nullptr));
}

// mimicDebugReadCallLog lists a log's calls without replaying them (mimic-replay --list).
TEST(Replay, ReadCallLogListsTheCallsAndTheirRecordedResults) {
  clearMimicEnvironment();
  const std::string path = logPath("list");
  std::vector<uint64_t> original = runInChild(faultingProgram, "MIMIC_RECORD", path.c_str());
  ASSERT_EQ(original.size(), 3u);
  size_t count = 0;
  ASSERT_OK(mimicDebugReadCallLog(path.c_str(), nullptr, 0, &count));
  // Calls: load, get function, three launches, the synchronize, mimicGetSimTime.
  ASSERT_EQ(count, 7u);
  std::vector<mimicLoggedCall> calls(count);
  size_t again = 0;
  ASSERT_OK(mimicDebugReadCallLog(path.c_str(), calls.data(), 2, &again));
  EXPECT_EQ(again, 7u);  // the count, though only two were asked for
  ASSERT_OK(mimicDebugReadCallLog(path.c_str(), calls.data(), calls.size(), &count));
  EXPECT_STREQ(calls[0].function, "mimicModuleLoad");
  EXPECT_STREQ(calls[2].function, "mimicLaunchKernel");
  EXPECT_RESULT(MIMIC_SUCCESS, calls[2].result);
  EXPECT_RESULT(MIMIC_ERROR_ECC_UNCORRECTABLE, calls[5].result);
  std::remove(path.c_str());
}

TEST(Replay, ReadCallLogArgumentErrors) {
  size_t count = 0;
  mimicLoggedCall call{};
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicDebugReadCallLog(nullptr, nullptr, 0, &count));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicDebugReadCallLog("x.log", nullptr, 0, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicDebugReadCallLog("x.log", nullptr, 1, &count));
  EXPECT_RESULT(MIMIC_ERROR_CALL_LOG_UNREADABLE,
                mimicDebugReadCallLog("/nonexistent/run.log", &call, 1, &count));
}

TEST(Replay, BadLogsAreRejectedBeforeAnythingRuns) {
  clearMimicEnvironment();
  const std::string path = logPath("bad");
  runInChild(smallProgram, "MIMIC_RECORD", path.c_str());
  const std::vector<uint8_t> good = readBytes(path);
  ASSERT_GT(good.size(), 64u);
  const std::string bad = logPath("bad_edit");
  std::string detail;

  writeBytes(bad, std::vector<uint8_t>(good.begin(), good.end() - 5));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_CALL_LOG, replayHere(bad, &detail));
  EXPECT_NE(detail.find("is truncated"), std::string::npos) << detail;

  std::vector<uint8_t> magic = good;
  magic[0] = 'X';
  writeBytes(bad, magic);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_CALL_LOG, replayHere(bad, &detail));
  EXPECT_NE(detail.find("not a mimic call log"), std::string::npos) << detail;

  std::vector<uint8_t> version = good;
  version[8] = 99;  // the u32 after the 8-byte magic
  writeBytes(bad, version);
  EXPECT_RESULT(MIMIC_ERROR_UNSUPPORTED_CALL_LOG_VERSION, replayHere(bad, &detail));
  EXPECT_NE(detail.find("version 99"), std::string::npos) << detail;

  writeBytes(bad, {});
  EXPECT_RESULT(MIMIC_ERROR_INVALID_CALL_LOG, replayHere(bad, &detail));
  std::remove(bad.c_str());
  std::remove(path.c_str());
}

TEST(Replay, AnEditedUploadDivergesAtTheDownload) {
  clearMimicEnvironment();
  const std::string path = logPath("upload");
  ASSERT_EQ(runInChild(smallProgram, "MIMIC_RECORD", path.c_str()), std::vector<uint64_t>{0});
  Replayed replay = replayEdited(path, "upload_edit", [](std::vector<uint8_t>& bytes) {
    const size_t at = findBytes(bytes, &kPayloadMarker, sizeof kPayloadMarker);
    ASSERT_NE(at, std::string::npos);
    bytes[at] ^= 1;
  });
  EXPECT_RESULT(MIMIC_ERROR_REPLAY_DIVERGED, replay.result);
  // Calls: alloc, upload, set faults, download.
  EXPECT_NE(replay.detail.find("replay diverged at call 4 (mimicMemcpy): the data copied"),
            std::string::npos)
      << replay.detail;
  EXPECT_EQ(replay.summary.callsReplayed, 3u);
  std::remove(path.c_str());
}

TEST(Replay, AnEditedResultCodeDiverges) {
  clearMimicEnvironment();
  const std::string path = logPath("result");
  ASSERT_EQ(runInChild(smallProgram, "MIMIC_RECORD", path.c_str()), std::vector<uint64_t>{0});
  Replayed replay = replayEdited(path, "result_edit", [](std::vector<uint8_t>& bytes) {
    const size_t at = findBytes(bytes, "bogus=1", 7);
    ASSERT_NE(at, std::string::npos);
    // Back from the spec: its length, the payload length, the argument, the argument count,
    // the correlation id and then the result.
    const size_t result = at - 8 - 8 - 8 - 1 - 8 - 4;
    const int32_t success = MIMIC_SUCCESS;
    std::memcpy(&bytes[result], &success, sizeof success);
  });
  EXPECT_RESULT(MIMIC_ERROR_REPLAY_DIVERGED, replay.result);
  EXPECT_NE(replay.detail.find("replay diverged at call 3 (mimicDebugSetFaults): the log has "
                               "result MIMIC_SUCCESS, the replay got MIMIC_ERROR_INVALID_VALUE"),
            std::string::npos)
      << replay.detail;
  std::remove(path.c_str());
}

TEST(Replay, AnUnwritableRecordPathFailsInit) {
  clearMimicEnvironment();
  std::vector<uint64_t> values = runInChild(
      [] { return std::vector<uint64_t>{uint64_t(mimicInitWithPreset(0, "tiny", nullptr))}; },
      "MIMIC_RECORD", "/nonexistent/dir/run.log");
  ASSERT_EQ(values.size(), 1u);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_CONFIG_VALUE, mimicResult(values[0]));
}
