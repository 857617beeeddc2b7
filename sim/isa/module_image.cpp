#include "sim/isa/module_image.h"

#include <cstring>

#include "sim/isa/validate.h"

namespace mimic::isa {
namespace {

constexpr char kMagic[8] = {'M', 'I', 'M', 'I', 'C', 'M', 'O', 'D'};
constexpr size_t kInstrBytes = 18;
constexpr size_t kMinFunctionBytes = 12;  // name length, argument bytes, instruction count

class Writer {
 public:
  void bytes(const void* data, size_t n) {
    const uint8_t* p = static_cast<const uint8_t*>(data);
    out_.insert(out_.end(), p, p + n);
  }
  void u8(uint8_t v) { out_.push_back(v); }
  void u32(uint32_t v) { little(v, 4); }
  void i64(int64_t v) { little(uint64_t(v), 8); }
  std::vector<uint8_t> take() { return std::move(out_); }

 private:
  void little(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(uint8_t(v >> (8 * i)));
  }
  std::vector<uint8_t> out_;
};

class Reader {
 public:
  Reader(const void* data, size_t size) : p_(static_cast<const uint8_t*>(data)), left_(size) {}

  size_t left() const { return left_; }
  const uint8_t* take(size_t n, const char* what) {
    if (n > left_)
      throw ImageError(ImageError::Kind::Truncated,
                       std::string("module image truncated in ") + what);
    const uint8_t* at = p_;
    p_ += n;
    left_ -= n;
    return at;
  }
  uint8_t u8(const char* what) { return *take(1, what); }
  uint32_t u32(const char* what) { return uint32_t(little(take(4, what), 4)); }
  int64_t i64(const char* what) { return int64_t(little(take(8, what), 8)); }

 private:
  static uint64_t little(const uint8_t* p, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= uint64_t(p[i]) << (8 * i);
    return v;
  }
  const uint8_t* p_;
  size_t left_;
};

Instr readInstr(Reader& r) {
  Instr in;
  const uint8_t* b = r.take(kInstrBytes, "an instruction");
  in.op = Opcode(b[0]);
  in.sub = b[1];
  in.type = DType(b[2]);
  in.type2 = DType(b[3]);
  in.rd = b[4];
  in.ra = b[5];
  in.rb = b[6];
  in.rc = b[7];
  in.re = b[8];
  in.flags = b[9];
  uint64_t imm = 0;
  for (int i = 0; i < 8; ++i) imm |= uint64_t(b[10 + i]) << (8 * i);
  in.imm = int64_t(imm);
  return in;
}

}  // namespace

std::vector<uint8_t> encodeImage(const Module& module) {
  validate(module);
  for (const Function& f : module.functions) {
    if (f.name.size() > UINT32_MAX || f.code.size() > UINT32_MAX) {
      throw std::length_error("function '" + f.name + "' too large for a module image");
    }
  }
  Writer w;
  w.bytes(kMagic, sizeof(kMagic));
  w.u32(kImageVersion);
  w.u32(uint32_t(module.functions.size()));
  for (const Function& f : module.functions) {
    w.u32(uint32_t(f.name.size()));
    w.bytes(f.name.data(), f.name.size());
    w.u32(f.argBytes);
    w.u32(uint32_t(f.code.size()));
    for (const Instr& in : f.code) {
      for (uint8_t b : {uint8_t(in.op), in.sub, uint8_t(in.type), uint8_t(in.type2), in.rd, in.ra,
                        in.rb, in.rc, in.re, in.flags}) {
        w.u8(b);
      }
      w.i64(in.imm);
    }
  }
  return w.take();
}

Module decodeImage(const void* data, size_t bytes) {
  using Kind = ImageError::Kind;
  Reader r(data, bytes);
  const size_t magicBytes = bytes < sizeof(kMagic) ? bytes : sizeof(kMagic);
  if (magicBytes > 0 && std::memcmp(data, kMagic, magicBytes) != 0) {
    throw ImageError(Kind::BadMagic, "not a module image (bad magic)");
  }
  r.take(sizeof(kMagic), "the magic");
  const uint32_t version = r.u32("the version");
  if (version != kImageVersion) {
    throw ImageError(Kind::UnsupportedVersion, "module image version " + std::to_string(version) +
                                                   " is not supported (" +
                                                   std::to_string(kImageVersion) + " is)");
  }
  Module module;
  const uint32_t count = r.u32("the function count");
  // Checked against the bytes left before allocating, so a corrupt count cannot exhaust memory.
  if (count > r.left() / kMinFunctionBytes) {
    throw ImageError(Kind::Truncated,
                     "module image truncated: " + std::to_string(count) + " functions do not fit");
  }
  module.functions.resize(count);
  for (uint32_t fi = 0; fi < count; ++fi) {
    Function& f = module.functions[fi];
    const uint32_t nameBytes = r.u32("a function name length");
    const uint8_t* name = r.take(nameBytes, "a function name");
    f.name.assign(reinterpret_cast<const char*>(name), nameBytes);
    f.argBytes = r.u32("a function's argument bytes");
    const uint32_t instrs = r.u32("a function's instruction count");
    if (instrs > r.left() / kInstrBytes) {
      throw ImageError(Kind::Truncated, "module image truncated in the code of function " +
                                            std::to_string(fi) + " '" + f.name + "'");
    }
    f.code.reserve(instrs);
    for (uint32_t i = 0; i < instrs; ++i) f.code.push_back(readInstr(r));
  }
  if (r.left() != 0) {
    throw ImageError(Kind::Malformed,
                     "malformed module image: " + std::to_string(r.left()) + " trailing bytes");
  }
  try {
    validate(module);
  } catch (const ValidationError& e) {
    throw ImageError(Kind::Malformed, std::string("malformed module image: ") + e.what());
  }
  return module;
}

}  // namespace mimic::isa
