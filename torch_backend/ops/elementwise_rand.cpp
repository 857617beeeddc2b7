#include "torch_backend/ops/elementwise_rand.h"

#include <cmath>
#include <utility>

namespace mimic::ops {
namespace {

using isa::BinaryOp;
using isa::DType;
using isa::Reg;
using isa::ScalarOp;

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;
constexpr uint64_t kMix1 = 0xBF58476D1CE4E5B9ull, kMix2 = 0x94D049BB133111EBull;
constexpr uint32_t kLowbias1 = 0x7feb352du, kLowbias2 = 0x846ca68bu;
constexpr uint64_t kLow32 = 0xFFFFFFFFull;

uint64_t splitmix64(uint64_t x) {
  uint64_t z = x + kGolden;
  z = (z ^ (z >> 30)) * kMix1;
  z = (z ^ (z >> 27)) * kMix2;
  return z ^ (z >> 31);
}

// Arithmetic shifts, as the device's scalar Shr does.
int64_t sar(int64_t x, int s) {
  return x >> s;
}

// The round key of the counters whose high half is `hi` (mod 2^32).
uint32_t roundKey(int64_t key, uint64_t hi) {
  int64_t z = static_cast<int64_t>((hi & kLow32) * kGolden + static_cast<uint64_t>(key));
  z = static_cast<int64_t>(static_cast<uint64_t>(z ^ sar(z, 31)) * kMix1);
  z = static_cast<int64_t>(static_cast<uint64_t>(z ^ sar(z, 29)) * kMix2);
  return static_cast<uint32_t>(z ^ sar(z, 32));
}

uint32_t lowbias32(uint32_t x) {
  x ^= x >> 16;
  x *= kLowbias1;
  x ^= x >> 15;
  x *= kLowbias2;
  return x ^ (x >> 16);
}

int precisionBits(DType type) {
  return type == DType::F16 ? 11 : type == DType::BF16 ? 8 : 24;
}

// An i32 immediate for the bits of a u32 constant.
double asI32(uint32_t bits) {
  return static_cast<double>(static_cast<int32_t>(bits));
}

class RandEmitter {
 public:
  RandEmitter(isa::KernelBuilder& k, const RandBuffers& b, Reg count) : k_(k), b_(b), n_(count) {}

  // z = roundKey(key, hi) in scalar registers; clobbers hi.
  void roundKey(Reg z, Reg key, Reg hi) {
    Reg t = k_.reg();
    k_.alu(ScalarOp::And, hi, hi, static_cast<int64_t>(kLow32));
    k_.alu(ScalarOp::Mul, z, hi, static_cast<int64_t>(kGolden));
    k_.alu(ScalarOp::Add, z, z, key);
    for (auto [shift, mul] : {std::pair<int, uint64_t>{31, kMix1}, {29, kMix2}}) {
      k_.alu(ScalarOp::Shr, t, z, shift);
      k_.alu(ScalarOp::Xor, z, z, t);
      k_.alu(ScalarOp::Mul, z, z, static_cast<int64_t>(mul));
    }
    k_.alu(ScalarOp::Shr, t, z, 32);
    k_.alu(ScalarOp::Xor, z, z, t);
    k_.release(t);
  }

  // dst = a <op> scalar for buffers of `type`, the scalar an immediate or an i32 register.
  void scalarOp(BinaryOp op, DType type, int64_t dst, int64_t a, double value) {
    at(dst, a, [&](Reg d, Reg s) { k_.binaryScalar(op, type, d, s, value, n_); });
  }
  void scalarOp(BinaryOp op, int64_t dst, int64_t a, Reg value) {
    at(dst, a, [&](Reg d, Reg s) { k_.binaryScalar(op, DType::I32, d, s, value, n_); });
  }
  void xorInto(int64_t dst, int64_t other) {
    at(dst, other, [&](Reg d, Reg o) { k_.binary(BinaryOp::Xor, DType::I32, d, d, o, n_); });
  }
  void cast(DType from, DType to, int64_t dst, int64_t src) {
    at(dst, src, [&](Reg d, Reg s) { k_.cast(from, to, d, s, n_); });
  }

  // z ^= z >>> shift (logical, 8 <= shift): the masked value converts to f32 exactly.
  void xorShift(int shift) {
    scalarOp(BinaryOp::And, DType::I32, b_.t, b_.z, asI32(~((1u << shift) - 1)));
    cast(DType::I32, DType::F32, b_.f, b_.t);
    scalarOp(BinaryOp::Mul, DType::F32, b_.f, b_.f, std::ldexp(1.0, -shift));
    cast(DType::F32, DType::I32, b_.t, b_.f);
    scalarOp(BinaryOp::And, DType::I32, b_.t, b_.t, asI32((1u << (32 - shift)) - 1));
    xorInto(b_.z, b_.t);
  }

  void lowbias32() {
    xorShift(16);
    scalarOp(BinaryOp::Mul, DType::I32, b_.z, b_.z, asI32(kLowbias1));
    xorShift(15);
    scalarOp(BinaryOp::Mul, DType::I32, b_.z, b_.z, asI32(kLowbias2));
    xorShift(16);
  }

 private:
  // Runs `emit` with two registers holding scratchpad addresses.
  template <class F>
  void at(int64_t first, int64_t second, F emit) {
    Reg a = k_.li(first), b = k_.li(second);
    emit(a, b);
    k_.release(a);
    k_.release(b);
  }

  isa::KernelBuilder& k_;
  const RandBuffers& b_;
  Reg n_;
};

}  // namespace

int64_t randKey(uint64_t seed, int stream) {
  return static_cast<int64_t>(splitmix64(splitmix64(seed) ^ static_cast<uint64_t>(stream)));
}

double randReference(uint64_t seed, uint64_t counter, int stream, DType type) {
  const int64_t key = randKey(seed, stream);
  uint32_t x = lowbias32(static_cast<uint32_t>(counter) ^ roundKey(key, counter >> 32));
  x = lowbias32(x ^ static_cast<uint32_t>(static_cast<uint64_t>(key) >> 32));
  const int bits = precisionBits(type);
  return std::ldexp(static_cast<double>(x & ((1u << bits) - 1)), -bits);
}

void emitRand(isa::KernelBuilder& k, DType type, int64_t dst, const RandBuffers& b, Reg start,
              Reg key, Reg count) {
  RandEmitter e(k, b, count);
  // t = 1 where low32(start) + j wraps past 2^32, else 0: j >= 2^32 - low32(start). The
  // threshold is capped so that it stays an i32 (tiles are far shorter than 2^30).
  Reg lo = k.reg(), r = k.reg();
  k.alu(ScalarOp::And, lo, start, static_cast<int64_t>(kLow32));
  k.li(r, static_cast<int64_t>(kLow32));
  k.alu(ScalarOp::Sub, r, r, lo);
  k.alu(ScalarOp::Min, r, r, int64_t{1} << 30);
  e.scalarOp(BinaryOp::Sub, b.t, b.iota, r);
  e.scalarOp(BinaryOp::Max, DType::I32, b.t, b.t, 0);
  e.scalarOp(BinaryOp::Min, DType::I32, b.t, b.t, 1);
  // t = carry ? roundKey(hi + 1) : roundKey(hi), as kA ^ carry * (kA ^ kB).
  Reg ka = k.reg(), kb = k.reg();
  k.alu(ScalarOp::Shr, r, start, 32);
  e.roundKey(ka, key, r);
  k.alu(ScalarOp::Shr, r, start, 32);
  k.alu(ScalarOp::Add, r, r, 1);
  e.roundKey(kb, key, r);
  k.alu(ScalarOp::Xor, kb, kb, ka);
  e.scalarOp(BinaryOp::Mul, b.t, b.t, kb);
  e.scalarOp(BinaryOp::Xor, b.t, b.t, ka);
  k.release(ka);
  k.release(kb);
  // z = lowbias32(low32(counter) ^ round key)
  e.scalarOp(BinaryOp::Add, b.z, b.iota, lo);
  k.release(lo);
  e.xorInto(b.z, b.t);
  e.lowbias32();
  // z = lowbias32(z ^ (key >> 32))
  k.alu(ScalarOp::Shr, r, key, 32);
  e.scalarOp(BinaryOp::Xor, b.z, b.z, r);
  k.release(r);
  e.lowbias32();
  const int bits = precisionBits(type);
  e.scalarOp(BinaryOp::And, DType::I32, b.z, b.z, static_cast<double>((1 << bits) - 1));
  e.cast(DType::I32, type, dst, b.z);
  e.scalarOp(BinaryOp::Mul, type, dst, dst, std::ldexp(1.0, -bits));
}

}  // namespace mimic::ops
