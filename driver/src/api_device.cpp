// mimicInit*, mimicDevice*, mimicGetSimTime.
#include <cstring>

#include "call_recorder.h"
#include "runtime.h"
#include "sim/device.h"

using namespace mimic::driver;

namespace {

void copyName(char (&out)[64], const std::string& text) {
  std::strncpy(out, text.c_str(), sizeof out - 1);
  out[sizeof out - 1] = '\0';
}

mimicTopology topologyOf(const std::string& name) {
  if (name == "full_mesh") return MIMIC_TOPOLOGY_FULL_MESH;
  if (name == "switch") return MIMIC_TOPOLOGY_SWITCH;
  return MIMIC_TOPOLOGY_RING;
}

}  // namespace

extern "C" {

mimicResult mimicInit(unsigned flags) {
  if (mimic::sim::Simulator::onSimulationThread()) {
    return recordFailure("mimicInit", MIMIC_ERROR_NOT_PERMITTED,
                         "called from a host function running on a queue");
  }
  return Runtime::initialize(flags, nullptr, nullptr, false);
}

mimicResult mimicInitWithPreset(unsigned flags, const char* preset, const char* overrides) {
  if (mimic::sim::Simulator::onSimulationThread()) {
    return recordFailure("mimicInitWithPreset", MIMIC_ERROR_NOT_PERMITTED,
                         "called from a host function running on a queue");
  }
  return Runtime::initialize(flags, preset, overrides, true);
}

mimicResult mimicGetSimulationMode(mimicSimulationMode* mode) {
  return guarded(__func__, [&](Runtime& rt) {
    requireNotNull(mode, "mode");
    *mode = rt.config().timingOnly ? MIMIC_SIMULATION_TIMING : MIMIC_SIMULATION_FULL;
    return MIMIC_SUCCESS;
  });
}

mimicResult mimicGetPlaceholderCopies(uint64_t* copies, uint64_t* bytes) {
  return guarded(__func__, [&](Runtime& rt) {
    if (!copies && !bytes) fail(MIMIC_ERROR_NULL_POINTER, "copies and bytes are both NULL");
    if (copies) *copies = rt.placeholderCopies();
    if (bytes) *bytes = rt.placeholderBytes();
    return MIMIC_SUCCESS;
  });
}

mimicResult mimicDeviceGetCount(int* count) {
  return guarded(__func__, [&](Runtime& rt) {
    requireNotNull(count, "count");
    *count = rt.numDevices();
    return MIMIC_SUCCESS;
  });
}

mimicResult mimicDeviceGetProperties(int device, mimicDeviceProperties* props) {
  return guarded(__func__, [&](Runtime& rt) {
    requireNotNull(props, "props");
    rt.checkDeviceIndex(device);
    const mimic::sim::SystemConfig& c = rt.config();
    mimicDeviceProperties p{};
    copyName(p.name, c.deviceName);
    copyName(p.preset, c.presetName);
    p.totalMemory = c.hbm.capacityBytes;
    p.computeUnits = c.compute.computeUnits;
    p.vectorLanes = c.compute.vectorLanes;
    p.clockMHz = c.compute.clockMHz;
    p.scratchpadBytes = c.compute.scratchpadBytes;
    p.mmaF32MacsPerCycle = static_cast<int>(c.costs.matrixF32MacsPerCycle);
    p.mmaF16MacsPerCycle = static_cast<int>(c.costs.matrixF16MacsPerCycle);
    p.hbmBandwidthGBps = c.hbm.bandwidthGBps;
    p.hbmLatencyNs = c.hbm.latencyNs;
    p.hostLinkBandwidthGBps = c.hostLink.bandwidthGBps;
    p.hostLinkLatencyNs = c.hostLink.latencyNs;
    p.deviceLinkTopology = topologyOf(c.deviceLink.topology);
    p.deviceLinkBandwidthGBps = c.deviceLink.bandwidthGBps;
    p.deviceLinkLatencyNs = c.deviceLink.latencyNs;
    p.hardwareQueues = c.commandProcessor.hwQueues;
    p.copyEngines = c.dma.copyEngines;
    p.linkEngines = c.dma.linkEngines;
    p.commandLatencyNs = c.commandProcessor.commandLatencyNs;
    p.allocationAlignment = c.memory.alignment;
    p.hbmEfficiency = c.hbm.efficiency;
    p.hostLinkEfficiency = c.hostLink.efficiency;
    p.deviceLinkEfficiency = c.deviceLink.efficiency;
    p.cacheBytes = c.cache.capacityBytes;
    p.cacheBandwidthGBps = c.cache.bandwidthGBps;
    p.cacheLatencyNs = c.cache.latencyNs;
    p.maxWorkgroupsPerUnit = c.compute.maxWorkgroupsPerUnit;
    p.dmaBandwidthGBps = c.costs.dmaBandwidthGBps;
    p.launchLatencyNs = c.commandProcessor.launchLatencyNs;
    p.workgroupLaunchNs = c.compute.workgroupLaunchNs;
    p.hostSubmitNs = c.hostClock.submitNs;
    p.hostSyncNs = c.hostClock.syncNs;
    p.matrixClockMHz = c.costs.matrixClockGHz * 1000;
    p.nodes = c.network.nodes;
    p.devicesPerNode = c.numDevices / c.network.nodes;
    p.nicBandwidthGBps = c.network.nodes > 1 ? c.network.nicGBps : 0;
    p.nicEfficiency = c.network.efficiency;
    p.networkLatencyNs = c.network.latencyNs;
    *props = p;
    return MIMIC_SUCCESS;
  });
}

mimicResult mimicDeviceSynchronize(int device) {
  RecordedCall call(CallId::DeviceSynchronize, {device});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           rt.checkDevice(device);
           rt.waitForDevice(device);
           rt.checkSticky(device);
           return MIMIC_SUCCESS;
         });
}

mimicResult mimicDeviceReset(int device) {
  RecordedCall call(CallId::DeviceReset, {device});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           rt.checkDeviceIndex(device);
           rt.resetDevice(device);
           return MIMIC_SUCCESS;
         });
}

mimicResult mimicGetSimTime(uint64_t* simNs) {
  RecordedCall call(CallId::GetSimTime, {simNs});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           requireNotNull(simNs, "simNs");
           *simNs = rt.sim().hostTime();
           return MIMIC_SUCCESS;
         });
}

}  // extern "C"
