#include "sim/isa/validate.h"

#include <set>

#include "sim/isa/disassembler.h"
#include "sim/isa/mnemonics.h"

namespace mimic::isa {
namespace {

constexpr unsigned kFloats =
    1u << int(DType::F32) | 1u << int(DType::F16) | 1u << int(DType::BF16) | 1u << int(DType::F64);
constexpr unsigned kInts =
    1u << int(DType::I8) | 1u << int(DType::I16) | 1u << int(DType::I32) | 1u << int(DType::I64);
constexpr unsigned kU8 = 1u << int(DType::U8);
constexpr unsigned kAll = kFloats | kInts | kU8;

// These rules are the ones sim/exec's vector math defines results for (see vector_math.h), so
// that a validated program never meets an "illegal instruction" fault for its types.
unsigned unaryTypes(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg:
    case UnaryOp::Abs:
    case UnaryOp::Floor:
    case UnaryOp::Ceil:
    case UnaryOp::Round:
    case UnaryOp::Trunc:
    case UnaryOp::Relu:
      return kAll;
    case UnaryOp::Not:  // logical for u8, bitwise for integers; no meaning for floats
      return kInts | kU8;
    default:  // transcendental functions, roots and reciprocals
      return kFloats;
  }
}

unsigned binaryTypes(BinaryOp op) {
  switch (op) {
    case BinaryOp::And:
    case BinaryOp::Or:
    case BinaryOp::Xor:
      return kInts | kU8;
    default:
      return kAll;
  }
}

unsigned allowedTypes(Opcode op, uint8_t sub) {
  switch (op) {
    case Opcode::VUnary:
      return unaryTypes(UnaryOp(sub));
    case Opcode::VBinary:
    case Opcode::VBinaryS:
      return binaryTypes(BinaryOp(sub));
    case Opcode::Mma:  // the matrix pipe has no f64 path
      return kFloats & ~(1u << int(DType::F64));
    case Opcode::AtomicAdd:
      return 1u << int(DType::F32) | 1u << int(DType::I32) | 1u << int(DType::I64) |
             1u << int(DType::F64);
    case Opcode::SLoad:  // a scalar register holds an integer
      return kInts | kU8;
    default:
      return kAll;
  }
}

const char* fieldName(Field f) {
  static const char* const kNames[] = {"rd", "ra", "rb", "rc", "re", "imm"};
  return kNames[int(f)];
}

// The range an immediate scalar of `type` is stored in: ints sign-extended, float bits and u8
// zero-extended (f64 bits fill all 64), so that each value has one encoding.
bool typedImmFits(int64_t imm, DType type) {
  switch (type) {
    case DType::F32:
      return imm >= 0 && imm <= int64_t(UINT32_MAX);
    case DType::F16:
    case DType::BF16:
      return imm >= 0 && imm <= int64_t(UINT16_MAX);
    case DType::I32:
      return imm >= INT32_MIN && imm <= INT32_MAX;
    case DType::I64:
    case DType::F64:  // every pattern is one f64
      return true;
    case DType::U8:
      return imm >= 0 && imm <= UINT8_MAX;
    case DType::I8:
      return imm >= INT8_MIN && imm <= INT8_MAX;
    case DType::I16:
      return imm >= INT16_MIN && imm <= INT16_MAX;
  }
  return false;
}

std::string operandError(const Instr& in, const Operand& operand, size_t codeSize,
                         uint32_t argBytes) {
  const uint8_t reg = regField(in, operand.field);
  const std::string immText = std::to_string(in.imm);
  switch (operand.kind) {
    case OperandKind::Reg:
      if (reg >= kNumScalarRegs) return "register s" + std::to_string(reg) + " out of range";
      break;
    case OperandKind::Desc:
      if (reg >= kNumDescriptors) return "descriptor d" + std::to_string(reg) + " out of range";
      break;
    case OperandKind::Int:
      break;
    case OperandKind::ArgIndex:
      if (in.imm < 0 || uint64_t(in.imm) >= argBytes / 8) {
        return "argument " + immText + " out of range: the kernel has " +
               std::to_string(argBytes / 8) + " argument slots";
      }
      break;
    case OperandKind::GridDim:
      if (in.imm < 0 || in.imm > 2) return "grid dimension " + immText + " out of range 0..2";
      break;
    case OperandKind::DmaDim:
      if (in.imm < 0 || in.imm >= kDmaDims) {
        return "descriptor dimension " + immText + " out of range 0.." +
               std::to_string(kDmaDims - 1);
      }
      break;
    case OperandKind::Target:
      if (codeSize != SIZE_MAX && (in.imm < 0 || uint64_t(in.imm) >= codeSize)) {
        return "branch target " + immText + " outside the function (" + std::to_string(codeSize) +
               " instructions)";
      }
      break;
    case OperandKind::RegOrInt:
    case OperandKind::RegOrTyped:
      if (in.flags & kImmOperand) {
        if (operand.kind == OperandKind::RegOrTyped && !typedImmFits(in.imm, in.type)) {
          return "immediate " + immText + " out of range for " + dtypeName(in.type);
        }
      } else if (reg >= kNumScalarRegs) {
        return "register s" + std::to_string(reg) + " out of range";
      }
      break;
  }
  return "";
}

}  // namespace

bool typeAllowed(Opcode op, uint8_t sub, DType type) {
  return int(type) < kNumDTypes && (allowedTypes(op, sub) >> int(type) & 1u);
}

bool isValidName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digitOrDot = (c >= '0' && c <= '9') || c == '.';
    if (!letter && !(i > 0 && digitOrDot)) return false;
  }
  return true;
}

std::string instrError(const Instr& in, size_t codeSize, uint32_t argBytes) {
  if (int(in.op) >= kNumOpcodes) return "invalid opcode " + std::to_string(int(in.op));
  const OpFormat& format = opFormat(in.op);
  const std::string stem = format.stem;
  if (format.sub == SubKind::None) {
    if (in.sub != 0) return "unused field sub must be 0";
  } else if (in.sub >= subCount(format.sub)) {
    return "invalid sub-operation " + std::to_string(in.sub) + " for " + stem;
  }
  if (format.numTypes < 1 && in.type != DType::F32) return "unused field type must be 0";
  if (format.numTypes < 2 && in.type2 != DType::F32) return "unused field type2 must be 0";
  if (int(in.type) >= kNumDTypes) return "invalid type " + std::to_string(int(in.type));
  if (int(in.type2) >= kNumDTypes) return "invalid type2 " + std::to_string(int(in.type2));
  if (format.numTypes > 0 && !typeAllowed(in.op, in.sub, in.type)) {
    const char* sub = subName(format.sub, in.sub);
    return std::string("type ") + dtypeName(in.type) + " not allowed for " + stem +
           (sub ? std::string(".") + sub : "");
  }
  const bool scalarOperand = hasScalarOperand(format);
  if (in.flags != 0 && !(scalarOperand && in.flags == kImmOperand)) {
    return "invalid flags " + std::to_string(in.flags);
  }

  bool used[6] = {};
  for (int i = 0; i < format.numOperands; ++i) {
    const Operand& operand = format.operands[i];
    const bool scalar =
        operand.kind == OperandKind::RegOrInt || operand.kind == OperandKind::RegOrTyped;
    used[int(scalar && (in.flags & kImmOperand) ? Field::Imm : operand.field)] = true;
    std::string error = operandError(in, operand, codeSize, argBytes);
    if (!error.empty()) return error;
  }
  for (Field f : {Field::Rd, Field::Ra, Field::Rb, Field::Rc, Field::Re, Field::Imm}) {
    const bool zero = f == Field::Imm ? in.imm == 0 : regField(in, f) == 0;
    if (!used[int(f)] && !zero) return std::string("unused field ") + fieldName(f) + " must be 0";
  }
  return "";
}

void validate(const Module& module) {
  if (module.functions.empty())
    throw ValidationError("module has no functions", "no functions", -1, -1);
  std::set<std::string> names;
  for (size_t fi = 0; fi < module.functions.size(); ++fi) {
    const Function& f = module.functions[fi];
    const std::string where = "function " + std::to_string(fi) + " '" + f.name + "'";
    auto fail = [&](const std::string& rule, int64_t instr) {
      std::string message = where;
      if (instr >= 0) message += " instruction " + std::to_string(instr);
      message += ": " + rule;
      if (instr >= 0) message += " (" + disassemble(f.code[instr]) + ")";
      throw ValidationError(message, rule, int(fi), instr);
    };
    if (f.name.empty()) fail("empty name", -1);
    if (!isValidName(f.name)) fail("name is not an identifier", -1);
    if (!names.insert(f.name).second) fail("duplicate name", -1);
    if (f.argBytes % 8 != 0) {
      fail("argument bytes " + std::to_string(f.argBytes) + " not a multiple of 8", -1);
    }
    for (size_t i = 0; i < f.code.size(); ++i) {
      std::string error = instrError(f.code[i], f.code.size(), f.argBytes);
      if (!error.empty()) fail(error, int64_t(i));
    }
  }
}

}  // namespace mimic::isa
