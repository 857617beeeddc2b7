// In-switch AllReduce (NVLS on NVSwitch systems): each rank asks the switch for its slice
// reduced over every rank (multimem.ld_reduce: the switch reads that slice from every device
// and sums it), then multicasts the result back (multimem.st: one store, every device
// receives it). Per device, the uplink carries the whole buffer plus its own slice and the
// downlink its slice plus the whole buffer; the two directions pipeline, so it takes about
// bytes (1 + 1/n) at the link rate, against 2 (n-1)/n for a ring. The switch's reduction
// reaches coll.switch_reduce_efficiency of the link rate.
#include "sim/collective/algorithm.h"

namespace mimic::sim::coll {
namespace {

class SwitchReduce final : public Algorithm {
 public:
  const char* name() const override { return "nvls"; }

  std::string unsupported(const CollectiveRequest& request, const CollectiveTopology& topology,
                          const CollectiveConfig& config) const override {
    if (request.kind != CollectiveKind::AllReduce) return "only AllReduce reduces in the switch";
    if (topology.intraNode != "switch" || config.switchReduceEfficiency <= 0) {
      return "the preset's switch cannot reduce (coll.switch_reduce_efficiency = 0)";
    }
    return directUnsupported(request, topology, CollectiveConfig{});
  }

  bool allows(const Protocol& protocol) const override {
    return std::string(protocol.name) == "simple";
  }

  std::vector<Step> build(const BuildContext& x) const override {
    const uint64_t bytes = x.request.bytes;
    const uint64_t perDevice = bytes + divideUp(bytes, uint64_t(x.request.ranks()));
    const uint64_t perChannel = divideUp(perDevice, uint64_t(x.channels));
    const double wire = 1 / x.config.switchReduceEfficiency;
    Step step;
    step.extraNs = x.config.switchReduceNs;
    for (int device : x.request.devices) {
      for (int c = 0; c < x.channels; ++c) {
        step.transfers.push_back({device, kSwitch, perChannel, c, false, wire});
        step.transfers.push_back({kSwitch, device, perChannel, c, false, wire});
      }
    }
    return {step};
  }
};

}  // namespace

const Algorithm& switchReduceAlgorithm() {
  static const SwitchReduce kSwitchReduce;
  return kSwitchReduce;
}

}  // namespace mimic::sim::coll
