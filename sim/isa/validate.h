// The rules every module obeys, wherever it comes from: the assembler, a decoded image or a
// compiler. A valid module has exactly one text form and one image, which is what makes the
// round trips exact; so the rules include "fields the opcode does not use are zero".
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "isa.h"
#include "module.h"

namespace mimic::isa {

class ValidationError : public std::runtime_error {
 public:
  ValidationError(const std::string& message, std::string rule, int function, int64_t instruction)
      : std::runtime_error(message),
        rule_(std::move(rule)),
        function_(function),
        instruction_(instruction) {}
  // The broken rule alone, without the location that what() adds.
  const std::string& rule() const { return rule_; }
  int function() const { return function_; }            // index, or -1 for the module
  int64_t instruction() const { return instruction_; }  // index, or -1 for the function

 private:
  std::string rule_;
  int function_;
  int64_t instruction_;
};

// Whether the element type (and sub-operation) is one the opcode is defined for.
bool typeAllowed(Opcode op, uint8_t sub, DType type);

// Kernel names are identifiers ([A-Za-z_][A-Za-z0-9_.]*), so that any name has a text form.
bool isValidName(std::string_view name);

// Why `instr` is invalid in a function of `codeSize` instructions and `argBytes` argument bytes,
// or "" when it is valid. A codeSize of SIZE_MAX skips the branch target check.
std::string instrError(const Instr& instr, size_t codeSize, uint32_t argBytes);

// Throws ValidationError for the first rule the module breaks.
void validate(const Module& module);

}  // namespace mimic::isa
