#include "sim/host_clock.h"

#include "sim/params.h"

namespace mimic::sim {

HostClockConfig HostClockConfig::read(ParamReader& params) {
  HostClockConfig c;
  c.submitNs = params.size("host.submit_ns", 0, "host time to submit one command, ns");
  c.pollNs = params.size("host.poll_ns", 1000, "host time of one status query, ns");
  c.syncNs = params.size("host.sync_ns", 0,
                         "from the completion a host thread blocks on until it runs again "
                         "(interrupt or poll, and the thread's wake-up), ns");
  requirePositive("host.poll_ns", double(c.pollNs));
  return c;
}

}  // namespace mimic::sim
