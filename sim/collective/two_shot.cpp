// Two-shot AllReduce: a direct reduce-scatter (each rank sends every owner its slice) and a
// direct allgather, each one step. On a full mesh it drives every link at once, which is how
// RCCL reaches the aggregate bandwidth of MI300X's seven xGMI links.
#include "sim/collective/algorithm.h"

namespace mimic::sim::coll {

namespace {

class TwoShot final : public Algorithm {
 public:
  const char* name() const override { return "two_shot"; }

  std::string unsupported(const CollectiveRequest& request, const CollectiveTopology& topology,
                          const CollectiveConfig& config) const override {
    if (request.kind != CollectiveKind::AllReduce) return "only AllReduce has a two-shot form";
    return directUnsupported(request, topology, config);
  }

  std::vector<Step> build(const BuildContext& x) const override {
    const uint64_t slice = divideUp(x.request.bytes, uint64_t(x.request.ranks()));
    return {directStep(x, slice, true, -1, -1), directStep(x, slice, false, -1, -1)};
  }
};

}  // namespace

const Algorithm& twoShotAlgorithm() {
  static const TwoShot kTwoShot;
  return kTwoShot;
}

}  // namespace mimic::sim::coll
