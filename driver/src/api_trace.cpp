// mimicTrace*, mimicQueueGetId, mimicQueueBeginRange, mimicQueueEndRange.
#include <cstring>

#include "call_recorder.h"
#include "mimic/mimic_trace.h"
#include "runtime.h"

using namespace mimic::driver;
using mimic::sim::Command;
using mimic::sim::CommandKind;

namespace {

// A zero-length marker command: it completes when the queue reaches it.
std::shared_ptr<mimic::sim::Completion> submitMarker(Runtime& rt, QueueState& queue) {
  auto cmd = std::make_unique<Command>();
  cmd->kind = CommandKind::EventRecord;
  return rt.submit(queue, std::move(cmd), nullptr, Runtime::Trace::Untraced);
}

}  // namespace

extern "C" {

mimicResult mimicTraceStart(size_t capacity) {
  return guarded(__func__, [&](Runtime& rt) {
    if (capacity == 0) fail(MIMIC_ERROR_INVALID_SIZE, "capacity is 0");
    if (!rt.tracer().start(capacity)) fail(MIMIC_ERROR_TRACE_ACTIVE, "tracing is already on");
    return MIMIC_SUCCESS;
  });
}

mimicResult mimicTraceStop(void) {
  return guarded(__func__, [&](Runtime& rt) {
    if (!rt.tracer().stop()) fail(MIMIC_ERROR_TRACE_NOT_ACTIVE, "tracing is not on");
    return MIMIC_SUCCESS;
  });
}

mimicResult mimicTraceRead(mimicActivity* records, size_t capacity, size_t* count) {
  return guarded(__func__, [&](Runtime& rt) {
    requireNotNull(count, "count");
    if (capacity > 0) requireNotNull(records, "records");
    *count = rt.tracer().read(records, capacity);
    return MIMIC_SUCCESS;
  });
}

mimicResult mimicTraceGetDropped(uint64_t* dropped) {
  return guarded(__func__, [&](Runtime& rt) {
    requireNotNull(dropped, "dropped");
    *dropped = rt.tracer().dropped();
    return MIMIC_SUCCESS;
  });
}

mimicResult mimicTraceSetCorrelationId(uint64_t id, uint64_t* previous) {
  return guarded(__func__, [&](Runtime&) {
    const uint64_t replaced = Tracer::exchangeCorrelation(id);
    if (previous) *previous = replaced;
    return MIMIC_SUCCESS;
  });
}

mimicResult mimicQueueGetId(mimicQueue queue, int device, uint64_t* id) {
  return guarded(__func__, [&](Runtime& rt) {
    requireNotNull(id, "id");
    if (!queue) rt.checkDeviceIndex(device);
    *id = rt.queue(queue, device)->id;
    return MIMIC_SUCCESS;
  });
}

mimicResult mimicQueueBeginRange(mimicQueue queue, int device, const char* name) {
  RecordedCall call(CallId::QueueBeginRange, {queue, device, name});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           requireNotNull(name, "name");
           if (!queue) rt.checkDeviceIndex(device);
           auto q = rt.queue(queue, device);
           rt.checkSticky(q->device);
           std::shared_ptr<mimic::sim::Completion> begin = submitMarker(rt, *q);
           std::lock_guard<std::mutex> lock(rt.rangeMutex());
           q->openRanges.emplace_back(name, std::move(begin));
           return MIMIC_SUCCESS;
         });
}

mimicResult mimicQueueEndRange(mimicQueue queue, int device) {
  RecordedCall call(CallId::QueueEndRange, {queue, device});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           if (!queue) rt.checkDeviceIndex(device);
           auto q = rt.queue(queue, device);
           std::pair<std::string, std::shared_ptr<mimic::sim::Completion>> range;
           {
             std::lock_guard<std::mutex> lock(rt.rangeMutex());
             if (q->openRanges.empty())
               fail(MIMIC_ERROR_NO_OPEN_RANGE, "the queue has no open range");
             range = std::move(q->openRanges.back());
             q->openRanges.pop_back();
           }
           rt.checkSticky(q->device);
           std::shared_ptr<mimic::sim::Completion> end = submitMarker(rt, *q);
           if (rt.tracer().active()) {
             mimicActivity a = newActivity(MIMIC_ACTIVITY_RANGE, q->device, q->id);
             std::strncpy(a.name, range.first.c_str(), sizeof a.name - 1);
             rt.tracer().add(a, end, range.second);
           }
           return MIMIC_SUCCESS;
         });
}

}  // extern "C"
