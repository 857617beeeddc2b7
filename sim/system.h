// The SystemC top level: every device, the flow network that carries their traffic, and the
// device-link topology. Built and run only on the simulation thread (see simulator.h).
#pragma once

#include <systemc>

#include <memory>
#include <vector>

#include "sim/device.h"
#include "sim/flow_network.h"
#include "sim/system_config.h"
#include "sim/topology.h"

namespace mimic::sim {

class System : public sc_core::sc_module {
 public:
  // `memories` holds one DeviceMemory per device; it must outlive the system.
  System(sc_core::sc_module_name name, const SystemConfig& config,
         const std::vector<std::unique_ptr<DeviceMemory>>& memories);

  Device& device(int index) { return *devices_[index]; }
  int numDevices() const { return static_cast<int>(devices_.size()); }
  const FlowNetwork& network() const { return network_; }
  const SystemConfig& config() const { return config_; }
  // Any thread (see Topology::slowDown).
  void slowLinks(const LinkSlowdown& slowdown, SimTime since) {
    topology_.slowDown(slowdown, since);
  }

 private:
  SystemConfig config_;
  FlowNetwork network_;
  Topology topology_;
  SharedResources shared_;
  sc_core::sc_event anyCompleted_;
  std::vector<std::unique_ptr<Device>> devices_;
};

}  // namespace mimic::sim
