// One simulated device: its command processors, DMA engines, memory and fault state.
#pragma once

#include <systemc>

#include <atomic>
#include <memory>
#include <vector>

#include "sim/command.h"
#include "sim/command_processor.h"
#include "sim/compute_engine.h"
#include "sim/device_memory.h"
#include "sim/engine_pool.h"
#include "sim/flow_network.h"
#include "sim/host_link.h"
#include "sim/system_config.h"

namespace mimic::sim {

class Topology;
namespace coll {
class CollectiveRunner;
}

// Flow-network resources shared by all devices of a system.
struct SharedResources {
  std::vector<int> hbm;    // per device
  std::vector<int> cache;  // per device; -1 without a cache
  int hostStaging;         // the host CPU's staging copies for pageable memory
  coll::CollectiveRunner* collectives = nullptr;
};

class Device : public sc_core::sc_module {
 public:
  Device(sc_core::sc_module_name name, int index, const SystemConfig& config, DeviceMemory& memory,
         FlowNetwork& network, const Topology& topology, const SharedResources& shared,
         sc_core::sc_event& anyCompleted);

  int index() const { return index_; }
  CommandProcessor& commandProcessor(int hwQueue) { return *commandProcessors_[hwQueue]; }
  int numHwQueues() const { return static_cast<int>(commandProcessors_.size()); }
  DeviceMemory& memory() { return memory_; }
  ComputeEngine& computeEngine() { return computeEngine_; }
  coll::CollectiveRunner& collectives() { return *shared_.collectives; }

  // Moves a transfer's bytes in simulated time. Call from the command processor's thread.
  void executeTransfer(const Command& command);

  // The sticky fault: once raised, every later command on this device is aborted.
  int faultCode() const { return faultCode_.load(std::memory_order_acquire); }
  SimTime faultTime() const { return faultTime_.load(std::memory_order_acquire); }
  void raiseFault(int code);
  void clearFault();
  // A fault due at a simulated time: raised by the first command the device starts at or
  // after it (fault injection). Code 0 cancels.
  void scheduleFault(int code, SimTime at);
  void raiseScheduledFault(SimTime now);

  const HostLinkStats& hostLinkStats() const { return hostLinkStats_; }
  const EnginePoolStats& copyEngineStats() const { return copyEngines_.stats(); }
  const EnginePoolStats& linkEngineStats() const { return linkEngines_.stats(); }
  int hbmResource() const { return shared_.hbm[index_]; }
  int hostToDeviceResource() const { return hostToDevice_; }
  int deviceToHostResource() const { return deviceToHost_; }

 private:
  void hostTransfer(const Command& command, bool toDevice);

  int index_;
  const SystemConfig& config_;
  FlowNetwork& network_;
  const Topology& topology_;
  const SharedResources& shared_;
  DeviceMemory& memory_;
  std::vector<std::unique_ptr<CommandProcessor>> commandProcessors_;
  ComputeEngine computeEngine_;
  EnginePool copyEngines_;
  EnginePool linkEngines_;
  int hostToDevice_;
  int deviceToHost_;
  HostLinkStats hostLinkStats_;
  std::atomic<int> faultCode_{0};
  std::atomic<SimTime> faultTime_{0};
  std::atomic<int> scheduledFaultCode_{0};
  std::atomic<SimTime> scheduledFaultTime_{0};
};

}  // namespace mimic::sim
