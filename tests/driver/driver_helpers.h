// Helpers shared by the driver tests (tiny preset): handles, allocations, clocks, host functions,
// error details and the environment. Each helper checks its own mimic calls with EXPECT_*, so a
// failure is reported at once; it returns a null handle or 0 and the test goes on.
#pragma once

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "driver_test.h"

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kTinyMemory = 64 * kMiB;  // hbm.capacity of tiny
constexpr uint64_t kPollNs = 1000;         // host.poll_ns, from default.preset via tiny

// ---------------------------------------------------------------------------------------------
// Queues and events

inline mimicQueue newQueue(int device = 0) {
  mimicQueue queue = nullptr;
  EXPECT_EQ(mimicQueueCreate(device, 0, MIMIC_QUEUE_PRIORITY_LOW, &queue), MIMIC_SUCCESS);
  return queue;
}

inline mimicEvent newEvent(int device = 0, unsigned flags = MIMIC_EVENT_DEFAULT) {
  mimicEvent event = nullptr;
  EXPECT_EQ(mimicEventCreate(device, flags, &event), MIMIC_SUCCESS);
  return event;
}

// ---------------------------------------------------------------------------------------------
// Simulated time

// The simulated time at which an event's most recent record completed (waits for it).
inline uint64_t timestampOf(mimicEvent event) {
  EXPECT_EQ(mimicEventSynchronize(event), MIMIC_SUCCESS);
  uint64_t ns = 0;
  EXPECT_EQ(mimicEventGetTimestamp(event, &ns), MIMIC_SUCCESS);
  return ns;
}

// The host's simulated clock.
inline uint64_t simTime() {
  uint64_t ns = 0;
  EXPECT_EQ(mimicGetSimTime(&ns), MIMIC_SUCCESS);
  return ns;
}

#define EXPECT_WITHIN_PERCENT(actual, expected, percent) \
  EXPECT_NEAR(double(actual), double(expected), double(expected) * (percent) / 100.0)

// ---------------------------------------------------------------------------------------------
// Devices and memory

inline mimicDeviceProperties propertiesOf(int device = 0) {
  mimicDeviceProperties p{};
  EXPECT_EQ(mimicDeviceGetProperties(device, &p), MIMIC_SUCCESS);
  return p;
}

inline void* deviceAlloc(size_t bytes, int device = 0) {
  void* p = nullptr;
  EXPECT_EQ(mimicMemAlloc(device, bytes, &p), MIMIC_SUCCESS);
  return p;
}

inline void* pinnedAlloc(size_t bytes) {
  void* p = nullptr;
  EXPECT_EQ(mimicHostAlloc(bytes, &p), MIMIC_SUCCESS);
  return p;
}

// The free bytes mimicMemGetInfo reports for a device.
inline size_t freeBytesOf(int device = 0) {
  size_t freeBytes = 0, totalBytes = 0;
  EXPECT_EQ(mimicMemGetInfo(device, &freeBytes, &totalBytes), MIMIC_SUCCESS);
  return freeBytes;
}

// A pinned host-to-device copy of `bytes` to `device`, started on a queue with start(). Over tiny's
// 10 GB/s host link it takes at least minNs(); the default 32 MiB (about 3.4 ms of simulated time)
// is still running when the host next looks.
class PinnedCopy {
 public:
  static constexpr size_t kLongBytes = 32 * kMiB;

  explicit PinnedCopy(int device, size_t bytes = kLongBytes)
      : bytes_(bytes), host_(pinnedAlloc(bytes)), dev_(deviceAlloc(bytes, device)) {}
  mimicResult start(mimicQueue queue) { return mimicMemcpyAsync(dev_, host_, bytes_, queue); }
  uint64_t minNs() const { return bytes_ / 10; }  // bytes / (10 bytes per ns)
  void* dev() const { return dev_; }

 private:
  size_t bytes_;
  void* host_;
  void* dev_;
};

// ---------------------------------------------------------------------------------------------
// Host functions

inline void noOp(void*) {}

// Host functions that append their id to a log, to see the order they ran in.
struct CallLog {
  std::mutex mutex;
  std::vector<int> order;
};

struct Call {
  CallLog* log;
  int id;
};

inline void logCall(void* data) {
  Call* call = static_cast<Call*>(data);
  std::lock_guard<std::mutex> lock(call->log->mutex);
  call->log->order.push_back(call->id);
}

// ---------------------------------------------------------------------------------------------
// Error details and the environment

// The calling thread's detail message, "" if it cannot be read.
inline std::string errorDetail() {
  const char* detail = nullptr;
  EXPECT_EQ(mimicGetErrorDetail(&detail), MIMIC_SUCCESS);
  return detail ? detail : "";
}

// Removes the environment variables mimicInit reads, so the test sees only what it sets.
inline void clearMimicEnvironment() {
  unsetenv("MIMIC_PRESET");
  unsetenv("MIMIC_OVERRIDES");
  unsetenv("MIMIC_NUM_DEVICES");
}

// Runs `program` in a child process, so that it gets a simulation of its own, with the
// environment variable `name` set to `value` if given; returns the numbers it produced.
inline std::vector<uint64_t> runInChild(const std::function<std::vector<uint64_t>()>& program,
                                        const char* name = nullptr, const char* value = nullptr) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    if (name) setenv(name, value, 1);
    std::vector<uint64_t> values = program();
    const ssize_t bytes = ssize_t(values.size() * sizeof(uint64_t));
    _exit(write(fds[1], values.data(), bytes) == bytes ? 0 : 1);
  }
  close(fds[1]);
  std::vector<uint64_t> values;
  uint64_t v = 0;
  while (read(fds[0], &v, sizeof v) == sizeof v) values.push_back(v);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return values;
}

// The process's resident set in bytes (/proc/self/statm), for tests of what is committed.
inline uint64_t residentBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  unsigned long long pages = 0, resident = 0;
  const int read = f ? std::fscanf(f, "%llu %llu", &pages, &resident) : 0;
  if (f) std::fclose(f);
  EXPECT_EQ(read, 2);
  return resident * uint64_t(sysconf(_SC_PAGESIZE));
}
