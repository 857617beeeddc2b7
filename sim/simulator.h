// The simulation thread and the host's hand-off to it.
//
// All devices live in one SystemC simulation that runs on one dedicated thread. Host threads
// never touch SystemC: they submit commands to a locked inbox, and they block on completions.
// The simulation advances no further than the host clock (host_clock.h) while no host thread
// is blocked, so commands arrive at deterministic simulated times; when a host thread blocks,
// the simulation runs until what it waits for completes, pauses there, and the host clock
// jumps to that moment.
//
// A host thread that blocks while the simulation thread sleeps runs the simulation itself, the
// same steps in the same order, instead of waking that thread and sleeping until it answers:
// on a loaded host, each of those two wake-ups can cost more than the work (issue 18: a million
// one-byte reads). The simulation thread serves the waits that arrive while it is running.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "sim/collective/tuner.h"
#include "sim/command.h"
#include "sim/device_memory.h"
#include "sim/system_config.h"
#include "sim/topology.h"

namespace mimic::sim {

class System;
class Device;

class Simulator {
 public:
  // Reserves the devices' memory, then builds the system on a new simulation thread. Only one
  // system can ever be built in a process (a SystemC limitation); a failure to reserve memory
  // happens before that, so it can be retried. Throws std::runtime_error.
  explicit Simulator(const SystemConfig& config);
  // Stops the simulation thread (stop() is idempotent). The SystemC objects are left alone:
  // SystemC cannot restart, and tearing its kernel down mid-run is not supported.
  ~Simulator();
  void stop();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  const SystemConfig& config() const { return config_; }
  // Host threads may use a device's memory() and fault state; everything else belongs to the
  // simulation thread.
  Device& device(int index);
  const System& system() const { return *system_; }

  // Stamps the command with the host clock and hands it to the simulation thread.
  void submit(std::unique_ptr<Command> command);
  // Blocks until every completion is done and moves the host clock to the latest end. Returns
  // false if the simulation ran dry first, which means the commands can never complete.
  bool wait(const std::vector<std::shared_ptr<Completion>>& completions);
  // One status query: the host clock advances by the poll cost, and this returns once the
  // simulation has processed everything up to the new host time.
  void poll();
  SimTime hostTime();
  // Device-link transfers that start after the host's present time see `slowdown`.
  void slowLinks(const LinkSlowdown& slowdown);
  // How a collective issued now would run (System::planCollective). Any host thread.
  coll::Choice planCollective(const coll::CollectiveRequest& request, const std::string& algorithm,
                              const std::string& protocol);

  // True on the simulation thread, and on a host thread while it runs the simulation itself:
  // host functions run there and must not call the driver.
  static bool onSimulationThread();
  // How often a host thread has handed work to the simulation thread, which was spinning or
  // asleep (for tests: synchronous reads from one host thread never do).
  uint64_t threadWakeups() const { return threadWakeups_.load(std::memory_order_relaxed); }

 private:
  struct Waiter {
    const std::vector<std::shared_ptr<Completion>>* completions;
    std::atomic<bool> satisfied{false};
    bool stalled = false;
  };

  void threadMain();
  // One step of the simulation loop, by whichever thread owns the simulation; call with mutex_
  // held (it is released while the model runs). Returns false once nothing is left to do until
  // the host changes something.
  bool step(std::unique_lock<std::mutex>& lock);
  // Runs the simulation on the calling host thread until `done()` holds, if the simulation
  // thread sleeps; returns false (having done nothing) if that thread is busy. Call with mutex_
  // held.
  template <typename Done>
  bool runInline(std::unique_lock<std::mutex>& lock, Done done);
  // Tells the simulation thread the host changed something; call with mutex_ held. Returns
  // whether it sleeps and must be notified (after unlocking).
  bool signalSimulation();
  void sleepUntilSignalled(std::unique_lock<std::mutex>& lock);
  void settleWaiters();
  bool runnable(SimTime target, bool unbounded) const;
  void runSimulation(SimTime target, bool unbounded);

  SystemConfig config_;
  std::vector<std::unique_ptr<DeviceMemory>> memories_;
  System* system_ = nullptr;
  std::thread thread_;

  std::mutex mutex_;
  std::condition_variable simulationWake_;
  std::condition_variable hostWake_;
  std::vector<std::unique_ptr<Command>> inbox_;
  std::vector<std::unique_ptr<Command>> batch_;  // the inbox being pushed; the owner's only
  std::vector<Waiter*> waiters_;
  SimTime hostTime_ = 0;
  std::atomic<SimTime> reached_{0};  // the simulation has processed every event up to here
  std::atomic<bool> idle_{true};     // nothing in flight: every submitted command has completed
  std::atomic<uint64_t> hostSignals_{0};
  bool simulationSleeping_ = false;
  bool threadActive_ = true;   // the simulation thread owns the model (not in its sleep)
  bool inlineActive_ = false;  // a host thread owns the model (runInline)
  std::atomic<uint64_t> threadWakeups_{0};
  bool started_ = false;
  bool shutdown_ = false;
  std::string startupError_;
};

}  // namespace mimic::sim
