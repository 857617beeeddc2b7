#include "runtime.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "call_recorder.h"
#include "sim/collective/runner.h"
#include "sim/device.h"
#include "sim/params.h"
#include "sim/preset.h"
#include "sim/system_config.h"

namespace mimic::driver {
namespace {

static_assert(MIMIC_MAX_DEVICES == sim::kMaxDevices, "the header publishes the model's limit");

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::mutex initMutex;
std::atomic<Runtime*> globalRuntime{nullptr};

// Runs before shutdownAtExit (atexit handlers run in reverse): leaks are what is still live
// once the program, and Python's finalisation of its objects, are done.
void finishSanitizerAtExit() {
  Runtime* runtime = globalRuntime.load();
  if (!runtime || runtime->sanitizer().tools() == 0) return;
  if (runtime->sanitizer().on(MIMIC_SANITIZE_LEAKCHECK)) runtime->memcheck().checkLeaks();
  runtime->sanitizer().finish(environment("MIMIC_SANITIZE_REPORT"));
}

void shutdownAtExit() {
  // Stop the simulation thread before static destructors run under it. The runtime itself
  // stays allocated: other threads may still hold references into it at exit.
  if (Runtime* runtime = globalRuntime.load()) runtime->sim().stop();
}

}  // namespace

mimicResult configErrorResult(const sim::ConfigError& e) {
  switch (e.kind()) {
    case sim::ConfigError::Kind::UnknownPreset:
      return MIMIC_ERROR_UNKNOWN_PRESET;
    case sim::ConfigError::Kind::UnknownField:
      return MIMIC_ERROR_UNKNOWN_CONFIG_FIELD;
    case sim::ConfigError::Kind::InvalidValue:
      break;
  }
  return MIMIC_ERROR_INVALID_CONFIG_VALUE;
}

Runtime* Runtime::instance() {
  return globalRuntime.load(std::memory_order_acquire);
}

mimicResult Runtime::initialize(unsigned flags, const char* preset, const char* overrides,
                                bool mustMatch) {
  const char* function = mustMatch ? "mimicInitWithPreset" : "mimicInit";
  if (flags != 0) {
    return recordFailure(function, MIMIC_ERROR_INVALID_FLAGS,
                         "flags must be 0, got " + std::to_string(flags));
  }
  std::string presetName = preset ? preset : environment("MIMIC_PRESET");
  if (presetName.empty()) presetName = "default";
  std::string allOverrides = environment("MIMIC_OVERRIDES");
  std::string numDevices = environment("MIMIC_NUM_DEVICES");
  if (!numDevices.empty()) allOverrides += ",system.num_devices=" + numDevices;
  const std::string mode = environment("MIMIC_MODE");
  if (!mode.empty()) {
    if (mode != "full" && mode != "timing") {
      return recordFailure(function, MIMIC_ERROR_INVALID_CONFIG_VALUE,
                           "MIMIC_MODE must be 'full' or 'timing', not '" + mode + "'");
    }
    allOverrides += ",system.mode=" + mode;
  }
  if (overrides) allOverrides += std::string(",") + overrides;

  std::lock_guard<std::mutex> lock(initMutex);
  try {
    sim::Preset chosen = sim::Preset::load(presetName);
    chosen.applyOverrides(allOverrides);
    // Two requests are the same configuration when they set the same fields to the same values.
    std::string identity = presetName;
    for (const auto& [field, value] : chosen.values()) identity += "|" + field + "=" + value;
    if (Runtime* existing = instance()) {
      if (!mustMatch || existing->identity_ == identity) return MIMIC_SUCCESS;
      return recordFailure(function, MIMIC_ERROR_ALREADY_INITIALIZED,
                           "this process already simulates preset '" +
                               existing->config().presetName +
                               "' with other settings; one process holds one simulation");
    }
    sim::SystemConfig config = sim::SystemConfig::read(chosen);
    FaultPlan faults;
    try {
      faults = FaultPlan::parse(environment("MIMIC_FAULTS"), config.numDevices);
    } catch (const ApiError& e) {
      return recordFailure(function, MIMIC_ERROR_INVALID_CONFIG_VALUE,
                           "MIMIC_FAULTS: " + e.message());
    }
    unsigned sanitize = 0;
    try {
      sanitize = Sanitizer::parseTools(environment("MIMIC_SANITIZE"));
    } catch (const ApiError& e) {
      return recordFailure(function, MIMIC_ERROR_INVALID_CONFIG_VALUE,
                           "MIMIC_SANITIZE: " + e.message());
    }
    int hostThreads = 0;
    const std::string threads = environment("MIMIC_HOST_THREADS");
    if (!threads.empty()) {
      char* end = nullptr;
      long value = std::strtol(threads.c_str(), &end, 10);
      if (*end != '\0' || value < 1 || value > 4096) {
        return recordFailure(
            function, MIMIC_ERROR_INVALID_CONFIG_VALUE,
            "MIMIC_HOST_THREADS must be a whole number from 1 to 4096, not '" + threads + "'");
      }
      hostThreads = static_cast<int>(value);
    }
    std::unique_ptr<CallLogWriter> callLog;
    try {
      callLog = openCallLog(environment("MIMIC_RECORD"),
                            {presetName, allOverrides, environment("MIMIC_FAULTS"), numDevices});
    } catch (const ApiError& e) {
      return recordFailure(function, MIMIC_ERROR_INVALID_CONFIG_VALUE,
                           "MIMIC_RECORD: " + e.message());
    }
    auto* runtime = new Runtime(config, identity, hostThreads);
    runtime->setFaults(faults);
    runtime->sanitizer().setTools(sanitize);
    globalRuntime.store(runtime, std::memory_order_release);
    startRecording(std::move(callLog));
  } catch (const sim::ConfigError& e) {
    return recordFailure(function, configErrorResult(e), e.what());
  } catch (const std::exception& e) {
    return recordFailure(function, MIMIC_ERROR_SYSTEM_RESOURCES, e.what());
  }
  std::atexit(shutdownAtExit);
  std::atexit(finishSanitizerAtExit);
  return MIMIC_SUCCESS;
}

Runtime::Runtime(const sim::SystemConfig& config, std::string identity, int hostThreads)
    : sim_(std::make_unique<sim::Simulator>(config)),
      identity_(std::move(identity)),
      tracer_(sim_->config()),
      racecheck_(std::make_unique<RaceChecker>(*sim_, sanitizer_)),
      memcheck_(std::make_unique<MemoryChecker>(*sim_, sanitizer_)) {
  if (hostThreads > 0) {
    hostThreads_ = std::make_unique<tbb::global_control>(
        tbb::global_control::max_allowed_parallelism, static_cast<size_t>(hostThreads));
  }
  const int hwQueues = config.commandProcessor.hwQueues;
  for (int d = 0; d < config.numDevices; ++d) {
    auto state = std::make_unique<DeviceState>();
    state->defaultQueue = std::make_shared<QueueState>(d, 0, 0);
    state->defaultQueue->id = assignQueueId();
    state->lastOnHwQueue.resize(hwQueues);
    // Created queues start on hardware queue 1: the default queue keeps 0 to itself as long
    // as there are enough hardware queues.
    state->nextHwQueue = hwQueues > 1 ? 1 : 0;
    devices_.push_back(std::move(state));
  }
}

void Runtime::checkDeviceIndex(int device, const char* argument) {
  if (device < 0 || device >= numDevices()) {
    fail(MIMIC_ERROR_INVALID_DEVICE, std::string(argument) + " " + std::to_string(device) +
                                         " is out of range (the system has " +
                                         std::to_string(numDevices()) + " devices)");
  }
}

void Runtime::checkDevice(int device, const char* argument) {
  checkDeviceIndex(device, argument);
  checkSticky(device);
}

std::shared_ptr<QueueState> Runtime::queue(mimicQueue handle, int defaultDevice) {
  if (!handle) {
    checkDevice(defaultDevice);
    return devices_[defaultDevice]->defaultQueue;
  }
  auto q = queues_.find(reinterpret_cast<uint64_t>(handle));
  if (!q) fail(MIMIC_ERROR_INVALID_QUEUE, "queue " + hexAddress(handle) + " is not a live queue");
  checkSticky(q->device);
  return q;
}

std::shared_ptr<EventState> Runtime::event(mimicEvent handle) {
  if (!handle) fail(MIMIC_ERROR_INVALID_EVENT, "event is NULL");
  auto e = events_.find(reinterpret_cast<uint64_t>(handle));
  if (!e) fail(MIMIC_ERROR_INVALID_EVENT, "event " + hexAddress(handle) + " is not a live event");
  checkSticky(e->device);
  return e;
}

mimicQueue Runtime::addQueue(std::shared_ptr<QueueState> queue) {
  return reinterpret_cast<mimicQueue>(queues_.add(std::move(queue)));
}

bool Runtime::removeQueue(mimicQueue handle) {
  return queues_.remove(reinterpret_cast<uint64_t>(handle));
}

mimicEvent Runtime::addEvent(std::shared_ptr<EventState> event) {
  return reinterpret_cast<mimicEvent>(events_.add(std::move(event)));
}

bool Runtime::removeEvent(mimicEvent handle) {
  return events_.remove(reinterpret_cast<uint64_t>(handle));
}

mimicModule Runtime::addModule(std::shared_ptr<ModuleState> module) {
  return reinterpret_cast<mimicModule>(modules_.add(std::move(module)));
}

std::shared_ptr<ModuleState> Runtime::module(mimicModule handle) {
  auto m = modules_.find(reinterpret_cast<uint64_t>(handle));
  if (!m) {
    fail(MIMIC_ERROR_INVALID_MODULE, "module " + hexAddress(handle) + " is not a loaded module");
  }
  return m;
}

bool Runtime::removeModule(mimicModule handle) {
  auto m = modules_.find(reinterpret_cast<uint64_t>(handle));
  if (!m) return false;
  m->unloaded = true;
  return modules_.remove(reinterpret_cast<uint64_t>(handle));
}

mimicFunction Runtime::addFunction(std::shared_ptr<FunctionState> function) {
  return reinterpret_cast<mimicFunction>(functions_.add(std::move(function)));
}

std::shared_ptr<FunctionState> Runtime::function(mimicFunction handle) {
  auto f = functions_.find(reinterpret_cast<uint64_t>(handle));
  if (!f) fail(MIMIC_ERROR_INVALID_FUNCTION, "fn " + hexAddress(handle) + " is not a function");
  if (f->module->unloaded) {
    fail(MIMIC_ERROR_INVALID_FUNCTION,
         "the module of function '" + f->function().name + "' was unloaded");
  }
  checkSticky(f->module->device);
  return f;
}

void Runtime::noteKernelFault(int device, const std::string& detail) {
  DeviceState& state = *devices_[device];
  std::lock_guard<std::mutex> lock(state.faultMutex);
  if (state.faultDetail.empty()) state.faultDetail = detail;
}

int Runtime::assignHwQueue(int device) {
  std::lock_guard<std::mutex> lock(submitMutex_);
  DeviceState& state = *devices_[device];
  const int hwQueues = config().commandProcessor.hwQueues;
  int assigned = state.nextHwQueue;
  state.nextHwQueue = hwQueues > 1 ? 1 + assigned % (hwQueues - 1) : 0;
  return assigned;
}

namespace {

mimicActivityKind activityKind(const sim::Command& cmd) {
  switch (cmd.kind) {
    case sim::CommandKind::Transfer:
      return cmd.transfer == sim::TransferKind::Fill ? MIMIC_ACTIVITY_MEMSET
                                                     : MIMIC_ACTIVITY_MEMCPY;
    case sim::CommandKind::HostFunc:
      return MIMIC_ACTIVITY_HOST_FUNC;
    case sim::CommandKind::HostTask:
      return MIMIC_ACTIVITY_HOST_TASK;
    case sim::CommandKind::EventWait:
      return MIMIC_ACTIVITY_EVENT_WAIT;
    case sim::CommandKind::Kernel:
      return MIMIC_ACTIVITY_KERNEL;
    case sim::CommandKind::Collective:
      return MIMIC_ACTIVITY_COLLECTIVE;
    case sim::CommandKind::EventRecord:
    case sim::CommandKind::Fault:
      break;
  }
  return MIMIC_ACTIVITY_EVENT_RECORD;
}

mimicCopyKind copyKind(sim::TransferKind kind) {
  switch (kind) {
    case sim::TransferKind::HostToDevice:
      return MIMIC_COPY_HOST_TO_DEVICE;
    case sim::TransferKind::DeviceToHost:
      return MIMIC_COPY_DEVICE_TO_HOST;
    case sim::TransferKind::Peer:
      return MIMIC_COPY_PEER;
    case sim::TransferKind::HostToHost:
      return MIMIC_COPY_HOST_TO_HOST;
    case sim::TransferKind::DeviceToDevice:
    case sim::TransferKind::Fill:
      break;
  }
  return MIMIC_COPY_DEVICE_TO_DEVICE;
}

mimicActivity commandActivity(const QueueState& queue, const sim::Command& cmd) {
  mimicActivity a = newActivity(activityKind(cmd), queue.device, queue.id);
  if (cmd.kind == sim::CommandKind::Transfer) {
    a.bytes = cmd.bytes;
    a.copyKind = copyKind(cmd.transfer);
    const bool hostSide = cmd.transfer == sim::TransferKind::HostToDevice ||
                          cmd.transfer == sim::TransferKind::DeviceToHost;
    a.hostPinned = hostSide && cmd.hostPinned ? 1 : 0;
    if (cmd.transfer == sim::TransferKind::Peer) {
      a.peerDevice = cmd.srcDevice == queue.device ? cmd.dstDevice : cmd.srcDevice;
    }
  }
  if (cmd.kind == sim::CommandKind::Collective) {
    a.bytes = cmd.bytes;
    std::strncpy(a.name, cmd.collective->label.c_str(), sizeof a.name - 1);
  }
  return a;
}

}  // namespace

std::shared_ptr<sim::Completion> Runtime::submit(QueueState& queue,
                                                 std::unique_ptr<sim::Command> cmd,
                                                 EventState* recordInto, Trace trace) {
  cmd->device = queue.device;
  cmd->hwQueue = queue.hwQueue;
  std::shared_ptr<sim::Completion> completion = cmd->completion;
  if (trace == Trace::Command && tracer_.active() && cmd->kind != sim::CommandKind::Fault) {
    tracer_.add(commandActivity(queue, *cmd), completion);
  }
  if (racecheck_->enabled()) racecheck_->onSubmit(queue.id, completion.get());
  std::lock_guard<std::mutex> lock(submitMutex_);
  sim_->submit(std::move(cmd));
  queue.last = completion;
  devices_[queue.device]->lastOnHwQueue[queue.hwQueue] = completion;
  if (recordInto) recordInto->record = completion;
  return completion;
}

void Runtime::submitKernel(QueueState& queue, std::unique_ptr<sim::Command> cmd,
                           const std::string& name, mimicDim3 grid) {
  std::shared_ptr<sim::KernelLaunch> launch = cmd->launch;
  if (tracer_.active()) {
    mimicActivity a = newActivity(MIMIC_ACTIVITY_KERNEL, queue.device, queue.id);
    std::strncpy(a.name, name.c_str(), sizeof a.name - 1);
    a.grid = grid;
    tracer_.add(a, cmd->completion, nullptr, launch);
  }
  std::shared_ptr<sim::Completion> done = submit(queue, std::move(cmd), nullptr, Trace::Untraced);
  std::lock_guard<std::mutex> lock(submitMutex_);
  queue.lastKernel = std::move(launch);
  queue.lastKernelDone = std::move(done);
}

void Runtime::lastKernel(QueueState& queue, std::shared_ptr<sim::KernelLaunch>* launch,
                         std::shared_ptr<sim::Completion>* done) {
  std::lock_guard<std::mutex> lock(submitMutex_);
  *launch = queue.lastKernel;
  *done = queue.lastKernelDone;
}

std::shared_ptr<sim::Completion> Runtime::snapshot(const std::shared_ptr<sim::Completion>& field) {
  std::lock_guard<std::mutex> lock(submitMutex_);
  return field;
}

bool Runtime::completedByNow(const std::shared_ptr<sim::Completion>& c) {
  return !c || (c->done.load(std::memory_order_acquire) && c->end <= sim_->hostTime());
}

void Runtime::setFaults(const FaultPlan& plan) {
  faults_.set(plan);
  sim_->slowLinks({plan.slowLinkFactor, plan.slowLinkDeviceA, plan.slowLinkDeviceB});
  for (int d = 0; d < numDevices(); ++d) {
    sim::Device& device = sim_->device(d);
    if (plan.eccAtNs && (!plan.lostAtNs || plan.eccAtNs <= plan.lostAtNs)) {
      device.scheduleFault(MIMIC_ERROR_ECC_UNCORRECTABLE, plan.eccAtNs);
      noteKernelFault(d, "injected fault: an uncorrectable ECC error at the first command from " +
                             std::to_string(plan.eccAtNs) + " ns (ecc_at_ns)");
    } else if (plan.lostAtNs) {
      device.scheduleFault(MIMIC_ERROR_DEVICE_LOST, plan.lostAtNs);
      noteKernelFault(d, "injected fault: the device is lost at the first command from " +
                             std::to_string(plan.lostAtNs) + " ns (lost_at_ns)");
    } else {
      device.scheduleFault(0, 0);
    }
  }
}

void Runtime::traceHostActivity(mimicActivityKind kind, int device, uint64_t bytes) {
  if (!tracer_.active()) return;
  mimicActivity a = newActivity(kind, device, 0);
  a.bytes = bytes;
  a.startNs = a.endNs = sim_->hostTime();
  tracer_.add(a);
}

void Runtime::wait(const std::vector<std::shared_ptr<sim::Completion>>& completions) {
  const bool tracing = tracer_.active();
  const uint64_t waitedFrom = tracing ? sim_->hostTime() : 0;
  bool completed = sim_->wait(completions);
  if (racecheck_->enabled()) racecheck_->onHostWait(completions);
  if (tracing) {
    mimicActivity a = newActivity(MIMIC_ACTIVITY_SYNCHRONIZE, -1, 0);
    a.startNs = waitedFrom;
    a.endNs = sim_->hostTime();
    tracer_.add(a);
  }
  observeFaults();
  if (!completed) {
    fail(MIMIC_ERROR_SIMULATION_STALLED, "the awaited work can never complete");
  }
}

void Runtime::waitForDevice(int device) {
  std::vector<std::shared_ptr<sim::Completion>> pending;
  {
    std::lock_guard<std::mutex> lock(submitMutex_);
    for (const auto& c : devices_[device]->lastOnHwQueue) {
      if (c) pending.push_back(c);
    }
  }
  wait(pending);
}

void Runtime::poll() {
  sim_->poll();
  observeFaults();
}

void Runtime::observeFaults() {
  const sim::SimTime now = sim_->hostTime();
  // Faults newly visible now are numbered in the order they happened, after earlier ones.
  std::vector<std::pair<sim::SimTime, int>> newlySeen;
  for (int d = 0; d < numDevices(); ++d) {
    const sim::Device& device = sim_->device(d);
    int code = device.faultCode();
    if (code != 0 && device.faultTime() <= now && devices_[d]->sticky.load() == MIMIC_SUCCESS) {
      newlySeen.push_back({device.faultTime(), d});
    }
  }
  std::sort(newlySeen.begin(), newlySeen.end());
  for (const auto& [time, d] : newlySeen) {
    int expected = MIMIC_SUCCESS;
    if (devices_[d]->sticky.compare_exchange_strong(expected, sim_->device(d).faultCode())) {
      devices_[d]->stickyOrder.store(++faultsSeen_);
    }
  }
}

void Runtime::checkSticky(int device) {
  DeviceState& state = *devices_[device];
  int code = state.sticky.load();
  if (code != MIMIC_SUCCESS) {
    std::string detail;
    {
      std::lock_guard<std::mutex> lock(state.faultMutex);
      if (!state.faultDetail.empty()) detail = " (" + state.faultDetail + ")";
    }
    fail(static_cast<mimicResult>(code), std::string("device ") + std::to_string(device) +
                                             " has failed with " +
                                             mimicGetErrorName(static_cast<mimicResult>(code)) +
                                             detail + "; call mimicDeviceReset to recover");
  }
}

mimicResult Runtime::firstStickyError() const {
  int first = MIMIC_SUCCESS;
  uint64_t firstOrder = UINT64_MAX;
  for (const auto& state : devices_) {
    int code = state->sticky.load();
    uint64_t order = state->stickyOrder.load();
    if (code != MIMIC_SUCCESS && order < firstOrder) {
      first = code;
      firstOrder = order;
    }
  }
  return static_cast<mimicResult>(first);
}

void Runtime::resetDevice(int device) {
  waitForDevice(device);
  sim_->device(device).clearFault();
  sim_->device(device).memory().releaseAll();
  memcheck_->onDeviceReset(device);
  devices_[device]->sticky.store(MIMIC_SUCCESS);
  std::lock_guard<std::mutex> lock(devices_[device]->faultMutex);
  devices_[device]->faultDetail.clear();
}

void Runtime::addPinned(void* base, size_t bytes) {
  std::lock_guard<std::mutex> lock(pinnedMutex_);
  pinned_[reinterpret_cast<uintptr_t>(base)] = bytes;
}

bool Runtime::removePinned(void* base, size_t* bytes) {
  std::lock_guard<std::mutex> lock(pinnedMutex_);
  auto it = pinned_.find(reinterpret_cast<uintptr_t>(base));
  if (it == pinned_.end()) return false;
  *bytes = it->second;
  pinned_.erase(it);
  return true;
}

bool Runtime::findPinned(const void* pointer, size_t bytes, void** base, size_t* size) const {
  std::lock_guard<std::mutex> lock(pinnedMutex_);
  const uintptr_t p = reinterpret_cast<uintptr_t>(pointer);
  auto it = pinned_.upper_bound(p);
  if (it == pinned_.begin()) return false;
  --it;
  if (p - it->first >= it->second || bytes > it->second - (p - it->first)) return false;
  *base = reinterpret_cast<void*>(it->first);
  *size = it->second;
  return true;
}

int Runtime::deviceOfAddress(const void* pointer) {
  const uint64_t address = reinterpret_cast<uint64_t>(pointer);
  for (int d = 0; d < numDevices(); ++d) {
    if (sim_->device(d).memory().inRange(address)) return d;
  }
  return -1;
}

}  // namespace mimic::driver
