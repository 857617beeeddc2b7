// The one table of the aten ops mimic runs on the device through C++ kernels. Pointwise ops:
// for each op (and each variant of it that needs another program), the elementwise program
// template, the schema arguments it reads, and its type-promotion rule. Reductions: the reduce
// kernel's kind, an elementwise prologue, and the result dtype rule. GEMM and index ops: the
// kernel they run. Eager registration
// (pointwise_kernel.cpp) reads it, and so does Python through torch.ops.mimic.op_table()
// (torch_mimic.op_table()), so a compiler lowers from the same facts and never keeps a copy.
//
// A template is a program of the elementwise language (torch_backend/ops/elementwise_program.h)
// in which {0}, {1}, ... stand for the operands, in the order `operands` names them. At a call,
// a tensor operand becomes an input (x0, x1, ...) and a Python number or CPU 0-dim tensor a
// scalar kernel argument (s0, s1, ...), so a new scalar value never builds a new kernel.
// Broadcasting is PyTorch's: tensor operands broadcast to one shape, the output's.
#pragma once

#include <string_view>
#include <vector>

namespace mimic::torch_backend::aten {

// How the result dtype follows from the operands that take part in promotion.
enum class ResultType {
  Promoted,       // torch.result_type of them
  PromotedFloat,  // as Promoted, but an integral or bool result becomes the default float dtype
  Bool,           // bool
  FirstOperand,   // the first operand's dtype (activation backwards: the gradient's)
};

// The dtype a program computes in, before the half types widen to float32 (as PyTorch's
// opmath does) and bool narrows to uint8.
enum class ComputeType {
  Result,         // the result dtype
  Promoted,       // the promoted dtype of the operands (comparisons compute in it)
  PromotedFloat,  // the promoted dtype, float32 where that is integral (floor division)
};

struct PointwiseOp {
  std::string_view name;      // aten op without overload: "add" serves add.Tensor, add_.Scalar,
                              // add.out, ...; in-place-only ops drop their "_" ("fill")
  std::string_view variant;   // "" or the variant a call selects (pointwise_variant.h)
  std::string_view program;   // the template
  std::string_view operands;  // schema argument names for {0}, {1}, ..., space separated
  std::string_view promoted;  // the operands that decide the result dtype; "" = all of them
  ResultType result = ResultType::Promoted;
  ComputeType compute = ComputeType::Result;
};

const std::vector<PointwiseOp>& pointwiseOps();
// The entry of `name` and `variant`, or nullptr.
const PointwiseOp* findPointwiseOp(std::string_view name, std::string_view variant);

// The result dtype of a reduction.
enum class ReductionResult {
  Accumulated,  // the dtype argument, else int64 for integral and bool inputs, else the input's
  Float,        // the dtype argument, else the input's; it must be floating (mean)
  Input,        // the input's (amax, max)
  Index,        // int64 (argmax)
  Flag,         // bool, or uint8 for a uint8 input (all, any)
};

// A reduction over the dims of the `dim` argument (all dims when it is absent, None or []),
// on the reduce kernel (torch_backend/ops/reduce.h).
struct ReductionOp {
  std::string_view name;      // aten op: "sum" serves sum, sum.dim_IntList and sum.IntList_out
  std::string_view reduce;    // the kernel's kind: sum prod max min argmax argmin
  std::string_view indices;   // "" or the kind of a second result, the indices (max.dim)
  std::string_view prologue;  // "" or an elementwise template applied first ({0}: the input)
  ReductionResult result = ReductionResult::Input;
  bool mean = false;  // the sum is divided by the number of elements reduced
};

const std::vector<ReductionOp>& reductionOps();
const ReductionOp* findReductionOp(std::string_view name);

// An op whose kernel is one of the other op kernels of torch_backend/ops: a GEMM (gemm.h) or an
// index kernel (index.h). Registered from gemm_kernels.cpp and index_kernels.cpp.
struct KernelOp {
  std::string_view name;    // aten op: "addmm" serves addmm, addmm_ and addmm.out
  std::string_view kind;    // "gemm" or "index"
  std::string_view kernel;  // the ops:: function it runs: gemm, index_select, gather, ...
  std::string_view note;    // how the aten op maps onto it
};

const std::vector<KernelOp>& kernelOps();

}  // namespace mimic::torch_backend::aten
