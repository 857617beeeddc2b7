// mimic-replay: re-runs a driver call log recorded with MIMIC_RECORD=LOG (mimicDebugReplay).
//
// Exit code 0 if every call gave its recorded outcome (a recorded failure reproduced counts as
// success), 1 if the replay diverged or the log is bad (one line on stderr says why), 2 on
// usage errors.
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "mimic/mimic_debug.h"
#include "mimic/mimic_trace.h"

namespace {

constexpr size_t kTraceCapacity = size_t(1) << 22;

constexpr const char* kHelp =
    "usage: mimic-replay [--trace | --list] LOG\n"
    "\n"
    "Re-runs the driver calls of LOG (recorded with MIMIC_RECORD=LOG) on a fresh simulation of\n"
    "the log's configuration, checking every result code, allocation, downloaded data hash and\n"
    "time read against the log, and says how far it got and at what simulated time.\n"
    "\n"
    "  --trace     also print the replay's activity trace, one record a line\n"
    "  --list      print the log's calls (number, function, recorded result, correlation id)\n"
    "              without replaying them\n"
    "  -h, --help  this text\n"
    "\n"
    "Exit code: 0 if every call gave its recorded outcome (a recorded failure reproduced\n"
    "counts), 1 if the replay diverged or the log is bad, 2 for a usage error.\n";

int usage(const char* problem) {
  std::fprintf(stderr, "mimic-replay: %s\nhint: mimic-replay --help shows the usage\n", problem);
  return 2;
}

const char* kindName(mimicActivityKind kind) {
  switch (kind) {
    case MIMIC_ACTIVITY_KERNEL:
      return "kernel";
    case MIMIC_ACTIVITY_MEMCPY:
      return "memcpy";
    case MIMIC_ACTIVITY_MEMSET:
      return "memset";
    case MIMIC_ACTIVITY_HOST_FUNC:
      return "host_func";
    case MIMIC_ACTIVITY_HOST_TASK:
      return "host_task";
    case MIMIC_ACTIVITY_EVENT_RECORD:
      return "event_record";
    case MIMIC_ACTIVITY_EVENT_WAIT:
      return "event_wait";
    case MIMIC_ACTIVITY_RANGE:
      return "range";
    case MIMIC_ACTIVITY_SYNCHRONIZE:
      return "synchronize";
    case MIMIC_ACTIVITY_ALLOC:
      return "alloc";
    case MIMIC_ACTIVITY_FREE:
      return "free";
    case MIMIC_ACTIVITY_COLLECTIVE:
      return "collective";
  }
  return "unknown";
}

void printTrace() {
  std::vector<mimicActivity> records(4096);
  size_t count = 0;
  do {
    if (mimicTraceRead(records.data(), records.size(), &count) != MIMIC_SUCCESS) return;
    for (size_t i = 0; i < count; ++i) {
      const mimicActivity& a = records[i];
      std::printf("kind=%s device=%d queue=%" PRIu64 " start=%" PRIu64 " end=%" PRIu64
                  " correlation=%" PRIu64 " bytes=%" PRIu64 " name=%s\n",
                  kindName(a.kind), a.device, a.queueId, a.startNs, a.endNs, a.correlationId,
                  a.bytes, a.name);
    }
  } while (count == records.size());
}

int failWithDetail(mimicResult r) {
  const char* detail = "";
  mimicGetErrorDetail(&detail);
  std::fprintf(stderr, "mimic-replay: %s: %s\n", mimicGetErrorName(r), detail);
  return 1;
}

int list(const char* path) {
  size_t count = 0;
  mimicResult r = mimicDebugReadCallLog(path, nullptr, 0, &count);
  if (r != MIMIC_SUCCESS) return failWithDetail(r);
  std::vector<mimicLoggedCall> calls(count);
  r = mimicDebugReadCallLog(path, calls.data(), calls.size(), &count);
  if (r != MIMIC_SUCCESS) return failWithDetail(r);
  std::printf("%8s  %-28s %-36s %s\n", "call", "function", "recorded result", "correlation");
  for (size_t i = 0; i < calls.size(); ++i) {
    std::printf("%8zu  %-28s %-36s %" PRIu64 "\n", i + 1, calls[i].function,
                mimicGetErrorName(calls[i].result), calls[i].correlationId);
  }
  std::printf("%zu calls\n", calls.size());
  return 0;
}

int replay(const char* path, bool trace) {
  mimicReplayResult result{};
  const mimicResult r = mimicDebugReplay(path, trace ? kTraceCapacity : 0, &result);
  if (r != MIMIC_SUCCESS) {
    failWithDetail(r);
    std::fprintf(stderr, "mimic-replay: %" PRIu64 " of %" PRIu64 " calls replayed\n",
                 result.callsReplayed, result.callsInLog);
    return 1;
  }
  // Records of commands the log never waited for are not complete, and are not printed.
  if (trace) printTrace();
  std::printf("replayed %" PRIu64 " of %" PRIu64 " calls; simulated time %" PRIu64 " ns\n",
              result.callsReplayed, result.callsInLog, result.endSimTimeNs);
  if (result.failedCall) {
    std::printf("call %" PRIu64 " failed with %s, as recorded: %s\n", result.failedCall,
                mimicGetErrorName(result.failedResult), result.failedDetail);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool trace = false, listOnly = false;
  const char* path = nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kHelp, stdout);
      return 0;
    }
    if (arg == "--trace") {
      trace = true;
    } else if (arg == "--list") {
      listOnly = true;
    } else if (arg.size() > 1 && arg[0] == '-') {
      return usage(("unknown option '" + arg + "'").c_str());
    } else if (path) {
      return usage(("one LOG only; got '" + std::string(path) + "' and '" + arg + "'").c_str());
    } else {
      path = argv[i];
    }
  }
  if (!path) return usage("no LOG given");
  if (trace && listOnly) return usage("--trace replays and --list does not: give one of them");
  return listOnly ? list(path) : replay(path, trace);
}
