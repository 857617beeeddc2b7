// mimicQueue*, mimicLaunchHostFunc.
#include "call_recorder.h"
#include "runtime.h"

using namespace mimic::driver;
using mimic::sim::Command;
using mimic::sim::CommandKind;

namespace {

// Queue functions that take no device argument: a NULL queue is device 0's default queue.
constexpr int kDefaultQueueDevice = 0;

}  // namespace

extern "C" {

mimicResult mimicQueueCreate(int device, unsigned flags, int priority, mimicQueue* queue) {
  RecordedCall call(CallId::QueueCreate, {device, flags, priority, queue});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           requireNotNull(queue, "queue");
           rt.checkDevice(device);
           if (flags != 0) fail(MIMIC_ERROR_INVALID_FLAGS, "flags must be 0");
           if (priority != MIMIC_QUEUE_PRIORITY_LOW && priority != MIMIC_QUEUE_PRIORITY_HIGH) {
             fail(MIMIC_ERROR_INVALID_PRIORITY,
                  "priority " + std::to_string(priority) + " is neither 0 (low) nor -1 (high)");
           }
           auto state = std::make_shared<QueueState>(device, rt.assignHwQueue(device), priority);
           state->id = rt.assignQueueId();
           *queue = rt.addQueue(std::move(state));
           return MIMIC_SUCCESS;
         });
}

mimicResult mimicQueueDestroy(mimicQueue queue) {
  RecordedCall call(CallId::QueueDestroy, {queue});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           if (!queue) fail(MIMIC_ERROR_INVALID_QUEUE, "the default queue cannot be destroyed");
           if (!rt.removeQueue(queue)) {
             fail(MIMIC_ERROR_INVALID_QUEUE, "queue " + hexAddress(queue) + " is not a live queue");
           }
           return MIMIC_SUCCESS;
         });
}

mimicResult mimicQueueGetDevice(mimicQueue queue, int* device) {
  return guarded(__func__, [&](Runtime& rt) {
    requireNotNull(device, "device");
    if (!queue) fail(MIMIC_ERROR_INVALID_QUEUE, "NULL is every device's default queue");
    *device = rt.queue(queue, kDefaultQueueDevice)->device;
    return MIMIC_SUCCESS;
  });
}

mimicResult mimicQueueQuery(mimicQueue queue) {
  RecordedCall call(CallId::QueueQuery, {queue});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           auto q = rt.queue(queue, kDefaultQueueDevice);
           rt.poll();
           rt.checkSticky(q->device);
           return rt.completedByNow(rt.snapshot(q->last)) ? MIMIC_SUCCESS : MIMIC_NOT_READY;
         });
}

mimicResult mimicQueueSynchronize(mimicQueue queue) {
  RecordedCall call(CallId::QueueSynchronize, {queue});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           auto q = rt.queue(queue, kDefaultQueueDevice);
           if (auto last = rt.snapshot(q->last)) rt.wait({last});
           rt.checkSticky(q->device);
           return MIMIC_SUCCESS;
         });
}

mimicResult mimicQueueWaitEvent(mimicQueue queue, mimicEvent event) {
  RecordedCall call(CallId::QueueWaitEvent, {queue, event});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           auto e = rt.event(event);
           auto q = rt.queue(queue, kDefaultQueueDevice);
           auto record = rt.snapshot(e->record);
           if (!record) {
             fail(MIMIC_ERROR_EVENT_NOT_RECORDED,
                  "event " + hexAddress(event) + " was never recorded");
           }
           auto cmd = std::make_unique<Command>();
           cmd->kind = CommandKind::EventWait;
           cmd->waitFor = std::move(record);
           rt.submit(*q, std::move(cmd));
           if (rt.racecheck().enabled()) rt.racecheck().onQueueWait(q->id, event);
           return MIMIC_SUCCESS;
         });
}

mimicResult mimicLaunchHostFunc(mimicQueue queue, void (*fn)(void*), void* userData) {
  RecordedCall call(CallId::LaunchHostFunc, {queue, fn != nullptr});
  return call.result = guarded(__func__, [&](Runtime& rt) {
           requireNotNull(reinterpret_cast<const void*>(fn), "fn");
           auto q = rt.queue(queue, kDefaultQueueDevice);
           auto cmd = std::make_unique<Command>();
           cmd->kind = CommandKind::HostFunc;
           cmd->hostFn = fn;
           cmd->userData = userData;
           rt.submit(*q, std::move(cmd));
           return MIMIC_SUCCESS;
         });
}

mimicResult mimicLaunchHostTask(mimicQueue queue, uint64_t (*fn)(void*, uint64_t), void* userData) {
  RecordedCall call(CallId::LaunchHostTask, {queue, fn != nullptr});
  call.wrapHostTask(&fn, &userData);
  return call.result = guarded(__func__, [&](Runtime& rt) {
           requireNotNull(reinterpret_cast<const void*>(fn), "fn");
           auto q = rt.queue(queue, kDefaultQueueDevice);
           auto cmd = std::make_unique<Command>();
           cmd->kind = CommandKind::HostTask;
           cmd->hostTask = fn;
           cmd->userData = userData;
           rt.submit(*q, std::move(cmd));
           return MIMIC_SUCCESS;
         });
}

}  // extern "C"
