// The program language of the generic elementwise kernel (elementwise.h): reverse-Polish
// tokens separated by spaces, parsed and type-checked once into a Program that the code
// generator (elementwise_emit.h) turns into vector instructions.
//
// Tokens: x0..x7 (inputs), s0..s7 (scalar arguments), numeric literals, `rand`, `idx` (the
// element's counter, random.offset + its row-major index, below 2^31), the unary ops
// neg abs exp log sqrt rsqrt tanh sigmoid erf sin cos floor ceil round trunc recip relu not,
// the binary ops add sub mul div max min pow and or xor rem (second operand on top), the
// compares eq ne lt le gt ge (giving a u8 mask), `mask a b where` and `a b c fma`.
//
// Typing: every value is either of the compute type or a mask. A mask used by anything except
// where/and/or/xor/not becomes 1 or 0 of the compute type; a compute value used as where's
// mask means != 0. and/or/xor of two masks and not of a mask are logical and give a mask;
// with a compute operand they are the compute type's ops, which exist for integer compute
// types only (bitwise for i32/i64; for u8 and/or/xor are bitwise and not is logical).
//
// Arithmetic is that of the vector ops (sim/exec/vector_math.h): f16/bf16 round every op's
// result to the type (pass compute F32 to round once, as torch's opmath does), integers wrap,
// integer division or remainder by zero gives 0. Literals are converted to the compute type
// when the kernel is built; in integer compute types they must be exact values of the type.
// Scalars are converted at each call (kernel_cache.h's scalarBits).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/isa/isa.h"

namespace mimic::ops {

constexpr int kMaxElementwiseInputs = 8;
constexpr int kMaxElementwiseScalars = 8;
constexpr int kMaxElementwiseOutputs = 8;  // programs of one elementwiseMulti launch

struct Token {
  enum class Kind { Input, Scalar, Literal, Rand, Index, Unary, Binary, Compare, Where, Fma };
  Kind kind;
  uint8_t op = 0;      // isa::UnaryOp, isa::BinaryOp or isa::Cond for those kinds
  int index = 0;       // input or scalar index; for Rand, the stream (0 for the first rand)
  double literal = 0;  // a Literal's value, exactly representable in integer compute types
  bool masks = false;  // Unary not / Binary and, or, xor: both operands are masks (logical)
};

struct Program {
  std::string text;
  isa::DType compute = isa::DType::F32;
  isa::DType out = isa::DType::F32;
  std::vector<isa::DType> inputs;  // the dtype of every input the caller passes
  std::vector<Token> tokens;
  unsigned usedInputs = 0;  // bit i: x<i> appears
  int numRand = 0;
  bool usesIndex = false;  // `idx` appears
  // Tiles need the counter of their first element (for rand or idx).
  bool usesCounter() const { return numRand > 0 || usesIndex; }
  bool resultIsMask = false;
  // No input and no rand: every element gets the same value, computed once per workgroup.
  bool uniform = false;
  // Exactly `x<i>` with input, compute and out dtypes equal: tiles are stored as loaded.
  bool direct = false;
};

// Parses and type-checks `text`. Throws std::invalid_argument naming the program and the bad
// token: unknown tokens, stack underflow or leftovers, x<i> with i >= inputs.size(), s<i> with
// i >= numScalars, ops the compute type does not have (exp in i64, bitwise ops in floats, rand
// in integers), literals an integer compute type cannot hold exactly.
Program parseProgram(const std::string& text, isa::DType compute,
                     const std::vector<isa::DType>& inputs, isa::DType out, size_t numScalars);

}  // namespace mimic::ops
