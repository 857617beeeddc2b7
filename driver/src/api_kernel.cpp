// mimicModule*, mimicLaunchKernel, mimicQueueGetKernelCounters.
#include <cstring>

#include "call_recorder.h"
#include "kernel_launch.h"
#include "runtime.h"
#include "sim/device.h"
#include "sim/isa/module_image.h"
#include "tracer.h"

using namespace mimic::driver;
using mimic::exec::FaultKind;

namespace {

constexpr uint64_t kMaxWorkgroups = uint64_t(1) << 31;

mimicResult faultResult(FaultKind kind) {
  switch (kind) {
    case FaultKind::MisalignedAddress:
      return MIMIC_ERROR_MISALIGNED_ADDRESS;
    case FaultKind::ScratchpadHazard:
      return MIMIC_ERROR_SCRATCHPAD_HAZARD;
    case FaultKind::IllegalInstruction:
      return MIMIC_ERROR_ILLEGAL_INSTRUCTION;
    case FaultKind::WatchdogTimeout:
      return MIMIC_ERROR_LAUNCH_TIMEOUT;
    case FaultKind::IllegalAddress:
    case FaultKind::None:
      break;
  }
  return MIMIC_ERROR_ILLEGAL_ADDRESS;
}

}  // namespace

extern "C" {

mimicResult mimicModuleLoad(int device, const void* image, size_t bytes, mimicModule* module) {
  RecordedCall call(CallId::ModuleLoad, {device, image, bytes, module});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           requireNotNull(image, "image");
           requireNotNull(module, "module");
           rt.checkDevice(device);
           if (bytes == 0) fail(MIMIC_ERROR_INVALID_SIZE, "bytes is 0");
           auto state = std::make_shared<ModuleState>();
           state->device = device;
           try {
             state->module = mimic::isa::decodeImage(image, bytes);
           } catch (const mimic::isa::ImageError& e) {
             fail(e.kind() == mimic::isa::ImageError::Kind::UnsupportedVersion
                      ? MIMIC_ERROR_UNSUPPORTED_IMAGE_VERSION
                      : MIMIC_ERROR_INVALID_IMAGE,
                  e.what());
           }
           *module = rt.addModule(std::move(state));
           return MIMIC_SUCCESS;
         });
}

mimicResult mimicModuleUnload(mimicModule module) {
  RecordedCall call(CallId::ModuleUnload, {module});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           if (!module || !rt.removeModule(module)) {
             fail(MIMIC_ERROR_INVALID_MODULE, "module " + hexAddress(module) + " is not loaded");
           }
           return MIMIC_SUCCESS;
         });
}

mimicResult mimicModuleGetFunction(mimicModule module, const char* name, mimicFunction* fn) {
  RecordedCall call(CallId::ModuleGetFunction, {module, name, fn});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           requireNotNull(name, "name");
           requireNotNull(fn, "fn");
           if (!module) fail(MIMIC_ERROR_INVALID_MODULE, "module is NULL");
           auto m = rt.module(module);
           const auto& functions = m->module.functions;
           for (size_t i = 0; i < functions.size(); ++i) {
             if (functions[i].name == name) {
               *fn = rt.addFunction(std::make_shared<FunctionState>(FunctionState{m, i}));
               return MIMIC_SUCCESS;
             }
           }
           fail(MIMIC_ERROR_FUNCTION_NOT_FOUND,
                "the module has no function named '" + std::string(name) + "'");
         });
}

mimicResult mimicLaunchKernel(mimicFunction fn, mimicDim3 grid, const void* args, size_t argBytes,
                              mimicQueue queue) {
  RecordedCall call(CallId::LaunchKernel, {fn, grid.x, grid.y, grid.z, args, argBytes, queue});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           if (!fn) fail(MIMIC_ERROR_INVALID_FUNCTION, "fn is NULL");
           auto f = rt.function(fn);
           const mimic::isa::Function& function = f->function();
           const int device = f->module->device;
           const uint64_t workgroups = uint64_t(grid.x) * grid.y * grid.z;
           if (workgroups == 0 || workgroups > kMaxWorkgroups) {
             fail(MIMIC_ERROR_INVALID_GRID,
                  "grid (" + std::to_string(grid.x) + ", " + std::to_string(grid.y) + ", " +
                      std::to_string(grid.z) + ") must have 1 to 2^31 workgroups");
           }
           if (argBytes != function.argBytes) {
             fail(MIMIC_ERROR_INVALID_ARGUMENT_SIZE,
                  "kernel '" + function.name + "' takes " + std::to_string(function.argBytes) +
                      " bytes of arguments, got " + std::to_string(argBytes));
           }
           if (argBytes > 0) requireNotNull(args, "args");
           auto q = rt.queue(queue, device);
           if (q->device != device) {
             fail(MIMIC_ERROR_WRONG_DEVICE,
                  "the queue belongs to device " + std::to_string(q->device) +
                      ", the kernel's module to device " + std::to_string(device));
           }
           const mimic::sim::SystemConfig& config = rt.config();
           const bool racecheck = rt.racecheck().enabled();
           const bool memcheck = rt.memcheck().checking();
           mimic::exec::Executor executor(config.costs, config.compute.scratchpadBytes,
                                          rt.sim().device(device).memory(), racecheck || memcheck,
                                          config.timingOnly);
           // Workgroups run before this returns, so they can read the caller's arguments in place.
           FunctionalResult result =
               executeKernel(executor, function, static_cast<const uint8_t*>(args),
                             {grid.x, grid.y, grid.z}, config.compute.scratchpadBytes);
           auto cmd = std::make_unique<mimic::sim::Command>();
           cmd->kind = mimic::sim::CommandKind::Kernel;
           cmd->launch = result.launch;
           std::string injected;
           const mimicResult injectedCode = rt.faults().kernelFault(&injected);
           if (result.fault.kind != FaultKind::None) {
             cmd->faultCode = faultResult(result.fault.kind);
             rt.noteKernelFault(device, result.fault.message);
           } else if (injectedCode != MIMIC_SUCCESS) {
             cmd->faultCode = injectedCode;
             rt.noteKernelFault(device, injected);
           }
           // Only the checkers name the kernel: no string per launch otherwise.
           const std::string what = memcheck || racecheck ? "kernel '" + function.name + "'" : "";
           if (memcheck) {
             std::vector<Access> accesses;
             accesses.reserve(result.accesses.size());
             for (const mimic::exec::HbmAccess& a : result.accesses)
               accesses.push_back({a.low, a.high, a.write});
             rt.memcheck().onAccesses(device, accesses, what, Tracer::correlation());
             if (result.fault.kind == FaultKind::IllegalAddress && result.fault.address != 0) {
               rt.memcheck().onInvalidAddress(device, result.fault.address, "accesses", what,
                                              Tracer::correlation());
             }
           }
           if (racecheck) {
             std::vector<DeviceAccess> accesses;
             for (const mimic::exec::HbmAccess& a : mergedAccesses(std::move(result.accesses)))
               accesses.push_back({device, a.low, a.high, a.write});
             rt.racecheck().onCommand(q->id, accesses, what, Tracer::correlation());
           }
           rt.submitKernel(*q, std::move(cmd), function.name, grid);
           return MIMIC_SUCCESS;
         });
}

mimicResult mimicQueueGetKernelCounters(mimicQueue queue, mimicKernelCounters* counters) {
  RecordedCall call(CallId::QueueGetKernelCounters, {queue, counters});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           requireNotNull(counters, "counters");
           auto q = rt.queue(queue, 0);
           std::shared_ptr<mimic::sim::KernelLaunch> launch;
           std::shared_ptr<mimic::sim::Completion> done;
           rt.lastKernel(*q, &launch, &done);
           if (!launch) fail(MIMIC_ERROR_NO_KERNEL, "no kernel was launched on this queue");
           rt.poll();
           rt.checkSticky(q->device);
           if (!rt.completedByNow(done)) return MIMIC_NOT_READY;
           fillCounters(*launch, rt.config(), counters);
           return MIMIC_SUCCESS;
         });
}

}  // extern "C"
