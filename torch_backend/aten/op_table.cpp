#include "torch_backend/aten/op_table.h"

namespace mimic::torch_backend::aten {
namespace {

using R = ResultType;
using C = ComputeType;

// gelu(x) = x/2 (1 + erf(x/sqrt 2)); the tanh form is PyTorch's approximate="tanh".
constexpr std::string_view kGelu = "0.5 {0} mul {0} 0.7071067811865476 mul erf 1 add mul";
constexpr std::string_view kGeluTanh =
    "0.5 {0} mul {0} {0} {0} mul {0} mul 0.044715 mul add 0.7978845608028654 mul tanh 1 add mul";
// d/dx gelu = Phi(x) + x phi(x).
constexpr std::string_view kGeluGrad =
    "{1} 0.7071067811865476 mul erf 1 add 0.5 mul "
    "{1} {1} {1} mul -0.5 mul exp mul 0.3989422804014327 mul add {0} mul";
// d/dx of x/2 (1 + t), t = tanh(sqrt(2/pi) (x + 0.044715 x^3)):
// (1 + t)/2 + x/2 (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2).
#define MIMIC_GELU_TANH_INNER "{1} {1} {1} mul {1} mul 0.044715 mul add 0.7978845608028654 mul tanh"
constexpr std::string_view kGeluTanhGrad = MIMIC_GELU_TANH_INNER
    " 1 add 0.5 mul 0.5 {1} mul 1 " MIMIC_GELU_TANH_INNER " " MIMIC_GELU_TANH_INNER
    " mul sub mul 0.7978845608028654 mul 1 {1} {1} mul 0.134145 mul add mul "
    "add {0} mul";
#undef MIMIC_GELU_TANH_INNER
// Python's remainder takes the divisor's sign: C's fmod result moves by the divisor where the
// signs differ and it is not zero.
#define MIMIC_FMOD "{0} {1} rem"
constexpr std::string_view kRemainder = MIMIC_FMOD
    " 0 ne " MIMIC_FMOD " 0 lt {1} 0 lt xor and " MIMIC_FMOD " {1} add " MIMIC_FMOD " where";
#undef MIMIC_FMOD

PointwiseOp entry(std::string_view name, std::string_view variant, std::string_view program,
                  std::string_view operands, std::string_view promoted = "",
                  ResultType result = R::Promoted, ComputeType compute = C::Result) {
  return {name, variant, program, operands, promoted, result, compute};
}

std::vector<PointwiseOp> pointwiseTable() {
  return {
      // Unary math: the result keeps self's dtype, or becomes float for integer inputs.
      entry("abs", "", "{0} abs", "self"),
      entry("neg", "", "{0} neg", "self"),
      entry("exp", "", "{0} exp", "self", "", R::PromotedFloat),
      entry("exp2", "", "2 {0} pow", "self", "", R::PromotedFloat),
      entry("expm1", "", "{0} exp 1 sub", "self", "", R::PromotedFloat),
      entry("log", "", "{0} log", "self", "", R::PromotedFloat),
      entry("log2", "", "{0} log 1.4426950408889634 mul", "self", "", R::PromotedFloat),
      entry("log10", "", "{0} log 0.4342944819032518 mul", "self", "", R::PromotedFloat),
      entry("log1p", "", "{0} 1 add log", "self", "", R::PromotedFloat),
      entry("sqrt", "", "{0} sqrt", "self", "", R::PromotedFloat),
      entry("rsqrt", "", "{0} rsqrt", "self", "", R::PromotedFloat),
      entry("tanh", "", "{0} tanh", "self", "", R::PromotedFloat),
      entry("sigmoid", "", "{0} sigmoid", "self", "", R::PromotedFloat),
      entry("erf", "", "{0} erf", "self", "", R::PromotedFloat),
      entry("sin", "", "{0} sin", "self", "", R::PromotedFloat),
      entry("cos", "", "{0} cos", "self", "", R::PromotedFloat),
      entry("floor", "", "{0} floor", "self"),
      entry("ceil", "", "{0} ceil", "self"),
      entry("round", "", "{0} round", "self"),
      // round(x * 10^d) / 10^d; entry(1) is 10^decimals, which the caller computes in double.
      entry("round", "decimals", "{0} {1} mul round {1} div", "self decimals", "self"),
      entry("trunc", "", "{0} trunc", "self"),
      entry("reciprocal", "", "{0} recip", "self", "", R::PromotedFloat),
      entry("relu", "", "{0} relu", "self"),
      entry("sign", "", "{0} 0 gt {0} 0 lt sub", "self"),
      entry("sgn", "", "{0} 0 gt {0} 0 lt sub", "self"),
      entry("silu", "", "{0} {0} sigmoid mul", "self", "", R::PromotedFloat),
      entry("bitwise_not", "", "{0} not", "self"),
      // The language's `not` of uint8 is logical (bool's); a byte's complement is 255 - x.
      entry("bitwise_not", "byte", "255 {0} sub", "self"),
      entry("logical_not", "", "{0} 0 eq", "self", "", R::Bool, C::Promoted),
      entry("isnan", "", "{0} {0} ne", "self", "", R::Bool, C::Promoted),

      // Binary arithmetic. alpha scales other; alpha == 1 keeps the shorter program.
      entry("add", "", "{0} {1} add", "self other"),
      entry("add", "alpha", "{0} {1} {2} mul add", "self other alpha", "self other"),
      entry("sub", "", "{0} {1} sub", "self other"),
      entry("sub", "alpha", "{0} {1} {2} mul sub", "self other alpha", "self other"),
      entry("mul", "", "{0} {1} mul", "self other"),
      entry("div", "", "{0} {1} div", "self other", "", R::PromotedFloat),
      entry("div", "trunc", "{0} {1} div trunc", "self other"),
      entry("div", "trunc_integer", "{0} {1} div", "self other"),  // integer division truncates
      entry("div", "floor", "{0} {1} div floor", "self other", "", R::Promoted, C::PromotedFloat),
      // Integers divide exactly in their own type (a float quotient would round above 2^24 and
      // saturate INT_MIN / -1, which wraps on the CPU): the truncated quotient, one less where
      // the remainder is non-zero and the operands' signs differ.
      entry("div", "floor_integer",
            "{0} {1} rem 0 ne {0} {1} xor 0 lt and {0} {1} div 1 sub {0} {1} div where",
            "self other"),
      entry("maximum", "", "{0} {1} max", "self other"),
      entry("minimum", "", "{0} {1} min", "self other"),
      entry("bitwise_and", "", "{0} {1} and", "self other"),
      entry("bitwise_or", "", "{0} {1} or", "self other"),
      entry("bitwise_xor", "", "{0} {1} xor", "self other"),
      entry("fmod", "", "{0} {1} rem", "self other"),
      entry("remainder", "", kRemainder, "self other"),
      entry("pow", "", "{0} {1} pow", "self exponent"),
      entry("pow", "square", "{0} {0} mul", "self", "self exponent"),

      // Comparisons and logic: bool results, computed in the promoted dtype.
      entry("eq", "", "{0} {1} eq", "self other", "", R::Bool, C::Promoted),
      entry("ne", "", "{0} {1} ne", "self other", "", R::Bool, C::Promoted),
      entry("lt", "", "{0} {1} lt", "self other", "", R::Bool, C::Promoted),
      entry("le", "", "{0} {1} le", "self other", "", R::Bool, C::Promoted),
      entry("gt", "", "{0} {1} gt", "self other", "", R::Bool, C::Promoted),
      entry("ge", "", "{0} {1} ge", "self other", "", R::Bool, C::Promoted),
      entry("logical_and", "", "{0} 0 ne {1} 0 ne and", "self other", "", R::Bool, C::Promoted),
      entry("logical_or", "", "{0} 0 ne {1} 0 ne or", "self other", "", R::Bool, C::Promoted),
      entry("logical_xor", "", "{0} 0 ne {1} 0 ne xor", "self other", "", R::Bool, C::Promoted),

      // Selection, clamping and fused arithmetic.
      entry("where", "", "{0} 0 ne {1} {2} where", "condition self other", "self other"),
      entry("masked_fill", "", "{1} 0 ne {2} {0} where", "self mask value", "self"),
      entry("clamp", "min", "{0} {1} max", "self min"),
      entry("clamp", "max", "{0} {1} min", "self max"),
      entry("clamp", "min max", "{0} {1} max {2} min", "self min max"),
      entry("clamp_min", "", "{0} {1} max", "self min"),
      entry("clamp_max", "", "{0} {1} min", "self max"),
      entry("lerp", "", "{0} {2} {1} {0} sub mul add", "self end weight", "", R::FirstOperand),
      entry("addcmul", "", "{0} {1} {2} mul {3} mul add", "self tensor1 tensor2 value",
            "self tensor1 tensor2"),
      entry("addcdiv", "", "{0} {1} {2} div {3} mul add", "self tensor1 tensor2 value",
            "self tensor1 tensor2"),

      // Fills. A bool tensor takes value != 0, computed in the value's own dtype.
      entry("fill", "", "{1}", "self value", "self", R::FirstOperand),
      entry("fill", "bool", "{1} 0 ne", "self value", "value", R::FirstOperand, C::Promoted),
      entry("zero", "", "0", "self", "", R::FirstOperand),

      // Activations and their backwards.
      entry("gelu", "none", kGelu, "self"),
      entry("gelu", "tanh", kGeluTanh, "self"),
      entry("gelu_backward", "none", kGeluGrad, "grad_output self", "self"),
      entry("gelu_backward", "tanh", kGeluTanhGrad, "grad_output self", "self"),
      entry("silu_backward", "", "{0} {1} sigmoid mul 1 {1} 1 {1} sigmoid sub mul add mul",
            "grad_output self", "self"),
      entry("sigmoid_backward", "", "{0} 1 {1} sub mul {1} mul", "grad_output output", "output"),
      entry("tanh_backward", "", "{0} 1 {1} {1} mul sub mul", "grad_output output", "output"),
      entry("threshold", "", "{0} {1} le {2} {0} where", "self threshold value", "self"),
      entry("threshold_backward", "", "{1} {2} le 0 {0} where", "grad_output self threshold", "",
            R::FirstOperand),
      entry("leaky_relu", "", "{0} 0 gt {0} {0} {1} mul where", "self negative_slope", "self"),
      entry("leaky_relu_backward", "", "{1} 0 gt {0} {0} {2} mul where",
            "grad_output self negative_slope", "", R::FirstOperand),
      entry("elu", "", "{0} 0 gt {0} {0} {3} mul exp 1 sub {1} mul where {2} mul",
            "self alpha scale input_scale", "self"),
      // From the input x: dx = dy scale (x > 0), dy input_scale scale alpha exp(x input_scale).
      entry("elu_backward", "input",
            "{4} 0 gt {0} {2} mul {0} {3} mul {2} mul {1} mul {4} {3} mul exp mul where",
            "grad_output alpha scale input_scale self_or_result", "", R::FirstOperand),
      // From the output y: for y <= 0, dy/dx = input_scale (y + alpha scale).
      entry("elu_backward", "result",
            "{4} 0 gt {0} {2} mul {0} {3} mul {4} {1} {2} mul add mul where",
            "grad_output alpha scale input_scale self_or_result", "", R::FirstOperand),
      // log(sigmoid(x)) = min(x, 0) - log(1 + exp(-|x|)), stable for large |x|.
      entry("log_sigmoid_forward", "", "{0} 0 min 0 {0} abs sub exp 1 add log sub", "self"),
      entry("log_sigmoid_backward", "", "{0} 0 {1} sub sigmoid mul", "grad_output self", "self"),
  };
}

// Flags of x != 0 (NaN counts as true) are reduced by min for all() and by max for any().
std::vector<ReductionOp> reductionTable() {
  return {
      {"sum", "sum", "", "", ReductionResult::Accumulated},
      {"mean", "sum", "", "", ReductionResult::Float, /*mean=*/true},
      {"prod", "prod", "", "", ReductionResult::Accumulated},
      {"amax", "max", "", "", ReductionResult::Input},
      {"amin", "min", "", "", ReductionResult::Input},
      {"max", "max", "argmax", "", ReductionResult::Input},
      {"min", "min", "argmin", "", ReductionResult::Input},
      {"argmax", "argmax", "", "", ReductionResult::Index},
      {"argmin", "argmin", "", "", ReductionResult::Index},
      {"all", "min", "", "{0} 0 ne", ReductionResult::Flag},
      {"any", "max", "", "{0} 0 ne", ReductionResult::Flag},
  };
}

std::vector<KernelOp> kernelTable() {
  return {
      {"mm", "gemm", "gemm", "C = A B"},
      {"bmm", "gemm", "gemm", "C[b] = A[b] B[b], batch as the leading dim of each view"},
      {"addmm", "gemm", "gemm",
       "C = beta self + alpha A B; a 1-d or row self is the bias epilogue"},
      {"baddbmm", "gemm", "gemm", "C[b] = beta self[b] + alpha A[b] B[b]"},
      {"mv", "gemm", "gemm", "y = A x as an (m x k)(k x 1) GEMM"},
      {"dot", "gemm", "reduce", "sum of x * y: the reduce kernel's mul map"},
      {"vdot", "gemm", "reduce", "dot for real dtypes"},
      {"index_select", "index", "index_select", "rows of self along dim by index"},
      {"gather", "index", "gather", "self[index] along dim"},
      {"scatter", "index", "scatter", "src (or a value) written at index along dim"},
      {"scatter_add", "index", "scatter", "src accumulated at index along dim"},
      {"index_add", "index", "index_add", "alpha source accumulated at index along dim"},
      {"index", "index", "index_select",
       "advanced indexing by tensors, as index_select of the "
       "linearised indices"},
      {"index_put", "index", "index_put", "values written (or accumulated) at tensor indices"},
      {"embedding_dense_backward", "index", "index_add", "gradients accumulated per index"},
      {"cat", "index", "copy", "each input copied into its slice of the result"},
  };
}

}  // namespace

// Tables are built on first use: registration reads them while libraries load, when the order
// of other translation units' static initialisers is unspecified.
const std::vector<KernelOp>& kernelOps() {
  static const std::vector<KernelOp> table = kernelTable();
  return table;
}

const std::vector<PointwiseOp>& pointwiseOps() {
  static const std::vector<PointwiseOp> table = pointwiseTable();
  return table;
}

const std::vector<ReductionOp>& reductionOps() {
  static const std::vector<ReductionOp> table = reductionTable();
  return table;
}

const ReductionOp* findReductionOp(std::string_view name) {
  for (const ReductionOp& op : reductionOps()) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

const PointwiseOp* findPointwiseOp(std::string_view name, std::string_view variant) {
  for (const PointwiseOp& op : pointwiseOps()) {
    if (op.name == name && op.variant == variant) return &op;
  }
  return nullptr;
}

}  // namespace mimic::torch_backend::aten
