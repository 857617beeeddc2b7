// Bandwidth sharing between concurrent transfers, as a fluid model.
//
// Every shared path of data (an HBM, one direction of a host link or a device link, the host's
// staging copy) is a resource with a bandwidth. A transfer is a flow of bytes over a list of
// resources, each used with a weight (a device-local copy reads and writes HBM: weight 2).
// Rates follow weighted max-min fairness (progressive filling: every flow's rate rises together
// until a resource fills; the flows through it keep that rate; the rest go on), computed as
// water-filling with a heap of the level at which each resource would fill. Flows over the same
// path get the same rate, so the water-filling runs over classes of flows with equal paths (a
// CU's DMAs that hit, those that miss, ...), not over the flows themselves. Rates
// are recomputed only when flows start or end, once per simulated instant however many do (the
// CUs of a device often start DMAs together), and only over the resources that carry flows, so
// idle time and idle parts of the system cost nothing and no component polls per cycle.
#pragma once

#include <systemc>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/sim_time.h"

namespace mimic::sim {

struct PathUse {
  int resource;
  double weight;
};

struct ResourceStats {
  std::string name;
  double bandwidthGBps = 0;
  double bytes = 0;    // bytes that crossed it, weighted
  SimTime busyNs = 0;  // time with at least one flow on it
};

class FlowNetwork : public sc_core::sc_module {
 public:
  explicit FlowNetwork(sc_core::sc_module_name name);

  int addResource(const std::string& name, double bandwidthGBps);

  // Moves `bytes` over `path` and returns once they have all arrived. Call from an SC_THREAD.
  void transfer(const std::vector<PathUse>& path, uint64_t bytes);
  // Starts moving `bytes` over `path` and returns at once; `onArrived` runs in simulation
  // context when the last byte has arrived. Call from any SystemC process.
  void start(const std::vector<PathUse>& path, uint64_t bytes, std::function<void()> onArrived);

  const ResourceStats& stats(int resource) const { return resources_[resource]; }

 private:
  // Orders paths as std::vector<std::pair<int, double>> would, so that classes are visited in
  // the same order (assignRates sums in that order).
  static bool pathLess(const std::vector<PathUse>& a, const std::vector<PathUse>& b);
  struct Class {
    std::vector<PathUse> path;
    int members = 0;
    double rate = 0;  // of each member
  };
  struct Flow {
    int cls = 0;
    double remaining = 0;
    std::function<void()> onArrived;
  };
  // assignRates' heap entry: the level at which a resource fills, as of its version.
  struct FillLevel {
    double level;
    int resource;
    uint64_t version;
    bool operator<(const FillLevel& o) const {  // a max-heap of the lowest level, then index
      return level != o.level ? level > o.level : resource > o.resource;
    }
  };
  struct Resource : ResourceStats {
    int users = 0;
    SimTime busySince = 0;
    // assignRates' scratch: what the flows already fixed use of it, the weight of the others
    // on it, and those flows
    double fixedUse = 0;
    double demand = 0;
    uint64_t version = 0;
    bool touched = false;
    std::vector<int> classes;
  };

  void advanceTo(SimTime now);
  // Removes the flows that have arrived and moves their callbacks into arrived_, to run
  // afterwards.
  void finishArrived();
  void assignRates();
  void scheduleNextFinish();
  void onFinish();
  void onStarted();
  // Resource `r` gained its first flow or lost its last.
  void activate(int r);
  void deactivate(int r);

  // The class of `path`, made if new; the flow joining it counts itself.
  int classOf(const std::vector<PathUse>& path);
  // The first live class whose path is not before `path`.
  std::vector<int>::iterator liveClassAtOrAfter(const std::vector<PathUse>& path);
  void leave(int cls);
  double rateOf(const Flow& f) const { return classes_[f.cls].rate; }

  std::vector<Resource> resources_;
  std::vector<Flow> flows_;  // in order of start: their callbacks run in that order
  std::vector<Class> classes_;
  std::vector<int> freeClasses_;
  // The classes with members, in path order (pathLess): found by binary search, and visited in
  // that order by assignRates.
  std::vector<int> liveClasses_;
  SimTime lastUpdate_ = 0;
  std::vector<int> active_;  // resources with flows, in no particular order
  // Scratch kept between calls so that the hot paths do not allocate: assignRates' heap and
  // fixed classes, the resources a round of it changed; the callbacks of arrived flows and
  // the classes they leave.
  std::vector<FillLevel> heap_;
  std::vector<bool> fixed_;
  std::vector<int> touched_;
  std::vector<std::function<void()>> arrived_;
  std::vector<int> leaving_;
  sc_core::sc_event nextFinish_;
  sc_core::sc_event started_;  // flows started this instant: rates are due
};

}  // namespace mimic::sim
