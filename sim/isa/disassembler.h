// Text forms of instructions and modules, in the syntax assembler.h reads.
#pragma once

#include <string>

#include "isa.h"
#include "module.h"

namespace mimic::isa {

// One instruction, for fault messages and listings: branch targets are instruction numbers
// ("brnz s3, 12"), which the assembler also accepts. Never fails, even on invalid fields.
std::string disassemble(const Instr& instr);

// The canonical text of a module: one ".kernel ... .end" block per function, branch targets as
// labels "L<index>". For a valid module, assemble(disassemble(m)) == m.
std::string disassemble(const Module& module);

}  // namespace mimic::isa
