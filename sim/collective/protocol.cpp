#include "sim/collective/protocol.h"

namespace mimic::sim::coll {

const std::vector<Protocol>& protocols() {
  static const std::vector<Protocol> kProtocols = {
      {"simple", 1.0},
      {"ll128", 120.0 / 128.0},
      {"ll", 0.5},
  };
  return kProtocols;
}

const Protocol* findProtocol(const std::string& name) {
  for (const Protocol& p : protocols()) {
    if (name == p.name) return &p;
  }
  return nullptr;
}

std::string protocolNames() {
  std::string names;
  for (const Protocol& p : protocols()) names += (names.empty() ? "" : ", ") + std::string(p.name);
  return names;
}

}  // namespace mimic::sim::coll
