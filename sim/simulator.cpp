#include "sim/simulator.h"

#include <systemc>

#include <atomic>
#include <chrono>
#include <stdexcept>

#include "sim/system.h"

namespace mimic::sim {
namespace {

thread_local bool tlsOnSimulationThread = false;
std::atomic<bool> simulatorCreated{false};

SimTime simNow() {
  return static_cast<SimTime>(sc_core::sc_time_stamp().value());
}

// Waking a sleeping thread costs tens of microseconds here, more than a whole command takes
// to simulate, so both sides spin this long before they sleep (see perf/bench_driver.cpp).
constexpr auto kSpinBeforeSleeping = std::chrono::microseconds(50);
constexpr size_t kEagerBatch = 4096;

template <typename Ready>
bool spinUntil(Ready ready) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinBeforeSleeping;
  do {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
      __builtin_ia32_pause();
    }
  } while (std::chrono::steady_clock::now() < deadline);
  return ready();
}

}  // namespace

Simulator::Simulator(const SystemConfig& config) : config_(config) {
  for (int d = 0; d < config.numDevices; ++d) {
    memories_.push_back(std::make_unique<DeviceMemory>(config.hbm.capacityBytes, config.memory));
  }
  if (simulatorCreated.exchange(true)) {
    throw std::runtime_error("a simulation was already built in this process");
  }
  thread_ = std::thread([this] { threadMain(); });
  std::unique_lock<std::mutex> lock(mutex_);
  hostWake_.wait(lock, [this] { return started_ || !startupError_.empty(); });
  if (!startupError_.empty()) {
    lock.unlock();
    thread_.join();
    throw std::runtime_error(startupError_);
  }
}

Simulator::~Simulator() {
  stop();
}

void Simulator::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    shutdown_ = true;
    signalSimulation();
  }
  simulationWake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Device& Simulator::device(int index) {
  return system_->device(index);
}

bool Simulator::onSimulationThread() {
  return tlsOnSimulationThread;
}

bool Simulator::signalSimulation() {
  hostSignals_.fetch_add(1, std::memory_order_release);
  return simulationSleeping_;
}

void Simulator::submit(std::unique_ptr<Command> command) {
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // The command reaches the device once the host has paid the cost of submitting it.
    const uint64_t collectiveNs = config_.collectives.hostLaunchNs;
    hostTime_ += command->kind == CommandKind::Collective && collectiveNs > 0
                     ? collectiveNs
                     : config_.hostClock.submitNs;
    command->stamp = hostTime_;
    inbox_.push_back(std::move(command));
    idle_ = false;
    // Submissions alone do not wake the simulation: simulated time does not depend on when
    // it runs, and a simulation thread woken per command would take a core from the host
    // threads. Waits and polls wake it; a long batch does too, to bound the inbox.
    wake = inbox_.size() >= kEagerBatch && signalSimulation();
  }
  if (wake) simulationWake_.notify_one();
}

bool Simulator::wait(const std::vector<std::shared_ptr<Completion>>& completions) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (const auto& c : completions) c->awaited.store(true, std::memory_order_seq_cst);
  SimTime latest = 0;
  bool allDone = true;
  for (const auto& c : completions) {
    if (!c->done.load(std::memory_order_seq_cst)) {
      allDone = false;
      break;
    }
    latest = std::max(latest, c->end);
  }
  if (allDone) {
    hostTime_ = std::max(hostTime_, latest + config_.hostClock.syncNs);
    return true;
  }
  Waiter waiter{&completions};
  waiters_.push_back(&waiter);
  auto satisfied = [&] { return waiter.satisfied.load(std::memory_order_acquire); };
  if (runInline(lock, satisfied) && satisfied()) return !waiter.stalled;
  bool wake = signalSimulation();
  lock.unlock();
  if (wake) simulationWake_.notify_one();
  if (!spinUntil(satisfied)) {
    lock.lock();
    hostWake_.wait(lock, satisfied);
    lock.unlock();
  }
  lock.lock();  // the simulation thread may still be touching the waiter until it unlocks
  return !waiter.stalled;
}

void Simulator::poll() {
  std::unique_lock<std::mutex> lock(mutex_);
  hostTime_ += config_.hostClock.pollNs;
  if (idle_) return;
  const SimTime target = hostTime_;
  auto caughtUp = [&] { return reached_.load() >= target || idle_.load(); };
  if (runInline(lock, caughtUp) && caughtUp()) return;
  bool wake = signalSimulation();
  lock.unlock();
  if (wake) simulationWake_.notify_one();
  if (!spinUntil(caughtUp)) {
    lock.lock();
    hostWake_.wait(lock, caughtUp);
  }
}

// SystemC switches coroutine stacks without telling the sanitizers. On a host thread, whose
// stack the sanitizer tracks, that leaves stale stack shadow behind (ASan then reports
// stack-use-after-scope in the host's own frames), so sanitizer builds keep every simulation
// step on the simulation thread.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MIMIC_SANITIZER_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define MIMIC_SANITIZER_BUILD 1
#endif
#endif
#ifdef MIMIC_SANITIZER_BUILD
constexpr bool kHostThreadsRunTheModel = false;
#else
constexpr bool kHostThreadsRunTheModel = true;
#endif

template <typename Done>
bool Simulator::runInline(std::unique_lock<std::mutex>& lock, Done done) {
  if (!kHostThreadsRunTheModel || threadActive_ || inlineActive_) return false;
  // Restores the ownership even if the model throws (a kernel's bad_alloc reaches the caller).
  struct Owner {
    Simulator& sim;
    explicit Owner(Simulator& s) : sim(s) {
      sim.inlineActive_ = true;
      tlsOnSimulationThread = true;
    }
    ~Owner() {
      tlsOnSimulationThread = false;
      sim.inlineActive_ = false;
    }
  };
  const uint64_t signalsBefore = hostSignals_.load(std::memory_order_acquire);
  {
    Owner owner(*this);
    for (;;) {
      settleWaiters();
      // Other threads' waits go to the simulation thread rather than delaying this one.
      if (shutdown_ || (done() && !waiters_.empty())) break;
      if (!step(lock)) break;
    }
  }
  if (!waiters_.empty() || hostSignals_.load(std::memory_order_acquire) != signalsBefore) {
    if (signalSimulation()) simulationWake_.notify_one();
  }
  return true;
}

void Simulator::sleepUntilSignalled(std::unique_lock<std::mutex>& lock) {
  const uint64_t seen = hostSignals_.load(std::memory_order_acquire);
  threadActive_ = false;
  lock.unlock();
  spinUntil([&] { return hostSignals_.load(std::memory_order_acquire) != seen; });
  lock.lock();
  auto signalled = [&] {
    return shutdown_ || (hostSignals_.load(std::memory_order_acquire) != seen && !inlineActive_);
  };
  if (!signalled()) {
    simulationSleeping_ = true;
    simulationWake_.wait(lock, signalled);
    simulationSleeping_ = false;
  }
  if (!shutdown_) threadWakeups_.fetch_add(1, std::memory_order_relaxed);
  threadActive_ = true;
}

SimTime Simulator::hostTime() {
  std::lock_guard<std::mutex> lock(mutex_);
  return hostTime_;
}

void Simulator::slowLinks(const LinkSlowdown& slowdown) {
  system_->slowLinks(slowdown, hostTime());
}

coll::Choice Simulator::planCollective(const coll::CollectiveRequest& request,
                                       const std::string& algorithm, const std::string& protocol) {
  return system_->planCollective(request, algorithm, protocol, hostTime());
}

void Simulator::settleWaiters() {
  bool woke = false;
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    Waiter& w = **it;
    SimTime latest = 0;
    bool allDone = true;
    for (const auto& c : *w.completions) {
      if (!c->done.load(std::memory_order_acquire)) {
        allDone = false;
        break;
      }
      latest = std::max(latest, c->end);
    }
    if (!allDone) {
      ++it;
      continue;
    }
    hostTime_ = std::max(hostTime_, latest + config_.hostClock.syncNs);
    w.satisfied.store(true, std::memory_order_release);
    woke = true;
    it = waiters_.erase(it);
  }
  if (woke) hostWake_.notify_all();
}

bool Simulator::runnable(SimTime target, bool unbounded) const {
  if (!sc_core::sc_pending_activity()) return false;
  if (unbounded) return true;
  SimTime now = simNow();
  if (now > target) return false;
  return static_cast<SimTime>(sc_core::sc_time_to_pending_activity().value()) <= target - now;
}

void Simulator::runSimulation(SimTime target, bool unbounded) {
  if (unbounded) {
    sc_core::sc_start();  // until a host thread's completion pauses it, or nothing is left
    return;
  }
  SimTime now = simNow();
  if (target > now) {
    sc_core::sc_start(sc_core::sc_time(static_cast<double>(target - now), sc_core::SC_NS));
  } else {
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
  }
}

void Simulator::threadMain() {
  tlsOnSimulationThread = true;
  try {
    sc_core::sc_report_handler::set_actions(sc_core::SC_ID_NO_SC_START_ACTIVITY_,
                                            sc_core::SC_DO_NOTHING);
    sc_core::sc_set_time_resolution(1, sc_core::SC_NS);
    // Deliberately never deleted: SystemC tears its kernel down on its own at exit.
    system_ = new System("mimic", config_, memories_);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(mutex_);
    startupError_ = e.what();
    hostWake_.notify_all();
    return;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  started_ = true;
  hostWake_.notify_all();
  for (;;) {
    if (step(lock)) continue;
    if (shutdown_) return;
    sleepUntilSignalled(lock);
  }
}

bool Simulator::step(std::unique_lock<std::mutex>& lock) {
  settleWaiters();
  if (shutdown_) return false;
  if (!inbox_.empty()) {
    batch_.swap(inbox_);
    lock.unlock();
    for (auto& command : batch_) {
      int device = command->device;
      int queue = command->hwQueue;
      system_->device(device).commandProcessor(queue).push(std::move(command));
    }
    batch_.clear();
    lock.lock();
    return true;
  }
  const bool unbounded = !waiters_.empty();
  const SimTime target = hostTime_;
  if (runnable(target, unbounded)) {
    lock.unlock();
    runSimulation(target, unbounded);
    lock.lock();
    return true;
  }
  const bool busy = sc_core::sc_pending_activity();
  if (unbounded && !busy) {
    // Nothing is left to simulate, yet some host thread waits: it would wait forever.
    for (Waiter* w : waiters_) {
      w->stalled = true;
      w->satisfied.store(true, std::memory_order_release);
    }
    waiters_.clear();
  }
  reached_ = std::max(reached_.load(), target);
  idle_ = !busy;
  hostWake_.notify_all();
  return false;
}

}  // namespace mimic::sim
