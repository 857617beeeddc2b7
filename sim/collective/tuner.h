// Picks how a collective runs, as NCCL's tuner does: every algorithm that can run it, with
// every protocol that algorithm allows, is costed by the model's own estimate (paths.h), and
// the fastest wins (earlier algorithms and protocols win ties). The caller may force an
// algorithm or a protocol (MIMIC_COLL_ALGO / MIMIC_COLL_PROTO) for what-if studies.
#pragma once

#include <stdexcept>
#include <string>

#include "sim/collective/collective.h"
#include "sim/collective/paths.h"

namespace mimic::sim::coll {

// A forced name that does not exist, or cannot run the collective; the message says which
// and why.
class CollectiveChoiceError : public std::invalid_argument {
 public:
  CollectiveChoiceError(bool unknownName, const std::string& message)
      : std::invalid_argument(message), unknownName_(unknownName) {}
  // true: no algorithm or protocol has that name; false: it exists but cannot run this.
  bool unknownName() const { return unknownName_; }

 private:
  bool unknownName_;
};

struct Choice {
  Plan plan;
  SimTime estimateNs = 0;
};

// algorithm / protocol: "" lets the tuner choose. Throws CollectiveChoiceError.
Choice choosePlan(const CollectiveRequest& request, const CollectiveTopology& topology,
                  const CollectiveConfig& config, const CollectivePaths& paths,
                  const std::string& algorithm, const std::string& protocol, SimTime now);

}  // namespace mimic::sim::coll
