#include "sim/collective/collective_config.h"

#include <algorithm>

#include "sim/collective/algorithm.h"
#include "sim/collective/protocol.h"
#include "sim/params.h"

namespace mimic::sim::coll {
namespace {

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> items;
  std::string item;
  for (char ch : list + ",") {
    if (ch == ',') {
      if (!item.empty()) items.push_back(item);
      item.clear();
    } else if (ch != ' ') {
      item += ch;
    }
  }
  return items;
}

}  // namespace

uint64_t CollectiveConfig::stepNsOf(const Protocol& protocol) const {
  return stepNs.at(protocol.name);
}

double CollectiveConfig::channelWeight(const Protocol& protocol) const {
  return channelGBps.at("simple") / channelGBps.at(protocol.name);
}

bool CollectiveConfig::offers(const std::string& algorithm) const {
  return std::find(algorithms.begin(), algorithms.end(), algorithm) != algorithms.end();
}

int CollectiveConfig::channelsFor(uint64_t bytes) const {
  const uint64_t wanted = channelMinBytes == 0 ? maxChannels : bytes / channelMinBytes;
  return int(std::clamp<uint64_t>(wanted, 1, uint64_t(maxChannels)));
}

CollectiveConfig CollectiveConfig::read(ParamReader& params) {
  CollectiveConfig c;
  c.hostLaunchNs = params.size("coll.host_launch_ns", 0,
                               "host time to launch one rank's part of a collective (NCCL: the "
                               "kernel launch and the stream-ordering events around it), ns; 0: "
                               "host.submit_ns");
  const std::string known = algorithmNames();
  for (std::string name : split(params.text("coll.algorithms", known,
                                            "the algorithms the vendor's collective library "
                                            "has, comma-separated (of: " +
                                                known + ")"))) {
    if (!findAlgorithm(name)) {
      throw ConfigError(ConfigError::Kind::InvalidValue,
                        "coll.algorithms: unknown algorithm '" + name + "' (known: " + known + ")");
    }
    c.algorithms.push_back(name);
  }
  c.launchNs = params.size("coll.launch_ns", 5000,
                           "launching a collective's kernel and setting up its channels, once "
                           "per collective, ns");
  // Defaults: NCCL's own model of NVLink rings (src/graph/tuning.cc, hwLat).
  const std::map<std::string, uint64_t> defaults = {{"simple", 3400}, {"ll128", 1900}, {"ll", 500}};
  for (const Protocol& p : protocols()) {
    const std::string prefix = std::string("coll.") + p.name;
    c.stepNs[p.name] = params.size(prefix + ".step_ns", defaults.at(p.name),
                                   std::string("one step of the ") + p.name +
                                       " protocol: the flag handshake and memory fence between "
                                       "two ranks, beyond the route's latency, ns");
    c.channelGBps[p.name] =
        params.number(prefix + ".channel_gbps", 0,
                      std::string("what one channel (one thread block) copies with the ") + p.name +
                          " protocol, GB/s (0: no limit; set all three or none)");
  }
  for (const Protocol& p : protocols()) {
    if ((c.channelGBps[p.name] > 0) != (c.channelGBps["simple"] > 0)) {
      throw ConfigError(ConfigError::Kind::InvalidValue,
                        std::string("coll.") + p.name +
                            ".channel_gbps: set every protocol's channel rate, or none");
    }
  }
  c.maxChannels = int(params.size("coll.max_channels", 16,
                                  "channels (rings, each one thread block) a collective runs on "
                                  "at most"));
  c.channelMinBytes = params.size("coll.channel_min_bytes", 32768,
                                  "a message gets one more channel per this many bytes, up to "
                                  "coll.max_channels");
  c.chunkBytes = params.size("coll.chunk_bytes", 524288,
                             "pipelining unit of tree and chain algorithms, bytes");
  c.switchReduceEfficiency = params.number(
      "coll.switch_reduce_efficiency", 0,
      "the share of the link rate in-switch reduction (NVLS) reaches; 0: the switch cannot "
      "reduce");
  c.switchReduceNs = params.size("coll.switch_reduce_ns", 0,
                                 "an in-switch reduction's own latency (its multicast barriers "
                                 "across every device), ns");
  c.directMaxBytes = params.size("coll.direct_max_bytes", 0,
                                 "the largest message the library sends with its direct and "
                                 "two-shot kernels, bytes (0: any)");
  requirePositive("coll.max_channels", c.maxChannels);
  requirePositive("coll.chunk_bytes", double(c.chunkBytes));
  if (c.switchReduceEfficiency < 0 || c.switchReduceEfficiency > 1) {
    throw ConfigError(ConfigError::Kind::InvalidValue,
                      "coll.switch_reduce_efficiency must be within 0..1");
  }
  return c;
}

}  // namespace mimic::sim::coll
