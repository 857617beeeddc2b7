// The binary form of a module, what a compiler hands to the driver.
//
// Layout, all integers little-endian:
//   "MIMICMOD"                     8 bytes
//   u32 version                    kImageVersion
//   u32 function count
//   per function:
//     u32 name length, name bytes
//     u32 argument bytes
//     u32 instruction count
//     per instruction (18 bytes): u8 op, sub, type, type2, rd, ra, rb, rc, re, flags; i64 imm
//
// Instructions are written field by field so the image does not depend on the compiler's layout
// of Instr. The image has no slack: a valid module has exactly one image, and any other bytes
// are rejected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "module.h"

namespace mimic::isa {

constexpr uint32_t kImageVersion = 1;

class ImageError : public std::runtime_error {
 public:
  enum class Kind { BadMagic, UnsupportedVersion, Truncated, Malformed };
  ImageError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// Throws ValidationError when the module is invalid, so that no invalid image is ever written.
std::vector<uint8_t> encodeImage(const Module& module);

// Reads and validates an image. Throws ImageError and never reads outside [data, data + bytes).
Module decodeImage(const void* data, size_t bytes);

}  // namespace mimic::isa
