// A C++ API for writing kernels in the mimic ISA, so kernels read like code rather than
// assembly text:
//
//   KernelBuilder k("scale", /*args=*/3);            // dst, src, n
//   Reg dst = k.arg(0), src = k.arg(1), n = k.arg(2);
//   ...
//   isa::Module module{{k.finish()}};
//   std::vector<uint8_t> image = isa::encodeImage(module);  // for mimicModuleLoad
//
// Registers are allocated by the builder; labels are resolved by finish(), which also appends
// the final Exit and validates the function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "module.h"

namespace mimic::isa {

struct Reg {
  uint8_t index;
};
struct Desc {
  uint8_t index;
};
struct Label {
  int id;
};

class KernelBuilder {
 public:
  KernelBuilder(std::string name, uint32_t argCount);

  // Registers and labels.
  Reg reg();  // throws std::runtime_error when all 32 are in use
  void release(Reg r);
  Desc desc();  // a DMA descriptor; throws when all 8 are in use
  Label label();
  void bind(Label l);

  // Scalar.
  Reg li(int64_t value);
  void li(Reg d, int64_t value);
  void mov(Reg d, Reg a);
  Reg arg(int index);
  Reg workgroupId(int dim);
  Reg gridDim(int dim);
  void alu(ScalarOp op, Reg d, Reg a, Reg b);
  void alu(ScalarOp op, Reg d, Reg a, int64_t b);
  // d += idx * argument `index` (a stride, say), through a scratch register.
  void addScaledArg(Reg d, Reg idx, int index);
  // d = the scratchpad element of type t (i32, i64 or u8) at byte address `address`.
  Reg sload(DType t, Reg address);
  void sload(DType t, Reg d, Reg address);
  void cmp(Cond c, Reg d, Reg a, Reg b);
  void cmp(Cond c, Reg d, Reg a, int64_t b);
  void br(Label l);
  void brz(Reg a, Label l);
  void brnz(Reg a, Label l);

  // DMA.
  void dmaDim(Desc d, DType type, int dim, Reg count, Reg hbmStride, Reg spStride);
  Reg dmaLoad(Reg spAddress, Reg hbmAddress, Desc d);  // returns a new token register
  Reg dmaStore(Reg hbmAddress, Reg spAddress, Desc d);
  void dmaLoad(Reg token, Reg spAddress, Reg hbmAddress, Desc d);  // the token into `token`
  void dmaStore(Reg token, Reg hbmAddress, Reg spAddress, Desc d);
  void wait(Reg token);
  void waitAll();

  // Vector.
  void vshape(Reg rows, Reg dstRowStride, Reg srcRowStride, Reg otherRowStride);
  void unary(UnaryOp op, DType t, Reg dst, Reg src, Reg n);
  void binary(BinaryOp op, DType t, Reg dst, Reg a, Reg b, Reg n);
  void binaryScalar(BinaryOp op, DType t, Reg dst, Reg a, double scalar, Reg n);
  void binaryScalar(BinaryOp op, DType t, Reg dst, Reg a, Reg scalarBits, Reg n);
  void fma(DType t, Reg dst, Reg a, Reg b, Reg c, Reg n);
  void select(DType t, Reg dst, Reg mask, Reg a, Reg b, Reg n);
  void compare(Cond c, DType t, Reg dst, Reg a, Reg b, Reg n);
  void compareScalar(Cond c, DType t, Reg dst, Reg a, double scalar, Reg n);
  void cast(DType from, DType to, Reg dst, Reg src, Reg n);
  void reduce(ReduceOp op, DType t, Reg dst, Reg src, Reg n);
  void fill(DType t, Reg dst, double value, Reg n);
  void iota(DType t, Reg dst, Reg n);

  // Matrix, sync.
  void mshape(Reg m, Reg n, Reg k);
  void mma(DType abType, Reg c, Reg a, Reg b);
  void barrier();
  void atomicAdd(DType t, Reg hbmAddress, Reg src, Reg n);
  void exit();

  // Resolves labels, appends Exit, validates; throws std::runtime_error naming the problem.
  Function finish();

 private:
  Instr& emit(Opcode op, uint8_t rd = 0, uint8_t ra = 0, uint8_t rb = 0, uint8_t rc = 0,
              uint8_t re = 0);
  Instr& emitTyped(Opcode op, uint8_t sub, DType t, uint8_t rd, uint8_t ra, uint8_t rb, uint8_t rc,
                   uint8_t re = 0);
  void setScalar(Instr& in, double value);  // an immediate scalar operand of the instr's type
  void branch(Opcode op, uint8_t ra, Label l);
  uint64_t scalarOf(double value, DType t) const;

  Function function_;
  uint32_t usedRegs_ = 0;
  uint8_t usedDescs_ = 0;
  std::vector<int64_t> labelTargets_;           // -1 until bound
  std::vector<std::pair<size_t, int>> fixups_;  // instruction index, label id
};

}  // namespace mimic::isa
