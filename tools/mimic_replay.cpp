// mimic-replay: re-runs a driver call log recorded with MIMIC_RECORD=LOG (mimicDebugReplay).
//
//   mimic-replay LOG            replay, and say how far it got and at what simulated time
//   mimic-replay LOG --trace    also print the replay's activity trace, one record a line
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

int usage() {
  std::fprintf(stderr, "usage: mimic-replay LOG [--trace]\n");
  return 2;
}

void printTrace() {
  std::vector<mimicActivity> records(4096);
  size_t count = 0;
  do {
    if (mimicTraceRead(records.data(), records.size(), &count) != MIMIC_SUCCESS) return;
    for (size_t i = 0; i < count; ++i) {
      const mimicActivity& a = records[i];
      std::printf("kind=%d device=%d queue=%" PRIu64 " start=%" PRIu64 " end=%" PRIu64
                  " correlation=%" PRIu64 " bytes=%" PRIu64 " name=%s\n",
                  int(a.kind), a.device, a.queueId, a.startNs, a.endNs, a.correlationId, a.bytes,
                  a.name);
    }
  } while (count == records.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) return usage();
  const bool trace = argc == 3 && std::strcmp(argv[2], "--trace") == 0;
  if (argc == 3 && !trace) return usage();
  mimicReplayResult result{};
  const mimicResult r = mimicDebugReplay(argv[1], trace ? kTraceCapacity : 0, &result);
  if (r != MIMIC_SUCCESS) {
    const char* detail = "";
    mimicGetErrorDetail(&detail);
    std::fprintf(stderr, "mimic-replay: %s: %s\n", mimicGetErrorName(r), detail);
    std::fprintf(stderr, "mimic-replay: %" PRIu64 " of %" PRIu64 " calls replayed\n",
                 result.callsReplayed, result.callsInLog);
    return 1;
  }
  // Records of commands the log never waited for are not complete, and are not printed.
  if (trace) printTrace();
  std::printf("replayed %" PRIu64 " of %" PRIu64 " calls; simulated time %" PRIu64 " ns\n",
              result.callsReplayed, result.callsInLog, result.endSimTimeNs);
  if (result.failedCall) {
    std::printf("call %" PRIu64 " failed with %s, as recorded\n", result.failedCall,
                mimicGetErrorName(result.failedResult));
  }
  return 0;
}
