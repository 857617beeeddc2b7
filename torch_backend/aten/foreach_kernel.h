// The _foreach_* ops (multi-tensor optimiser steps) for PrivateUse1: PyTorch 1.13 registers
// their kernels for CPU and CUDA only. Each overload runs its per-tensor op (add_ for
// _foreach_add_, addcmul.out for _foreach_addcmul.Scalar_out, ...) once per list element from
// C++, where the Python loop cost 10-20 us per tensor; the per-tensor ops are the op table's
// device kernels. An in-place foreach op whose per-tensor op has no in-place form
// (_foreach_maximum_) runs the functional one and copies the result into self.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <memory>
#include <string>
#include <vector>

namespace mimic::torch_backend::aten {

class ForeachKernel final : public c10::OperatorKernel {
 public:
  // Null when `schema` is not a _foreach_ overload or has no per-tensor op of matching
  // arguments.
  static std::unique_ptr<ForeachKernel> forSchema(const c10::FunctionSchema& schema);

  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                  torch::jit::Stack* stack);

 private:
  ForeachKernel(std::string name, c10::OperatorHandle perTensor, bool copyIntoSelf);

  std::string name_;  // "aten::_foreach_add_.List", for errors
  c10::OperatorHandle perTensor_;
  bool copyIntoSelf_;         // in place through the functional per-tensor op
  c10::DispatchKeySet keys_;  // where the per-tensor op is redispatched
  std::vector<int> inputs_;   // the foreach op's arguments that are not out=, in order
  std::vector<bool> isList_;  // per input: a list, whose k-th element goes to call k
  int out_ = -1;              // the out= list's position
  bool returnsList_ = false;
};

}  // namespace mimic::torch_backend::aten
