// The simulation thread and the host's hand-off to it.
//
// All devices live in one SystemC simulation that runs on one dedicated thread. Host threads
// never touch SystemC: they submit commands to a locked inbox, and they block on completions.
// The simulation advances no further than the host clock (host_clock.h) while no host thread
// is blocked, so commands arrive at deterministic simulated times; when a host thread blocks,
// the simulation runs until what it waits for completes, pauses there, and the host clock
// jumps to that moment.
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

  static bool onSimulationThread();

 private:
  struct Waiter {
    const std::vector<std::shared_ptr<Completion>>* completions;
    std::atomic<bool> satisfied{false};
    bool stalled = false;
  };

  void threadMain();
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
  std::vector<Waiter*> waiters_;
  SimTime hostTime_ = 0;
  std::atomic<SimTime> reached_{0};  // the simulation has processed every event up to here
  std::atomic<bool> idle_{true};     // nothing in flight: every submitted command has completed
  std::atomic<uint64_t> hostSignals_{0};
  bool simulationSleeping_ = false;
  bool started_ = false;
  bool shutdown_ = false;
  std::string startupError_;
};

}  // namespace mimic::sim
