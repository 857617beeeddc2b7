#include "sim/device_config.h"

#include "sim/params.h"

namespace mimic::sim {

CommandProcessorConfig CommandProcessorConfig::read(ParamReader& params) {
  CommandProcessorConfig c;
  c.hwQueues = static_cast<int>(params.size(
      "cp.hw_queues", 8, "hardware queues (command processors) per device; more queues share"));
  c.launchLatencyNs = params.size(
      "cp.launch_latency_ns", 0,
      "from a command's submission until its command processor can take it (doorbell and "
      "fetch; overlaps earlier commands), ns");
  c.commandLatencyNs = params.size(
      "cp.command_latency_ns", 1500,
      "paid in turn by each kernel, copy and fill before it runs (dispatch set-up), ns");
  c.hostFuncLatencyNs =
      params.size("cp.host_func_latency_ns", 2000, "cost of calling a host function, ns");
  requirePositive("cp.hw_queues", c.hwQueues);
  return c;
}

DmaEnginesConfig DmaEnginesConfig::read(ParamReader& params) {
  DmaEnginesConfig c;
  c.copyEngines = static_cast<int>(params.size("dma.copy_engines", 2, "copy engines per device"));
  c.linkEngines = static_cast<int>(params.size("dma.link_engines", 2, "link engines per device"));
  requirePositive("dma.copy_engines", c.copyEngines);
  requirePositive("dma.link_engines", c.linkEngines);
  return c;
}

ComputeConfig ComputeConfig::read(ParamReader& params) {
  ComputeConfig c;
  c.computeUnits = static_cast<int>(params.size("compute.units", 16, "compute units per device"));
  c.vectorLanes = static_cast<int>(params.size("compute.lanes", 64, "vector lanes per CU"));
  c.clockMHz = params.number("compute.clock_mhz", 1500, "compute clock, MHz");
  c.scratchpadBytes = params.size("compute.scratchpad", 256 << 10, "scratchpad per CU, bytes");
  c.maxWorkgroupsPerUnit = static_cast<int>(
      params.size("compute.max_workgroups_per_unit", 8,
                  "workgroups resident on one CU at once, as far as their scratchpad fits"));
  c.workgroupLaunchNs = params.size("compute.workgroup_launch_ns", 0,
                                    "time to start a workgroup on a CU (its dispatch), ns");

  requirePositive("compute.units", c.computeUnits);
  requirePositive("compute.lanes", c.vectorLanes);
  requirePositive("compute.clock_mhz", c.clockMHz);
  requirePositive("compute.scratchpad", double(c.scratchpadBytes));
  requirePositive("compute.max_workgroups_per_unit", c.maxWorkgroupsPerUnit);
  return c;
}

}  // namespace mimic::sim
