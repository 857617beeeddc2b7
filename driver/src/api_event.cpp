// mimicEvent*.
#include "call_recorder.h"
#include "runtime.h"

using namespace mimic::driver;
using mimic::sim::Command;
using mimic::sim::CommandKind;
using mimic::sim::Completion;

namespace {

std::shared_ptr<Completion> recordOf(Runtime& rt, const EventState& e, mimicEvent handle) {
  auto record = rt.snapshot(e.record);
  if (!record) {
    fail(MIMIC_ERROR_EVENT_NOT_RECORDED, "event " + hexAddress(handle) + " was never recorded");
  }
  return record;
}

// The completed record of a timing event, as the host sees it now; NOT_READY otherwise.
std::shared_ptr<Completion> timedRecord(Runtime& rt, mimicEvent handle, const char* argument) {
  auto e = rt.event(handle);
  if (e->flags & MIMIC_EVENT_DISABLE_TIMING) {
    fail(MIMIC_ERROR_EVENT_TIMING_DISABLED,
         std::string(argument) + " was created with MIMIC_EVENT_DISABLE_TIMING");
  }
  return recordOf(rt, *e, handle);
}

}  // namespace

extern "C" {

mimicResult mimicEventCreate(int device, unsigned flags, mimicEvent* event) {
  RecordedCall call(CallId::EventCreate, {device, flags, event});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           requireNotNull(event, "event");
           rt.checkDevice(device);
           if (flags & ~MIMIC_EVENT_DISABLE_TIMING) {
             fail(MIMIC_ERROR_INVALID_FLAGS,
                  "flags " + std::to_string(flags) + " has undefined bits");
           }
           *event = rt.addEvent(std::make_shared<EventState>(EventState{device, flags, nullptr}));
           return MIMIC_SUCCESS;
         });
}

mimicResult mimicEventDestroy(mimicEvent event) {
  RecordedCall call(CallId::EventDestroy, {event});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           if (!event || !rt.removeEvent(event)) {
             fail(MIMIC_ERROR_INVALID_EVENT, "event " + hexAddress(event) + " is not a live event");
           }
           if (rt.racecheck().enabled()) rt.racecheck().onEventDestroy(event);
           return MIMIC_SUCCESS;
         });
}

mimicResult mimicEventRecord(mimicEvent event, mimicQueue queue) {
  RecordedCall call(CallId::EventRecord, {event, queue});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           auto e = rt.event(event);
           auto q = rt.queue(queue, e->device);
           if (q->device != e->device) {
             fail(MIMIC_ERROR_WRONG_DEVICE,
                  "the event belongs to device " + std::to_string(e->device) +
                      ", the queue to device " + std::to_string(q->device));
           }
           auto cmd = std::make_unique<Command>();
           cmd->kind = CommandKind::EventRecord;
           if (rt.racecheck().enabled()) {
             rt.racecheck().onEventRecord(event, q->id, cmd->completion.get());
           }
           rt.submit(*q, std::move(cmd), e.get());
           return MIMIC_SUCCESS;
         });
}

mimicResult mimicEventQuery(mimicEvent event) {
  RecordedCall call(CallId::EventQuery, {event});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           auto e = rt.event(event);
           auto record = recordOf(rt, *e, event);
           rt.poll();
           rt.checkSticky(e->device);
           return rt.completedByNow(record) ? MIMIC_SUCCESS : MIMIC_NOT_READY;
         });
}

mimicResult mimicEventSynchronize(mimicEvent event) {
  RecordedCall call(CallId::EventSynchronize, {event});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           auto e = rt.event(event);
           rt.wait({recordOf(rt, *e, event)});
           rt.checkSticky(e->device);
           return MIMIC_SUCCESS;
         });
}

mimicResult mimicEventElapsedTime(float* ms, mimicEvent start, mimicEvent end) {
  RecordedCall call(CallId::EventElapsedTime, {ms, start, end});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           requireNotNull(ms, "ms");
           auto first = timedRecord(rt, start, "start");
           auto second = timedRecord(rt, end, "end");
           rt.poll();
           if (!rt.completedByNow(first) || !rt.completedByNow(second)) return MIMIC_NOT_READY;
           *ms = static_cast<float>(
               (static_cast<double>(second->end) - static_cast<double>(first->end)) / 1e6);
           return MIMIC_SUCCESS;
         });
}

mimicResult mimicEventGetTimestamp(mimicEvent event, uint64_t* simNs) {
  RecordedCall call(CallId::EventGetTimestamp, {event, simNs});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           requireNotNull(simNs, "simNs");
           auto record = timedRecord(rt, event, "event");
           rt.poll();
           if (!rt.completedByNow(record)) return MIMIC_NOT_READY;
           *simNs = record->end;
           return MIMIC_SUCCESS;
         });
}

}  // extern "C"
