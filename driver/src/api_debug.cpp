// mimicDebug*: fault injection and the sanitizer.
#include "call_recorder.h"
#include "fault_plan.h"
#include "mimic/mimic_debug.h"
#include "runtime.h"
#include "sim/device.h"

using namespace mimic::driver;

extern "C" {

mimicResult mimicDebugInjectFault(mimicQueue queue, mimicResult error) {
  RecordedCall call(CallId::DebugInjectFault, {queue, error});
  return call.result = guarded(__func__, [&](Runtime& rt) {
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
    *findings = rt.sanitizer().count(FindingKind::Race);
    return MIMIC_SUCCESS;
  });
}

mimicResult mimicDebugNameCorrelation(uint64_t id, const char* name) {
  return guarded(__func__, [&](Runtime& rt) {
    requireNotNull(name, "name");
    rt.sanitizer().nameCorrelation(id, name);
    return MIMIC_SUCCESS;
  });
}

mimicResult mimicDebugSetSanitizer(unsigned tools) {
  return guarded(__func__, [&](Runtime& rt) {
    const unsigned known = MIMIC_SANITIZE_MEMCHECK | MIMIC_SANITIZE_RACECHECK |
                           MIMIC_SANITIZE_INITCHECK | MIMIC_SANITIZE_LEAKCHECK;
    if (tools & ~known) {
      fail(MIMIC_ERROR_INVALID_VALUE,
           "tools " + std::to_string(tools) + " has bits that are not MIMIC_SANITIZE_* tools");
    }
    rt.sanitizer().setTools(tools);
    return MIMIC_SUCCESS;
  });
}

mimicResult mimicDebugGetSanitizer(unsigned* tools) {
  return guarded(__func__, [&](Runtime& rt) {
    requireNotNull(tools, "tools");
    *tools = rt.sanitizer().tools();
    return MIMIC_SUCCESS;
  });
}

mimicResult mimicDebugGetSanitizerFindings(mimicSanitizerFindings* findings) {
  return guarded(__func__, [&](Runtime& rt) {
    requireNotNull(findings, "findings");
    rt.sanitizer().findings(findings);
    return MIMIC_SUCCESS;
  });
}

mimicResult mimicDebugCheckLeaks(uint64_t* leaks) {
  return guarded(__func__, [&](Runtime& rt) {
    requireNotNull(leaks, "leaks");
    *leaks = rt.memcheck().checkLeaks();
    return MIMIC_SUCCESS;
  });
}

mimicResult mimicDebugRegionRegister(void* dptr, size_t bytes) {
  return guarded(__func__, [&](Runtime& rt) {
    requireNotNull(dptr, "dptr");
    if (bytes == 0) fail(MIMIC_ERROR_INVALID_SIZE, "bytes is 0");
    const int device = rt.deviceOfAddress(dptr);
    const uint64_t address = reinterpret_cast<uint64_t>(dptr);
    mimic::sim::Allocation allocation{};
    if (device < 0 || !rt.sim().device(device).memory().find(address, &allocation)) {
      fail(MIMIC_ERROR_INVALID_DEVICE_POINTER,
           hexAddress(dptr) + " is not inside a live device allocation");
    }
    if (bytes > allocation.base + allocation.size - address) {
      fail(MIMIC_ERROR_OUT_OF_BOUNDS, "the region of " + std::to_string(bytes) + " bytes at " +
                                          hexAddress(dptr) + " runs past the end of its " +
                                          std::to_string(allocation.size) + "-byte allocation");
    }
    rt.memcheck().registerRegion(device, address, bytes);
    return MIMIC_SUCCESS;
  });
}

mimicResult mimicDebugRegionUnregister(void* dptr) {
  return guarded(__func__, [&](Runtime& rt) {
    requireNotNull(dptr, "dptr");
    const int device = rt.deviceOfAddress(dptr);
    if (device < 0) {
      fail(MIMIC_ERROR_INVALID_DEVICE_POINTER, hexAddress(dptr) + " is not a device pointer");
    }
    rt.memcheck().unregisterRegion(device, reinterpret_cast<uint64_t>(dptr));
    return MIMIC_SUCCESS;
  });
}

mimicResult mimicDebugSetFaults(const char* spec) {
  RecordedCall call(CallId::DebugSetFaults, {spec});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           rt.setFaults(FaultPlan::parse(spec ? spec : "", rt.numDevices()));
           return MIMIC_SUCCESS;
         });
}

mimicResult mimicDebugGetLinkSlowdown(double* factor) {
  return guarded(__func__, [&](Runtime& rt) {
    requireNotNull(factor, "factor");
    *factor = rt.faults().slowLinkFactor();
    return MIMIC_SUCCESS;
  });
}

}  // extern "C"
