#include "torch_backend/ops/elementwise_program.h"

#include <cmath>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "sim/isa/validate.h"

namespace mimic::ops {
namespace {

using isa::BinaryOp;
using isa::DType;
using isa::UnaryOp;

// In the order of the isa enums, so a name's position is its op.
const char* const kUnary[] = {"neg",  "abs",     "exp",   "log",   "sqrt", "rsqrt",
                              "tanh", "sigmoid", "erf",   "sin",   "cos",  "floor",
                              "ceil", "round",   "trunc", "recip", "relu", "not"};
const char* const kBinary[] = {"add", "sub", "mul", "div", "max", "min",
                               "pow", "and", "or",  "xor", "rem"};
const char* const kCompare[] = {"eq", "ne", "lt", "le", "gt", "ge"};

template <size_t N>
int find(const char* const (&names)[N], const std::string& word) {
  for (size_t i = 0; i < N; ++i) {
    if (word == names[i]) return static_cast<int>(i);
  }
  return -1;
}

[[noreturn]] void fail(const std::string& text, const std::string& why) {
  throw std::invalid_argument("elementwise: " + why + " in program '" + text + "'");
}

// "x3" -> 3 for prefix 'x'; -1 if the word is not of that form.
int indexed(const std::string& word, char prefix) {
  if (word.size() < 2 || word.size() > 4 || word[0] != prefix) return -1;
  int value = 0;
  for (size_t i = 1; i < word.size(); ++i) {
    if (word[i] < '0' || word[i] > '9') return -1;
    value = value * 10 + (word[i] - '0');
  }
  return value;
}

bool parseLiteral(const std::string& word, double* value) {
  char* end = nullptr;
  *value = std::strtod(word.c_str(), &end);
  return end == word.c_str() + word.size();
}

// Integer compute types take literals they hold exactly, so that no conversion rule is needed.
bool literalFits(double value, DType compute) {
  if (isa::isFloat(compute)) return true;
  if (!std::isfinite(value) || value != std::floor(value)) return false;
  switch (compute) {
    case DType::I32:
      return value >= -2147483648.0 && value <= 2147483647.0;
    case DType::I64:
      return value >= -9223372036854775808.0 && value < 9223372036854775808.0;
    case DType::I8:
      return value >= -128 && value <= 127;
    case DType::I16:
      return value >= -32768 && value <= 32767;
    default:
      return value >= 0 && value <= 255;
  }
}

class Parser {
 public:
  Parser(const std::string& text, DType compute, size_t numInputs, size_t numScalars)
      : text_(text), compute_(compute), numInputs_(numInputs), numScalars_(numScalars) {}

  void token(const std::string& word, Program& program) {
    Token t{Token::Kind::Literal};
    int index = 0;
    if ((index = indexed(word, 'x')) >= 0) {
      if (static_cast<size_t>(index) >= numInputs_) {
        fail(text_, "input '" + word + "' but only " + std::to_string(numInputs_) + " inputs");
      }
      t = {Token::Kind::Input, 0, index};
      program.usedInputs |= 1u << index;
      push(false);
    } else if ((index = indexed(word, 's')) >= 0) {
      if (static_cast<size_t>(index) >= numScalars_) {
        fail(text_, "scalar '" + word + "' but only " + std::to_string(numScalars_) + " scalars");
      }
      t = {Token::Kind::Scalar, 0, index};
      push(false);
    } else if (word == "rand") {
      if (!isa::isFloat(compute_)) fail(text_, "'rand' needs a float compute type, not " + type());
      t = {Token::Kind::Rand, 0, program.numRand++};
      push(false);
    } else if (word == "idx") {
      t = {Token::Kind::Index};
      program.usesIndex = true;
      push(false);
    } else if (word == "where") {
      const bool b = pop(word), a = pop(word);
      pop(word);
      t = {Token::Kind::Where};
      push(a && b);
    } else if (word == "fma") {
      pop(word), pop(word), pop(word);
      t = {Token::Kind::Fma};
      push(false);
    } else if ((index = find(kUnary, word)) >= 0) {
      t = {Token::Kind::Unary, uint8_t(index)};
      t.masks = pop(word) && UnaryOp(index) == UnaryOp::Not;
      if (!t.masks) allowed(isa::Opcode::VUnary, t.op, word);
      push(t.masks);
    } else if ((index = find(kBinary, word)) >= 0) {
      t = {Token::Kind::Binary, uint8_t(index)};
      const bool b = pop(word), a = pop(word);
      const BinaryOp op = BinaryOp(index);
      t.masks = a && b && (op == BinaryOp::And || op == BinaryOp::Or || op == BinaryOp::Xor);
      if (!t.masks) allowed(isa::Opcode::VBinary, t.op, word);
      push(t.masks);
    } else if ((index = find(kCompare, word)) >= 0) {
      pop(word), pop(word);
      t = {Token::Kind::Compare, uint8_t(index)};
      push(true);
    } else if (parseLiteral(word, &t.literal)) {
      if (!literalFits(t.literal, compute_)) {
        fail(text_, "literal '" + word + "' is not a value of compute type " + type());
      }
      push(false);
    } else {
      fail(text_, "unknown token '" + word + "'");
    }
    program.tokens.push_back(t);
  }

  // Whether the one value left is a mask.
  bool finish() {
    if (stack_.size() != 1) {
      fail(text_, std::to_string(stack_.size()) + " values left on the stack instead of 1");
    }
    return stack_.back();
  }

 private:
  void push(bool mask) { stack_.push_back(mask); }
  bool pop(const std::string& word) {
    if (stack_.empty()) fail(text_, "stack underflow at '" + word + "'");
    const bool mask = stack_.back();
    stack_.pop_back();
    return mask;
  }
  void allowed(isa::Opcode op, uint8_t sub, const std::string& word) {
    if (!isa::typeAllowed(op, sub, compute_)) {
      fail(text_, "'" + word + "' is not defined for compute type " + type());
    }
  }
  std::string type() const { return isa::dtypeName(compute_); }

  const std::string& text_;
  DType compute_;
  size_t numInputs_, numScalars_;
  std::vector<bool> stack_;  // true: a mask
};

}  // namespace

Program parseProgram(const std::string& text, DType compute, const std::vector<DType>& inputs,
                     DType out, size_t numScalars) {
  if (inputs.size() > kMaxElementwiseInputs || numScalars > kMaxElementwiseScalars) {
    fail(text, std::to_string(inputs.size()) + " inputs and " + std::to_string(numScalars) +
                   " scalars (at most 8 of each)");
  }
  Program program;
  program.text = text;
  program.compute = compute;
  program.out = out;
  program.inputs = inputs;
  Parser parser(text, compute, inputs.size(), numScalars);
  std::istringstream words(text);
  std::string word;
  while (words >> word) parser.token(word, program);
  if (program.tokens.empty()) fail(text, "no tokens");
  program.resultIsMask = parser.finish();
  program.uniform = program.usedInputs == 0 && !program.usesCounter();
  const Token& only = program.tokens.front();
  program.direct = program.tokens.size() == 1 && only.kind == Token::Kind::Input &&
                   inputs[only.index] == compute && compute == out;
  return program;
}

}  // namespace mimic::ops
