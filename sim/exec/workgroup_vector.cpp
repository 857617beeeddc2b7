#include "sim/exec/vector_math.h"
#include "sim/exec/workgroup.h"
#include "sim/isa/validate.h"

namespace mimic::exec::detail {

void Workgroup::vector(const Instr& in) {
  const DType t = in.type;
  const int e = isa::dtypeSize(t);
  const int64_t rows = rows_;
  auto unsupported = [&](const char* what) {
    fault(FaultKind::IllegalInstruction,
          std::string(what) + " is not defined for " + isa::dtypeName(t));
  };
  auto dst = [&](int64_t n, int elementBytes) {
    return operand(s(in.rd), dstRowStride_, rows, checkedMul(n, elementBytes), elementBytes, true,
                   "destination");
  };
  auto src = [&](uint8_t reg, int64_t n, int elementBytes, bool first) {
    return operand(s(reg), first ? srcRowStride_ : otherRowStride_, rows,
                   checkedMul(n, elementBytes), elementBytes, false, "source");
  };
  auto eachRow = [&](auto&& body) {
    if (timingOnly_) return;
    for (int64_t r = 0; r < rows; ++r) body(r);
  };
  // Elements per row: re for the four-operand forms, whose rc is an operand.
  const int64_t n = s(in.op == Opcode::VFma || in.op == Opcode::VSelect ? in.re : in.rc);
  if (n < 0) fault(FaultKind::IllegalAddress, "negative element count");
  charge(static_cast<uint64_t>(rows));
  uint64_t flopsPerElement = 1;
  switch (in.op) {
    case Opcode::VUnary: {
      if (!supportsUnary(isa::UnaryOp(in.sub), t)) unsupported("this unary op");
      uint8_t* d = dst(n, e);
      const uint8_t* a = src(in.ra, n, e, true);
      eachRow([&](int64_t r) {
        unary(isa::UnaryOp(in.sub), t, d + r * dstRowStride_, a + r * srcRowStride_, n);
      });
      break;
    }
    case Opcode::VBinary:
    case Opcode::VBinaryS: {
      if (!supportsBinary(isa::BinaryOp(in.sub), t)) unsupported("this binary op");
      uint8_t* d = dst(n, e);
      const uint8_t* a = src(in.ra, n, e, true);
      if (in.op == Opcode::VBinaryS) {
        const uint64_t bits = scalarBits(in);
        eachRow([&](int64_t r) {
          binaryScalar(isa::BinaryOp(in.sub), t, d + r * dstRowStride_, a + r * srcRowStride_, bits,
                       n);
        });
      } else {
        const uint8_t* b = src(in.rb, n, e, false);
        eachRow([&](int64_t r) {
          binary(isa::BinaryOp(in.sub), t, d + r * dstRowStride_, a + r * srcRowStride_,
                 b + r * otherRowStride_, n);
        });
      }
      break;
    }
    case Opcode::VFma: {
      if (!supportsFma(t)) unsupported("fma");
      flopsPerElement = 2;
      uint8_t* d = dst(n, e);
      const uint8_t* a = src(in.ra, n, e, true);
      const uint8_t* b = src(in.rb, n, e, false);
      const uint8_t* c = src(in.rc, n, e, false);
      eachRow([&](int64_t r) {
        fma(t, d + r * dstRowStride_, a + r * srcRowStride_, b + r * otherRowStride_,
            c + r * otherRowStride_, n);
      });
      break;
    }
    case Opcode::VSelect: {
      uint8_t* d = dst(n, e);
      const uint8_t* mask = src(in.ra, n, 1, true);
      const uint8_t* a = src(in.rb, n, e, false);
      const uint8_t* b = src(in.rc, n, e, false);
      eachRow([&](int64_t r) {
        select(t, d + r * dstRowStride_, mask + r * srcRowStride_, a + r * otherRowStride_,
               b + r * otherRowStride_, n);
      });
      break;
    }
    case Opcode::VCmp:
    case Opcode::VCmpS: {
      uint8_t* d = dst(n, 1);
      const uint8_t* a = src(in.ra, n, e, true);
      if (in.op == Opcode::VCmpS) {
        const uint64_t bits = scalarBits(in);
        eachRow([&](int64_t r) {
          compareScalar(isa::Cond(in.sub), t, d + r * dstRowStride_, a + r * srcRowStride_, bits,
                        n);
        });
      } else {
        const uint8_t* b = src(in.rb, n, e, false);
        eachRow([&](int64_t r) {
          compare(isa::Cond(in.sub), t, d + r * dstRowStride_, a + r * srcRowStride_,
                  b + r * otherRowStride_, n);
        });
      }
      break;
    }
    case Opcode::VCast: {
      uint8_t* d = dst(n, isa::dtypeSize(in.type2));
      const uint8_t* a = src(in.ra, n, e, true);
      eachRow(
          [&](int64_t r) { cast(t, in.type2, d + r * dstRowStride_, a + r * srcRowStride_, n); });
      break;
    }
    case Opcode::VReduce: {
      const isa::ReduceOp op = isa::ReduceOp(in.sub);
      const bool index = op == isa::ReduceOp::ArgMax || op == isa::ReduceOp::ArgMin;
      uint8_t* d = dst(1, index ? 8 : e);
      const uint8_t* a = src(in.ra, n, e, true);
      eachRow([&](int64_t r) { reduce(op, t, d + r * dstRowStride_, a + r * srcRowStride_, n); });
      break;
    }
    case Opcode::VFill:
    case Opcode::VIota: {
      uint8_t* d = dst(n, e);
      const uint64_t bits = scalarBits(in);
      eachRow([&](int64_t r) {
        if (in.op == Opcode::VFill) {
          fill(t, d + r * dstRowStride_, bits, n);
        } else {
          iota(t, d + r * dstRowStride_, n);
        }
      });
      flopsPerElement = 0;
      break;
    }
    default:
      fault(FaultKind::IllegalInstruction, "not a vector instruction");
  }
  const uint64_t elements = static_cast<uint64_t>(rows) * static_cast<uint64_t>(n);
  compute(Pipe::Vector, costs_.cycles(in, elements, 0), elements * flopsPerElement);
}

void Workgroup::matrix(const Instr& in) {
  const int e = isa::dtypeSize(in.type);
  const int64_t m = mmaM_, n = mmaN_, k = mmaK_;
  const uint8_t* a = operand(s(in.ra), 0, 1, checkedMul(checkedMul(m, k), e), e, false, "matrix A");
  const uint8_t* b = operand(s(in.rb), 0, 1, checkedMul(checkedMul(k, n), e), e, false, "matrix B");
  float* c = reinterpret_cast<float*>(
      operand(s(in.rd), 0, 1, checkedMul(checkedMul(m, n), 4), 4, true, "matrix C"));
  if (!isa::typeAllowed(Opcode::Mma, 0, in.type)) {
    fault(FaultKind::IllegalInstruction,
          std::string("mma does not support ") + isa::dtypeName(in.type));
  }
  if (!timingOnly_) {
    mma(in.type, c, a, b, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k));
  }
  const uint64_t macs = static_cast<uint64_t>(m * n * k);
  compute(Pipe::Matrix, costs_.cycles(in, 0, macs), 2 * macs);
}

void Workgroup::atomicAdd(const Instr& in) {
  if (!isa::typeAllowed(Opcode::AtomicAdd, 0, in.type)) {
    fault(FaultKind::IllegalInstruction,
          std::string("atomic add does not support ") + isa::dtypeName(in.type));
  }
  const int e = isa::dtypeSize(in.type);
  const int64_t n = s(in.rc);
  if (n < 0) fault(FaultKind::IllegalAddress, "negative element count");
  const uint8_t* values = operand(s(in.rb), 0, 1, checkedMul(n, e), e, false, "atomic source");
  // An empty one touches nothing, so its address was not checked: there is nothing to apply.
  if (hbm(s(in.ra), 0, n * e, e, "atomic destination")) {
    if (recordAccesses_)
      out_.accesses.push_back(
          {static_cast<uint64_t>(s(in.ra)), static_cast<uint64_t>(s(in.ra) + n * e), true});
    if (!timingOnly_) {
      out_.atomics.push_back(
          {static_cast<uint64_t>(s(in.ra)), in.type, std::vector<uint8_t>(values, values + n * e)});
    }
  }
  out_.counters.bytesRead += n * e;
  out_.counters.bytesWritten += n * e;
  compute(Pipe::Vector, costs_.cycles(in, n, 0), n);
}

}  // namespace mimic::exec::detail
