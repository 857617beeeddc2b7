// torch.ops.mimic_probe.*: mimic/torch.h's stream functions as test_custom_ops.py sees them,
// compiled into the same extension as examples/custom_ops/bias_gelu_ext.cpp.
#include <torch/library.h>

#include <cstdint>
#include <vector>

#include <mimic/torch.h>

namespace {

// [current stream id, streamOf(getCurrentQueue()) is the current stream, default stream id,
//  id under a StreamGuard of `packed`, getCurrentQueue() under it is queueOf(`packed`),
//  id after the guard, current device, device count]
std::vector<int64_t> streams(int64_t packed) {
  const c10::Stream given = c10::Stream::unpack(static_cast<uint64_t>(packed));
  const c10::Stream current = mimic::torch::getCurrentStream();
  const mimicQueue queue = mimic::torch::getCurrentQueue();
  const bool roundTrip = mimic::torch::streamOf(current.device_index(), queue) == current;
  int64_t guarded = -1;
  bool guardedQueue = false;
  {
    mimic::torch::StreamGuard guard(given);
    guarded = mimic::torch::getCurrentStream(given.device_index()).id();
    guardedQueue = mimic::torch::getCurrentQueue() == mimic::torch::queueOf(given);
  }
  mimic::torch::DeviceGuard device(current.device_index());
  return {current.id(),
          roundTrip,
          mimic::torch::getDefaultStream().id(),
          guarded,
          guardedQueue,
          mimic::torch::getCurrentStream().id(),
          mimic::torch::currentDevice(),
          mimic::torch::deviceCount()};
}

// A queue that belongs to no stream: streamOf must refuse it, naming it.
void foreignQueue() {
  mimicQueue queue = nullptr;
  MIMIC_TORCH_CHECK(mimicQueueCreate(0, 0, MIMIC_QUEUE_PRIORITY_LOW, &queue));
  try {
    mimic::torch::streamOf(0, queue);
  } catch (...) {
    mimicQueueDestroy(queue);
    throw;
  }
}

}  // namespace

TORCH_LIBRARY(mimic_probe, m) {
  m.def("streams(int packed) -> int[]", streams);
  m.def("foreign_queue() -> ()", foreignQueue);
}
