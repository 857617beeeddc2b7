#include "sim/isa/disassembler.h"

#include <vector>

#include "sim/isa/mnemonics.h"
#include "sim/isa/scalar_literal.h"

namespace mimic::isa {
namespace {

std::string typeText(DType t) {
  return int(t) < kNumDTypes ? dtypeName(t) : "?" + std::to_string(int(t));
}

std::string mnemonic(const Instr& in, const OpFormat& format) {
  std::string text = format.stem;
  if (format.sub != SubKind::None) {
    const char* name = subName(format.sub, in.sub);
    text += name ? std::string(".") + name : ".?" + std::to_string(in.sub);
  }
  if (format.numTypes >= 1) text += "." + typeText(in.type);
  if (format.numTypes >= 2) text += "." + typeText(in.type2);
  return text;
}

// `labelled` (may be null) marks the instructions that have a label in the listing.
std::string instrText(const Instr& in, const std::vector<bool>* labelled) {
  if (int(in.op) >= kNumOpcodes) return "<invalid opcode " + std::to_string(int(in.op)) + ">";
  const OpFormat& format = opFormat(in.op);
  std::string text = mnemonic(in, format);
  for (int i = 0; i < format.numOperands; ++i) {
    const Operand& operand = format.operands[i];
    const std::string reg = std::to_string(regField(in, operand.field));
    text += i == 0 ? " " : ", ";
    switch (operand.kind) {
      case OperandKind::Reg:
        text += "s" + reg;
        break;
      case OperandKind::Desc:
        text += "d" + reg;
        break;
      case OperandKind::Int:
      case OperandKind::ArgIndex:
      case OperandKind::GridDim:
      case OperandKind::DmaDim:
        text += std::to_string(in.imm);
        break;
      case OperandKind::Target:
        if (labelled && in.imm >= 0 && uint64_t(in.imm) < labelled->size() && (*labelled)[in.imm]) {
          text += "L" + std::to_string(in.imm);
        } else {
          text += std::to_string(in.imm);
        }
        break;
      case OperandKind::RegOrInt:
        text += in.flags & kImmOperand ? "#" + std::to_string(in.imm) : "s" + reg;
        break;
      case OperandKind::RegOrTyped:
        if (!(in.flags & kImmOperand)) {
          text += "s" + reg;
        } else if (int(in.type) < kNumDTypes) {
          text += "#" + formatScalar(in.imm, in.type);
        } else {
          text += "#" + std::to_string(in.imm);
        }
        break;
    }
  }
  return text;
}

}  // namespace

std::string disassemble(const Instr& instr) {
  return instrText(instr, nullptr);
}

std::string disassemble(const Module& module) {
  std::string text;
  for (const Function& f : module.functions) {
    std::vector<bool> labelled(f.code.size(), false);
    for (const Instr& in : f.code) {
      if (int(in.op) >= kNumOpcodes) continue;
      const OpFormat& format = opFormat(in.op);
      for (int i = 0; i < format.numOperands; ++i) {
        if (format.operands[i].kind == OperandKind::Target && in.imm >= 0 &&
            uint64_t(in.imm) < f.code.size()) {
          labelled[in.imm] = true;
        }
      }
    }
    if (!text.empty()) text += "\n";
    text += ".kernel " + f.name + " " + std::to_string(f.argBytes) + "\n";
    for (size_t i = 0; i < f.code.size(); ++i) {
      if (labelled[i]) text += "L" + std::to_string(i) + ":\n";
      text += "  " + instrText(f.code[i], &labelled) + "\n";
    }
    text += ".end\n";
  }
  return text;
}

}  // namespace mimic::isa
