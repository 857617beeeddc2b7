// The _foreach_* ops (multi-tensor optimiser steps) for PrivateUse1: PyTorch 1.13 registers
// their kernels for CPU and CUDA only. Each overload runs its per-tensor op (add_ for
// _foreach_add_, addcmul.out for _foreach_addcmul.Scalar_out, ...) once per list element from
// C++, where the Python loop cost 10-20 us per tensor. Where the per-tensor op is one of the op
// table's pointwise kernels and the tensors are contiguous, the whole list is one launch per 32
// tensors (ops::elementwiseList, as CUDA's multi_tensor_apply); otherwise one launch per tensor.
// An in-place foreach op whose per-tensor op has no in-place form (_foreach_maximum_) runs the
// functional one and copies the result into self.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include "torch_backend/aten/pointwise_kernel.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mimic::torch_backend::aten {

class ForeachKernel final : public c10::OperatorKernel {
 public:
  // The pointwise kernel registered for an overload, or null.
  using PointwiseOf = std::function<const PointwiseKernel*(const c10::OperatorName&)>;

  // Null when `schema` is not a _foreach_ overload or has no per-tensor op of matching
  // arguments.
  static std::unique_ptr<ForeachKernel> forSchema(const c10::FunctionSchema& schema,
                                                  const PointwiseOf& pointwiseOf);

  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                  torch::jit::Stack* stack);

 private:
  ForeachKernel(std::string name, c10::OperatorHandle perTensor, bool copyIntoSelf);

  // Prepares every call and launches them as lists; false (nothing launched) when a call needs
  // the fallback or the per-tensor op is not pointwise.
  bool launchAsLists(const std::vector<torch::jit::Stack>& calls,
                     std::vector<at::Tensor>* results) const;

  std::string name_;  // "aten::_foreach_add_.List", for errors
  c10::OperatorHandle perTensor_;
  const PointwiseKernel* pointwise_ = nullptr;  // perTensor_'s kernel, if it is pointwise
  bool copyIntoSelf_;                           // in place through the functional per-tensor op
  c10::DispatchKeySet keys_;                    // where the per-tensor op is redispatched
  std::vector<int> inputs_;   // the foreach op's arguments that are not out=, in order
  std::vector<bool> isList_;  // per input: a list, whose k-th element goes to call k
  int out_ = -1;              // the out= list's position
  bool returnsList_ = false;
};

}  // namespace mimic::torch_backend::aten
