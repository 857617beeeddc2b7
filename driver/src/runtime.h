// The driver's process-wide state: the simulation, the queues and events handed out, pinned
// host memory, and each device's sticky error. Every API function enters through guarded().
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <tbb/global_control.h>

#include "errors.h"
#include "fault_plan.h"
#include "handle_table.h"
#include "memcheck.h"
#include "mimic/mimic.h"
#include "racecheck.h"
#include "sanitizer.h"
#include "sim/compute_engine.h"
#include "sim/isa/module.h"
#include "sim/simulator.h"
#include "tracer.h"

namespace mimic::driver {

struct QueueState {
  QueueState(int device, int hwQueue, int priority)
      : device(device), hwQueue(hwQueue), priority(priority) {}
  int device;
  int hwQueue;
  int priority;
  uint64_t id = 0;                        // mimicQueueGetId
  std::shared_ptr<sim::Completion> last;  // of the most recent command; guarded by submitMutex
  // The most recent kernel and its completion; guarded by submitMutex.
  std::shared_ptr<sim::KernelLaunch> lastKernel;
  std::shared_ptr<sim::Completion> lastKernelDone;
  // Ranges begun and not ended: name and the marker command that starts each; guarded by
  // Runtime::rangeMutex.
  std::vector<std::pair<std::string, std::shared_ptr<sim::Completion>>> openRanges;
};

struct ModuleState {
  int device;
  isa::Module module;
  std::atomic<bool> unloaded{false};
};

struct FunctionState {
  std::shared_ptr<ModuleState> module;
  size_t index;
  const isa::Function& function() const { return module->module.functions[index]; }
};

struct EventState {
  int device;
  unsigned flags;
  std::shared_ptr<sim::Completion> record;  // of the most recent record; guarded by submitMutex
};

struct DeviceState {
  std::shared_ptr<QueueState> defaultQueue;
  std::vector<std::shared_ptr<sim::Completion>> lastOnHwQueue;  // guarded by submitMutex
  int nextHwQueue = 0;
  std::atomic<int> sticky{MIMIC_SUCCESS};  // the device's failure, once the host has seen it
  std::atomic<uint64_t> stickyOrder{0};    // when the host saw it, counting all devices
  std::mutex faultMutex;
  std::string faultDetail;  // what the first kernel fault on the device was
};

class Runtime {
 public:
  static Runtime* instance();
  static mimicResult initialize(unsigned flags, const char* preset, const char* overrides,
                                bool mustMatch);

  sim::Simulator& sim() { return *sim_; }
  const sim::SystemConfig& config() const { return sim_->config(); }
  int numDevices() const { return static_cast<int>(devices_.size()); }

  // Validation; each throws ApiError naming the argument.
  void checkDeviceIndex(int device, const char* argument = "device");
  void checkDevice(int device, const char* argument = "device");  // and its sticky error
  std::shared_ptr<QueueState> queue(mimicQueue handle, int defaultDevice);
  std::shared_ptr<EventState> event(mimicEvent handle);

  mimicQueue addQueue(std::shared_ptr<QueueState> queue);
  bool removeQueue(mimicQueue handle);
  mimicEvent addEvent(std::shared_ptr<EventState> event);
  bool removeEvent(mimicEvent handle);
  mimicModule addModule(std::shared_ptr<ModuleState> module);
  std::shared_ptr<ModuleState> module(mimicModule handle);
  bool removeModule(mimicModule handle);
  mimicFunction addFunction(std::shared_ptr<FunctionState> function);
  std::shared_ptr<FunctionState> function(mimicFunction handle);
  // Remembers why a kernel will fail the device, for the sticky error's message.
  void noteKernelFault(int device, const std::string& detail);
  int assignHwQueue(int device);

  enum class Trace { Command, Untraced };
  // Hands a command to the simulation on `queue` and returns its completion; while tracing,
  // records it unless told otherwise.
  std::shared_ptr<sim::Completion> submit(QueueState& queue, std::unique_ptr<sim::Command> cmd,
                                          EventState* recordInto = nullptr,
                                          Trace trace = Trace::Command);
  // Submits a kernel command and remembers it as the queue's most recent kernel.
  void submitKernel(QueueState& queue, std::unique_ptr<sim::Command> cmd, const std::string& name,
                    mimicDim3 grid);
  Tracer& tracer() { return tracer_; }
  FaultInjector& faults() { return faults_; }
  RaceChecker& racecheck() { return *racecheck_; }
  MemoryChecker& memcheck() { return *memcheck_; }
  Sanitizer& sanitizer() { return sanitizer_; }
  // Installs a fault plan: resets its counters and schedules its timed faults on every device.
  void setFaults(const FaultPlan& plan);
  // Records a host-side activity (allocation, free) at the host's current time.
  void traceHostActivity(mimicActivityKind kind, int device, uint64_t bytes);
  uint64_t assignQueueId() { return nextQueueId_++; }
  std::mutex& rangeMutex() { return rangeMutex_; }  // guards QueueState::openRanges
  void lastKernel(QueueState& queue, std::shared_ptr<sim::KernelLaunch>* launch,
                  std::shared_ptr<sim::Completion>* done);
  // A queue's last command or an event's last record, read under the submission lock.
  std::shared_ptr<sim::Completion> snapshot(const std::shared_ptr<sim::Completion>& field);
  // Whether the command has completed as the host sees it now (no command: true).
  bool completedByNow(const std::shared_ptr<sim::Completion>& c);
  // Blocks on completions, then surfaces any device failure the host can now see.
  void wait(const std::vector<std::shared_ptr<sim::Completion>>& completions);
  void waitForDevice(int device);
  void poll();
  // Throws the device's sticky error if the host has seen its failure.
  void checkSticky(int device);
  mimicResult firstStickyError() const;
  void resetDevice(int device);

  // Pinned host memory.
  void addPinned(void* base, size_t bytes);
  bool removePinned(void* base, size_t* bytes);
  bool findPinned(const void* pointer, size_t bytes, void** base, size_t* size) const;
  // The device whose address range holds `pointer`, or -1.
  int deviceOfAddress(const void* pointer);

  // Timing-only mode: copies from a device into host memory write zeros instead of the bytes
  // (there are none); each is counted (mimicGetPlaceholderCopies).
  void countPlaceholderCopy(uint64_t bytes) {
    placeholderCopies_.fetch_add(1, std::memory_order_relaxed);
    placeholderBytes_.fetch_add(bytes, std::memory_order_relaxed);
  }
  uint64_t placeholderCopies() const { return placeholderCopies_.load(); }
  uint64_t placeholderBytes() const { return placeholderBytes_.load(); }

 private:
  Runtime(const sim::SystemConfig& config, std::string identity, int hostThreads);
  void observeFaults();

  // Caps the host worker threads that run kernels (MIMIC_HOST_THREADS); results and simulated
  // time do not depend on it, only wall time does.
  std::unique_ptr<tbb::global_control> hostThreads_;
  std::unique_ptr<sim::Simulator> sim_;
  std::string identity_;  // preset and overrides, to compare repeated initialisations
  std::vector<std::unique_ptr<DeviceState>> devices_;
  HandleTable<QueueState> queues_{1};
  HandleTable<EventState> events_{2};
  HandleTable<ModuleState> modules_{3};
  HandleTable<FunctionState> functions_{4};
  std::mutex submitMutex_;
  Tracer tracer_;
  FaultInjector faults_;
  Sanitizer sanitizer_;
  std::unique_ptr<RaceChecker> racecheck_;
  std::unique_ptr<MemoryChecker> memcheck_;
  std::mutex rangeMutex_;
  std::atomic<uint64_t> nextQueueId_{1};
  std::atomic<uint64_t> placeholderCopies_{0}, placeholderBytes_{0};
  std::atomic<uint64_t> faultsSeen_{0};
  mutable std::mutex pinnedMutex_;
  std::map<uintptr_t, size_t> pinned_;
};

// The result code of a configuration error (mimicInit*, mimicPresetDescribe).
mimicResult configErrorResult(const sim::ConfigError& e);

// Runs an API function body: checks that mimic is initialised and that the caller is not a
// host function on the simulation thread, and turns ApiError into the result code.
template <typename Body>
mimicResult guarded(const char* function, Body&& body) {
  try {
    if (sim::Simulator::onSimulationThread()) {
      fail(MIMIC_ERROR_NOT_PERMITTED, "called from a host function running on a queue");
    }
    Runtime* runtime = Runtime::instance();
    if (!runtime) fail(MIMIC_ERROR_NOT_INITIALIZED, "call mimicInit first");
    return body(*runtime);
  } catch (const ApiError& e) {
    return recordFailure(function, e.result(), e.message());
  } catch (const std::bad_alloc&) {
    return recordFailure(function, MIMIC_ERROR_HOST_OUT_OF_MEMORY, "host memory exhausted");
  }
}

}  // namespace mimic::driver
