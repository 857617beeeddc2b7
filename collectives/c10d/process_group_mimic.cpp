#include "collectives/c10d/process_group_mimic.h"

#include "collectives/c10d/call.h"

#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>
#include <c10/core/StreamGuard.h>

#include <algorithm>
#include <mutex>
#include <sstream>

#include "torch_backend/src/device_runtime.h"

namespace mimic::c10d {

using ::c10d::OpType;
using ::c10d::ReduceOp;
using ::c10d::Work;
using mimic::torch_backend::kDeviceType;

// What queued clock tasks need; they may run after the group is gone.
struct SharedState {
  c10::intrusive_ptr<::c10d::ProcessGroup> clock;
  c10::intrusive_ptr<::c10d::Store> store;
  int rank = 0;
  int size = 1;
  std::chrono::milliseconds timeout{0};
  std::mutex mutex;
  std::string asyncError;  // the first failed clock exchange, reported by the next call

  void recordError(const std::string& message) {
    std::lock_guard<std::mutex> lock(mutex);
    if (asyncError.empty()) asyncError = message;
  }
  void rethrowAsyncError() {
    std::lock_guard<std::mutex> lock(mutex);
    TORCH_CHECK(asyncError.empty(), asyncError);
  }
};

namespace {

const char* callName(int name) {
  static const char* const names[] = {"broadcast",
                                      "allreduce",
                                      "allreduce_coalesced",
                                      "reduce",
                                      "allgather",
                                      "_allgather_base",
                                      "allgather_coalesced",
                                      "gather",
                                      "scatter",
                                      "reduce_scatter",
                                      "_reduce_scatter_base",
                                      "alltoall_base",
                                      "alltoall",
                                      "barrier",
                                      "send",
                                      "recv"};
  return name >= 0 && name < int(sizeof names / sizeof *names) ? names[name] : "unknown";
}

}  // namespace

std::string prefix(const Call& call, int rank, int size) {
  return "mimic " + std::string(callName(call.name)) + " (collective #" +
         std::to_string(call.sequence) + ", rank " + std::to_string(rank) + " of " +
         std::to_string(size) + "): ";
}

namespace {

const char* reduceOpName(int64_t op) {
  switch (op) {
    case ReduceOp::SUM:
      return "SUM";
    case ReduceOp::AVG:
      return "AVG";
    case ReduceOp::PRODUCT:
      return "PRODUCT";
    case ReduceOp::MIN:
      return "MIN";
    case ReduceOp::MAX:
      return "MAX";
    case ReduceOp::BAND:
      return "BAND";
    case ReduceOp::BOR:
      return "BOR";
    case ReduceOp::BXOR:
      return "BXOR";
    case ReduceOp::PREMUL_SUM:
      return "PREMUL_SUM";
    default:
      return "unknown";
  }
}

}  // namespace

void setError(Call& call, const std::string& message) {
  if (call.error.empty()) call.error = message;
}

// Checks one tensor of the call and folds its device and dtype into the call.
void addTensor(Call& call, const at::Tensor& t, const std::string& what) {
  if (!call.error.empty()) return;
  if (!t.defined()) return setError(call, what + " is an undefined tensor");
  if (t.device().type() != kDeviceType) {
    return setError(
        call, what + " is on " + t.device().str() + ", not on a mimic device (privateuseone)");
  }
  if (t.layout() != c10::kStrided) return setError(call, what + " is not a dense tensor");
  if (!t.is_contiguous()) {
    return setError(call, what + " is not contiguous; mimic collectives need contiguous " +
                              "tensors (call .contiguous() first)");
  }
  if (call.device < 0) {
    call.device = t.device().index();
  } else if (t.device().index() != call.device) {
    return setError(call, what + " is on " + t.device().str() + " but the call's first tensor " +
                              "is on privateuseone:" + std::to_string(call.device));
  }
  if (call.dtype == at::ScalarType::Undefined) {
    call.dtype = t.scalar_type();
  } else if (t.scalar_type() != call.dtype) {
    return setError(call, what + " has dtype " + std::string(c10::toString(t.scalar_type())) +
                              " but the call's first tensor has " + c10::toString(call.dtype));
  }
}

void addTensors(Call& call, const std::vector<at::Tensor>& tensors, const std::string& what,
                size_t expected) {
  if (tensors.size() != expected) {
    return setError(call, what + " holds " + std::to_string(tensors.size()) +
                              " tensors, expected " + std::to_string(expected));
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    addTensor(call, tensors[i], what + "[" + std::to_string(i) + "]");
  }
}

void setReduceOp(Call& call, const ReduceOp& op) {
  call.reduceOp = op.op_;
  switch (op.op_) {
    case ReduceOp::SUM:
    case ReduceOp::AVG:
    case ReduceOp::PRODUCT:
    case ReduceOp::MIN:
    case ReduceOp::MAX:
      return;
    default:
      setError(call, std::string("reduce op ") + reduceOpName(op.op_) +
                         " is not supported (SUM, AVG, PRODUCT, MIN and MAX are)");
  }
}

void setRoot(Call& call, int64_t root, int size) {
  call.root = root;
  if (root < 0 || root >= size) {
    setError(call,
             "root rank " + std::to_string(root) + " is outside 0.." + std::to_string(size - 1));
  }
}

at::Tensor hostView(const at::Tensor& t) {
  if (t.numel() == 0) return at::empty(t.sizes(), t.options().device(at::kCPU));
  void* view = nullptr;
  MIMIC_TORCH_CHECK(mimicMemGetHostView(t.data_ptr(), t.nbytes(), &view));
  return at::from_blob(view, t.sizes(), t.strides(), t.options().device(at::kCPU));
}

std::vector<at::Tensor> hostViews(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> views;
  views.reserve(tensors.size());
  for (const at::Tensor& t : tensors) views.push_back(hostView(t));
  return views;
}

ReduceOp glooOp(int64_t op) {
  return op == ReduceOp::AVG ? ReduceOp(ReduceOp::SUM) : ReduceOp(ReduceOp::RedOpType(op));
}

void finishAverage(const Call& call, at::Tensor& view, int size) {
  if (call.reduceOp != ReduceOp::AVG) return;
  if (at::isIntegralType(view.scalar_type(), /*includeBool=*/true)) {
    view.div_(size, "trunc");
  } else {
    view.div_(size);
  }
}

namespace {

// The clock exchange, run on the simulation thread when the collective queue reaches the call.
struct ClockTask {
  enum Mode { kCollective, kSend, kRecv };
  std::shared_ptr<SharedState> shared;
  Mode mode = kCollective;
  CollectiveKind kind = CollectiveKind::Barrier;
  uint64_t bytes = 0;
  LinkModel link{};
  std::string key;  // point to point: where the sender leaves its clock

  static uint64_t run(void* data, uint64_t startNs) {
    std::unique_ptr<ClockTask> task(static_cast<ClockTask*>(data));
    try {
      return task->endNs(startNs);
    } catch (const std::exception& e) {
      task->shared->recordError("mimic: exchanging simulated clocks with the other ranks " +
                                std::string("failed: ") + e.what());
      return startNs;
    }
  }

  uint64_t endNs(uint64_t startNs) {
    const uint64_t own = collectiveNs(kind, shared->size, bytes, link);
    if (mode == kSend) {
      shared->store->set(key, std::vector<uint8_t>(reinterpret_cast<uint8_t*>(&startNs),
                                                   reinterpret_cast<uint8_t*>(&startNs) + 8));
      return startNs + own;  // the bytes leave eagerly, as from a staging buffer
    }
    if (mode == kRecv) {
      shared->store->wait({key}, shared->timeout);
      const std::vector<uint8_t> value = shared->store->get(key);
      shared->store->deleteKey(key);
      uint64_t sentNs = 0;
      std::copy(value.begin(), value.begin() + std::min<size_t>(8, value.size()),
                reinterpret_cast<uint8_t*>(&sentNs));
      return std::max(startNs, sentNs + own);
    }
    if (shared->size == 1) return startNs;
    std::vector<at::Tensor> clocks{at::full({1}, int64_t(startNs), at::kLong)};
    ::c10d::AllreduceOptions opts;
    opts.reduceOp = ReduceOp::MAX;
    shared->clock->allreduce(clocks, opts)->wait(shared->timeout);
    return uint64_t(clocks[0].item<int64_t>()) + own;
  }
};

// A finished collective: its data has moved, and its future completes on the collective queue
// at the simulated time the link model gives. `deferred` (point to point) finishes the Gloo
// transfer when the caller first waits.
class MimicWork : public Work {
 public:
  MimicWork(OpType type, std::vector<at::Tensor> outputs,
            c10::intrusive_ptr<c10::ivalue::Future> future, std::shared_ptr<SharedState> shared,
            std::function<void()> deferred)
      : Work(shared->rank, type),
        outputs_(std::move(outputs)),
        future_(std::move(future)),
        shared_(std::move(shared)),
        deferred_(std::move(deferred)) {}

  bool isCompleted() override { return !deferred_ && future_->completed(); }
  bool isSuccess() const override { return true; }
  bool wait(std::chrono::milliseconds /*timeout*/) override {
    runDeferred();
    shared_->rethrowAsyncError();
    future_->wait();
    return true;
  }
  void synchronize() override { wait(std::chrono::milliseconds(0)); }
  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override {
    runDeferred();
    return future_;
  }

 private:
  void runDeferred() {
    std::function<void()> deferred;
    std::swap(deferred, deferred_);
    if (deferred) deferred();
  }

  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  std::shared_ptr<SharedState> shared_;
  std::function<void()> deferred_;
};

}  // namespace

struct ProcessGroupMimic::DeviceQueue {
  c10::Stream stream;
  mimicQueue queue = nullptr;
  mimicEvent ready = nullptr;  // the caller's stream reached the collective
  mimicEvent done = nullptr;   // the latest collective's clock task has ended
  bool pending = false;        // done is recorded and not yet waited for
  LinkModel link{};
};

ProcessGroupMimic::ProcessGroupMimic(c10::intrusive_ptr<::c10d::Store> store, int rank, int size,
                                     c10::intrusive_ptr<::c10d::ProcessGroup> data,
                                     c10::intrusive_ptr<::c10d::ProcessGroup> clock,
                                     std::chrono::milliseconds timeout)
    : ProcessGroup(rank, size),
      store_(std::move(store)),
      data_(std::move(data)),
      shared_(std::make_shared<SharedState>()),
      timeout_(timeout) {
  shared_->clock = std::move(clock);
  shared_->store = store_;
  shared_->rank = rank;
  shared_->size = size;
  shared_->timeout = timeout;
}

ProcessGroupMimic::~ProcessGroupMimic() {
  // Peers may still wait for this rank's clocks; their own timeouts bound the wait.
  for (auto& entry : queues_) {
    if (entry.second->pending) mimicEventSynchronize(entry.second->done);
    mimicEventDestroy(entry.second->ready);
    mimicEventDestroy(entry.second->done);
  }
}

// A simulation reaches a clock task only when its host's clock passes it or its host waits for
// the device. Before blocking on the other ranks, the host therefore waits (in simulated time)
// for its earlier collectives, so that every rank's simulation can serve the others' clock
// exchanges. The host's clock then stands at their end: collectives overlap with the work
// queued before the next one, one collective in flight at a time.
void ProcessGroupMimic::settleClocks() {
  for (auto& entry : queues_) {
    DeviceQueue& dq = *entry.second;
    if (!dq.pending) continue;
    dq.pending = false;
    MIMIC_TORCH_CHECK(mimicEventSynchronize(dq.done));
  }
  shared_->rethrowAsyncError();
}

ProcessGroupMimic::DeviceQueue& ProcessGroupMimic::deviceQueue(int device) {
  auto& slot = queues_[device];
  if (!slot) {
    auto dq = std::make_unique<DeviceQueue>(
        DeviceQueue{torch_backend::createStream(device, MIMIC_QUEUE_PRIORITY_HIGH)});
    dq->queue = torch_backend::queueOf(dq->stream);
    MIMIC_TORCH_CHECK(mimicEventCreate(device, MIMIC_EVENT_DISABLE_TIMING, &dq->ready));
    MIMIC_TORCH_CHECK(mimicEventCreate(device, MIMIC_EVENT_DISABLE_TIMING, &dq->done));
    mimicDeviceProperties props{};
    MIMIC_TORCH_CHECK(mimicDeviceGetProperties(device, &props));
    dq->link = LinkModel::fromProperties(props);
    slot = std::move(dq);
  }
  return *slot;
}

std::string ProcessGroupMimic::missingRanks(uint64_t sequence) {
  std::string missing;
  try {
    for (int r = 0; r < getSize(); ++r) {
      const std::string key = "mimic/progress/" + std::to_string(r);
      uint64_t reached = 0;
      if (store_->check({key})) {
        const std::vector<uint8_t> value = store_->get(key);
        reached = std::stoull(std::string(value.begin(), value.end()));
      }
      if (reached < sequence) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    }
  } catch (const std::exception&) {
    return "unknown (the store is unreachable: the rank hosting it may have died)";
  }
  return missing.empty() ? "none (a peer failed during the transfer)" : missing;
}

void ProcessGroupMimic::failPeers(const Call& call, const std::string& why) {
  TORCH_CHECK(false, prefix(call, getRank(), getSize()),
              "the other ranks did not all take part within the timeout of ", timeout_.count(),
              " ms, or one of them failed. Ranks that never reached this collective: ",
              missingRanks(call.sequence), ". Gloo reported: ", why);
}

void ProcessGroupMimic::runData(const Call& call, const c10::intrusive_ptr<Work>& work) {
  try {
    work->wait(timeout_);
  } catch (const std::exception& e) {
    failPeers(call, e.what());
  }
}

void ProcessGroupMimic::agree(Call& call) {
  settleClocks();
  call.sequence = ++sequence_;
  const int size = getSize();
  const std::string where = prefix(call, getRank(), size);
  if (size == 1) {
    TORCH_CHECK(call.error.empty(), where, call.error);
    return;
  }
  const std::string progress = std::to_string(call.sequence);
  store_->set("mimic/progress/" + std::to_string(getRank()),
              std::vector<uint8_t>(progress.begin(), progress.end()));
  // name, dtype, numel, root, reduce op, error flag, then the all-to-all splits.
  const int64_t fields = 6 + 2 * int64_t(size);
  at::Tensor mine = at::zeros({fields}, at::kLong);
  int64_t* m = mine.data_ptr<int64_t>();
  m[0] = call.name;
  m[1] = int64_t(call.dtype);
  m[2] = call.numel;
  m[3] = call.root;
  m[4] = call.reduceOp;
  m[5] = call.error.empty() ? 0 : 1;
  for (size_t i = 0; i < call.inputSplits.size() && int(i) < size; ++i)
    m[6 + i] = call.inputSplits[i];
  for (size_t i = 0; i < call.outputSplits.size() && int(i) < size; ++i) {
    m[6 + size + i] = call.outputSplits[i];
  }
  at::Tensor all = at::empty({size, fields}, at::kLong);
  std::vector<std::vector<at::Tensor>> outputs{std::vector<at::Tensor>(all.unbind(0))};
  std::vector<at::Tensor> inputs{mine};
  runData(call, data_->allgather(outputs, inputs, {}));
  const auto field = [&](int r, int f) { return all[r][f].item<int64_t>(); };

  TORCH_CHECK(call.error.empty(), where, call.error);
  std::string failed;
  for (int r = 0; r < size; ++r) {
    if (field(r, 5)) failed += (failed.empty() ? "" : ", ") + std::to_string(r);
  }
  TORCH_CHECK(failed.empty(), where, "rank(s) ", failed,
              " passed invalid arguments (their own error says which); no data was moved");

  const auto disagree = [&](int f, const char* what, auto format) {
    for (int r = 1; r < size; ++r) {
      if (field(r, f) == field(0, f)) continue;
      std::ostringstream message;
      message << where << "the ranks disagree on the " << what << ": rank 0 has "
              << format(field(0, f)) << ", rank " << r << " has " << format(field(r, f));
      TORCH_CHECK(false, message.str());
    }
  };
  const auto plain = [](int64_t v) { return std::to_string(v); };
  disagree(0, "collective", [](int64_t v) { return std::string(callName(int(v))); });
  disagree(1, "dtype",
           [](int64_t v) { return std::string(c10::toString(static_cast<at::ScalarType>(v))); });
  disagree(2, "number of elements", plain);
  disagree(3, "root rank", plain);
  disagree(4, "reduce op", [](int64_t v) { return std::string(reduceOpName(v)); });
  if (call.name == Call::kAlltoallBase || call.name == Call::kAlltoall) {
    for (int r = 0; r < size; ++r) {
      const int64_t sent = field(r, 6 + getRank());
      const int64_t expected = call.outputSplits[r];
      TORCH_CHECK(sent == expected, where, "rank ", r, " sends ", sent, " elements to rank ",
                  getRank(), ", which expects ", expected, " from it");
    }
  }
}

c10::intrusive_ptr<Work> ProcessGroupMimic::finish(Call& call, std::vector<at::Tensor> outputs,
                                                   std::function<void()> deferred) {
  DeviceQueue& dq = deviceQueue(call.device);
  const c10::Stream current = torch_backend::currentStream(call.device);
  MIMIC_TORCH_CHECK(mimicEventRecord(dq.ready, torch_backend::queueOf(current)));
  MIMIC_TORCH_CHECK(mimicQueueWaitEvent(dq.queue, dq.ready));
  auto task = std::make_unique<ClockTask>();
  task->shared = shared_;
  task->kind = call.kind;
  task->bytes = call.bytes;
  task->link = dq.link;
  task->key = call.clockKey;
  if (call.name == Call::kSend) task->mode = ClockTask::kSend;
  if (call.name == Call::kRecv) task->mode = ClockTask::kRecv;
  MIMIC_TORCH_CHECK(mimicLaunchHostTask(dq.queue, &ClockTask::run, task.get()));
  task.release();  // ClockTask::run owns it now
  MIMIC_TORCH_CHECK(mimicEventRecord(dq.done, dq.queue));
  dq.pending = true;
  if (deferred) {
    // Point to point: before the caller blocks on the transfer, its simulation must be able
    // to serve the peer's clock (see settleClocks).
    mimicEvent transferred = nullptr;
    MIMIC_TORCH_CHECK(mimicEventCreate(call.device, MIMIC_EVENT_DISABLE_TIMING, &transferred));
    MIMIC_TORCH_CHECK(mimicEventRecord(transferred, dq.queue));
    deferred = [transferred, transfer = std::move(deferred)] {
      const mimicResult result = mimicEventSynchronize(transferred);
      mimicEventDestroy(transferred);
      MIMIC_TORCH_CHECK(result);
      transfer();
    };
  }
  auto future = c10::make_intrusive<c10::ivalue::Future>(
      c10::ListType::create(c10::TensorType::get()),
      std::vector<c10::Device>{c10::Device(kDeviceType, c10::DeviceIndex(call.device))});
  {
    c10::StreamGuard onCollectiveQueue(dq.stream);
    future->markCompleted(c10::IValue(outputs));
  }
  return c10::make_intrusive<MimicWork>(call.opType, std::move(outputs), std::move(future), shared_,
                                        std::move(deferred));
}

}  // namespace mimic::c10d
