#include "sim/isa/builder.h"

#include <cmath>
#include <stdexcept>

#include "sim/isa/scalar_literal.h"
#include "sim/isa/validate.h"

namespace mimic::isa {

KernelBuilder::KernelBuilder(std::string name, uint32_t argCount) {
  function_.name = std::move(name);
  function_.argBytes = 8 * argCount;
}

Reg KernelBuilder::reg() {
  for (uint8_t r = 0; r < kNumScalarRegs; ++r) {
    if (!(usedRegs_ & (1u << r))) {
      usedRegs_ |= 1u << r;
      return Reg{r};
    }
  }
  throw std::runtime_error("kernel '" + function_.name + "' uses more than 32 registers");
}

void KernelBuilder::release(Reg r) {
  usedRegs_ &= ~(1u << r.index);
}

Desc KernelBuilder::desc() {
  for (uint8_t d = 0; d < kNumDescriptors; ++d) {
    if (!(usedDescs_ & (1u << d))) {
      usedDescs_ |= static_cast<uint8_t>(1u << d);
      return Desc{d};
    }
  }
  throw std::runtime_error("kernel '" + function_.name + "' uses more than 8 DMA descriptors");
}

Label KernelBuilder::label() {
  labelTargets_.push_back(-1);
  return Label{static_cast<int>(labelTargets_.size()) - 1};
}

void KernelBuilder::bind(Label l) {
  labelTargets_.at(l.id) = static_cast<int64_t>(function_.code.size());
}

Instr& KernelBuilder::emit(Opcode op, uint8_t rd, uint8_t ra, uint8_t rb, uint8_t rc, uint8_t re) {
  Instr in;
  in.op = op;
  in.rd = rd;
  in.ra = ra;
  in.rb = rb;
  in.rc = rc;
  in.re = re;
  function_.code.push_back(in);
  return function_.code.back();
}

Instr& KernelBuilder::emitTyped(Opcode op, uint8_t sub, DType t, uint8_t rd, uint8_t ra, uint8_t rb,
                                uint8_t rc, uint8_t re) {
  Instr& in = emit(op, rd, ra, rb, rc, re);
  in.sub = sub;
  in.type = t;
  return in;
}

void KernelBuilder::setScalar(Instr& in, double value) {
  in.flags = kImmOperand;
  in.imm = static_cast<int64_t>(scalarOf(value, in.type));
}

uint64_t KernelBuilder::scalarOf(double value, DType t) const {
  if (isFloat(t)) return floatToBits(value, t);
  const auto whole = static_cast<int64_t>(value);
  // Narrow signed immediates are stored sign-extended from their own width (validate.h).
  if (t == DType::I8) return static_cast<uint64_t>(int64_t{static_cast<int8_t>(whole)});
  if (t == DType::I16) return static_cast<uint64_t>(int64_t{static_cast<int16_t>(whole)});
  return static_cast<uint64_t>(whole);
}

Reg KernelBuilder::li(int64_t value) {
  Reg d = reg();
  li(d, value);
  return d;
}

void KernelBuilder::li(Reg d, int64_t value) {
  emit(Opcode::Li, d.index).imm = value;
}
void KernelBuilder::mov(Reg d, Reg a) {
  emit(Opcode::Mov, d.index, a.index);
}

Reg KernelBuilder::arg(int index) {
  Reg d = reg();
  emit(Opcode::Arg, d.index).imm = index;
  return d;
}

Reg KernelBuilder::workgroupId(int dim) {
  Reg d = reg();
  emit(Opcode::WgId, d.index).imm = dim;
  return d;
}

Reg KernelBuilder::gridDim(int dim) {
  Reg d = reg();
  emit(Opcode::GridDim, d.index).imm = dim;
  return d;
}

void KernelBuilder::alu(ScalarOp op, Reg d, Reg a, Reg b) {
  emit(Opcode::SAlu, d.index, a.index, b.index).sub = static_cast<uint8_t>(op);
}

void KernelBuilder::alu(ScalarOp op, Reg d, Reg a, int64_t b) {
  Instr& in = emit(Opcode::SAlu, d.index, a.index);
  in.sub = static_cast<uint8_t>(op);
  in.flags = kImmOperand;
  in.imm = b;
}

void KernelBuilder::addScaledArg(Reg d, Reg idx, int index) {
  Reg t = arg(index);
  alu(ScalarOp::Mul, t, idx, t);
  alu(ScalarOp::Add, d, d, t);
  release(t);
}

Reg KernelBuilder::sload(DType t, Reg address) {
  Reg d = reg();
  sload(t, d, address);
  return d;
}

void KernelBuilder::sload(DType t, Reg d, Reg address) {
  emit(Opcode::SLoad, d.index, address.index).type = t;
}

void KernelBuilder::cmp(Cond c, Reg d, Reg a, Reg b) {
  emit(Opcode::SCmp, d.index, a.index, b.index).sub = static_cast<uint8_t>(c);
}

void KernelBuilder::cmp(Cond c, Reg d, Reg a, int64_t b) {
  Instr& in = emit(Opcode::SCmp, d.index, a.index);
  in.sub = static_cast<uint8_t>(c);
  in.flags = kImmOperand;
  in.imm = b;
}

void KernelBuilder::branch(Opcode op, uint8_t ra, Label l) {
  fixups_.push_back({function_.code.size(), l.id});
  emit(op, 0, ra);
}

void KernelBuilder::br(Label l) {
  branch(Opcode::Br, 0, l);
}
void KernelBuilder::brz(Reg a, Label l) {
  branch(Opcode::Brz, a.index, l);
}
void KernelBuilder::brnz(Reg a, Label l) {
  branch(Opcode::Brnz, a.index, l);
}

void KernelBuilder::dmaDim(Desc d, DType type, int dim, Reg count, Reg hbmStride, Reg spStride) {
  Instr& in = emit(Opcode::DmaDesc, d.index, count.index, hbmStride.index, spStride.index);
  in.type = type;
  in.imm = dim;
}

Reg KernelBuilder::dmaLoad(Reg spAddress, Reg hbmAddress, Desc d) {
  Reg token = reg();
  dmaLoad(token, spAddress, hbmAddress, d);
  return token;
}

Reg KernelBuilder::dmaStore(Reg hbmAddress, Reg spAddress, Desc d) {
  Reg token = reg();
  dmaStore(token, hbmAddress, spAddress, d);
  return token;
}

void KernelBuilder::dmaLoad(Reg token, Reg spAddress, Reg hbmAddress, Desc d) {
  emit(Opcode::DmaLoad, token.index, spAddress.index, hbmAddress.index, d.index);
}

void KernelBuilder::dmaStore(Reg token, Reg hbmAddress, Reg spAddress, Desc d) {
  emit(Opcode::DmaStore, token.index, hbmAddress.index, spAddress.index, d.index);
}

void KernelBuilder::wait(Reg token) {
  emit(Opcode::Wait, 0, token.index);
}
void KernelBuilder::waitAll() {
  emit(Opcode::WaitAll);
}

void KernelBuilder::vshape(Reg rows, Reg dstRowStride, Reg srcRowStride, Reg otherRowStride) {
  emit(Opcode::VShape, otherRowStride.index, rows.index, dstRowStride.index, srcRowStride.index);
}

void KernelBuilder::unary(UnaryOp op, DType t, Reg dst, Reg src, Reg n) {
  emitTyped(Opcode::VUnary, uint8_t(op), t, dst.index, src.index, 0, n.index);
}

void KernelBuilder::binary(BinaryOp op, DType t, Reg dst, Reg a, Reg b, Reg n) {
  emitTyped(Opcode::VBinary, uint8_t(op), t, dst.index, a.index, b.index, n.index);
}

void KernelBuilder::binaryScalar(BinaryOp op, DType t, Reg dst, Reg a, double scalar, Reg n) {
  setScalar(emitTyped(Opcode::VBinaryS, uint8_t(op), t, dst.index, a.index, 0, n.index), scalar);
}

void KernelBuilder::binaryScalar(BinaryOp op, DType t, Reg dst, Reg a, Reg scalarBits, Reg n) {
  emitTyped(Opcode::VBinaryS, uint8_t(op), t, dst.index, a.index, scalarBits.index, n.index);
}

void KernelBuilder::fma(DType t, Reg dst, Reg a, Reg b, Reg c, Reg n) {
  emitTyped(Opcode::VFma, 0, t, dst.index, a.index, b.index, c.index, n.index);
}

void KernelBuilder::select(DType t, Reg dst, Reg mask, Reg a, Reg b, Reg n) {
  emitTyped(Opcode::VSelect, 0, t, dst.index, mask.index, a.index, b.index, n.index);
}

void KernelBuilder::compare(Cond c, DType t, Reg dst, Reg a, Reg b, Reg n) {
  emitTyped(Opcode::VCmp, uint8_t(c), t, dst.index, a.index, b.index, n.index);
}

void KernelBuilder::compareScalar(Cond c, DType t, Reg dst, Reg a, double scalar, Reg n) {
  setScalar(emitTyped(Opcode::VCmpS, uint8_t(c), t, dst.index, a.index, 0, n.index), scalar);
}

void KernelBuilder::cast(DType from, DType to, Reg dst, Reg src, Reg n) {
  emitTyped(Opcode::VCast, 0, from, dst.index, src.index, 0, n.index).type2 = to;
}

void KernelBuilder::reduce(ReduceOp op, DType t, Reg dst, Reg src, Reg n) {
  emitTyped(Opcode::VReduce, uint8_t(op), t, dst.index, src.index, 0, n.index);
}

void KernelBuilder::fill(DType t, Reg dst, double value, Reg n) {
  setScalar(emitTyped(Opcode::VFill, 0, t, dst.index, 0, 0, n.index), value);
}

void KernelBuilder::iota(DType t, Reg dst, Reg n) {
  emitTyped(Opcode::VIota, 0, t, dst.index, 0, 0, n.index);
}

void KernelBuilder::mshape(Reg m, Reg n, Reg k) {
  emit(Opcode::MShape, 0, m.index, n.index, k.index);
}

void KernelBuilder::mma(DType abType, Reg c, Reg a, Reg b) {
  emit(Opcode::Mma, c.index, a.index, b.index).type = abType;
}

void KernelBuilder::barrier() {
  emit(Opcode::Barrier);
}

void KernelBuilder::atomicAdd(DType t, Reg hbmAddress, Reg src, Reg n) {
  emit(Opcode::AtomicAdd, 0, hbmAddress.index, src.index, n.index).type = t;
}

void KernelBuilder::exit() {
  emit(Opcode::Exit);
}

Function KernelBuilder::finish() {
  for (const auto& [index, id] : fixups_) {
    if (labelTargets_.at(id) < 0) {
      throw std::runtime_error("kernel '" + function_.name + "': a label is used but not bound");
    }
    function_.code[index].imm = labelTargets_[id];
  }
  emit(Opcode::Exit);
  validate(Module{{function_}});
  return function_;
}

}  // namespace mimic::isa
