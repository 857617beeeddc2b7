// The mimic assembly language.
//
//   module      := { line }
//   line        := [ label ":" ]... [ directive | instruction ] [ comment ]
//   directive   := ".kernel" name argBytes      (argBytes a multiple of 8)
//                | ".end"
//   instruction := mnemonic [ operand { "," operand } ]
//   mnemonic    := stem [ "." sub ] [ "." type [ "." type2 ] ]     e.g. vbin.add.f32
//   operand     := "s"N (register) | "d"N (descriptor) | [ "#" ] immediate | label
//   comment     := "#" to the end of the line, where "#" does not start an immediate
//
// Instructions (operand order as isa.h lists the fields):
//   nop | exit | waitall | barrier
//   li sD, int                 mov sD, sA
//   salu.<op> sD, sA, sB|#int  scmp.<cond> sD, sA, sB|#int
//   br label                   brz sA, label               brnz sA, label
//   arg sD, index              wgid sD, dim                griddim sD, dim
//   dma.desc.<t> dD, dim, sA(count), sB(hbm stride), sC(scratchpad stride)
//   dma.load sD, sA, sB, dC    dma.store sD, sA, sB, dC    wait sA
//   vshape sA, sB, sC, sD      vun.<op>.<t> sD, sA, sC
//   vbin.<op>.<t> sD, sA, sB, sC            vbins.<op>.<t> sD, sA, sB|#scalar, sC
//   vfma.<t> sD, sA, sB, sC, sE             vsel.<t> sD, sA, sB, sC, sE
//   vcmp.<cond>.<t> sD, sA, sB, sC          vcmps.<cond>.<t> sD, sA, sB|#scalar, sC
//   vcast.<t>.<t2> sD, sA, sC  vred.<op>.<t> sD, sA, sC
//   vfill.<t> sD, sB|#scalar, sC            viota.<t> sD, sC
//   mshape sA, sB, sC          mma.<t> sD, sA, sB          atomic.add.<t> sA, sB, sC
//
// Immediates are described in scalar_literal.h; a scalar of a float type may be a float
// literal. Labels are local to their kernel; a branch may also name an instruction number.
// Every error throws AsmError naming the line.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "module.h"

namespace mimic::isa {

class AsmError : public std::runtime_error {
 public:
  // what() is "line <line>: <message>", or just the message when line is 0.
  AsmError(int line, const std::string& message)
      : std::runtime_error(line > 0 ? "line " + std::to_string(line) + ": " + message : message),
        line_(line) {}
  int line() const { return line_; }

 private:
  int line_;
};

Module assemble(std::string_view text);

}  // namespace mimic::isa
