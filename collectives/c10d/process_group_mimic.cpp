#include "collectives/c10d/process_group_mimic.h"

#include "collectives/c10d/call.h"
#include "mimic/mimic_debug.h"
#include "mimic/mimic_trace.h"

#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>
#include <c10/core/StreamGuard.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <sstream>

#include "driver/src/timing_mode_transfers.h"
#include "torch_backend/src/device_runtime.h"

namespace mimic::c10d {

using ::c10d::OpType;
using ::c10d::ReduceOp;
using ::c10d::Work;
using mimic::torch_backend::kDeviceType;

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
    case ReduceOp::AVG:
      if (call.dtype == at::kBool) setError(call, "reduce op AVG is not defined for bool");
      return;
    case ReduceOp::SUM:
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

at::ScalarType glooType(at::ScalarType type) {
  if (type == at::kBFloat16) return at::kHalf;  // moved as opaque 2-byte values
  if (type == at::kBool) return at::kByte;
  return type;
}

at::Tensor hostView(const at::Tensor& t) {
  const auto options = t.options().device(at::kCPU).dtype(glooType(t.scalar_type()));
  if (t.numel() == 0) return at::empty(t.sizes(), options);
  void* view = nullptr;
  MIMIC_TORCH_CHECK(mimicMemGetHostView(t.data_ptr(), t.nbytes(), &view));
  return at::from_blob(view, t.sizes(), t.strides(), options);
}

std::vector<at::Tensor> hostViews(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> views;
  views.reserve(tensors.size());
  for (const at::Tensor& t : tensors) views.push_back(hostView(t));
  return views;
}

void reduceWithGloo(const Call& call, std::vector<at::Tensor>& tensors, int size,
                    const std::function<void(std::vector<at::Tensor>&, ReduceOp)>& run) {
  std::vector<at::Tensor> gloo;
  for (const at::Tensor& t : tensors) {
    gloo.push_back(call.dtype == at::kBFloat16 ? t.view(at::kBFloat16).to(at::kFloat) : t);
  }
  ReduceOp op(
      ReduceOp::RedOpType(call.reduceOp == ReduceOp::AVG ? int64_t(ReduceOp::SUM) : call.reduceOp));
  if (call.dtype == at::kBool) {
    const bool isOr = op == ReduceOp::SUM || op == ReduceOp::MAX;
    op = ReduceOp(isOr ? ReduceOp::MAX : ReduceOp::MIN);
  }
  run(gloo, op);
  for (size_t i = 0; i < gloo.size(); ++i) {
    if (call.reduceOp == ReduceOp::AVG) {
      if (at::isIntegralType(gloo[i].scalar_type(), /*includeBool=*/false)) {
        gloo[i].div_(size, "trunc");
      } else {
        gloo[i].div_(size);
      }
    }
    if (call.dtype == at::kBFloat16) tensors[i].view(at::kBFloat16).copy_(gloo[i]);
  }
}

namespace {

// Holds the collective queue until the simulated time the ranks agreed on.
uint64_t holdUntil(void* endNs, uint64_t startNs) {
  const uint64_t end = reinterpret_cast<uintptr_t>(endNs);
  return std::max(end, startNs);
}

// A collective whose data has moved; its future completes on the collective queue at the
// simulated time the ranks agreed on. `deferred` (point to point) finishes the Gloo transfer
// when the caller first waits or asks for the future.
class MimicWork : public Work {
 public:
  MimicWork(int rank, OpType type, std::vector<at::Tensor> outputs,
            c10::intrusive_ptr<c10::ivalue::Future> future, std::function<void()> deferred)
      : Work(rank, type),
        outputs_(std::move(outputs)),
        future_(std::move(future)),
        deferred_(std::move(deferred)) {}

  bool isCompleted() override { return !deferred_ && future_->completed(); }
  bool isSuccess() const override { return true; }
  bool wait(std::chrono::milliseconds /*timeout*/) override {
    runDeferred();
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
  std::function<void()> deferred_;
};

}  // namespace

namespace {

mimicSimulationMode simulationMode() {
  torch_backend::ensureInitialized();
  mimicSimulationMode mode = MIMIC_SIMULATION_FULL;
  MIMIC_TORCH_CHECK(mimicGetSimulationMode(&mode));
  return mode;
}

}  // namespace

struct ProcessGroupMimic::DeviceQueue {
  c10::Stream stream;
  mimicQueue queue = nullptr;
  mimicEvent ready = nullptr;  // the caller's stream reached the call
};

ProcessGroupMimic::ProcessGroupMimic(c10::intrusive_ptr<::c10d::Store> store, int rank, int size,
                                     c10::intrusive_ptr<::c10d::ProcessGroup> data,
                                     std::chrono::milliseconds timeout)
    : ProcessGroup(rank, size),
      store_(std::move(store)),
      data_(std::move(data)),
      timeout_(timeout),
      timingOnly_(simulationMode() == MIMIC_SIMULATION_TIMING) {}

ProcessGroupMimic::~ProcessGroupMimic() {
  for (auto& entry : queues_) mimicEventDestroy(entry.second->ready);
}

ProcessGroupMimic::DeviceQueue& ProcessGroupMimic::deviceQueue(int device) {
  auto& slot = queues_[device];
  if (!slot) {
    auto dq = std::make_unique<DeviceQueue>(
        DeviceQueue{torch_backend::createStream(device, MIMIC_QUEUE_PRIORITY_HIGH)});
    dq->queue = torch_backend::queueOf(dq->stream);
    MIMIC_TORCH_CHECK(mimicEventCreate(device, MIMIC_EVENT_DEFAULT, &dq->ready));
    slot = std::move(dq);
  }
  return *slot;
}

uint64_t ProcessGroupMimic::arrive(int device) {
  DeviceQueue& dq = deviceQueue(device);
  const c10::Stream current = torch_backend::currentStream(device);
  MIMIC_TORCH_CHECK(mimicEventRecord(dq.ready, torch_backend::queueOf(current)));
  MIMIC_TORCH_CHECK(mimicQueueWaitEvent(dq.queue, dq.ready));
  if (getSize() == 1) return 0;
  uint64_t arrivalNs = 0;
  MIMIC_TORCH_CHECK(mimicEventSynchronize(dq.ready));
  MIMIC_TORCH_CHECK(mimicEventGetTimestamp(dq.ready, &arrivalNs));
  return arrivalNs;
}

uint64_t ProcessGroupMimic::modelNs(const Call& call, uint64_t bytes,
                                    const std::vector<int>& devices) {
  return collectiveNs(call.kind, bytes, devices, int(std::max<int64_t>(call.root, 0)));
}

double ProcessGroupMimic::linkSlowdown() {
  double factor = 1;
  MIMIC_TORCH_CHECK(mimicDebugGetLinkSlowdown(&factor));
  return factor;
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

namespace {

// MIMIC_FAULTS=...,die_at_collective=K (mimic_debug.h): this process dies at its K-th
// collective, as a peer that crashes would. mimicInit has checked the whole plan.
uint64_t plannedDeath() {
  const char* plan = std::getenv("MIMIC_FAULTS");
  if (!plan) return 0;
  const std::string text = plan;
  const std::string key = "die_at_collective=";
  const size_t at = text.find(key);
  return at == std::string::npos ? 0 : std::strtoull(text.c_str() + at + key.size(), nullptr, 10);
}

}  // namespace

void ProcessGroupMimic::agree(Call& call) {
  call.sequence = ++sequence_;
  static const uint64_t death = plannedDeath();
  if (death != 0 && call.sequence == death) {
    std::fprintf(stderr, "mimic: injected fault: rank %d exits at collective #%llu (%s)\n",
                 getRank(), static_cast<unsigned long long>(death), callName(call.name));
    std::_Exit(3);
  }
  const int size = getSize();
  const std::string where = prefix(call, getRank(), size);
  if (call.device < 0) call.device = torch_backend::currentDevice();
  const uint64_t arrivalNs = arrive(call.device);
  if (size == 1) {
    TORCH_CHECK(call.error.empty(), where, call.error);
    return;
  }
  const std::string progress = std::to_string(call.sequence);
  store_->set("mimic/progress/" + std::to_string(getRank()),
              std::vector<uint8_t>(progress.begin(), progress.end()));
  // name, dtype, numel, root, reduce op, error flag, arrival, bytes, link slow-down in parts per
  // million, device of the whole system, buffer bytes, then all-to-all splits.
  constexpr int64_t kPartsPerMillion = 1000000;
  constexpr int kSplits = 11;
  const int64_t fields = kSplits + 2 * int64_t(size);
  // Where this rank sits in the simulated system; a group that does not fit is this rank's
  // error, shared like a bad argument so that every rank fails instead of waiting.
  int device = -1;
  try {
    device = globalDevice(getRank(), size);
  } catch (const c10::Error& e) {
    if (call.error.empty()) setError(call, e.msg());
  }
  at::Tensor mine = at::zeros({fields}, at::kLong);
  int64_t* m = mine.data_ptr<int64_t>();
  m[0] = call.name;
  m[1] = int64_t(call.dtype);
  m[2] = call.numel;
  m[3] = call.root;
  m[4] = call.reduceOp;
  m[5] = call.error.empty() ? 0 : 1;
  m[6] = int64_t(arrivalNs);
  m[7] = int64_t(call.bytes);
  m[8] = std::llround(linkSlowdown() * kPartsPerMillion);
  m[9] = device;
  m[10] = int64_t(call.bufferBytes);
  for (size_t i = 0; i < call.inputSplits.size() && int(i) < size; ++i) {
    m[kSplits + i] = call.inputSplits[i];
  }
  for (size_t i = 0; i < call.outputSplits.size() && int(i) < size; ++i) {
    m[kSplits + size + i] = call.outputSplits[i];
  }
  at::Tensor all = at::empty({size, fields}, at::kLong);
  std::vector<std::vector<at::Tensor>> outputs{std::vector<at::Tensor>(all.unbind(0))};
  std::vector<at::Tensor> inputs{mine};
  runData(call, data_->allgather(outputs, inputs, {}));
  const int64_t* described = all.data_ptr<int64_t>();
  const auto field = [&](int r, int f) { return described[r * fields + f]; };

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
      const int64_t sent = field(r, kSplits + getRank());
      const int64_t expected = call.outputSplits[r];
      TORCH_CHECK(sent == expected, where, "rank ", r, " sends ", sent, " elements to rank ",
                  getRank(), ", which expects ", expected, " from it");
    }
  }
  // Every rank computes the same end: the last arrival plus the model's time for the largest
  // message any rank moves, among the ranks' devices. A rank's fault plan may slow its own
  // model's links; the collective is then as slow as the slowest rank's model says.
  uint64_t lastArrival = 0, bytes = 0;
  bool sameLinks = true;
  std::vector<int> devices;
  for (int r = 0; r < size; ++r) {
    lastArrival = std::max(lastArrival, uint64_t(field(r, 6)));
    bytes = std::max(bytes, uint64_t(field(r, 7)));
    sameLinks = sameLinks && field(r, 8) == field(0, 8);
    devices.push_back(int(field(r, 9)));
    call.bufferBytes = std::max(call.bufferBytes, uint64_t(field(r, 10)));
  }
  uint64_t modelled = modelNs(call, bytes, devices);
  if (!sameLinks) {
    at::Tensor estimate = at::full({1}, int64_t(modelled), at::kLong);
    at::Tensor estimates = at::empty({size}, at::kLong);
    std::vector<std::vector<at::Tensor>> gathered{estimates.split(1)};
    std::vector<at::Tensor> own{estimate};
    runData(call, data_->allgather(gathered, own, {}));
    modelled = uint64_t(estimates.max().item<int64_t>());
  }
  call.endNs = lastArrival + modelled;
}

bool ProcessGroupMimic::movesData(const Call& call, bool hasBytes) const {
  return hasBytes && driver::movesBytes(timingOnly_, call.bufferBytes);
}

c10::intrusive_ptr<Work> ProcessGroupMimic::finish(Call& call, std::vector<at::Tensor> outputs,
                                                   std::function<void()> deferred) {
  DeviceQueue& dq = deviceQueue(call.device);
  // A named range, so that traces show the collective (mimic_trace.h).
  const std::string range = std::string("c10d ") + callName(call.name);
  MIMIC_TORCH_CHECK(mimicQueueBeginRange(dq.queue, call.device, range.c_str()));
  MIMIC_TORCH_CHECK(
      mimicLaunchHostTask(dq.queue, &holdUntil, reinterpret_cast<void*>(uintptr_t(call.endNs))));
  MIMIC_TORCH_CHECK(mimicQueueEndRange(dq.queue, call.device));
  auto future = c10::make_intrusive<c10::ivalue::Future>(
      c10::ListType::create(c10::TensorType::get()),
      std::vector<c10::Device>{c10::Device(kDeviceType, c10::DeviceIndex(call.device))});
  {
    c10::StreamGuard onCollectiveQueue(dq.stream);
    future->markCompleted(c10::IValue(outputs));
  }
  return c10::make_intrusive<MimicWork>(getRank(), call.opType, std::move(outputs),
                                        std::move(future), std::move(deferred));
}

}  // namespace mimic::c10d
