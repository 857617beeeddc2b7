// The boxed kernel of every reduction overload of the op table (sum, sum.dim_IntList,
// sum.IntList_out, max.dim, argmax, all.dim, ...), prepared at registration from the schema:
// the dims of `dim` (all when absent, None or []), `keepdim`, the `dtype` argument and out=
// tensors. Inputs or results of dtypes the device does not compute in run through the counted
// CPU fallback.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <memory>
#include <string>
#include <vector>

#include "torch_backend/aten/op_table.h"

namespace mimic::torch_backend::aten {

class ReductionKernel final : public c10::OperatorKernel {
 public:
  // Null when `schema` is not an overload of a table reduction with arguments it knows.
  static std::unique_ptr<ReductionKernel> forSchema(const c10::FunctionSchema& schema);

  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                  torch::jit::Stack* stack);

 private:
  ReductionKernel(const ReductionOp& op, std::string name) : op_(op), name_(std::move(name)) {}

  const ReductionOp& op_;
  std::string name_;                          // "aten::sum.dim_IntList", for errors
  int dim_ = -1, keepdim_ = -1, dtype_ = -1;  // argument positions; -1 where absent
  std::vector<int> outs_;                     // out= positions: values, then indices
  size_t results_ = 1;                        // 2 with indices
};

}  // namespace mimic::torch_backend::aten
