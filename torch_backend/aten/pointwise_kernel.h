// The boxed kernel that runs every pointwise aten overload of the op table on the device: one
// instance per overload (add.Tensor, add_.Scalar, add.out, ...), prepared at registration from
// the schema, so that a call only reads its arguments, picks the program and launches.
//
// Functional overloads return a new tensor of the broadcast shape and the table's result
// dtype; in-place ones write self (which must hold the broadcast shape, and a dtype the result
// casts to); out= ones resize out as PyTorch's out= variants do. Operands of dtypes the device
// does not compute in (float64, int8, int16, complex) run through the counted CPU fallback.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <string>
#include <vector>

#include <map>
#include <memory>
#include <mutex>

#include "torch_backend/aten/op_table.h"
#include "torch_backend/aten/pointwise_variant.h"
#include "torch_backend/ops/kernel_cache.h"
#include "torch_backend/ops/tensor_view.h"

namespace mimic::torch_backend::aten {

struct ComplexPointwiseOp;

// One call's launch, prepared: the _foreach_ kernels gather these to launch a list at once.
struct PointwiseLaunch {
  at::Tensor target;                     // the result: new, self or out
  std::vector<ops::TensorView> inputs;   // the tensor operands, broadcast to target's shape
  const std::string* program = nullptr;  // the instantiated template (x0.., s0..)
  isa::DType compute = isa::DType::F32;
  std::vector<ops::ScalarArg> scalars;
};

class PointwiseKernel final : public c10::OperatorKernel {
 public:
  // Null when `schema` is not an overload this kernel serves (another argument, return or
  // variant rule than the table knows): that overload stays with Python or the fallback.
  static std::unique_ptr<PointwiseKernel> forSchema(const c10::FunctionSchema& schema);

  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                  torch::jit::Stack* stack);

  // Checks the call on `args` (the schema's arguments), allocates or resizes its result and
  // fills `launch`; false when the call must run through the CPU fallback (a dtype the device
  // does not compute in, a complex scalar). Throws c10::Error for arguments PyTorch rejects.
  bool prepare(const c10::IValue* args, PointwiseLaunch* launch) const;
  // Launches a prepared call (nothing for an empty result).
  void run(const PointwiseLaunch& launch) const;
  const std::string& name() const { return name_; }

 private:
  struct FlagTexts {
    std::mutex mutex;
    std::map<std::pair<unsigned, unsigned>, std::string> texts;  // (scalars, bool operands)
  };
  struct Program {
    const PointwiseOp* op = nullptr;
    std::vector<int> operands;       // schema argument positions for {0}, {1}, ...
    std::vector<int> promoted;       // schema argument positions that decide the result dtype
    std::vector<std::string> texts;  // by which operands are scalars (bit i: {i})
    // Texts in which bool tensor operands read as `x != 0`, made on first use: a bool holding
    // a byte other than 0 or 1 is true, as the CPU's loads normalise it.
    std::unique_ptr<FlagTexts> flagTexts = std::make_unique<FlagTexts>();
  };
  enum class Output { Functional, InPlace, Out };

  PointwiseKernel(std::string name, const VariantRule& rule, std::vector<int> ruleArguments,
                  Output output, int outArgument);
  const Program* programFor(std::string_view variant) const;
  // PyTorch's argument checks that come before any kernel, the complex ones included: sub's
  // bool operands and the written tensor's memory overlap.
  void checkArguments(const c10::IValue* args) const;

  std::string name_;  // "aten::add.Tensor", for errors
  const VariantRule& rule_;
  std::vector<int> ruleArguments_;  // positions of rule_.arguments, -1 where the schema lacks one
  Output output_;
  int outArgument_;             // the out= argument's position, or -1
  int alphaArgument_ = -1;      // add's and sub's alpha, checked against the result dtype
  bool subtracts_ = false;      // sub: bool operands are refused, as PyTorch's sub_check does
  bool interpolates_ = false;   // lerp: end and a tensor weight must have self's dtype
  bool checksOverlap_ = false;  // the written tensor must not overlap itself or an input
  // leaky_relu_backward's negative_slope and self_is_result, which PyTorch checks together.
  int slopeArgument_ = -1;
  int selfIsResultArgument_ = -1;
  size_t schemaArguments_ = 0;
  std::vector<Program> programs_;
  const ComplexPointwiseOp* complex_ = nullptr;  // complex64 calls run there (complex_pointwise.h)
};

}  // namespace mimic::torch_backend::aten
