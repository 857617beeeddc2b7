#include "errors.h"

#include <cstdio>

#include "mimic/mimic_trace.h"
#include "runtime.h"

namespace mimic::driver {
namespace {

struct ErrorState {
  std::string detail;
  mimicResult last = MIMIC_SUCCESS;
};
thread_local ErrorState tlsHostErrors;
thread_local ErrorState tlsHostFunctionErrors;

// A host function's refused calls are its own: a host thread that runs the simulation while it
// waits (sim/simulator.h) runs host functions too, and its last error must not change.
ErrorState& errors() {
  return sim::Simulator::onSimulationThread() ? tlsHostFunctionErrors : tlsHostErrors;
}

struct ResultInfo {
  mimicResult result;
  const char* name;
  const char* description;
};

#define MIMIC_RESULT(code, text) \
  { code, #code, text }
constexpr ResultInfo kResults[] = {
    MIMIC_RESULT(MIMIC_SUCCESS, "the call succeeded"),
    MIMIC_RESULT(MIMIC_NOT_READY, "the work has not completed yet"),
    MIMIC_RESULT(MIMIC_ERROR_NOT_INITIALIZED, "mimicInit has not been called successfully"),
    MIMIC_RESULT(MIMIC_ERROR_ALREADY_INITIALIZED,
                 "the process already holds a simulation built with another configuration"),
    MIMIC_RESULT(MIMIC_ERROR_INVALID_FLAGS, "the flags argument has bits that are not defined"),
    MIMIC_RESULT(MIMIC_ERROR_UNKNOWN_PRESET, "no preset has that name, or the file is unreadable"),
    MIMIC_RESULT(MIMIC_ERROR_UNKNOWN_CONFIG_FIELD, "a preset or override sets an unknown field"),
    MIMIC_RESULT(MIMIC_ERROR_INVALID_CONFIG_VALUE, "a preset field has an invalid value"),
    MIMIC_RESULT(MIMIC_ERROR_SYSTEM_RESOURCES,
                 "the host cannot provide the resources the preset needs"),
    MIMIC_RESULT(MIMIC_ERROR_NULL_POINTER, "a required pointer argument is NULL"),
    MIMIC_RESULT(MIMIC_ERROR_INVALID_DEVICE, "the device index is out of range"),
    MIMIC_RESULT(MIMIC_ERROR_INVALID_SIZE, "the size is zero or larger than can be served"),
    MIMIC_RESULT(MIMIC_ERROR_INVALID_VALUE, "an argument is outside its documented range"),
    MIMIC_RESULT(MIMIC_ERROR_INVALID_PRIORITY, "the queue priority is not 0 or -1"),
    MIMIC_RESULT(MIMIC_ERROR_INVALID_QUEUE, "the queue handle is invalid or destroyed"),
    MIMIC_RESULT(MIMIC_ERROR_INVALID_EVENT, "the event handle is invalid or destroyed"),
    MIMIC_RESULT(MIMIC_ERROR_WRONG_DEVICE, "a queue, event or pointer belongs to another device"),
    MIMIC_RESULT(MIMIC_ERROR_NOT_PERMITTED,
                 "mimic may not be called from a host function running on a queue"),
    MIMIC_RESULT(MIMIC_ERROR_UNKNOWN_COLLECTIVE_CHOICE,
                 "MIMIC_COLL_ALGO or MIMIC_COLL_PROTO names no such algorithm or protocol"),
    MIMIC_RESULT(MIMIC_ERROR_UNSUPPORTED_COLLECTIVE_CHOICE,
                 "the forced collective algorithm or protocol cannot run that collective here"),
    MIMIC_RESULT(MIMIC_ERROR_OUT_OF_MEMORY, "the device has no free block that large"),
    MIMIC_RESULT(MIMIC_ERROR_HOST_OUT_OF_MEMORY, "pinned host memory could not be allocated"),
    MIMIC_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER,
                 "the pointer is not inside a live device allocation"),
    MIMIC_RESULT(MIMIC_ERROR_DOUBLE_FREE, "the allocation was already freed"),
    MIMIC_RESULT(MIMIC_ERROR_INVALID_HOST_POINTER,
                 "the pointer is not the start of a pinned host allocation"),
    MIMIC_RESULT(MIMIC_ERROR_OUT_OF_BOUNDS, "the range runs past the end of its allocation"),
    MIMIC_RESULT(MIMIC_ERROR_EVENT_NOT_RECORDED, "the event has never been recorded"),
    MIMIC_RESULT(MIMIC_ERROR_EVENT_TIMING_DISABLED,
                 "the event was created with MIMIC_EVENT_DISABLE_TIMING"),
    MIMIC_RESULT(MIMIC_ERROR_SIMULATION_STALLED, "the awaited work can never complete"),
    MIMIC_RESULT(MIMIC_ERROR_INVALID_IMAGE, "the data is not a valid module image"),
    MIMIC_RESULT(MIMIC_ERROR_UNSUPPORTED_IMAGE_VERSION,
                 "the module image has a format version this driver does not read"),
    MIMIC_RESULT(MIMIC_ERROR_INVALID_MODULE, "the module handle is invalid or unloaded"),
    MIMIC_RESULT(MIMIC_ERROR_FUNCTION_NOT_FOUND, "the module has no function of that name"),
    MIMIC_RESULT(MIMIC_ERROR_INVALID_FUNCTION,
                 "the function handle is invalid or its module unloaded"),
    MIMIC_RESULT(MIMIC_ERROR_INVALID_GRID, "a grid dimension is zero or the grid too large"),
    MIMIC_RESULT(MIMIC_ERROR_INVALID_ARGUMENT_SIZE,
                 "the argument size differs from what the function takes"),
    MIMIC_RESULT(MIMIC_ERROR_NO_KERNEL, "no kernel was launched on the queue yet"),
    MIMIC_RESULT(MIMIC_ERROR_ILLEGAL_ADDRESS, "the device accessed an illegal address"),
    MIMIC_RESULT(MIMIC_ERROR_LAUNCH_FAILURE, "a kernel failed on the device"),
    MIMIC_RESULT(MIMIC_ERROR_LAUNCH_TIMEOUT, "a kernel ran past the watchdog limit"),
    MIMIC_RESULT(MIMIC_ERROR_ECC_UNCORRECTABLE, "the device memory had an uncorrectable error"),
    MIMIC_RESULT(MIMIC_ERROR_DEVICE_LOST, "the device is lost"),
    MIMIC_RESULT(MIMIC_ERROR_MISALIGNED_ADDRESS,
                 "a kernel operand was not aligned to its element size"),
    MIMIC_RESULT(MIMIC_ERROR_SCRATCHPAD_HAZARD,
                 "a kernel used scratchpad while a DMA into it was in flight"),
    MIMIC_RESULT(MIMIC_ERROR_ILLEGAL_INSTRUCTION,
                 "a kernel used an operation its element type does not support"),
    MIMIC_RESULT(MIMIC_ERROR_CALL_LOG_UNREADABLE, "the call log file cannot be opened or read"),
    MIMIC_RESULT(MIMIC_ERROR_INVALID_CALL_LOG,
                 "the file is not a mimic call log, or it is truncated or corrupted"),
    MIMIC_RESULT(MIMIC_ERROR_UNSUPPORTED_CALL_LOG_VERSION,
                 "the call log has a format version this driver does not read"),
    MIMIC_RESULT(MIMIC_ERROR_REPLAY_DIVERGED,
                 "the replay of a call log did not do what the recorded run did"),
    MIMIC_RESULT(MIMIC_ERROR_TRACE_ACTIVE, "tracing is already on"),
    MIMIC_RESULT(MIMIC_ERROR_TRACE_NOT_ACTIVE, "tracing is not on"),
    MIMIC_RESULT(MIMIC_ERROR_NO_OPEN_RANGE, "the queue has no open range to end"),
};
#undef MIMIC_RESULT

const ResultInfo* findResult(mimicResult result) {
  for (const ResultInfo& info : kResults) {
    if (info.result == result) return &info;
  }
  return nullptr;
}

}  // namespace

bool isStickyError(mimicResult result) {
  return result >= MIMIC_ERROR_ILLEGAL_ADDRESS && result <= MIMIC_ERROR_ILLEGAL_INSTRUCTION;
}

std::string hexAddress(const void* pointer) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", pointer);
  return text;
}

mimicResult recordFailure(const char* function, mimicResult result, const std::string& message) {
  ErrorState& state = errors();
  state.detail = std::string(function) + ": " + message;
  state.last = result;
  return result;
}

}  // namespace mimic::driver

using namespace mimic::driver;

extern "C" {

const char* mimicGetErrorName(mimicResult result) {
  const ResultInfo* info = findResult(result);
  return info ? info->name : "MIMIC_UNRECOGNIZED_RESULT";
}

const char* mimicGetErrorString(mimicResult result) {
  const ResultInfo* info = findResult(result);
  return info ? info->description : "the value is not a mimicResult";
}

mimicResult mimicGetErrorDetail(const char** detail) {
  if (!detail)
    return recordFailure("mimicGetErrorDetail", MIMIC_ERROR_NULL_POINTER, "detail is NULL");
  *detail = errors().detail.c_str();
  return MIMIC_SUCCESS;
}

mimicResult mimicGetLastError(void) {
  if (Runtime* runtime = Runtime::instance()) {
    mimicResult sticky = runtime->firstStickyError();
    if (sticky != MIMIC_SUCCESS) return sticky;
  }
  ErrorState& state = errors();
  mimicResult last = state.last;
  state.last = MIMIC_SUCCESS;
  return last;
}

}  // extern "C"
