// The parameters of collective execution (coll.*): what the persistent collective kernel of
// NCCL or RCCL costs beyond the links it drives.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mimic::sim {
class ParamReader;
}

namespace mimic::sim::coll {

struct Protocol;

struct CollectiveConfig {
  uint64_t hostLaunchNs = 0;  // host time to launch one rank's part (0: host.submit_ns)
  uint64_t launchNs = 0;      // launching the collective kernel and setting up its channels
  std::map<std::string, uint64_t> stepNs;     // per protocol: one step's synchronisation
  std::map<std::string, double> channelGBps;  // per protocol: what one channel can copy
  std::vector<std::string> algorithms;        // the ones the vendor library has
  int maxChannels = 1;
  uint64_t channelMinBytes = 0;       // a message gets one channel per this many bytes
  uint64_t chunkBytes = 0;            // pipelining unit of trees and chains
  double switchReduceEfficiency = 0;  // in-switch reduction's share of the link rate; 0: none
  uint64_t switchReduceNs = 0;        // an in-switch reduction's barriers
  uint64_t directMaxBytes = 0;        // direct and two-shot only up to this size; 0: any

  uint64_t stepNsOf(const Protocol& protocol) const;
  // Whether channels have a copy rate of their own (coll.simple.channel_gbps > 0); a
  // protocol's flows then weigh simple's rate / its rate on them.
  bool channelsLimited() const { return channelGBps.at("simple") > 0; }
  double channelWeight(const Protocol& protocol) const;
  bool offers(const std::string& algorithm) const;
  // Channels a message of `bytes` runs on.
  int channelsFor(uint64_t bytes) const;

  static CollectiveConfig read(ParamReader& params);
};

}  // namespace mimic::sim::coll
