#include "torch_backend/ops/elementwise_emit.h"

#include <initializer_list>
#include <utility>
#include <vector>

namespace mimic::ops {
namespace {

using isa::BinaryOp;
using isa::Cond;
using isa::DType;
using isa::Reg;
using isa::UnaryOp;

// A stack value: a buffer in scratchpad, or a literal or scalar argument that ops take as
// their scalar operand and that is only written out to a buffer when an op needs one.
struct Value {
  enum class Kind { Buffer, Literal, Scalar };
  Kind kind = Kind::Buffer;
  DType type = DType::F32;  // a buffer's element type
  bool mask = false;        // a u8 0/1 mask rather than a value of the compute type
  int64_t address = 0;
  int slot = -1;  // the temporary slot the value owns
  double literal = 0;
  int scalar = 0;

  bool constant() const { return kind != Kind::Buffer; }
};

bool commutes(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Mul:
    case BinaryOp::Max:
    case BinaryOp::Min:
    case BinaryOp::And:
    case BinaryOp::Or:
    case BinaryOp::Xor:
      return true;
    default:
      return false;
  }
}

// a <c> b == b <mirror(c)> a
Cond mirror(Cond c) {
  switch (c) {
    case Cond::Lt:
      return Cond::Gt;
    case Cond::Le:
      return Cond::Ge;
    case Cond::Gt:
      return Cond::Lt;
    case Cond::Ge:
      return Cond::Le;
    default:
      return c;
  }
}

class Emitter {
 public:
  Emitter(isa::KernelBuilder& k, const Program& p, const TileBuffers& b, const TileArgs& a)
      : k_(k), p_(p), b_(b), a_(a), c_(p.compute) {}

  int64_t run() {
    for (size_t i = 0; i < p_.tokens.size(); ++i) token(p_.tokens[i], i + 1 == p_.tokens.size());
    return finish(pop());
  }

  int peakTemps() const { return peak_; }

 private:
  void token(const Token& t, bool last) {
    switch (t.kind) {
      case Token::Kind::Input:
        stack_.push_back({Value::Kind::Buffer, p_.inputs[t.index], false, b_.inputs[t.index]});
        return;
      case Token::Kind::Scalar:
        stack_.push_back({Value::Kind::Scalar, c_, false, 0, -1, 0, t.index});
        return;
      case Token::Kind::Literal:
        stack_.push_back({Value::Kind::Literal, c_, false, 0, -1, t.literal});
        return;
      case Token::Kind::Rand:
        return rand(t.index, last);
      case Token::Kind::Index:
        return index(last);
      case Token::Kind::Unary:
        return unary(UnaryOp(t.op), t.masks, last);
      case Token::Kind::Binary:
        return binary(BinaryOp(t.op), t.masks, last);
      case Token::Kind::Compare:
        return compare(Cond(t.op), last);
      case Token::Kind::Where:
        return where(last);
      case Token::Kind::Fma:
        return fma(last);
    }
  }

  Value pop() {
    Value v = stack_.back();
    stack_.pop_back();
    return v;
  }

  Value temp(DType type, bool mask) {
    size_t slot = 0;
    while (slot < slots_.size() && slots_[slot]) ++slot;
    if (slot == slots_.size()) slots_.push_back(false);
    slots_[slot] = true;
    peak_ = std::max(peak_, static_cast<int>(slots_.size()));
    Value v{Value::Kind::Buffer, type, mask, b_.temps + static_cast<int64_t>(slot) * b_.tempBytes};
    v.slot = static_cast<int>(slot);
    return v;
  }

  void drop(const Value& v) {
    if (v.slot >= 0) slots_[v.slot] = false;
  }

  // Pushes an op's result and frees the operands it consumed.
  void push(const Value& result, std::initializer_list<Value> consumed) {
    for (const Value& v : consumed) drop(v);
    stack_.push_back(result);
  }

  // Where an op's result goes: the output buffer for the program's last op when the types
  // agree, else a slot of an operand of the same type (in place), else a new slot.
  Value dest(DType type, bool mask, bool last, std::initializer_list<Value*> operands) {
    if (last && type == p_.out) return {Value::Kind::Buffer, type, mask, b_.out};
    for (Value* v : operands) {
      if (v->slot >= 0 && v->type == type) {
        Value d = *v;
        d.mask = mask;
        v->slot = -1;  // ownership moves to the result
        return d;
      }
    }
    return temp(type, mask);
  }

  Reg at(const Value& v) { return k_.li(v.address); }

  // Runs `emit` with registers holding the addresses of `values`, then frees the registers.
  template <class F>
  void with(std::initializer_list<const Value*> values, F emit) {
    std::vector<Reg> regs;
    for (const Value* v : values) regs.push_back(at(*v));
    emit(regs);
    for (Reg r : regs) k_.release(r);
  }

  Reg scalarReg(const Value& v) { return k_.arg(a_.scalarArg + v.scalar); }

  // Writes a literal or scalar into the buffer `d` of the compute type.
  void materialize(const Value& v, const Value& d) {
    with({&d}, [&](const std::vector<Reg>& r) {
      if (v.kind == Value::Kind::Literal) {
        k_.fill(c_, r[0], v.literal, a_.count);
        return;
      }
      // -0 + s == s for every float s, including -0 and NaN; 0 + s == s for integers.
      k_.fill(c_, r[0], isa::isFloat(c_) ? -0.0 : 0.0, a_.count);
      Reg s = scalarReg(v);
      k_.binaryScalar(BinaryOp::Add, c_, r[0], r[0], s, a_.count);
      k_.release(s);
    });
  }

  // The value as a buffer of the compute type (masks become 1 or 0).
  Value computeBuffer(Value v) {
    if (v.constant()) {
      Value d = temp(c_, false);
      materialize(v, d);
      return d;
    }
    if (v.type == c_) {
      v.mask = false;  // a u8 compute type holds a mask's 1 or 0 as is
      return v;
    }
    Value d = temp(c_, false);
    with({&d, &v}, [&](const std::vector<Reg>& r) { k_.cast(v.type, c_, r[0], r[1], a_.count); });
    drop(v);
    return d;
  }

  // The value as a mask: itself, or value != 0.
  Value maskBuffer(Value v) {
    if (v.mask) return v;
    v = computeBuffer(v);
    Value d = dest(DType::U8, true, false, {&v});
    with({&d, &v}, [&](const std::vector<Reg>& r) {
      k_.compareScalar(Cond::Ne, c_, r[0], r[1], 0.0, a_.count);
    });
    drop(v);
    return d;
  }

  void unary(UnaryOp op, bool masks, bool last) {
    Value v = pop();
    const DType type = masks ? DType::U8 : c_;
    if (!masks) v = computeBuffer(v);
    Value d = dest(type, masks, last, {&v});
    with({&d, &v}, [&](const std::vector<Reg>& r) { k_.unary(op, type, r[0], r[1], a_.count); });
    push(d, {v});
  }

  void binary(BinaryOp op, bool masks, bool last) {
    Value b = pop(), a = pop();
    if (masks) {
      Value d = dest(DType::U8, true, last, {&a, &b});
      with({&d, &a, &b}, [&](const std::vector<Reg>& r) {
        k_.binary(op, DType::U8, r[0], r[1], r[2], a_.count);
      });
      return push(d, {a, b});
    }
    if (a.constant() && !b.constant() && commutes(op)) std::swap(a, b);
    a = computeBuffer(a);
    if (b.constant()) {
      Value d = dest(c_, false, last, {&a});
      with({&d, &a}, [&](const std::vector<Reg>& r) {
        if (b.kind == Value::Kind::Literal) {
          k_.binaryScalar(op, c_, r[0], r[1], b.literal, a_.count);
        } else {
          Reg s = scalarReg(b);
          k_.binaryScalar(op, c_, r[0], r[1], s, a_.count);
          k_.release(s);
        }
      });
      return push(d, {a});
    }
    b = computeBuffer(b);
    Value d = dest(c_, false, last, {&a, &b});
    with({&d, &a, &b},
         [&](const std::vector<Reg>& r) { k_.binary(op, c_, r[0], r[1], r[2], a_.count); });
    push(d, {a, b});
  }

  void compare(Cond cond, bool last) {
    Value b = pop(), a = pop();
    if (a.constant() && !b.constant()) {
      std::swap(a, b);
      cond = mirror(cond);
    }
    a = computeBuffer(a);
    if (b.kind == Value::Kind::Literal) {
      Value d = dest(DType::U8, true, last, {&a});
      with({&d, &a}, [&](const std::vector<Reg>& r) {
        k_.compareScalar(cond, c_, r[0], r[1], b.literal, a_.count);
      });
      return push(d, {a});
    }
    b = computeBuffer(b);
    Value d = dest(DType::U8, true, last, {&a, &b});
    with({&d, &a, &b},
         [&](const std::vector<Reg>& r) { k_.compare(cond, c_, r[0], r[1], r[2], a_.count); });
    push(d, {a, b});
  }

  void where(bool last) {
    Value b = pop(), a = pop(), m = maskBuffer(pop());
    const bool masks = a.mask && b.mask;
    const DType type = masks ? DType::U8 : c_;
    if (!masks) {
      a = computeBuffer(a);
      b = computeBuffer(b);
    }
    Value d = dest(type, masks, last, {&a, &b});
    with({&d, &m, &a, &b},
         [&](const std::vector<Reg>& r) { k_.select(type, r[0], r[1], r[2], r[3], a_.count); });
    push(d, {m, a, b});
  }

  void fma(bool last) {
    Value c = computeBuffer(pop());
    Value b = computeBuffer(pop());
    Value a = computeBuffer(pop());
    Value d = dest(c_, false, last, {&a, &b, &c});
    with({&d, &a, &b, &c},
         [&](const std::vector<Reg>& r) { k_.fma(c_, r[0], r[1], r[2], r[3], a_.count); });
    push(d, {a, b, c});
  }

  void rand(int stream, bool last) {
    Value d = dest(c_, false, last, {});
    Reg key = k_.arg(a_.randKeyArg + stream);
    emitRand(k_, c_, d.address, b_.rand, a_.randStart, key, a_.count);
    k_.release(key);
    push(d, {});
  }

  // Counters fit in i32 (idx is documented below 2^31): add the tile's start to the iota.
  void index(bool last) {
    Value d = dest(c_, false, last, {});
    Reg iota = k_.li(b_.rand.iota), counters = k_.li(c_ == DType::I32 ? d.address : b_.rand.f);
    k_.binaryScalar(BinaryOp::Add, DType::I32, counters, iota, a_.randStart, a_.count);
    if (c_ != DType::I32) {
      Reg dst = k_.li(d.address);
      k_.cast(DType::I32, c_, dst, counters, a_.count);
      k_.release(dst);
    }
    k_.release(counters);
    k_.release(iota);
    push(d, {});
  }

  // Converts the result to the out dtype in the output buffer.
  int64_t finish(Value v) {
    if (p_.direct) return v.address;
    const Value out{Value::Kind::Buffer, p_.out, false, b_.out};
    if (v.kind == Value::Kind::Buffer && v.address == b_.out) return b_.out;
    if (v.constant()) {
      if (c_ == p_.out) {
        materialize(v, out);
        return b_.out;
      }
      v = computeBuffer(v);
    } else if (!v.mask && v.type != c_ && c_ != p_.out) {
      v = computeBuffer(v);  // an input converted through the compute type
    }
    with({&out, &v}, [&](const std::vector<Reg>& r) {
      k_.cast(v.mask ? DType::U8 : v.type, p_.out, r[0], r[1], a_.count);
    });
    drop(v);
    return b_.out;
  }

  isa::KernelBuilder& k_;
  const Program& p_;
  const TileBuffers& b_;
  const TileArgs& a_;
  const DType c_;
  std::vector<Value> stack_;
  std::vector<bool> slots_;  // true: in use
  int peak_ = 0;
};

}  // namespace

int64_t emitTile(isa::KernelBuilder& k, const Program& program, const TileBuffers& buffers,
                 const TileArgs& args) {
  return Emitter(k, program, buffers, args).run();
}

int countTemps(const Program& program) {
  isa::KernelBuilder k("count_temps", 0);
  TileBuffers buffers;
  buffers.out = 1;  // distinct from every other address, so the output is recognised
  TileArgs args{k.reg(), k.reg()};
  Emitter emitter(k, program, buffers, args);
  emitter.run();
  return emitter.peakTemps();
}

}  // namespace mimic::ops
