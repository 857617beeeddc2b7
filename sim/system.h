// The SystemC top level: every device, the flow network that carries their traffic, and the
// device-link topology. Built and run only on the simulation thread (see simulator.h).
#pragma once

#include <systemc>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sim/collective/runner.h"
#include "sim/collective/tuner.h"
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
  // How the collective would run and its estimate, with links as slowed at `now`. Any thread;
  // throws coll::CollectiveChoiceError for a forced algorithm or protocol that cannot run it.
  coll::Choice planCollective(const coll::CollectiveRequest& request, const std::string& algorithm,
                              const std::string& protocol, SimTime now) const;
  const coll::CollectiveStats& collectiveStats() const { return runner_->stats(); }

 private:
  SystemConfig config_;
  FlowNetwork network_;
  Topology topology_;
  SharedResources shared_;
  coll::CollectiveTopology collectiveTopology_;
  std::unique_ptr<coll::CollectivePaths> paths_;
  std::unique_ptr<coll::CollectiveRunner> runner_;
  // Choices already made: the tuner costs every algorithm and protocol, and a program repeats
  // the same collectives. Keyed by everything the choice depends on.
  mutable std::mutex choicesMutex_;
  mutable std::map<std::string, coll::Choice> choices_;
  sc_core::sc_event anyCompleted_;
  std::vector<std::unique_ptr<Device>> devices_;
};

}  // namespace mimic::sim
