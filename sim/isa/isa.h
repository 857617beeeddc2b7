// The mimic ISA: a tile/vector instruction set in the style of NPUs.
//
// A kernel is a program that every workgroup of a launch grid runs on one compute unit (CU).
// Its state is 32 scalar registers s0..s31 (int64), 8 DMA descriptors d0..d7, and the CU's
// scratchpad. Vector and matrix instructions do not work on vector registers: they take
// scratchpad byte addresses (in scalar registers) and an element count, so one instruction does
// a lot of work and the interpreter's cost per instruction is amortised.
//
// Operand conventions (`Instr` fields):
//   rd, ra, rb, rc, re  scalar register numbers (0..31) or descriptor numbers (0..7)
//   imm                 64-bit immediate: constants, argument index, dimension, branch target
//                       (an instruction index), or a scalar operand's raw bits (kImmOperand)
//   type, type2         element types; type2 is the destination type of a cast
//   sub                 the operation of a family (ScalarOp, Cond, UnaryOp, BinaryOp, ReduceOp)
//
// Opcode semantics (v[x] is the scratchpad range at the byte address held in register x):
//   Nop                 nothing
//   Exit                ends the workgroup
//   Li      rd, imm     rd = imm
//   Mov     rd, ra      rd = ra
//   SAlu    rd, ra, rb  rd = ra <sub:ScalarOp> rb   (or imm when flags has kImmOperand);
//                       wrapping arithmetic; Div and Rem by zero, and INT64_MIN / -1, give 0;
//                       shift amounts are taken mod 64, Shr is arithmetic
//   SCmp    rd, ra, rb  rd = (ra <sub:Cond> rb) ? 1 : 0   (rb or imm)
//   Br      imm         jump to instruction imm
//   Brz     ra, imm     jump if ra == 0
//   Brnz    ra, imm     jump if ra != 0
//   Arg     rd, imm     rd = the 8-byte kernel argument number imm
//   WgId    rd, imm     rd = this workgroup's id along dimension imm (0=x, 1=y, 2=z)
//   GridDim rd, imm     rd = the grid's size along dimension imm
//   DmaDesc rd, ra, rb, rc, imm
//                       descriptor d<rd>, dimension imm (0 innermost .. 3): count ra,
//                       HBM stride rb bytes, scratchpad stride rc bytes; the element size
//                       is `type`. Setting dimension 0 resets the descriptor, so dimensions
//                       set before it have count 1 again: set dimension 0 first. Strides
//                       may be 0 (broadcast) or negative.
//   DmaLoad  rd, ra, rb, rc   scratchpad[ra] <- HBM[rb] through descriptor d<rc>;
//                             rd = a completion token
//   DmaStore rd, ra, rb, rc   HBM[ra] <- scratchpad[rb] through descriptor d<rc>; rd = token
//   Wait     ra         waits until the DMA with token ra has completed
//   WaitAll             waits for every DMA of this workgroup
//   VShape  ra, rb, rc, rd   later vector instructions work on ra rows; row strides in bytes:
//                            rb for the destination, rc for the first source, rd for the
//                            others. The default is one row. (Note rd comes last here: it is
//                            the "other sources" stride, not a destination.)
//   VUnary  rd, ra, rc       v[rd] = <sub:UnaryOp>(v[ra]), rc elements per row, of `type`
//   VBinary rd, ra, rb, rc   v[rd] = v[ra] <sub:BinaryOp> v[rb]
//   VBinaryS rd, ra, rb, rc  v[rd] = v[ra] <sub> scalar (the low bits of rb, or imm, read as
//                            `type`)
//   VFma    rd, ra, rb, rc, re   v[rd] = v[ra] * v[rb] + v[rc], re elements
//   VSelect rd, ra, rb, rc, re   v[rd] = v[ra] (u8 mask) ? v[rb] : v[rc], re elements
//   VCmp    rd, ra, rb, rc   v[rd] (u8: 1 or 0) = v[ra] <sub:Cond> v[rb]
//   VCmpS   rd, ra, rb, rc   the same against a scalar, as VBinaryS
//   VCast   rd, ra, rc       v[rd] (type2) = v[ra] (type) converted (see vector_math.h)
//   VReduce rd, ra, rc       per row: v[rd] = <sub:ReduceOp> of rc elements of v[ra];
//                            Sum/Max/Min give `type`, ArgMax/ArgMin give i64
//   VFill   rd, rb, rc       v[rd] = scalar (low bits of rb, or imm, as `type`), rc elements
//   VIota   rd, rc           v[rd][i] = i (converted to `type`, so f16 saturates to inf from
//                            65520 and i8, u8, i16 wrap), rc elements
//   MShape  ra, rb, rc       later Mma instructions use M=ra, N=rb, K=rc
//   Mma     rd, ra, rb       f32 C[M x N] at v[rd] += A[M x K] at v[ra] times B[K x N] at v[rb];
//                            A and B are `type` (f32, f16 or bf16; no f64), all row-major,
//                            dense
//   Barrier             waits for every pipe of this workgroup to drain
//   AtomicAdd ra, rb, rc     HBM[ra] += v[rb] elementwise, rc elements of `type`
//                            (f32, f64, i32, i64), applied atomically; the atomics of a launch
//                            are applied in workgroup order, so results are deterministic
//   SLoad   rd, ra       rd = the scratchpad element of `type` (i8, i16, i32, i64 or u8) at
//                       byte address ra: ints sign-extended, u8 zero-extended. It is how a kernel
//                       reads data into a register (indices for gathers and scatters)
//
// Rules every valid program obeys (sim/isa/validate.h checks them at assembly and load):
//   - fields an opcode does not use are zero, so every program has one text form and one image;
//   - the element types an opcode allows are those of isa::typeAllowed (validate.h), which
//     match the vector math (sim/exec/vector_math.h documents each operation's semantics:
//     float Rem is C fmod, empty reductions give 0 / lowest / highest / index -1, ...);
//   - branch targets are instructions of the function; running past the last one exits;
//   - a scalar immediate holds an i8, i16 or i32 sign-extended, u8 and f16/bf16/f32 bits
//     zero-extended, an i64 or the f64 bits as they are.
//
// Element types: f32, f16, bf16, f64 are IEEE (f16/bf16 computed in f32 and rounded, f64 in
// f64); i8, i16, i32, i64 two's complement, arithmetic wrapping in the type's width (as C++ on
// int8_t/int16_t after promotion: 100 + 100 = -56 in i8); u8 wraps modulo 256 and is also the
// bool/mask type. Casts from a float to an integer truncate toward zero and saturate at the
// type's limits (NaN -> 0); integer to integer keeps the low bits or extends by sign (zero for
// u8); f64 -> f16/bf16 rounds once. Vector work on f64 costs compute.f64_lanes per cycle
// (sim/exec/cost_model.cpp).
// Faults at run time: HBM ranges outside one live allocation, scratchpad ranges outside the
// scratchpad, operands or row strides not aligned to their element size, scratchpad touched
// while a DMA into it (or a store out of it, for writes) is in flight, and the watchdog.
#pragma once

#include <cstdint>
#include <string>

namespace mimic::isa {

// New types go at the end, so that existing module images keep their encoding.
enum class DType : uint8_t { F32, F16, BF16, I32, I64, U8, I8, I16, F64 };
constexpr int kNumDTypes = 9;

enum class Opcode : uint8_t {
  Nop,
  Exit,
  Li,
  Mov,
  SAlu,
  SCmp,
  Br,
  Brz,
  Brnz,
  Arg,
  WgId,
  GridDim,
  DmaDesc,
  DmaLoad,
  DmaStore,
  Wait,
  WaitAll,
  VShape,
  VUnary,
  VBinary,
  VBinaryS,
  VFma,
  VSelect,
  VCmp,
  VCmpS,
  VCast,
  VReduce,
  VFill,
  VIota,
  MShape,
  Mma,
  Barrier,
  AtomicAdd,
  SLoad,  // after the others, so that existing images keep their encoding
};
constexpr int kNumOpcodes = static_cast<int>(Opcode::SLoad) + 1;

enum class ScalarOp : uint8_t { Add, Sub, Mul, Div, Rem, And, Or, Xor, Shl, Shr, Min, Max };
enum class Cond : uint8_t { Eq, Ne, Lt, Le, Gt, Ge };
enum class UnaryOp : uint8_t {
  Neg,
  Abs,
  Exp,
  Log,
  Sqrt,
  Rsqrt,
  Tanh,
  Sigmoid,
  Erf,
  Sin,
  Cos,
  Floor,
  Ceil,
  Round,  // to nearest, ties to even
  Trunc,
  Recip,
  Relu,
  Not,  // logical not for u8, bitwise not for integers
};
enum class BinaryOp : uint8_t { Add, Sub, Mul, Div, Max, Min, Pow, And, Or, Xor, Rem };
enum class ReduceOp : uint8_t { Sum, Max, Min, ArgMax, ArgMin };

// Which pipe of the CU executes an instruction (timing and counters).
enum class Pipe : uint8_t { Scalar, Vector, Matrix, Dma };
constexpr int kNumPipes = 4;

constexpr uint8_t kImmOperand = 1;  // flags: the scalar operand is `imm`, not register rb
constexpr int kNumScalarRegs = 32;
constexpr int kNumDescriptors = 8;
constexpr int kDmaDims = 4;

struct Instr {
  Opcode op = Opcode::Nop;
  uint8_t sub = 0;
  DType type = DType::F32;
  DType type2 = DType::F32;
  uint8_t rd = 0, ra = 0, rb = 0, rc = 0, re = 0;
  uint8_t flags = 0;
  int64_t imm = 0;

  bool operator==(const Instr& o) const;
};

int dtypeSize(DType t);
const char* dtypeName(DType t);  // "f32", "f16", "bf16", "i32", "i64", "u8", "i8", "i16", "f64"
bool isFloat(DType t);
Pipe pipeOf(Opcode op);

}  // namespace mimic::isa
