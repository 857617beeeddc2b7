// Every unit's Stats count what the unit did: the profiler reads them, so they must be right.
#include <gtest/gtest.h>

#include "sim/compute_unit.h"
#include "sim/device.h"
#include "sim/simulator.h"
#include "sim/system.h"

namespace mimic::sim {
namespace {

std::shared_ptr<Completion> submitTransfer(Simulator& sim, TransferKind kind, uint64_t bytes,
                                           bool pinned) {
  auto cmd = std::make_unique<Command>();
  cmd->kind = CommandKind::Transfer;
  cmd->transfer = kind;
  cmd->bytes = bytes;
  cmd->hostPinned = pinned;
  cmd->srcDevice = kind == TransferKind::DeviceToHost ? 0 : -1;
  cmd->dstDevice = kind == TransferKind::HostToDevice ? 0 : -1;
  auto completion = cmd->completion;
  sim.submit(std::move(cmd));
  return completion;
}

TEST(UnitStatsTest, TransfersAreCountedByEveryUnitOnTheirPath) {
  const SystemConfig config = SystemConfig::load("tiny", "");
  Simulator sim(config);
  const uint64_t bytes = 1 << 20;
  auto pinned = submitTransfer(sim, TransferKind::HostToDevice, bytes, true);
  ASSERT_TRUE(sim.wait({pinned}));
  auto pageable = submitTransfer(sim, TransferKind::DeviceToHost, 2 * bytes, false);
  ASSERT_TRUE(sim.wait({pageable}));

  Device& device = sim.device(0);
  EXPECT_EQ(device.hostLinkStats().bytesToDevice, bytes);
  EXPECT_EQ(device.hostLinkStats().bytesToHost, 2 * bytes);
  EXPECT_EQ(device.hostLinkStats().pinnedTransfers, 1u);
  EXPECT_EQ(device.hostLinkStats().pageableTransfers, 1u);
  EXPECT_EQ(device.copyEngineStats().transfers, 2u);
  // Each copy holds its engine from the end of the command latency to its end.
  const SimTime held = (pinned->end - pinned->start) + (pageable->end - pageable->start) -
                       2 * config.commandProcessor.commandLatencyNs;
  EXPECT_EQ(device.copyEngineStats().busyNs, held);
  EXPECT_EQ(device.commandProcessor(0).stats().commands, 2u);

  const FlowNetwork& network = sim.system().network();
  const ResourceStats& toDevice = network.stats(device.hostToDeviceResource());
  EXPECT_EQ(toDevice.bytes, double(bytes));
  EXPECT_NEAR(double(toDevice.busyNs), double(bytes) / config.hostLink.bandwidthGBps, 1.0);
  EXPECT_EQ(network.stats(device.deviceToHostResource()).bytes, double(2 * bytes));
  EXPECT_EQ(network.stats(device.hbmResource()).bytes, double(3 * bytes));
  EXPECT_EQ(device.linkEngineStats().transfers, 0u);
}

TEST(UnitStatsTest, ComputeUnitsCountWorkgroupsTheirTimeAndDmas) {
  const SystemConfig config = SystemConfig::load("tiny", "");
  Simulator sim(config);
  // Two workgroups: 1500 cycles of issue at 1.5 GHz (1 us), then one 4 KiB DMA each.
  const exec::WorkgroupTrace trace{{exec::TraceOp::Kind::Issue, isa::Pipe::Scalar, 0, 1500},
                                   {exec::TraceOp::Kind::DmaLoad, isa::Pipe::Dma, 1, 4096},
                                   {exec::TraceOp::Kind::Barrier, isa::Pipe::Scalar, 0, 0}};
  auto cmd = std::make_unique<Command>();
  cmd->kind = CommandKind::Kernel;
  cmd->launch = std::make_shared<KernelLaunch>();
  // Both read the same 4 KiB at address 0 (no cache on tiny: the address is not looked up).
  exec::DmaRegion region;
  region.descriptor.count[0] = 1024;
  region.descriptor.hbmStride[0] = 4;
  const std::vector<exec::DmaRegion> regions(1, region);
  for (int w = 0; w < 2; ++w) cmd->launch->workgroups.add(trace, regions);
  auto launch = cmd->launch;
  auto completion = cmd->completion;
  sim.submit(std::move(cmd));
  ASSERT_TRUE(sim.wait({completion}));

  const ComputeEngine& engine = sim.device(0).computeEngine();
  uint64_t workgroups = 0, dmas = 0, unitsWithOne = 0;
  for (int u = 0; u < engine.numUnits(); ++u) {
    const ComputeUnitStats& s = engine.unit(u).stats();
    workgroups += s.workgroups;
    dmas += s.dmas;
    if (s.workgroups == 1) {
      ++unitsWithOne;
      EXPECT_EQ(s.busyNs, launch->end - launch->start);
    }
  }
  EXPECT_EQ(workgroups, 2u);
  EXPECT_EQ(unitsWithOne, 2u);  // both ran at once, on two units
  EXPECT_EQ(dmas, 2u);
  EXPECT_GT(launch->end - launch->start, 1000u + config.hbm.latencyNs);
}

}  // namespace
}  // namespace mimic::sim
