#include "sim/isa/assembler.h"

#include <cstdint>
#include <map>
#include <vector>

#include "sim/isa/mnemonics.h"
#include "sim/isa/scalar_literal.h"
#include "sim/isa/validate.h"

namespace mimic::isa {
namespace {

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}
bool isIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && isSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && isSpace(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char separator) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t end = s.find(separator, start);
    parts.push_back(s.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> result;
  for (std::string_view part : split(s, ' ')) {
    for (std::string_view word : split(part, '\t')) {
      if (!trim(word).empty()) result.push_back(trim(word));
    }
  }
  return result;
}

// "#" marks an immediate when a number (or inf, nan) follows it; anywhere else, and at the
// start of a line, it starts a comment, so "# note" and "#note" both read as comments.
bool startsImmediate(std::string_view rest) {
  if (rest.empty()) return false;
  const char c = rest[0];
  if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.') return true;
  for (std::string_view word : {"inf", "nan"}) {
    if (rest.substr(0, 3) == word && (rest.size() == 3 || !isIdentChar(rest[3]))) return true;
  }
  return false;
}

std::string_view stripComment(std::string_view line) {
  const size_t first = line.find_first_not_of(" \t");
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '#' && (i == first || !startsImmediate(line.substr(i + 1)))) {
      return line.substr(0, i);
    }
  }
  return line;
}

std::string quote(std::string_view s) {
  return "'" + std::string(s) + "'";
}

// A register or descriptor name: the prefix, then a decimal number.
bool parseRegName(std::string_view token, char prefix, int* number) {
  if (token.size() < 2 || token.size() > 6 || token[0] != prefix) return false;
  int n = 0;
  for (char c : token.substr(1)) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + (c - '0');
  }
  *number = n;
  return true;
}

std::string_view withoutHash(std::string_view token) {
  return !token.empty() && token[0] == '#' ? token.substr(1) : token;
}

struct Fixup {
  size_t instr;
  std::string label;
  int line;
};

struct LabelDef {
  size_t instr;
  int line;
};

class Assembler {
 public:
  Module run(std::string_view text) {
    int lineNo = 0;
    for (std::string_view line : split(text, '\n')) {
      line_ = ++lineNo;
      parseLine(trim(stripComment(line)));
    }
    if (open_) fail(kernelLines_.back(), "kernel " + quote(current().name) + " has no .end");
    if (module_.functions.empty()) fail(0, "no kernel in the assembly text");
    try {
      validate(module_);
    } catch (const ValidationError& e) {
      // The checks above should catch everything; this keeps the rules in one place regardless.
      const int f = e.function() < 0 ? 0 : e.function();
      const int line = e.instruction() >= 0 ? instrLines_[f][e.instruction()] : kernelLines_[f];
      fail(line, e.rule());
    }
    return std::move(module_);
  }

 private:
  [[noreturn]] void fail(int line, const std::string& message) { throw AsmError(line, message); }
  [[noreturn]] void fail(const std::string& message) { fail(line_, message); }

  Function& current() { return module_.functions.back(); }

  void parseLine(std::string_view s) {
    // Leading labels: identifiers followed directly by ':'.
    for (;;) {
      size_t n = 0;
      while (n < s.size() && isIdentChar(s[n])) ++n;
      if (n == 0 || n >= s.size() || s[n] != ':') break;
      defineLabel(s.substr(0, n));
      s = trim(s.substr(n + 1));
    }
    if (s.empty()) return;
    if (s[0] == '.') return parseDirective(s);
    if (!open_) fail("instruction outside a kernel (missing .kernel?)");
    parseInstr(s);
  }

  void defineLabel(std::string_view name) {
    if (!isValidName(name)) fail("bad label name " + quote(name));
    if (!open_) fail("label " + quote(name) + " outside a kernel");
    auto [it, inserted] =
        labels_.emplace(std::string(name), LabelDef{current().code.size(), line_});
    if (!inserted) {
      fail("duplicate label " + quote(name) + " (first defined on line " +
           std::to_string(it->second.line) + ")");
    }
  }

  void parseDirective(std::string_view s) {
    const std::vector<std::string_view> w = words(s);
    if (w[0] == ".kernel") {
      if (open_) fail("'.kernel' inside kernel " + quote(current().name) + " (missing .end?)");
      if (w.size() != 3) fail("'.kernel' takes a name and an argument byte count");
      if (!isValidName(w[1])) fail("kernel name " + quote(w[1]) + " is not an identifier");
      for (size_t i = 0; i < module_.functions.size(); ++i) {
        if (module_.functions[i].name == w[1]) {
          fail("duplicate kernel " + quote(w[1]) + " (first defined on line " +
               std::to_string(kernelLines_[i]) + ")");
        }
      }
      int64_t bytes;
      if (!parseInt(w[2], &bytes) || bytes < 0 || bytes > int64_t(UINT32_MAX)) {
        fail("bad argument byte count " + quote(w[2]));
      }
      if (bytes % 8 != 0) fail("argument bytes " + std::to_string(bytes) + " not a multiple of 8");
      module_.functions.push_back(Function{std::string(w[1]), uint32_t(bytes), {}});
      kernelLines_.push_back(line_);
      instrLines_.emplace_back();
      open_ = true;
    } else if (w[0] == ".end") {
      if (!open_) fail("'.end' outside a kernel");
      if (w.size() != 1) fail("'.end' takes no operands");
      finishKernel();
    } else {
      fail("unknown directive " + quote(w[0]));
    }
  }

  void finishKernel() {
    Function& f = current();
    for (const Fixup& fix : fixups_) {
      auto it = labels_.find(fix.label);
      if (it == labels_.end()) fail(fix.line, "undefined label " + quote(fix.label));
      if (it->second.instr >= f.code.size()) {
        fail(fix.line, "label " + quote(fix.label) + " is not followed by an instruction");
      }
      f.code[fix.instr].imm = int64_t(it->second.instr);
    }
    // Numeric targets can only be checked now that the kernel's length is known.
    for (size_t i = 0; i < f.code.size(); ++i) {
      std::string error = instrError(f.code[i], f.code.size(), f.argBytes);
      if (!error.empty()) fail(instrLines_.back()[i], error);
    }
    labels_.clear();
    fixups_.clear();
    open_ = false;
  }

  const OpFormat& parseMnemonic(std::string_view mnemonic, Instr* in) {
    const OpFormat* format = nullptr;
    size_t stemLength = 0;
    for (int op = 0; op < kNumOpcodes; ++op) {
      const std::string_view stem = opFormat(Opcode(op)).stem;
      const bool matches = mnemonic.substr(0, stem.size()) == stem &&
                           (mnemonic.size() == stem.size() || mnemonic[stem.size()] == '.');
      if (matches && stem.size() > stemLength) {
        format = &opFormat(Opcode(op));
        stemLength = stem.size();
        in->op = Opcode(op);
      }
    }
    const std::string unknown = "unknown mnemonic " + quote(mnemonic);
    if (!format) fail(unknown);
    std::vector<std::string_view> parts;
    if (mnemonic.size() > stemLength) parts = split(mnemonic.substr(stemLength + 1), '.');
    const size_t expected = (format->sub != SubKind::None) + format->numTypes;
    if (parts.size() != expected) {
      std::string form = format->stem;
      if (format->sub != SubKind::None) form += ".<op>";
      for (int i = 0; i < format->numTypes; ++i) form += ".<type>";
      fail(unknown + ": expected " + form);
    }
    size_t next = 0;
    if (format->sub != SubKind::None && !parseSub(format->sub, parts[next++], &in->sub)) {
      fail(unknown + ": " + quote(parts[0]) + " is not a " + format->stem + " operation");
    }
    DType* types[] = {&in->type, &in->type2};
    for (int i = 0; i < format->numTypes; ++i, ++next) {
      if (!parseDType(parts[next], types[i]))
        fail(unknown + ": " + quote(parts[next]) + " is not a type");
    }
    return *format;
  }

  void parseInstr(std::string_view s) {
    size_t n = 0;
    while (n < s.size() && !isSpace(s[n])) ++n;
    const std::string_view mnemonic = s.substr(0, n);
    const std::string_view rest = trim(s.substr(n));
    Instr in;
    const OpFormat& format = parseMnemonic(mnemonic, &in);
    std::vector<std::string_view> operands;
    if (!rest.empty()) operands = split(rest, ',');
    if (int(operands.size()) != format.numOperands) {
      fail(std::string(mnemonic) + " takes " + std::to_string(format.numOperands) + " operand" +
           (format.numOperands == 1 ? "" : "s") + ", got " + std::to_string(operands.size()));
    }
    for (int i = 0; i < format.numOperands; ++i) {
      const std::string_view token = trim(operands[i]);
      if (token.empty()) fail("operand " + std::to_string(i + 1) + " is empty");
      if (token.find_first_of(" \t") != std::string_view::npos) {
        fail("missing comma in operand " + quote(token));
      }
      parseOperand(format.operands[i], token, &in);
    }
    std::string error = instrError(in, SIZE_MAX, current().argBytes);
    if (!error.empty()) fail(error);
    current().code.push_back(in);
    instrLines_.back().push_back(line_);
  }

  void parseOperand(const Operand& operand, std::string_view token, Instr* in) {
    int reg;
    switch (operand.kind) {
      case OperandKind::Reg:
        return setRegField(*in, operand.field, parseReg(token, 's', kNumScalarRegs));
      case OperandKind::Desc:
        return setRegField(*in, operand.field, parseReg(token, 'd', kNumDescriptors));
      case OperandKind::Int:
      case OperandKind::ArgIndex:
      case OperandKind::GridDim:
      case OperandKind::DmaDim:
        if (!parseInt(withoutHash(token), &in->imm))
          fail("expected an integer, got " + quote(token));
        return;
      case OperandKind::Target:
        if (parseInt(withoutHash(token), &in->imm)) return;
        if (!isValidName(token)) fail("expected a label, got " + quote(token));
        fixups_.push_back({current().code.size(), std::string(token), line_});
        return;
      case OperandKind::RegOrInt:
      case OperandKind::RegOrTyped:
        if (parseRegName(token, 's', &reg)) {
          return setRegField(*in, operand.field, parseReg(token, 's', kNumScalarRegs));
        }
        in->flags = kImmOperand;
        if (operand.kind == OperandKind::RegOrInt) {
          if (!parseInt(withoutHash(token), &in->imm)) {
            fail("expected a register or an integer, got " + quote(token));
          }
        } else {
          std::string error;
          if (!parseScalar(withoutHash(token), in->type, &in->imm, &error)) fail(error);
        }
        return;
    }
  }

  uint8_t parseReg(std::string_view token, char prefix, int count) {
    int n;
    const std::string kind = prefix == 's' ? "register" : "descriptor";
    if (!parseRegName(token, prefix, &n)) {
      fail("expected a " + kind + " " + prefix + "0.." + prefix + std::to_string(count - 1) +
           ", got " + quote(token));
    }
    if (n >= count) fail(kind + " " + std::string(token) + " out of range");
    return uint8_t(n);
  }

  Module module_;
  std::vector<int> kernelLines_;
  std::vector<std::vector<int>> instrLines_;
  bool open_ = false;
  int line_ = 0;
  std::map<std::string, LabelDef> labels_;
  std::vector<Fixup> fixups_;
};

}  // namespace

Module assemble(std::string_view text) {
  return Assembler().run(text);
}

}  // namespace mimic::isa
