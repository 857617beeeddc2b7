#include "sim/isa/isa.h"

#include <iterator>

#include "sim/isa/mnemonics.h"

namespace mimic::isa {

int dtypeSize(DType t) {
  switch (t) {
    case DType::F32:
    case DType::I32:
      return 4;
    case DType::F16:
    case DType::BF16:
    case DType::I16:
      return 2;
    case DType::I64:
    case DType::F64:
      return 8;
    case DType::U8:
    case DType::I8:
      return 1;
  }
  return 0;
}

const char* dtypeName(DType t) {
  switch (t) {
    case DType::F32:
      return "f32";
    case DType::F16:
      return "f16";
    case DType::BF16:
      return "bf16";
    case DType::I32:
      return "i32";
    case DType::I64:
      return "i64";
    case DType::U8:
      return "u8";
    case DType::I8:
      return "i8";
    case DType::I16:
      return "i16";
    case DType::F64:
      return "f64";
  }
  return "?";
}

bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::F64;
}

Pipe pipeOf(Opcode op) {
  switch (op) {
    case Opcode::Mma:
      return Pipe::Matrix;
    case Opcode::DmaDesc:
    case Opcode::DmaLoad:
    case Opcode::DmaStore:
    case Opcode::Wait:
    case Opcode::WaitAll:
      return Pipe::Dma;
    case Opcode::VShape:
    case Opcode::VUnary:
    case Opcode::VBinary:
    case Opcode::VBinaryS:
    case Opcode::VFma:
    case Opcode::VSelect:
    case Opcode::VCmp:
    case Opcode::VCmpS:
    case Opcode::VCast:
    case Opcode::VReduce:
    case Opcode::VFill:
    case Opcode::VIota:
    case Opcode::AtomicAdd:
      return Pipe::Vector;
    default:
      return Pipe::Scalar;
  }
}

bool Instr::operator==(const Instr& o) const {
  return op == o.op && sub == o.sub && type == o.type && type2 == o.type2 && rd == o.rd &&
         ra == o.ra && rb == o.rb && rc == o.rc && re == o.re && flags == o.flags && imm == o.imm;
}

// ---- The mnemonic table ----

namespace {

using K = OperandKind;
using F = Field;

constexpr Operand kRd{K::Reg, F::Rd}, kRa{K::Reg, F::Ra}, kRb{K::Reg, F::Rb}, kRc{K::Reg, F::Rc},
    kRe{K::Reg, F::Re};

// Indexed by Opcode; the operand order is the one isa.h documents.
const OpFormat kFormats[] = {
    {"nop", SubKind::None, 0, 0, {}},
    {"exit", SubKind::None, 0, 0, {}},
    {"li", SubKind::None, 0, 2, {kRd, {K::Int, F::Imm}}},
    {"mov", SubKind::None, 0, 2, {kRd, kRa}},
    {"salu", SubKind::Scalar, 0, 3, {kRd, kRa, {K::RegOrInt, F::Rb}}},
    {"scmp", SubKind::Cond, 0, 3, {kRd, kRa, {K::RegOrInt, F::Rb}}},
    {"br", SubKind::None, 0, 1, {{K::Target, F::Imm}}},
    {"brz", SubKind::None, 0, 2, {kRa, {K::Target, F::Imm}}},
    {"brnz", SubKind::None, 0, 2, {kRa, {K::Target, F::Imm}}},
    {"arg", SubKind::None, 0, 2, {kRd, {K::ArgIndex, F::Imm}}},
    {"wgid", SubKind::None, 0, 2, {kRd, {K::GridDim, F::Imm}}},
    {"griddim", SubKind::None, 0, 2, {kRd, {K::GridDim, F::Imm}}},
    {"dma.desc", SubKind::None, 1, 5, {{K::Desc, F::Rd}, {K::DmaDim, F::Imm}, kRa, kRb, kRc}},
    {"dma.load", SubKind::None, 0, 4, {kRd, kRa, kRb, {K::Desc, F::Rc}}},
    {"dma.store", SubKind::None, 0, 4, {kRd, kRa, kRb, {K::Desc, F::Rc}}},
    {"wait", SubKind::None, 0, 1, {kRa}},
    {"waitall", SubKind::None, 0, 0, {}},
    {"vshape", SubKind::None, 0, 4, {kRa, kRb, kRc, kRd}},
    {"vun", SubKind::Unary, 1, 3, {kRd, kRa, kRc}},
    {"vbin", SubKind::Binary, 1, 4, {kRd, kRa, kRb, kRc}},
    {"vbins", SubKind::Binary, 1, 4, {kRd, kRa, {K::RegOrTyped, F::Rb}, kRc}},
    {"vfma", SubKind::None, 1, 5, {kRd, kRa, kRb, kRc, kRe}},
    {"vsel", SubKind::None, 1, 5, {kRd, kRa, kRb, kRc, kRe}},
    {"vcmp", SubKind::Cond, 1, 4, {kRd, kRa, kRb, kRc}},
    {"vcmps", SubKind::Cond, 1, 4, {kRd, kRa, {K::RegOrTyped, F::Rb}, kRc}},
    {"vcast", SubKind::None, 2, 3, {kRd, kRa, kRc}},
    {"vred", SubKind::Reduce, 1, 3, {kRd, kRa, kRc}},
    {"vfill", SubKind::None, 1, 3, {kRd, {K::RegOrTyped, F::Rb}, kRc}},
    // isa.h lists rb for VIota, but its semantics never read it: the count is rc.
    {"viota", SubKind::None, 1, 2, {kRd, kRc}},
    {"mshape", SubKind::None, 0, 3, {kRa, kRb, kRc}},
    {"mma", SubKind::None, 1, 3, {kRd, kRa, kRb}},
    {"barrier", SubKind::None, 0, 0, {}},
    {"atomic.add", SubKind::None, 1, 3, {kRa, kRb, kRc}},
    {"sload", SubKind::None, 1, 2, {kRd, kRa}},
};
static_assert(sizeof(kFormats) / sizeof(kFormats[0]) == kNumOpcodes,
              "one format per opcode, in Opcode order");

const char* const kScalarOps[] = {"add", "sub", "mul", "div", "rem", "and",
                                  "or",  "xor", "shl", "shr", "min", "max"};
const char* const kConds[] = {"eq", "ne", "lt", "le", "gt", "ge"};
const char* const kUnaryOps[] = {"neg",  "abs",     "exp",   "log",   "sqrt", "rsqrt",
                                 "tanh", "sigmoid", "erf",   "sin",   "cos",  "floor",
                                 "ceil", "round",   "trunc", "recip", "relu", "not"};
const char* const kBinaryOps[] = {"add", "sub", "mul", "div", "max", "min",
                                  "pow", "and", "or",  "xor", "rem"};
const char* const kReduceOps[] = {"sum", "max", "min", "argmax", "argmin"};

static_assert(sizeof(kScalarOps) / sizeof(*kScalarOps) == int(ScalarOp::Max) + 1);
static_assert(sizeof(kConds) / sizeof(*kConds) == int(Cond::Ge) + 1);
static_assert(sizeof(kUnaryOps) / sizeof(*kUnaryOps) == int(UnaryOp::Not) + 1);
static_assert(sizeof(kBinaryOps) / sizeof(*kBinaryOps) == int(BinaryOp::Rem) + 1);
static_assert(sizeof(kReduceOps) / sizeof(*kReduceOps) == int(ReduceOp::ArgMin) + 1);

struct NameList {
  const char* const* names;
  int count;
};

NameList namesOf(SubKind kind) {
  switch (kind) {
    case SubKind::Scalar:
      return {kScalarOps, int(std::size(kScalarOps))};
    case SubKind::Cond:
      return {kConds, int(std::size(kConds))};
    case SubKind::Unary:
      return {kUnaryOps, int(std::size(kUnaryOps))};
    case SubKind::Binary:
      return {kBinaryOps, int(std::size(kBinaryOps))};
    case SubKind::Reduce:
      return {kReduceOps, int(std::size(kReduceOps))};
    case SubKind::None:
      break;
  }
  return {nullptr, 0};
}

}  // namespace

const OpFormat& opFormat(Opcode op) {
  return kFormats[static_cast<int>(op)];
}

int subCount(SubKind kind) {
  return namesOf(kind).count;
}

const char* subName(SubKind kind, uint8_t sub) {
  NameList list = namesOf(kind);
  return sub < list.count ? list.names[sub] : nullptr;
}

bool parseSub(SubKind kind, std::string_view name, uint8_t* sub) {
  NameList list = namesOf(kind);
  for (int i = 0; i < list.count; ++i) {
    if (name == list.names[i]) {
      *sub = static_cast<uint8_t>(i);
      return true;
    }
  }
  return false;
}

bool parseDType(std::string_view name, DType* type) {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (name == dtypeName(DType(i))) {
      *type = DType(i);
      return true;
    }
  }
  return false;
}

uint8_t regField(const Instr& instr, Field field) {
  switch (field) {
    case Field::Rd:
      return instr.rd;
    case Field::Ra:
      return instr.ra;
    case Field::Rb:
      return instr.rb;
    case Field::Rc:
      return instr.rc;
    case Field::Re:
      return instr.re;
    case Field::Imm:
      break;
  }
  return 0;
}

void setRegField(Instr& instr, Field field, uint8_t value) {
  uint8_t* fields[] = {&instr.rd, &instr.ra, &instr.rb, &instr.rc, &instr.re};
  if (field != Field::Imm) *fields[int(field)] = value;
}

bool hasScalarOperand(const OpFormat& format) {
  for (int i = 0; i < format.numOperands; ++i) {
    OperandKind k = format.operands[i].kind;
    if (k == OperandKind::RegOrInt || k == OperandKind::RegOrTyped) return true;
  }
  return false;
}

}  // namespace mimic::isa
