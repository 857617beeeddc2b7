#include "torch_backend/aten/complex_pointwise.h"

#include <ATen/ExpandUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TypeProperties.h>

#include "torch_backend/aten/device_call.h"
#include "torch_backend/ops/elementwise.h"
#include "torch_backend/ops/elementwise_program.h"
#include "torch_backend/src/aten_core.h"
#include "torch_backend/src/device_runtime.h"
#include "torch_backend/src/tensor_bridge.h"

namespace mimic::torch_backend::aten {
namespace {

// One value of a program: its real and imaginary parts as expressions of the elementwise
// language. A real operand has the literal "0" as its imaginary part, so that the builders below
// drop the products it would zero (a real divisor divides each part, as the CPU's does).
struct Part {
  std::string re, im;
};

// Builders of RPN text that fold the literals 0 and 1, which real operands and unit alphas give.
std::string add(const std::string& a, const std::string& b) {
  if (a == "0") return b;
  if (b == "0") return a;
  return a + " " + b + " add";
}
std::string neg(const std::string& a) {
  return a == "0" ? a : a + " neg";
}
std::string sub(const std::string& a, const std::string& b) {
  if (b == "0") return a;
  if (a == "0") return neg(b);
  return a + " " + b + " sub";
}
std::string mul(const std::string& a, const std::string& b) {
  if (a == "0" || b == "0") return "0";
  if (a == "1") return b;
  if (b == "1") return a;
  return a + " " + b + " mul";
}
std::string div(const std::string& a, const std::string& b) {
  return a == "0" ? a : a + " " + b + " div";
}
std::string call(const std::string& a, const char* op) {
  return a + " " + op;
}
// mask ? a : b
std::string where(const std::string& mask, const std::string& a, const std::string& b) {
  return mask + " " + a + " " + b + " where";
}

Part complexMul(const Part& a, const Part& b) {
  return {sub(mul(a.re, b.re), mul(a.im, b.im)), add(mul(a.re, b.im), mul(a.im, b.re))};
}

// a / b, with b scaled by max(|b.re|, |b.im|) first so that |b|^2 neither overflows nor
// underflows where the quotient is representable (as the CPU's Smith-style division avoids).
Part complexDiv(const Part& a, const Part& b) {
  if (b.im == "0") return {div(a.re, b.re), div(a.im, b.re)};
  const std::string scale = b.re + " abs " + b.im + " abs max";
  const std::string c = div(b.re, scale), d = div(b.im, scale);
  const std::string norm = add(mul(c, c), mul(d, d));
  return {div(div(add(mul(a.re, c), mul(a.im, d)), norm), scale),
          div(div(sub(mul(a.im, c), mul(a.re, d)), norm), scale)};
}

// |z| correctly rounded in nearly every case, as the CPU's hypotf gives it: |z|^2 as a pair of
// float32 (the squares' rounding errors by fma, their sum's by Fast2Sum), its square root with
// one Newton correction. Parts whose squares would overflow or lose their errors to underflow
// are scaled by the larger part first (within an ulp); 0 for 0 and inf when a part is infinite.
std::string complexAbs(const Part& z) {
  if (z.im == "0") return call(z.re, "abs");
  const std::string p1 = mul(z.re, z.re), p2 = mul(z.im, z.im);
  const std::string big = p1 + " " + p2 + " max", small = p1 + " " + p2 + " min";
  const std::string sum = add(big, small);
  const std::string low =
      add(add(sub(small, sub(sum, big)), z.re + " " + z.re + " " + p1 + " neg fma"),
          z.im + " " + z.im + " " + p2 + " neg fma");
  const std::string root = call(sum, "sqrt");
  const std::string residual = add(root + " neg " + root + " " + sum + " fma", low);
  const std::string accurate = add(root, div(residual, mul(root, "2")));

  const std::string scale = z.re + " abs " + z.im + " abs max";
  const std::string x = div(z.re, scale), y = div(z.im, scale);
  const std::string scaled = mul(scale, call(add(mul(x, x), mul(y, y)), "sqrt"));
  const std::string outOfRange = scale + " 1e18 gt " + scale + " 1e-15 lt or";
  return where(scale + " 0 eq", "0",
               where(scale + " inf eq", "inf", where(outOfRange, scaled, accurate)));
}

// The principal square root without cancellation (as csqrtf): t = sqrt(|re| / 2 + |z| / 2) is
// the part of larger magnitude, the other is |im| / (2 t), and im's sign (-0 included) goes to
// the imaginary part; 0 keeps its imaginary part (csqrt(+-0) = +-0).
Part complexSqrt(const Part& z) {
  const std::string direct =
      call(add(mul(call(z.re, "abs"), "0.5"), mul(complexAbs(z), "0.5")), "sqrt");
  // Near the float range's top, 2 sqrt(|re| / 8 + |z / 8|), whose terms cannot overflow.
  const std::string eighth = complexAbs({mul(z.re, "0.125"), mul(z.im, "0.125")});
  const std::string scaled = mul("2", call(add(mul(call(z.re, "abs"), "0.125"), eighth), "sqrt"));
  const std::string huge = z.re + " abs " + z.im + " abs max 1e37 gt";
  const std::string t = where(huge, scaled, direct);
  const std::string other = div(call(z.im, "abs"), mul(t, "2"));
  const std::string negativeIm = z.im + " 0 lt 1 " + z.im + " div 0 lt or";
  const std::string signedT = where(negativeIm, neg(t), t);
  const std::string signedOther = where(negativeIm, neg(other), other);
  const std::string nonNegative = z.re + " 0 ge";
  const std::string zero = t + " 0 eq";
  return {where(zero, "0", where(nonNegative, t, other)),
          where(zero, z.im, where(nonNegative, signedOther, signedT))};
}

// atan2(im, re) as angle() computes it (ops_complex.py, Cephes' atanf): the ratio a = min / max
// of |re| and |im| in [0, 1] (0 for 0 / 0 so that signed zeros give 0, pi, -0 or -pi; 1 for
// two infinities), reduced to |a'| <= tan(pi / 8) by a' = (a - 1) / (a + 1) (plus pi / 4), a
// degree-9 odd polynomial (a few ulps), then the octant and the half planes by the signs (-0's
// by 1 / x < 0). a' and the polynomial's value are temporaries t0 and t1 of the launch (RPN has
// no dup: inlining them would repeat each many times); `programs` receives theirs.
std::string complexAngle(const Part& z, std::vector<std::string>* programs) {
  const std::string re = z.re + " abs", im = z.im + " abs";
  const std::string big = re + " " + im + " max", small = re + " " + im + " min";
  const std::string ratio =
      where(big + " 0 eq", "0", where(re + " " + im + " eq", "1", div(small, big)));
  const std::string tanPi8 = "0.414213562373095";
  const std::string reduced = ratio + " " + tanPi8 + " gt";
  programs->push_back(where(reduced, sub(ratio, "1") + " " + add(ratio, "1") + " div", ratio));
  const std::string zz = "t0 t0 mul";
  programs->push_back("8.05374449538e-2 " + zz + " mul -1.38776856032e-1 add " + zz +
                      " mul 1.99777106478e-1 add " + zz + " mul -3.33329491539e-1 add " + zz +
                      " mul t0 mul t0 add " + reduced + " 0.7853981633974483 0 where add");
  const std::string octant = where(im + " " + re + " gt", "1.5707963267948966 t1 sub", "t1");
  const std::string halfPlane = where(z.re + " 0 lt 1 " + z.re + " div 0 lt or",
                                      "3.141592653589793 " + octant + " sub", octant);
  return where(z.im + " 0 lt 1 " + z.im + " div 0 lt or", neg(halfPlane), halfPlane);
}

// log|z|; |z| overflows for parts near the float range's top although its logarithm does not:
// there, log|z / 4| + ln 4.
std::string complexLogAbs(const Part& z) {
  const std::string quarter =
      add(call(complexAbs({mul(z.re, "0.25"), mul(z.im, "0.25")}), "log"), "1.3862943611198906");
  const std::string huge = z.re + " abs " + z.im + " abs max 1e37 gt";
  // An infinite part gives +inf even with a NaN in the other (C99's clog).
  const std::string infinite = z.re + " abs inf eq " + z.im + " abs inf eq or";
  return where(infinite, "inf", where(huge, quarter, call(complexAbs(z), "log")));
}

// The principal logarithm (clogf): log|z| + i atan2(im, re), both parts passed to `scale`
// (log10 and log2 divide by real constants). complexAngle's two temporaries precede the two
// parts in the result.
std::vector<std::string> complexLog(const Part& z, std::string (*scale)(const std::string&)) {
  std::vector<std::string> programs;
  const std::string angle = complexAngle(z, &programs);
  programs.push_back(scale(complexLogAbs(z)));
  programs.push_back(scale(angle));
  return programs;
}

// a^b = exp(b log a), as glibc's cpowf computes it: complexAngle's temporaries, then arg a and
// log|a| as temporaries t2 and t3, then exp(w) for w = b (log|a| + i arg a). Where exp(Re w) is
// 0 (a zero base and an exponent of positive real part), the result is 0 as cexpf gives it for
// -inf + i NaN, not 0 times the NaN of cos(Re b 0 + Im b (-inf)).
std::vector<std::string> complexPow(const Part& a, const Part& b) {
  std::vector<std::string> programs;
  const std::string angle = complexAngle(a, &programs);
  programs.push_back(angle);
  programs.push_back(complexLogAbs(a));
  const Part w = complexMul(b, {"t3", "t2"});
  const std::string scale = call(w.re, "exp");
  programs.push_back(where(scale + " 0 eq", "0", mul(scale, call(w.im, "cos"))));
  programs.push_back(where(scale + " 0 eq", "0", mul(scale, call(w.im, "sin"))));
  return programs;
}

enum class ComplexResult {
  Complex,  // the promoted type, which must be complex64
  Real,     // float32 (abs of complex64)
  Bool,     // bool (comparisons, isnan)
  Self,     // self's type, which must be complex64 (fill_, zero_, masked_fill_)
};

}  // namespace

// An op of the complex table: the schema arguments it reads, the ones that decide the result
// type, and the programs (one per part of the result) over their parts.
struct ComplexPointwiseOp {
  std::string_view name;
  std::vector<std::string_view> operands;  // schema argument names, in the order `build` reads
  std::vector<std::string_view> promoted;  // those deciding the result type; empty = all
  ComplexResult result = ComplexResult::Complex;
  std::vector<std::string> (*build)(const std::vector<Part>& parts) = nullptr;
  // float32 temporaries of the launch: `build`'s first programs compute them, and later
  // programs read them as t0, t1, ... (each an output of the launch read back as an input).
  int temporaries = 0;
  // Calls with more device tensor operands than this (0: no limit) take the CPU fallback.
  int maxTensors = 0;
};

namespace {

std::vector<std::string> pair(const Part& p) {
  return {p.re, p.im};
}

// A complex value is true when either part is nonzero (NaN included), as the CPU's logical ops
// read it.
std::string nonzero(const Part& p) {
  return p.re + " 0 ne " + p.im + " 0 ne or";
}

// alpha scales other: self + alpha * other (the operand list ends with alpha when the schema has
// one; it is the literal 1 when it is 1).
Part scaled(const std::vector<Part>& parts) {
  return parts.size() > 2 ? complexMul(parts[1], parts[2]) : parts[1];
}

const std::vector<ComplexPointwiseOp>& complexOps() {
  using R = ComplexResult;
  using P = const std::vector<Part>&;
  static const std::vector<ComplexPointwiseOp> ops = {
      {"add",
       {"self", "other", "alpha"},
       {"self", "other"},
       R::Complex,
       [](P p) {
         const Part b = scaled(p);
         return pair({add(p[0].re, b.re), add(p[0].im, b.im)});
       }},
      {"sub",
       {"self", "other", "alpha"},
       {"self", "other"},
       R::Complex,
       [](P p) {
         const Part b = scaled(p);
         return pair({sub(p[0].re, b.re), sub(p[0].im, b.im)});
       }},
      {"mul", {"self", "other"}, {}, R::Complex, [](P p) { return pair(complexMul(p[0], p[1])); }},
      {"div", {"self", "other"}, {}, R::Complex, [](P p) { return pair(complexDiv(p[0], p[1])); }},
      {"reciprocal",
       {"self"},
       {},
       R::Complex,
       [](P p) {
         return pair(complexDiv({"1", "0"}, p[0]));
       }},
      {"neg",
       {"self"},
       {},
       R::Complex,
       [](P p) {
         return pair({neg(p[0].re), neg(p[0].im)});
       }},
      {"exp",
       {"self"},
       {},
       R::Complex,
       [](P p) {
         const std::string e = call(p[0].re, "exp");
         return pair({mul(e, call(p[0].im, "cos")), mul(e, call(p[0].im, "sin"))});
       }},
      {"sgn",
       {"self"},
       {},
       R::Complex,
       [](P p) {
         const std::string a = complexAbs(p[0]);
         return pair(
             {where(a + " 0 eq", "0", div(p[0].re, a)), where(a + " 0 eq", "0", div(p[0].im, a))});
       }},
      {"sqrt", {"self"}, {}, R::Complex, [](P p) { return pair(complexSqrt(p[0])); }},
      {"log",
       {"self"},
       {},
       R::Complex,
       [](P p) { return complexLog(p[0], [](const std::string& x) { return x; }); },
       2},
      // A tensor base with a tensor exponent stays on the fallback: exponents of large modulus
      // scale the few ulps of log a here (hypot, then log; Cephes' atan) by |b log a|, and
      // glibc's clogf rounds within half an ulp, so that the results differ by more than
      // complex64's comparison tolerance (OpInfo's __rpow__ samples, |b log a| ~ 30). With a
      // scalar operand (square, rsqrt's gradient, 2^z in ldexp) they stay within it.
      {"pow",
       {"self", "exponent"},
       {},
       R::Complex,
       [](P p) { return complexPow(p[0], p[1]); },
       4,
       1},
      // libstdc++'s log10 divides each part of log(z) by ln 10 rounded to float; c10's log2
      // divides log(z) by the complex (ln 2, 0), which its division turns into a product with
      // 1 / ln 2 (both rounded to float).
      {"log10",
       {"self"},
       {},
       R::Complex,
       [](P p) {
         return complexLog(p[0], [](const std::string& x) { return div(x, "2.3025850929940457"); });
       },
       2},
      {"log2",
       {"self"},
       {},
       R::Complex,
       [](P p) {
         return complexLog(p[0],
                           [](const std::string& x) { return mul(x, "1 0.6931471805599453 div"); });
       },
       2},
      // self + weight (end - self) where |weight| < 0.5, else end - (end - self) (1 - weight),
      // as PyTorch's CPU kernel (exact at both ends).
      {"lerp",
       {"self", "end", "weight"},
       {"self", "end"},
       R::Complex,
       [](P p) {
         const Part diff{sub(p[1].re, p[0].re), sub(p[1].im, p[0].im)};
         const Part low = complexMul(p[2], diff);
         const Part high = complexMul(diff, {sub("1", p[2].re), neg(p[2].im)});
         const std::string small = complexAbs(p[2]) + " 0.5 lt";
         return pair({where(small, add(p[0].re, low.re), sub(p[1].re, high.re)),
                      where(small, add(p[0].im, low.im), sub(p[1].im, high.im))});
       }},
      {"addcmul",
       {"self", "tensor1", "tensor2", "value"},
       {"self", "tensor1", "tensor2"},
       R::Complex,
       [](P p) {
         const Part term = complexMul(p[3], complexMul(p[1], p[2]));
         return pair({add(p[0].re, term.re), add(p[0].im, term.im)});
       }},
      {"addcdiv",
       {"self", "tensor1", "tensor2", "value"},
       {"self", "tensor1", "tensor2"},
       R::Complex,
       [](P p) {
         const Part term = complexMul(p[3], complexDiv(p[1], p[2]));
         return pair({add(p[0].re, term.re), add(p[0].im, term.im)});
       }},
      {"abs",
       {"self"},
       {},
       R::Real,
       [](P p) { return std::vector<std::string>{complexAbs(p[0])}; }},
      {"eq",
       {"self", "other"},
       {},
       R::Bool,
       [](P p) {
         return std::vector<std::string>{p[0].re + " " + p[1].re + " eq " + p[0].im + " " +
                                         p[1].im + " eq and"};
       }},
      {"ne",
       {"self", "other"},
       {},
       R::Bool,
       [](P p) {
         return std::vector<std::string>{p[0].re + " " + p[1].re + " ne " + p[0].im + " " +
                                         p[1].im + " ne or"};
       }},
      {"logical_and",
       {"self", "other"},
       {},
       R::Bool,
       [](P p) { return std::vector<std::string>{nonzero(p[0]) + " " + nonzero(p[1]) + " and"}; }},
      {"logical_or",
       {"self", "other"},
       {},
       R::Bool,
       [](P p) { return std::vector<std::string>{nonzero(p[0]) + " " + nonzero(p[1]) + " or"}; }},
      {"logical_xor",
       {"self", "other"},
       {},
       R::Bool,
       [](P p) { return std::vector<std::string>{nonzero(p[0]) + " " + nonzero(p[1]) + " ne"}; }},
      {"logical_not",
       {"self"},
       {},
       R::Bool,
       [](P p) { return std::vector<std::string>{p[0].re + " 0 eq " + p[0].im + " 0 eq and"}; }},
      {"isnan",
       {"self"},
       {},
       R::Bool,
       [](P p) {
         return std::vector<std::string>{p[0].re + " " + p[0].re + " ne " + p[0].im + " " +
                                         p[0].im + " ne or"};
       }},
      {"where",
       {"condition", "self", "other"},
       {"self", "other"},
       R::Complex,
       [](P p) {
         const std::string mask = p[0].re + " 0 ne";
         return pair({where(mask, p[1].re, p[2].re), where(mask, p[1].im, p[2].im)});
       }},
      {"masked_fill",
       {"self", "mask", "value"},
       {"self"},
       R::Self,
       [](P p) {
         const std::string mask = p[1].re + " 0 ne";
         return pair({where(mask, p[2].re, p[0].re), where(mask, p[2].im, p[0].im)});
       }},
      {"fill", {"self", "value"}, {"self"}, R::Self, [](P p) { return pair(p[1]); }},
      {"zero",
       {"self"},
       {},
       R::Self,
       [](P) {
         return pair({"0", "0"});
       }},
  };
  return ops;
}

bool isComplexValue(const c10::IValue& value) {
  if (value.isTensor()) return value.toTensor().is_complex();
  return value.isComplexDouble();
}

// A real scalar argument: literals for 0 and 1 (so that a unit alpha costs nothing and stays
// exact), a kernel argument otherwise.
std::string realScalar(double value, std::vector<ops::ScalarArg>* scalars) {
  if (value == 0 || value == 1) return value == 0 ? "0" : "1";
  scalars->push_back(ops::ScalarArg(value));
  return "s" + std::to_string(scalars->size() - 1);
}

// `program` with the temporaries' names t0, t1, ... replaced by the inputs the launch reads them
// as (x<inputs + i>).
std::string withTemporaries(const std::string& program, size_t inputs) {
  std::string result;
  size_t start = 0;
  while (start < program.size()) {
    size_t end = program.find(' ', start);
    if (end == std::string::npos) end = program.size();
    const std::string_view word(program.data() + start, end - start);
    if (!result.empty()) result += ' ';
    if (word.size() > 1 && word[0] == 't' && word.find_first_not_of("0123456789", 1) == word.npos) {
      result += "x" + std::to_string(inputs + std::stoul(std::string(word.substr(1))));
    } else {
      result += word;
    }
    start = end + 1;
  }
  return result;
}

}  // namespace

const ComplexPointwiseOp* findComplexPointwiseOp(std::string_view op) {
  for (const ComplexPointwiseOp& entry : complexOps()) {
    if (entry.name == op) return &entry;
  }
  return nullptr;
}

bool runComplexPointwise(const ComplexPointwiseOp& op, const c10::FunctionSchema& schema,
                         const c10::IValue* args, bool inPlace, int outArgument,
                         at::Tensor* result) {
  std::vector<int> positions;
  bool complex = outArgument >= 0 && isComplexValue(args[outArgument]);
  for (std::string_view name : op.operands) {
    const c10::optional<int> position =
        schema.argumentIndexWithName(c10::string_view(name.data(), name.size()));
    if (!position) continue;  // alpha of an overload without one
    positions.push_back(*position);
    complex = complex || isComplexValue(args[*position]);
  }
  if (!complex) return false;
  // div with a rounding mode: the CPU raises the error complex operands get.
  const c10::optional<int> mode = schema.argumentIndexWithName("rounding_mode");
  if (mode && !args[*mode].isNone()) return false;

  at::native::ResultTypeState state;
  for (size_t i = 0; i < positions.size(); ++i) {
    const std::string_view name = op.operands[i];
    bool promotes = op.promoted.empty();
    for (std::string_view p : op.promoted) promotes = promotes || p == name;
    if (!promotes) continue;
    const c10::IValue& value = args[positions[i]];
    state = value.isTensor() ? at::native::update_result_type_state(value.toTensor(), state)
                             : at::native::update_result_type_state(value.toScalar(), state);
  }
  const at::ScalarType promoted = at::native::result_type(state);
  const at::Tensor* self = args[0].isTensor() ? &args[0].toTensor() : nullptr;
  if (op.result == ComplexResult::Self) {
    if (!self || self->scalar_type() != at::kComplexFloat) return false;
  } else if (promoted != at::kComplexFloat) {
    return false;
  }
  const at::ScalarType resultType = op.result == ComplexResult::Real   ? at::kFloat
                                    : op.result == ComplexResult::Bool ? at::kBool
                                                                       : at::kComplexFloat;

  // Device tensors are inputs (two for a complex one); numbers and CPU 0-dim tensors scalars.
  std::vector<Part> parts;
  std::vector<const at::Tensor*> tensors;
  std::vector<ops::TensorView> inputs;
  std::vector<ops::ScalarArg> scalars;
  auto input = [&](ops::TensorView view) {
    inputs.push_back(std::move(view));
    return "x" + std::to_string(inputs.size() - 1);
  };
  for (int position : positions) {
    const c10::IValue& value = args[position];
    if (value.isTensor() && value.toTensor().device().type() == kDeviceType) {
      const at::Tensor& t = value.toTensor();
      TORCH_CHECK(tensors.empty() || t.device() == tensors[0]->device(),
                  "Expected all tensors to be on the same device, but found at least two devices, ",
                  tensors[0]->device(), " and ", t.device(), "! (in ", schema.name(), ")");
      if (t.is_neg()) return false;
      tensors.push_back(&t);
      if (t.scalar_type() == at::kComplexFloat) {
        const std::string re = input(complexPartOf(t, 0)), im = input(complexPartOf(t, 1));
        parts.push_back({re, t.is_conj() ? neg(im) : im});
      } else if (deviceComputes(t.scalar_type()) && !t.is_complex()) {
        parts.push_back({input(viewOf(t)), "0"});
      } else {
        return false;  // complex128, or a real type the device does not compute in
      }
      continue;
    }
    c10::Scalar scalar;
    if (value.isTensor()) {
      const at::Tensor& t = value.toTensor();
      TORCH_CHECK(t.dim() == 0 && t.is_cpu(),
                  "Expected all tensors to be on the same device, but found at least two devices, ",
                  kDeviceType, " and ", t.device(), "! (in ", schema.name(), ")");
      scalar = t.item();
    } else {
      scalar = value.toScalar();
    }
    if (scalar.isComplex()) {
      const c10::complex<double> z = scalar.toComplexDouble();
      const std::string re = realScalar(z.real(), &scalars);
      parts.push_back({re, realScalar(z.imag(), &scalars)});
    } else {
      parts.push_back({realScalar(scalar.toDouble(), &scalars), "0"});
    }
  }
  if (inputs.size() > static_cast<size_t>(ops::kMaxElementwiseInputs)) return false;
  if (op.maxTensors && tensors.size() > static_cast<size_t>(op.maxTensors)) return false;
  // The temporaries are read back as inputs; past 8 of those, the launch cannot read them.
  if (inputs.size() + op.temporaries > static_cast<size_t>(ops::kMaxElementwiseInputs)) {
    return false;
  }

  at::DimVector shape;
  if (!tensors.empty()) shape.assign(tensors[0]->sizes().begin(), tensors[0]->sizes().end());
  for (size_t i = 1; i < tensors.size(); ++i) {
    if (tensors[i]->sizes() != at::IntArrayRef(shape)) {
      shape = at::infer_size_dimvector(shape, tensors[i]->sizes());
    }
  }
  if (tensors.empty() && outArgument < 0) return false;

  at::Tensor target;
  if (!inPlace && outArgument < 0) {
    target = emptyOnDevice(shape, resultType, tensors[0]->device());
  } else {
    target = inPlace ? args[0].toTensor() : args[outArgument].toTensor();
    TORCH_CHECK(target.device().type() == kDeviceType &&
                    (tensors.empty() || target.device() == tensors[0]->device()),
                "Expected all tensors to be on the same device, but found ", target.device(),
                " for the output of ", schema.name());
    TORCH_CHECK(c10::canCast(resultType, target.scalar_type()), "result type ", resultType,
                " can't be cast to the desired output type ", target.scalar_type());
    if (target.is_conj() || target.is_neg()) return false;
    // A real result goes to a real tensor of a device type; a complex one to complex64.
    if (resultType == at::kComplexFloat ? target.scalar_type() != at::kComplexFloat
                                        : !deviceComputes(target.scalar_type())) {
      return false;
    }
    if (inPlace) {
      TORCH_CHECK(target.sizes() == at::IntArrayRef(shape), "output with shape ",
                  shapeText(target.sizes()), " doesn't match the broadcast shape ",
                  shapeText(shape));
    } else {
      at::native::resize_output(target, shape);
    }
  }

  for (size_t i = 0, next = 0; i < tensors.size(); ++i) {
    const int views = tensors[i]->scalar_type() == at::kComplexFloat ? 2 : 1;
    for (int v = 0; v < views; ++v, ++next) {
      if (tensors[i]->sizes() != at::IntArrayRef(shape)) expandTo(inputs[next], shape);
    }
  }
  std::vector<ops::TensorView> outs;
  std::vector<at::Tensor> temporaries;
  for (int i = 0; i < op.temporaries; ++i) {
    temporaries.push_back(emptyOnDevice(shape, at::kFloat, target.device()));
    outs.push_back(viewOf(temporaries.back()));
  }
  if (target.scalar_type() == at::kComplexFloat) {
    outs.push_back(complexPartOf(target, 0));
    outs.push_back(complexPartOf(target, 1));
  } else {
    outs.push_back(viewOf(target));
  }
  std::vector<std::string> programs = op.build(parts);
  if (op.temporaries) {
    for (std::string& program : programs) program = withTemporaries(program, inputs.size());
  }
  if (target.numel() != 0) {
    onDevice(schema.name(), [&] {
      ops::elementwiseMulti(launchContextOf(target), outs, inputs, programs, isa::DType::F32,
                            scalars);
    });
  }
  *result = std::move(target);
  return true;
}

}  // namespace mimic::torch_backend::aten
