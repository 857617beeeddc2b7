#include "sim/collective/tuner.h"

#include "sim/collective/algorithm.h"

namespace mimic::sim::coll {
namespace {

// One rank: the kernel copies send to recv on its own device, when they differ.
Choice local(const CollectiveRequest& request, const CollectiveConfig& config,
             const CollectivePaths& paths, SimTime now) {
  Choice c;
  c.plan.algorithm = "local";
  c.plan.protocol = &protocols().front();
  const int device = request.devices[0];
  c.plan.steps.push_back({{{device, device, request.bytes, 0, false, 1}}});
  c.estimateNs = estimateNs(c.plan, paths, config, now);
  return c;
}

}  // namespace

Choice choosePlan(const CollectiveRequest& request, const CollectiveTopology& topology,
                  const CollectiveConfig& config, const CollectivePaths& paths,
                  const std::string& algorithm, const std::string& protocol, SimTime now) {
  const Algorithm* forcedAlgorithm = nullptr;
  if (!algorithm.empty() && !(forcedAlgorithm = findAlgorithm(algorithm))) {
    throw CollectiveChoiceError(
        true, "unknown collective algorithm '" + algorithm + "' (known: " + algorithmNames() + ")");
  }
  const Protocol* forcedProtocol = nullptr;
  if (!protocol.empty() && !(forcedProtocol = findProtocol(protocol))) {
    throw CollectiveChoiceError(
        true, "unknown collective protocol '" + protocol + "' (known: " + protocolNames() + ")");
  }
  if (request.ranks() == 1) return local(request, config, paths, now);
  if (forcedAlgorithm) {
    const std::string why = forcedAlgorithm->unsupported(request, topology, config);
    if (!why.empty()) {
      throw CollectiveChoiceError(false, std::string("algorithm '") + forcedAlgorithm->name() +
                                             "' cannot run this " + kindName(request.kind) + ": " +
                                             why);
    }
    if (forcedProtocol && !forcedAlgorithm->allows(*forcedProtocol)) {
      throw CollectiveChoiceError(false, std::string("algorithm '") + forcedAlgorithm->name() +
                                             "' does not run with protocol '" +
                                             forcedProtocol->name + "'");
    }
  }
  const int channels = config.channelsFor(request.bytes);
  Choice best;
  bool found = false;
  for (const Algorithm* a : algorithms()) {
    if (forcedAlgorithm ? a != forcedAlgorithm : !config.offers(a->name())) continue;
    if (!a->unsupported(request, topology, config).empty()) continue;
    for (const Protocol& p : protocols()) {
      if ((forcedProtocol && &p != forcedProtocol) || !a->allows(p)) continue;
      Choice c;
      c.plan.algorithm = a->name();
      c.plan.protocol = &p;
      c.plan.channels = channels;
      c.plan.steps = a->build({request, topology, config, p, channels});
      c.estimateNs = estimateNs(c.plan, paths, config, now);
      if (!found || c.estimateNs < best.estimateNs) {
        best = std::move(c);
        found = true;
      }
    }
  }
  if (!found) {
    throw CollectiveChoiceError(
        false, std::string("no algorithm runs this ") + kindName(request.kind) +
                   (forcedProtocol ? std::string(" with protocol '") + forcedProtocol->name + "'"
                                   : std::string()));
  }
  return best;
}

}  // namespace mimic::sim::coll
