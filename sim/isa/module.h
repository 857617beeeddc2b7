// A module: the kernels one assembly text or one module image holds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "isa.h"

namespace mimic::isa {

struct Function {
  std::string name;
  uint32_t argBytes = 0;  // the kernel's arguments: argBytes / 8 slots of 8 bytes
  std::vector<Instr> code;

  bool operator==(const Function& o) const {
    return name == o.name && argBytes == o.argBytes && code == o.code;
  }
  bool operator!=(const Function& o) const { return !(*this == o); }
};

struct Module {
  std::vector<Function> functions;

  bool operator==(const Module& o) const { return functions == o.functions; }
  bool operator!=(const Module& o) const { return !(*this == o); }
};

}  // namespace mimic::isa
