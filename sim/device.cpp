#include "sim/device.h"

#include "sim/topology.h"

namespace mimic::sim {
namespace {

void waitNs(SimTime ns) {
  if (ns > 0) sc_core::wait(sc_core::sc_time(static_cast<double>(ns), sc_core::SC_NS));
}

}  // namespace

Device::Device(sc_core::sc_module_name name, int index, const SystemConfig& config,
               DeviceMemory& memory, FlowNetwork& network, const Topology& topology,
               const SharedResources& shared, sc_core::sc_event& anyCompleted)
    : sc_module(name),
      index_(index),
      config_(config),
      network_(network),
      topology_(topology),
      shared_(shared),
      memory_(memory),
      computeEngine_("compute", config.compute, config.costs, config.cache,
                     {shared.hbm[index], shared.cache[index], config.hbm.latencyNs, memory.base()},
                     network),
      copyEngines_(config.dma.copyEngines),
      linkEngines_(config.dma.linkEngines) {
  const std::string id = std::to_string(index);
  const double hostLink = config.hostLink.bandwidthGBps * config.hostLink.efficiency;
  hostToDevice_ = network.addResource("host link ->" + id, hostLink);
  deviceToHost_ = network.addResource("host link <-" + id, hostLink);
  for (int q = 0; q < config.commandProcessor.hwQueues; ++q) {
    commandProcessors_.push_back(std::make_unique<CommandProcessor>(
        ("cp" + std::to_string(q)).c_str(), *this, config.commandProcessor, anyCompleted));
  }
}

void Device::executeTransfer(const Command& command) {
  const uint64_t bytes = command.bytes;
  switch (command.transfer) {
    case TransferKind::HostToDevice:
      hostTransfer(command, true);
      break;
    case TransferKind::DeviceToHost:
      hostTransfer(command, false);
      break;
    case TransferKind::DeviceToDevice: {
      EngineLease engine(copyEngines_);
      waitNs(config_.hbm.latencyNs);
      network_.transfer({{hbmResource(), 2.0}}, bytes);
      break;
    }
    case TransferKind::Fill:
      waitNs(config_.hbm.latencyNs);
      network_.transfer({{hbmResource(), 1.0}}, bytes);
      break;
    case TransferKind::HostToHost:
      network_.transfer({{shared_.hostStaging, 2.0}}, bytes);
      break;
    case TransferKind::Peer: {
      EngineLease engine(linkEngines_);
      Route route = topology_.route(command.srcDevice, command.dstDevice);
      waitNs(config_.hbm.latencyNs + route.latencyNs);
      // The slow-down in effect when the bytes start to move (fault injection).
      std::vector<PathUse> path = topology_.linkPath(route, sc_core::sc_time_stamp().value());
      path.insert(path.begin(), {shared_.hbm[command.srcDevice], 1.0});
      path.push_back({shared_.hbm[command.dstDevice], 1.0});
      network_.transfer(path, bytes);
      break;
    }
  }
}

void Device::hostTransfer(const Command& command, bool toDevice) {
  EngineLease engine(copyEngines_);
  const HostLinkConfig& link = config_.hostLink;
  std::vector<PathUse> path{{toDevice ? hostToDevice_ : deviceToHost_, 1.0}, {hbmResource(), 1.0}};
  SimTime latency = link.latencyNs;
  if (command.hostPinned) {
    ++hostLinkStats_.pinnedTransfers;
  } else {
    // Pageable memory goes through pinned staging buffers in chunks: the staging copy is one
    // more stage of the pipeline, and filling it costs one chunk's copy up front.
    ++hostLinkStats_.pageableTransfers;
    path.push_back({shared_.hostStaging, 1.0});
    uint64_t firstChunk = std::min(command.bytes, link.stagingChunkBytes);
    latency += static_cast<SimTime>(static_cast<double>(firstChunk) / link.stagingBandwidthGBps);
  }
  (toDevice ? hostLinkStats_.bytesToDevice : hostLinkStats_.bytesToHost) += command.bytes;
  waitNs(latency);
  network_.transfer(path, command.bytes);
}

void Device::raiseFault(int code) {
  if (faultCode_.load() != 0) return;
  faultTime_.store(static_cast<SimTime>(sc_core::sc_time_stamp().value()));
  faultCode_.store(code, std::memory_order_release);
}

void Device::clearFault() {
  faultCode_.store(0);
  faultTime_.store(0);
}

void Device::scheduleFault(int code, SimTime at) {
  scheduledFaultTime_.store(at);
  scheduledFaultCode_.store(code, std::memory_order_release);
}

void Device::raiseScheduledFault(SimTime now) {
  const int code = scheduledFaultCode_.load(std::memory_order_acquire);
  if (code == 0 || now < scheduledFaultTime_.load()) return;
  scheduledFaultCode_.store(0);
  raiseFault(code);
}

}  // namespace mimic::sim
