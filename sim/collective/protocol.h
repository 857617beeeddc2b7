// The protocols a collective's data moves with, as NCCL and RCCL have them. A protocol trades
// bandwidth for latency: LL and LL128 carry flags with the data, so a receiver sees each line
// arrive without a separate synchronisation, and a step costs less; Simple moves bare data and
// synchronises each step with a flag of its own.
#pragma once

#include <string>
#include <vector>

namespace mimic::sim::coll {

struct Protocol {
  const char* name;
  // The share of the bytes on the wire that is payload: LL stores 4 bytes of data with a
  // 4-byte flag in every 8-byte word; LL128 120 bytes with 8 bytes of flags in every 128-byte
  // line (NCCL src/device/prims_ll.h, prims_ll128.h).
  double payloadShare;
};

// Simple, LL128 and LL, in that order.
const std::vector<Protocol>& protocols();
// nullptr if there is none by that name.
const Protocol* findProtocol(const std::string& name);
// "simple, ll128, ll", for error messages.
std::string protocolNames();

}  // namespace mimic::sim::coll
