// mimicDebug*: fault injection for testing error handling.
#include "fault_plan.h"
#include "mimic/mimic_debug.h"
#include "runtime.h"

using namespace mimic::driver;

extern "C" {

mimicResult mimicDebugInjectFault(mimicQueue queue, mimicResult error) {
  return guarded(__func__, [&](Runtime& rt) {
    if (!isStickyError(error)) {
      fail(MIMIC_ERROR_INVALID_VALUE,
           std::string(mimicGetErrorName(error)) + " is not a sticky device error");
    }
    auto q = rt.queue(queue, 0);
    auto cmd = std::make_unique<mimic::sim::Command>();
    cmd->kind = mimic::sim::CommandKind::Fault;
    cmd->faultCode = error;
    rt.submit(*q, std::move(cmd));
    return MIMIC_SUCCESS;
  });
}

mimicResult mimicDebugGetRaceFindings(uint64_t* findings) {
  return guarded(__func__, [&](Runtime& rt) {
    requireNotNull(findings, "findings");
    *findings = rt.racecheck().findings();
    return MIMIC_SUCCESS;
  });
}

mimicResult mimicDebugNameCorrelation(uint64_t id, const char* name) {
  return guarded(__func__, [&](Runtime& rt) {
    requireNotNull(name, "name");
    rt.racecheck().nameCorrelation(id, name);
    return MIMIC_SUCCESS;
  });
}

mimicResult mimicDebugSetFaults(const char* spec) {
  return guarded(__func__, [&](Runtime& rt) {
    rt.setFaults(FaultPlan::parse(spec ? spec : ""));
    return MIMIC_SUCCESS;
  });
}

}  // extern "C"
