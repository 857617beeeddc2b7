// One call of the mimic ProcessGroup as this rank sees it, and the checks and host views the
// collectives share (process_group_mimic.cpp).
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <functional>
#include <string>
#include <vector>

#include "collectives/c10d/time_model.h"

namespace mimic::c10d {

// One collective call as this rank sees it. Everything in the description must agree across
// ranks; `error` is this rank's own argument error, shared with the others so that every rank
// fails instead of waiting for it.
struct Call {
  enum Name {
    kBroadcast,
    kAllreduce,
    kAllreduceCoalesced,
    kReduce,
    kAllgather,
    kAllgatherBase,
    kAllgatherCoalesced,
    kGather,
    kScatter,
    kReduceScatter,
    kReduceScatterBase,
    kAlltoallBase,
    kAlltoall,
    kBarrier,
    kSend,
    kRecv,
  };
  Name name;
  CollectiveKind kind;
  ::c10d::OpType opType;
  int device = -1;
  at::ScalarType dtype = at::ScalarType::Undefined;
  int64_t numel = -1;  // elements that must agree (per rank), -1 if none
  int64_t root = -1;
  int64_t reduceOp = -1;
  std::vector<int64_t> inputSplits, outputSplits;  // all-to-all
  std::string error;
  uint64_t bytes = 0;  // for the time model
  // This rank's input and output bytes; agree() makes it the largest of any rank's, so that every
  // rank decides alike whether timing-only mode moves the call's bytes.
  uint64_t bufferBytes = 0;
  uint64_t sequence = 0;
  uint64_t endNs = 0;  // when the collective ends in simulated time, as the ranks agreed
};

// "mimic allreduce (collective #3, rank 1 of 2): ", the start of every error message.
std::string prefix(const Call& call, int rank, int size);

// Records the first argument error of the call.
void setError(Call& call, const std::string& message);
// Checks a tensor argument (a dense, contiguous tensor on the call's mimic device, of the
// call's dtype) and folds its device and dtype into the call.
void addTensor(Call& call, const at::Tensor& t, const std::string& what);
void addTensors(Call& call, const std::vector<at::Tensor>& tensors, const std::string& what,
                size_t expected);
void setReduceOp(Call& call, const ::c10d::ReduceOp& op);
void setRoot(Call& call, int64_t root, int size);

// Gloo (in PyTorch 1.13) has no bfloat16, int16 or bool: host views show their bytes as float16
// and uint8, which Gloo moves unchanged.
at::ScalarType glooType(at::ScalarType type);
// The host's view of a device tensor: a CPU tensor over the simulator's copy of its bytes, of
// glooType of its dtype.
at::Tensor hostView(const at::Tensor& t);
std::vector<at::Tensor> hostViews(const std::vector<at::Tensor>& tensors);

// Reduces `tensors` (host views or staging copies of the call's dtype, seen as glooType) in
// place; `run` hands Gloo the tensors and the op. Gloo lacks AVG, bfloat16 and bool: AVG is a
// SUM divided by `size` in the element type (integers truncate), bfloat16 is reduced in a
// float32 copy and rounded once when written back, and bool is reduced as uint8 ("or" for SUM
// and MAX, "and" for PRODUCT and MIN).
void reduceWithGloo(const Call& call, std::vector<at::Tensor>& tensors, int size,
                    const std::function<void(std::vector<at::Tensor>&, ::c10d::ReduceOp)>& run);

}  // namespace mimic::c10d
