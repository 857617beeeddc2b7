// The operand formats and spellings of the ISA: one table that the assembler, the disassembler
// and the validator all read, so the text syntax and the encoding rules cannot drift apart.
//
// A mnemonic is the stem, then ".<sub>" when the opcode has a family of operations, then
// ".<type>" and ".<type2>" when it has element types: "vbin.add.f32", "vcast.f32.bf16".
#pragma once

#include <cstdint>
#include <string_view>

#include "isa.h"

namespace mimic::isa {

// The Instr field an operand is encoded in.
enum class Field : uint8_t { Rd, Ra, Rb, Rc, Re, Imm };

enum class OperandKind : uint8_t {
  Reg,         // scalar register s0..s31
  Desc,        // DMA descriptor d0..d7
  Int,         // any 64-bit integer, in imm
  ArgIndex,    // kernel argument number, in imm: 0 .. argBytes / 8 - 1
  GridDim,     // grid dimension, in imm: 0..2
  DmaDim,      // descriptor dimension, in imm: 0 .. kDmaDims - 1
  Target,      // branch target: an instruction index in imm, written as a label
  RegOrInt,    // register rb, or (flags = kImmOperand) a 64-bit integer in imm
  RegOrTyped,  // register rb, or (flags = kImmOperand) a scalar of `type` in imm
};

struct Operand {
  OperandKind kind;
  Field field;  // for RegOrInt and RegOrTyped, the register form's field (rb)
};

// Which enum `sub` holds.
enum class SubKind : uint8_t { None, Scalar, Cond, Unary, Binary, Reduce };

struct OpFormat {
  const char* stem;  // "vbin", "dma.desc"
  SubKind sub;
  int numTypes;  // 0, 1 (type) or 2 (type, then type2)
  int numOperands;
  Operand operands[5];
};

// `op` must be below kNumOpcodes.
const OpFormat& opFormat(Opcode op);

int subCount(SubKind kind);
// nullptr when `sub` is out of range (or kind is None).
const char* subName(SubKind kind, uint8_t sub);
bool parseSub(SubKind kind, std::string_view name, uint8_t* sub);
bool parseDType(std::string_view name, DType* type);

// The register field `field` (Rd..Re) of an instruction; Field::Imm is not a register field.
uint8_t regField(const Instr& instr, Field field);
void setRegField(Instr& instr, Field field, uint8_t value);

// Whether the opcode encodes an operand that may be an immediate (and so may set kImmOperand).
bool hasScalarOperand(const OpFormat& format);

}  // namespace mimic::isa
