// Text forms of immediates, shared by the assembler and the disassembler.
//
// Integers: decimal or 0x hex, optionally signed ("-12", "0xff", "-0x10"); hex may spell any
// 64-bit pattern. Scalars of a float type: decimal values rounded to nearest even into the type
// ("1.5", "-2", "1e-3"), "inf", "-inf", "nan", "-nan", or the raw bits as "0f<hex>" ("0f7fc00001")
// for NaN payloads. Float immediates are stored as the type's raw bits, zero-extended; integer
// ones as their value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "isa.h"

namespace mimic::isa {

bool parseInt(std::string_view text, int64_t* value);

// On failure returns false and says why in *error. Range checks for integer types are the
// validator's (instrError), so that the rule lives in one place.
bool parseScalar(std::string_view text, DType type, int64_t* imm, std::string* error);

// The shortest literal that parseScalar reads back as exactly `imm`.
std::string formatScalar(int64_t imm, DType type);

// IEEE conversions for f64, f32, f16 and bf16 bit patterns: round to nearest even, overflow to
// infinity, NaN to the canonical quiet NaN of the same sign.
uint64_t floatToBits(double value, DType type);
double bitsToFloat(uint64_t bits, DType type);

}  // namespace mimic::isa
