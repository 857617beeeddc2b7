// The collectives of ProcessGroupMimic: check the arguments, agree, move the bytes between host
// views with Gloo (in timing-only mode only a small call's: movesData), and queue the timed part
// (process_group_mimic.cpp).
//
// Gloo (in PyTorch 1.13) lacks reduce_scatter and _allgather_base: reduce_scatter is an
// allreduce of a staging copy of which each rank keeps its slice, _allgather_base gathers into
// slices of the output. reduceWithGloo (call.h) covers the reductions Gloo lacks.
#include <ATen/ATen.h>

#include "collectives/c10d/call.h"
#include "collectives/c10d/process_group_mimic.h"
#include "torch_backend/src/device_runtime.h"

namespace mimic::c10d {

using ::c10d::OpType;
using ::c10d::ReduceOp;
using ::c10d::Work;

namespace {

Call newCall(Call::Name name, CollectiveKind kind, OpType type) {
  Call call;
  call.name = name;
  call.kind = kind;
  call.opType = type;
  return call;
}

uint64_t bytesOf(const std::vector<at::Tensor>& tensors) {
  uint64_t bytes = 0;
  for (const at::Tensor& t : tensors) bytes += t.nbytes();
  return bytes;
}

int64_t numelOf(const std::vector<at::Tensor>& tensors) {
  int64_t numel = 0;
  for (const at::Tensor& t : tensors) numel += t.numel();
  return numel;
}

// Every tensor of `tensors` must have `numel` elements.
void requireNumel(Call& call, const std::vector<at::Tensor>& tensors, int64_t numel,
                  const std::string& what) {
  for (size_t i = 0; i < tensors.size() && call.error.empty(); ++i) {
    if (tensors[i].numel() != numel) {
      setError(call, what + "[" + std::to_string(i) + "] has " +
                         std::to_string(tensors[i].numel()) + " elements, expected " +
                         std::to_string(numel));
    }
  }
}

// gather's outputs and scatter's inputs: on the root, one list of a tensor per rank, each of
// `numel` elements; elsewhere, nothing.
void checkRootList(Call& call, const std::vector<std::vector<at::Tensor>>& lists, bool root,
                   int64_t numel, int size, const std::string& what) {
  if (!root) {
    if (!lists.empty() && !lists[0].empty()) {
      setError(call, what + " must be empty on ranks other than the root");
    }
    return;
  }
  if (lists.size() != 1) return setError(call, "the root expects one " + what);
  addTensors(call, lists[0], what, size);
  requireNumel(call, lists[0], numel, what);
}

// The all-to-all split sizes in rows: the given ones, or equal parts of dim 0.
std::vector<int64_t> splitsOf(Call& call, const at::Tensor& t, const std::vector<int64_t>& given,
                              int size, const std::string& what) {
  const int64_t rows = t.dim() == 0 ? 1 : t.size(0);
  if (given.empty()) {
    if (rows % size != 0) {
      setError(call, what + " has " + std::to_string(rows) + " rows, which " +
                         std::to_string(size) + " ranks cannot split evenly; pass split sizes");
    }
    return std::vector<int64_t>(size, rows / size);
  }
  if (int(given.size()) != size) {
    setError(call, what + " split sizes list " + std::to_string(given.size()) + " entries for " +
                       std::to_string(size) + " ranks");
    return std::vector<int64_t>(size, 0);
  }
  int64_t total = 0;
  for (int64_t s : given) total += s;
  if (total != rows) {
    setError(call, what + " split sizes add up to " + std::to_string(total) + " rows, but it has " +
                       std::to_string(rows));
  }
  return given;
}

std::string peerKey(int from, int to, int tag, uint64_t sequence) {
  return "mimic/p2p/" + std::to_string(from) + "-" + std::to_string(to) + "/" +
         std::to_string(tag) + "/" + std::to_string(sequence);
}

// A point-to-point receive: `complete` finishes it (and returns the finished Work) the first
// time the caller waits or asks for the future.
class DeferredWork : public Work {
 public:
  DeferredWork(int rank, OpType type, std::function<c10::intrusive_ptr<Work>()> complete)
      : Work(rank, type), complete_(std::move(complete)) {}

  bool isCompleted() override { return done_ && done_->isCompleted(); }
  bool isSuccess() const override { return true; }
  bool wait(std::chrono::milliseconds timeout) override { return finished()->wait(timeout); }
  void synchronize() override { finished()->synchronize(); }
  std::vector<at::Tensor> result() override { return finished()->result(); }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return finished()->getFuture(); }

 private:
  const c10::intrusive_ptr<Work>& finished() {
    if (!done_) done_ = complete_();
    return done_;
  }

  std::function<c10::intrusive_ptr<Work>()> complete_;
  c10::intrusive_ptr<Work> done_;
};

}  // namespace

void ProcessGroupMimic::checkPeer(Call& call, int peer, const char* role) {
  if (peer < 0 || peer >= getSize() || peer == getRank()) {
    setError(call, std::string(role) + " rank " + std::to_string(peer) +
                       " is not another rank of 0.." + std::to_string(getSize() - 1));
  }
}

c10::intrusive_ptr<Work> ProcessGroupMimic::allreduce(std::vector<at::Tensor>& tensors,
                                                      const ::c10d::AllreduceOptions& opts) {
  Call call = newCall(Call::kAllreduce, CollectiveKind::AllReduce, OpType::ALLREDUCE);
  addTensors(call, tensors, "tensors", 1);
  setReduceOp(call, opts.reduceOp);
  if (call.error.empty()) {
    call.numel = tensors[0].numel();
    call.bytes = call.bufferBytes = tensors[0].nbytes();
  }
  agree(call);
  if (movesData(call, call.numel > 0)) {
    std::vector<at::Tensor> views = hostViews(tensors);
    reduceWithGloo(call, views, getSize(), [&](std::vector<at::Tensor>& gloo, ReduceOp op) {
      ::c10d::AllreduceOptions opts;
      opts.reduceOp = op;
      runData(call, data_->allreduce(gloo, opts));
    });
  }
  return finish(call, tensors);
}

c10::intrusive_ptr<Work> ProcessGroupMimic::allreduce_coalesced(
    std::vector<at::Tensor>& tensors, const ::c10d::AllreduceCoalescedOptions& opts) {
  Call call =
      newCall(Call::kAllreduceCoalesced, CollectiveKind::AllReduce, OpType::ALLREDUCE_COALESCED);
  if (tensors.empty()) setError(call, "tensors is empty");
  addTensors(call, tensors, "tensors", tensors.size());
  setReduceOp(call, opts.reduceOp);
  if (call.error.empty()) {
    call.numel = numelOf(tensors);
    call.bytes = call.bufferBytes = bytesOf(tensors);
  }
  agree(call);
  if (movesData(call, call.numel > 0)) {
    std::vector<at::Tensor> views = hostViews(tensors);
    reduceWithGloo(call, views, getSize(), [&](std::vector<at::Tensor>& gloo, ReduceOp op) {
      ::c10d::AllreduceCoalescedOptions opts;
      opts.reduceOp = op;
      runData(call, data_->allreduce_coalesced(gloo, opts));
    });
  }
  return finish(call, tensors);
}

c10::intrusive_ptr<Work> ProcessGroupMimic::broadcast(std::vector<at::Tensor>& tensors,
                                                      const ::c10d::BroadcastOptions& opts) {
  Call call = newCall(Call::kBroadcast, CollectiveKind::Broadcast, OpType::BROADCAST);
  addTensors(call, tensors, "tensors", 1);
  setRoot(call, opts.rootRank, getSize());
  if (call.error.empty()) {
    call.numel = tensors[0].numel();
    call.bytes = call.bufferBytes = tensors[0].nbytes();
  }
  agree(call);
  if (movesData(call, call.numel > 0)) {
    std::vector<at::Tensor> views = hostViews(tensors);
    ::c10d::BroadcastOptions gloo;
    gloo.rootRank = call.root;
    runData(call, data_->broadcast(views, gloo));
  }
  return finish(call, tensors);
}

c10::intrusive_ptr<Work> ProcessGroupMimic::reduce(std::vector<at::Tensor>& tensors,
                                                   const ::c10d::ReduceOptions& opts) {
  Call call = newCall(Call::kReduce, CollectiveKind::Reduce, OpType::REDUCE);
  addTensors(call, tensors, "tensors", 1);
  setRoot(call, opts.rootRank, getSize());
  setReduceOp(call, opts.reduceOp);
  if (call.error.empty()) {
    call.numel = tensors[0].numel();
    call.bytes = call.bufferBytes = tensors[0].nbytes();
  }
  agree(call);
  if (movesData(call, call.numel > 0)) {
    // Only the root's buffer is written: the others reduce from a copy.
    const bool root = getRank() == call.root;
    std::vector<at::Tensor> views = hostViews(tensors);
    if (!root) views[0] = views[0].clone();
    reduceWithGloo(call, views, getSize(), [&](std::vector<at::Tensor>& gloo, ReduceOp op) {
      ::c10d::ReduceOptions opts;
      opts.rootRank = call.root;
      opts.reduceOp = op;
      runData(call, data_->reduce(gloo, opts));
    });
  }
  return finish(call, tensors);
}

c10::intrusive_ptr<Work> ProcessGroupMimic::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                      std::vector<at::Tensor>& inputs,
                                                      const ::c10d::AllgatherOptions&) {
  Call call = newCall(Call::kAllgather, CollectiveKind::AllGather, OpType::ALLGATHER);
  addTensors(call, inputs, "input_tensor", 1);
  if (outputs.size() != 1) setError(call, "expected one output tensor list");
  if (call.error.empty()) {
    addTensors(call, outputs[0], "output_tensor_list", getSize());
    requireNumel(call, outputs[0], inputs[0].numel(), "output_tensor_list");
    call.numel = inputs[0].numel();
    call.bytes = inputs[0].nbytes() * getSize();
    call.bufferBytes = inputs[0].nbytes() + bytesOf(outputs[0]);
  }
  agree(call);
  if (movesData(call, call.numel > 0)) {
    std::vector<std::vector<at::Tensor>> outViews{hostViews(outputs[0])};
    std::vector<at::Tensor> inViews = hostViews(inputs);
    runData(call, data_->allgather(outViews, inViews, {}));
  }
  return finish(call, outputs[0]);
}

c10::intrusive_ptr<Work> ProcessGroupMimic::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                            const ::c10d::AllgatherOptions&) {
  Call call = newCall(Call::kAllgatherBase, CollectiveKind::AllGather, OpType::_ALLGATHER_BASE);
  addTensor(call, input, "input_tensor");
  addTensor(call, output, "output_tensor");
  if (call.error.empty() && output.numel() != input.numel() * getSize()) {
    setError(call, "output_tensor has " + std::to_string(output.numel()) +
                       " elements, expected world size x input = " +
                       std::to_string(input.numel() * getSize()));
  }
  if (call.error.empty()) {
    call.numel = input.numel();
    call.bytes = output.nbytes();
    call.bufferBytes = input.nbytes() + output.nbytes();
  }
  agree(call);
  if (movesData(call, call.numel > 0)) {
    std::vector<std::vector<at::Tensor>> slices{
        hostView(output).reshape({getSize(), call.numel}).unbind(0)};
    std::vector<at::Tensor> inViews{hostView(input).reshape({call.numel})};
    runData(call, data_->allgather(slices, inViews, {}));
  }
  return finish(call, {output});
}

c10::intrusive_ptr<Work> ProcessGroupMimic::allgather_coalesced(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const ::c10d::AllgatherOptions&) {
  Call call =
      newCall(Call::kAllgatherCoalesced, CollectiveKind::AllGather, OpType::ALLGATHER_COALESCED);
  if (inputs.empty()) setError(call, "input_tensor_list is empty");
  addTensors(call, inputs, "input_tensor_list", inputs.size());
  if (call.error.empty() && int(outputs.size()) != getSize()) {
    setError(call, "output_lists holds " + std::to_string(outputs.size()) +
                       " lists, expected one per rank (" + std::to_string(getSize()) + ")");
  }
  for (size_t r = 0; r < outputs.size() && call.error.empty(); ++r) {
    addTensors(call, outputs[r], "output_lists[" + std::to_string(r) + "]", inputs.size());
    for (size_t i = 0; i < inputs.size() && call.error.empty(); ++i) {
      if (outputs[r][i].numel() != inputs[i].numel()) {
        setError(call, "output_lists[" + std::to_string(r) + "][" + std::to_string(i) + "] has " +
                           std::to_string(outputs[r][i].numel()) + " elements, expected " +
                           std::to_string(inputs[i].numel()));
      }
    }
  }
  if (call.error.empty()) {
    call.numel = numelOf(inputs);
    call.bytes = bytesOf(inputs) * getSize();
    call.bufferBytes = bytesOf(inputs);
    for (const auto& list : outputs) call.bufferBytes += bytesOf(list);
  }
  agree(call);
  std::vector<at::Tensor> flat;
  for (auto& list : outputs) flat.insert(flat.end(), list.begin(), list.end());
  if (movesData(call, call.numel > 0)) {
    std::vector<std::vector<at::Tensor>> outViews;
    for (auto& list : outputs) outViews.push_back(hostViews(list));
    std::vector<at::Tensor> inViews = hostViews(inputs);
    runData(call, data_->allgather_coalesced(outViews, inViews, {}));
  }
  return finish(call, flat);
}

c10::intrusive_ptr<Work> ProcessGroupMimic::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                   std::vector<at::Tensor>& inputs,
                                                   const ::c10d::GatherOptions& opts) {
  Call call = newCall(Call::kGather, CollectiveKind::Gather, OpType::GATHER);
  addTensors(call, inputs, "input_tensor", 1);
  setRoot(call, opts.rootRank, getSize());
  const bool root = getRank() == opts.rootRank;
  if (call.error.empty()) {
    checkRootList(call, outputs, root, inputs[0].numel(), getSize(), "gather_list");
    call.numel = inputs[0].numel();
    call.bytes = inputs[0].nbytes() * getSize();
    call.bufferBytes = inputs[0].nbytes() + (root ? bytesOf(outputs[0]) : 0);
  }
  agree(call);
  std::vector<at::Tensor> results = root ? outputs[0] : std::vector<at::Tensor>{};
  if (movesData(call, call.numel > 0)) {
    std::vector<std::vector<at::Tensor>> outViews;
    if (root) outViews.push_back(hostViews(outputs[0]));
    std::vector<at::Tensor> inViews = hostViews(inputs);
    ::c10d::GatherOptions gloo;
    gloo.rootRank = call.root;
    runData(call, data_->gather(outViews, inViews, gloo));
  }
  return finish(call, results);
}

c10::intrusive_ptr<Work> ProcessGroupMimic::scatter(std::vector<at::Tensor>& outputs,
                                                    std::vector<std::vector<at::Tensor>>& inputs,
                                                    const ::c10d::ScatterOptions& opts) {
  Call call = newCall(Call::kScatter, CollectiveKind::Scatter, OpType::SCATTER);
  addTensors(call, outputs, "output_tensor", 1);
  setRoot(call, opts.rootRank, getSize());
  const bool root = getRank() == opts.rootRank;
  if (call.error.empty()) {
    checkRootList(call, inputs, root, outputs[0].numel(), getSize(), "scatter_list");
    call.numel = outputs[0].numel();
    call.bytes = outputs[0].nbytes() * getSize();
    call.bufferBytes = outputs[0].nbytes() + (root ? bytesOf(inputs[0]) : 0);
  }
  agree(call);
  if (movesData(call, call.numel > 0)) {
    std::vector<at::Tensor> outViews = hostViews(outputs);
    std::vector<std::vector<at::Tensor>> inViews;
    if (root) inViews.push_back(hostViews(inputs[0]));
    ::c10d::ScatterOptions gloo;
    gloo.rootRank = call.root;
    runData(call, data_->scatter(outViews, inViews, gloo));
  }
  return finish(call, outputs);
}

// Gloo has no reduce_scatter: every rank reduces a staging copy of the whole input and keeps
// its slice.
void ProcessGroupMimic::allreduceStaging(const Call& call, std::vector<at::Tensor>& staging) {
  reduceWithGloo(call, staging, getSize(), [&](std::vector<at::Tensor>& gloo, ReduceOp op) {
    ::c10d::AllreduceOptions opts;
    opts.reduceOp = op;
    runData(call, data_->allreduce(gloo, opts));
  });
}

c10::intrusive_ptr<Work> ProcessGroupMimic::reduce_scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const ::c10d::ReduceScatterOptions& opts) {
  Call call = newCall(Call::kReduceScatter, CollectiveKind::ReduceScatter, OpType::REDUCE_SCATTER);
  addTensors(call, outputs, "output", 1);
  setReduceOp(call, opts.reduceOp);
  if (call.error.empty() && inputs.size() != 1) setError(call, "expected one input_list");
  if (call.error.empty()) {
    addTensors(call, inputs[0], "input_list", getSize());
    requireNumel(call, inputs[0], outputs[0].numel(), "input_list");
    call.numel = outputs[0].numel();
    call.bytes = outputs[0].nbytes() * getSize();
    call.bufferBytes = outputs[0].nbytes() + bytesOf(inputs[0]);
  }
  agree(call);
  if (movesData(call, call.numel > 0)) {
    std::vector<at::Tensor> flat;
    for (const at::Tensor& view : hostViews(inputs[0])) flat.push_back(view.reshape({-1}));
    std::vector<at::Tensor> staging{at::cat(flat)};
    allreduceStaging(call, staging);
    at::Tensor mine = hostView(outputs[0]);
    mine.copy_(staging[0].reshape({getSize(), call.numel})[getRank()].view(mine.sizes()));
  }
  return finish(call, outputs);
}

c10::intrusive_ptr<Work> ProcessGroupMimic::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input, const ::c10d::ReduceScatterOptions& opts) {
  Call call = newCall(Call::kReduceScatterBase, CollectiveKind::ReduceScatter,
                      OpType::_REDUCE_SCATTER_BASE);
  addTensor(call, output, "output");
  addTensor(call, input, "input");
  setReduceOp(call, opts.reduceOp);
  if (call.error.empty() && input.numel() != output.numel() * getSize()) {
    setError(call, "input has " + std::to_string(input.numel()) +
                       " elements, expected world size x output = " +
                       std::to_string(output.numel() * getSize()));
  }
  if (call.error.empty()) {
    call.numel = output.numel();
    call.bytes = input.nbytes();
    call.bufferBytes = input.nbytes() + output.nbytes();
  }
  agree(call);
  if (movesData(call, call.numel > 0)) {
    std::vector<at::Tensor> staging{hostView(input).reshape({-1}).clone()};
    allreduceStaging(call, staging);
    at::Tensor mine = hostView(output);
    mine.copy_(staging[0].reshape({getSize(), call.numel})[getRank()].view(mine.sizes()));
  }
  return finish(call, {output});
}

c10::intrusive_ptr<Work> ProcessGroupMimic::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                          std::vector<int64_t>& outputSplits,
                                                          std::vector<int64_t>& inputSplits,
                                                          const ::c10d::AllToAllOptions&) {
  Call call = newCall(Call::kAlltoallBase, CollectiveKind::AllToAll, OpType::ALLTOALL_BASE);
  addTensor(call, input, "input");
  addTensor(call, output, "output");
  if (call.error.empty()) {
    call.inputSplits = splitsOf(call, input, inputSplits, getSize(), "input");
    call.outputSplits = splitsOf(call, output, outputSplits, getSize(), "output");
    const auto rowOf = [](const at::Tensor& t) { return t.dim() <= 1 ? int64_t(1) : t[0].numel(); };
    if (rowOf(input) != rowOf(output)) {
      setError(call, "input rows have " + std::to_string(rowOf(input)) +
                         " elements but output rows " + std::to_string(rowOf(output)));
    }
    call.numel = rowOf(input);
    call.bytes = std::max(input.nbytes(), output.nbytes());
    call.bufferBytes = input.nbytes() + output.nbytes();
  }
  agree(call);
  if (movesData(call, input.numel() > 0 || output.numel() > 0)) {
    at::Tensor outView = hostView(output);
    at::Tensor inView = hostView(input);
    runData(call, data_->alltoall_base(outView, inView, outputSplits, inputSplits, {}));
  }
  return finish(call, {output});
}

c10::intrusive_ptr<Work> ProcessGroupMimic::alltoall(std::vector<at::Tensor>& outputs,
                                                     std::vector<at::Tensor>& inputs,
                                                     const ::c10d::AllToAllOptions&) {
  Call call = newCall(Call::kAlltoall, CollectiveKind::AllToAll, OpType::ALLTOALL);
  addTensors(call, inputs, "input_tensor_list", getSize());
  addTensors(call, outputs, "output_tensor_list", getSize());
  if (call.error.empty()) {
    for (const at::Tensor& t : inputs) call.inputSplits.push_back(t.numel());
    for (const at::Tensor& t : outputs) call.outputSplits.push_back(t.numel());
    call.bytes = std::max(bytesOf(inputs), bytesOf(outputs));
    call.bufferBytes = bytesOf(inputs) + bytesOf(outputs);
  }
  agree(call);
  if (movesData(call, numelOf(inputs) > 0 || numelOf(outputs) > 0)) {
    std::vector<at::Tensor> flat;
    for (const at::Tensor& view : hostViews(inputs)) flat.push_back(view.reshape({-1}));
    at::Tensor sent = at::cat(flat);
    at::Tensor received = at::empty({numelOf(outputs)}, sent.options());
    runData(call, data_->alltoall_base(received, sent, call.outputSplits, call.inputSplits, {}));
    int64_t offset = 0;
    for (at::Tensor& view : hostViews(outputs)) {
      view.copy_(received.narrow(0, offset, view.numel()).view(view.sizes()));
      offset += view.numel();
    }
  }
  return finish(call, outputs);
}

c10::intrusive_ptr<Work> ProcessGroupMimic::barrier(const ::c10d::BarrierOptions& opts) {
  Call call = newCall(Call::kBarrier, CollectiveKind::Barrier, OpType::BARRIER);
  call.device = opts.device_ids.empty() ? torch_backend::currentDevice() : int(opts.device_ids[0]);
  agree(call);  // the exchange of descriptions is itself the barrier
  return finish(call, {});
}

c10::intrusive_ptr<Work> ProcessGroupMimic::send(std::vector<at::Tensor>& tensors, int dstRank,
                                                 int tag) {
  Call call = newCall(Call::kSend, CollectiveKind::PointToPoint, OpType::SEND);
  addTensors(call, tensors, "tensors", 1);
  checkPeer(call, dstRank, "destination");
  call.sequence = ++sendSequence_[{dstRank, tag}];
  TORCH_CHECK(call.error.empty(), prefix(call, getRank(), getSize()), call.error);
  call.bytes = call.bufferBytes = tensors[0].nbytes();
  const uint64_t arrivalNs = arrive(call.device);
  call.endNs =
      arrivalNs + modelNs(call, call.bytes,
                          {globalDevice(getRank(), getSize()), globalDevice(dstRank, getSize())});
  const std::string sentAt = std::to_string(arrivalNs);
  store_->set(peerKey(getRank(), dstRank, tag, call.sequence),
              std::vector<uint8_t>(sentAt.begin(), sentAt.end()));
  std::function<void()> deferred;
  if (movesData(call, tensors[0].numel() > 0)) {
    // A snapshot: the caller may overwrite the tensor before the peer has received it.
    std::vector<at::Tensor> staging{hostView(tensors[0]).clone()};
    auto transfer = data_->send(staging, dstRank, tag);
    const std::string where = prefix(call, getRank(), getSize()) + "sending to rank " +
                              std::to_string(dstRank) + " failed or timed out after " +
                              std::to_string(timeout_.count()) + " ms: ";
    deferred = [transfer, staging, where, timeout = timeout_] {
      try {
        transfer->wait(timeout);
      } catch (const std::exception& e) {
        TORCH_CHECK(false, where, e.what());
      }
    };
  }
  return finish(call, tensors, std::move(deferred));
}

// The receiver learns the sender's arrival only once the transfer is done, so its timed part is
// queued when it first waits; until then the Work is not complete.
c10::intrusive_ptr<Work> ProcessGroupMimic::recv(std::vector<at::Tensor>& tensors, int srcRank,
                                                 int tag) {
  Call call = newCall(Call::kRecv, CollectiveKind::PointToPoint, OpType::RECV);
  addTensors(call, tensors, "tensors", 1);
  checkPeer(call, srcRank, "source");
  call.sequence = ++recvSequence_[{srcRank, tag}];
  TORCH_CHECK(call.error.empty(), prefix(call, getRank(), getSize()), call.error);
  call.bytes = call.bufferBytes = tensors[0].nbytes();
  at::Tensor destination = tensors[0];
  std::vector<at::Tensor> staging;
  c10::intrusive_ptr<Work> transfer;
  if (movesData(call, destination.numel() > 0)) {
    staging.push_back(at::empty(destination.sizes(), destination.options().device(at::kCPU).dtype(
                                                         glooType(destination.scalar_type()))));
    transfer = data_->recv(staging, srcRank, tag);
  }
  const std::string key = peerKey(srcRank, getRank(), tag, call.sequence);
  return c10::make_intrusive<DeferredWork>(
      getRank(), OpType::RECV,
      [this, call, srcRank, transfer, staging, destination, key]() mutable {
        const std::string where = prefix(call, getRank(), getSize()) + "receiving from rank " +
                                  std::to_string(srcRank) + " failed or timed out after " +
                                  std::to_string(timeout_.count()) + " ms: ";
        try {
          if (transfer) transfer->wait(timeout_);
          store_->wait({key}, timeout_);
        } catch (const std::exception& e) {
          TORCH_CHECK(false, where, e.what());
        }
        if (transfer) hostView(destination).copy_(staging[0]);
        const std::vector<uint8_t> sentAt = store_->get(key);
        store_->deleteKey(key);
        const uint64_t sentNs = std::stoull(std::string(sentAt.begin(), sentAt.end()));
        const uint64_t arrivalNs = arrive(call.device);
        const std::vector<int> devices{globalDevice(srcRank, getSize()),
                                       globalDevice(getRank(), getSize())};
        call.endNs = std::max(arrivalNs, sentNs + modelNs(call, call.bytes, devices));
        return finish(call, {destination});
      });
}

}  // namespace mimic::c10d
