// The host's hand-off to the simulation: a host thread that blocks while the simulation thread
// sleeps runs the simulation itself (sim/simulator.h), so a loop of synchronous reads never wakes
// that thread. These checks count wake-ups and compare simulated times, never wall time.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "sim/simulator.h"

namespace mimic::sim {
namespace {

std::shared_ptr<Completion> submit(Simulator& sim, std::unique_ptr<Command> cmd) {
  auto completion = cmd->completion;
  sim.submit(std::move(cmd));
  return completion;
}

std::shared_ptr<Completion> readOneByte(Simulator& sim, int hwQueue = 0) {
  auto cmd = std::make_unique<Command>();
  cmd->kind = CommandKind::Transfer;
  cmd->transfer = TransferKind::DeviceToHost;
  cmd->bytes = 1;
  cmd->hostPinned = false;
  cmd->srcDevice = 0;
  cmd->hwQueue = hwQueue;
  return submit(sim, std::move(cmd));
}

TEST(SimulatorHandoffTest, SynchronousReadsFromOneThreadNeverWakeTheSimulationThread) {
  Simulator sim(SystemConfig::load("tiny", ""));
  const uint64_t before = sim.threadWakeups();
  SimTime previousEnd = 0;
  for (int i = 0; i < 500; ++i) {
    auto read = readOneByte(sim);
    ASSERT_TRUE(sim.wait({read}));
    ASSERT_TRUE(read->done.load());
    EXPECT_GT(read->end, previousEnd) << "read " << i;
    previousEnd = read->end;
    if (i % 50 == 0) sim.poll();
  }
  EXPECT_EQ(sim.threadWakeups(), before);
}

TEST(SimulatorHandoffTest, HostFunctionsRunAsTheSimulationWhenTheHostRunsIt) {
  Simulator sim(SystemConfig::load("tiny", ""));
  static bool ranOnSimulation = false;
  auto cmd = std::make_unique<Command>();
  cmd->kind = CommandKind::HostFunc;
  cmd->hostFn = [](void*) { ranOnSimulation = Simulator::onSimulationThread(); };
  auto done = submit(sim, std::move(cmd));
  ASSERT_TRUE(sim.wait({done}));
  EXPECT_TRUE(ranOnSimulation);
  EXPECT_FALSE(Simulator::onSimulationThread());
}

// While one host thread runs the model, another's wait goes to the simulation thread, which
// must be woken when the first lets go: every read completes (a lost wake-up hangs here).
TEST(SimulatorHandoffTest, WaitsFromTwoThreadsAllComplete) {
  Simulator sim(SystemConfig::load("tiny", ""));
  constexpr int kReads = 300;
  std::vector<std::thread> threads;
  std::vector<int> completed(2, 0);
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kReads; ++i) {
        auto read = readOneByte(sim, t);
        if (!sim.wait({read}) || !read->done.load() || read->end <= read->start) return;
        ++completed[t];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(completed[0], kReads);
  EXPECT_EQ(completed[1], kReads);
}

}  // namespace
}  // namespace mimic::sim
