// The assembly language: exact round trips with the disassembler, labels, immediates, and an
// error naming the line for each kind of mistake.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>

#include "sim/isa/assembler.h"
#include "sim/isa/disassembler.h"
#include "sim/isa/mnemonics.h"
#include "sim/isa/scalar_literal.h"
#include "sim/isa/validate.h"

namespace mimic::isa {
namespace {

std::string kernel(const std::string& body, const std::string& header = ".kernel k 16") {
  return header + "\n" + body + "\n.end\n";
}

Instr only(const std::string& line) {
  Module m = assemble(kernel("  " + line));
  EXPECT_EQ(m.functions.size(), 1u);
  EXPECT_EQ(m.functions[0].code.size(), 1u);
  return m.functions[0].code.at(0);
}

// Fills each operand with a distinct in-range value; typed immediates come from `imm`.
Instr withOperands(Instr in, size_t index, bool immediate, int64_t imm) {
  const OpFormat& format = opFormat(in.op);
  for (int i = 0; i < format.numOperands; ++i) {
    const Operand& o = format.operands[i];
    const uint8_t reg = uint8_t((index * 5 + i * 7 + 1) % kNumScalarRegs);
    switch (o.kind) {
      case OperandKind::Reg:
        setRegField(in, o.field, reg);
        break;
      case OperandKind::Desc:
        setRegField(in, o.field, uint8_t((index + i) % kNumDescriptors));
        break;
      case OperandKind::Int:
        in.imm = -1234567890123 + int64_t(index);
        break;
      case OperandKind::ArgIndex:
        in.imm = int64_t(index % 2);
        break;
      case OperandKind::GridDim:
        in.imm = int64_t(index % 3);
        break;
      case OperandKind::DmaDim:
        in.imm = int64_t(index % kDmaDims);
        break;
      case OperandKind::Target:
        in.imm = int64_t(index / 2);  // backward and self branches, so labels get shared
        break;
      case OperandKind::RegOrInt:
      case OperandKind::RegOrTyped:
        if (immediate) {
          in.flags = kImmOperand;
          in.imm = imm;
        } else {
          setRegField(in, o.field, reg);
        }
        break;
    }
  }
  return in;
}

int64_t sampleScalar(DType t) {
  switch (t) {
    case DType::I32:
      return -7;
    case DType::I64:
      return INT64_MIN;
    case DType::U8:
      return 200;
    case DType::I8:
      return -128;
    case DType::I16:
      return 32767;
    default:
      return int64_t(floatToBits(-1.5, t));
  }
}

// Every opcode with every valid sub-operation and type combination, each scalar operand in
// register and immediate form.
std::vector<Instr> everyCombination() {
  std::vector<Instr> code;
  for (int op = 0; op < kNumOpcodes; ++op) {
    const OpFormat& format = opFormat(Opcode(op));
    const int subs = format.sub == SubKind::None ? 1 : subCount(format.sub);
    const int types = format.numTypes >= 1 ? kNumDTypes : 1;
    const int types2 = format.numTypes >= 2 ? kNumDTypes : 1;
    for (int sub = 0; sub < subs; ++sub) {
      for (int t = 0; t < types; ++t) {
        for (int t2 = 0; t2 < types2; ++t2) {
          Instr in;
          in.op = Opcode(op);
          in.sub = uint8_t(sub);
          in.type = DType(t);
          in.type2 = DType(t2);
          if (format.numTypes > 0 && !typeAllowed(in.op, in.sub, in.type)) continue;
          code.push_back(withOperands(in, code.size(), false, 0));
          if (hasScalarOperand(format)) {
            const int64_t imm = format.numTypes ? sampleScalar(in.type) : -42;
            code.push_back(withOperands(in, code.size(), true, imm));
          }
        }
      }
    }
  }
  return code;
}

TEST(IsaTest, TypesAndPipes) {
  const int sizes[] = {4, 2, 2, 4, 8, 1, 1, 2, 8};
  const char* names[] = {"f32", "f16", "bf16", "i32", "i64", "u8", "i8", "i16", "f64"};
  static_assert(std::size(sizes) == kNumDTypes);
  for (int t = 0; t < kNumDTypes; ++t) {
    EXPECT_EQ(dtypeSize(DType(t)), sizes[t]);
    EXPECT_STREQ(dtypeName(DType(t)), names[t]);
    EXPECT_EQ(isFloat(DType(t)), t <= 2 || DType(t) == DType::F64);
  }
  for (int op = 0; op < kNumOpcodes; ++op) {
    const Opcode o = Opcode(op);
    Pipe expected = Pipe::Scalar;
    if (o == Opcode::Mma) expected = Pipe::Matrix;
    if (o >= Opcode::DmaDesc && o <= Opcode::WaitAll) expected = Pipe::Dma;
    if ((o >= Opcode::VShape && o <= Opcode::VIota) || o == Opcode::AtomicAdd) {
      expected = Pipe::Vector;
    }
    EXPECT_EQ(pipeOf(o), expected) << opFormat(o).stem;
  }
  Instr a, b;
  EXPECT_EQ(a, b);
  b.re = 1;
  EXPECT_FALSE(a == b);
}

TEST(AssemblerTest, EveryValidCombinationRoundTrips) {
  Module m;
  m.functions.push_back({"all", 16, everyCombination()});
  m.functions.push_back({"second.k_2", 0, {only("exit")}});
  std::set<Opcode> ops;
  for (const Instr& in : m.functions[0].code) ops.insert(in.op);
  EXPECT_EQ(int(ops.size()), kNumOpcodes);
  ASSERT_NO_THROW(validate(m));

  const std::string text = disassemble(m);
  Module back = assemble(text);
  ASSERT_EQ(back.functions.size(), 2u);
  ASSERT_EQ(back.functions[0].code.size(), m.functions[0].code.size());
  for (size_t i = 0; i < m.functions[0].code.size(); ++i) {
    EXPECT_EQ(back.functions[0].code[i], m.functions[0].code[i])
        << i << ": " << disassemble(m.functions[0].code[i]);
  }
  EXPECT_TRUE(back == m);
  EXPECT_EQ(disassemble(back), text);
}

TEST(AssemblerTest, CombinationCounts) {
  int casts = 0, unaryExp = 0, mma = 0, sload = 0;
  for (const Instr& in : everyCombination()) {
    casts += in.op == Opcode::VCast;
    unaryExp += in.op == Opcode::VUnary && UnaryOp(in.sub) == UnaryOp::Exp;
    mma += in.op == Opcode::Mma;
    sload += in.op == Opcode::SLoad;
  }
  EXPECT_EQ(casts, kNumDTypes * kNumDTypes);
  EXPECT_EQ(unaryExp, 4);  // float types only: f32, f16, bf16, f64
  EXPECT_EQ(mma, 3);       // not f64
  EXPECT_EQ(sload, 5);     // i8, i16, i32, i64, u8
}

TEST(AssemblerTest, ExampleProgram) {
  Module m = assemble(R"(# comment
.kernel vadd 24          # name, argument bytes
  arg s1, 0
  wgid s2, 0
  li s3, 4096
  salu.mul s4, s2, s3
  salu.add s5, s4, #16     # immediate operand form
  dma.desc.f32 d0, 0, s6, s7, s8
  dma.load s9, s10, s11, d0
  wait s9
  vbin.add.f32 s12, s13, s14, s15
  vbins.mul.f32 s12, s13, #1.5, s15
  vcast.f32.bf16 s1, s2, s3
loop:
  brnz s3, loop
  exit
.end
)");
  ASSERT_EQ(m.functions.size(), 1u);
  const Function& f = m.functions[0];
  EXPECT_EQ(f.name, "vadd");
  EXPECT_EQ(f.argBytes, 24u);
  ASSERT_EQ(f.code.size(), 13u);
  EXPECT_EQ(f.code[4].op, Opcode::SAlu);
  EXPECT_EQ(f.code[4].sub, uint8_t(ScalarOp::Add));
  EXPECT_EQ(f.code[4].flags, kImmOperand);
  EXPECT_EQ(f.code[4].imm, 16);
  EXPECT_EQ(f.code[4].rb, 0);
  const Instr& desc = f.code[5];
  EXPECT_EQ(desc.op, Opcode::DmaDesc);
  EXPECT_EQ(desc.rd, 0);
  EXPECT_EQ(desc.imm, 0);
  EXPECT_EQ(desc.ra, 6);
  EXPECT_EQ(desc.rb, 7);
  EXPECT_EQ(desc.rc, 8);
  EXPECT_EQ(f.code[9].imm, 0x3FC00000);
  EXPECT_EQ(f.code[10].type, DType::F32);
  EXPECT_EQ(f.code[10].type2, DType::BF16);
  EXPECT_EQ(f.code[11].op, Opcode::Brnz);
  EXPECT_EQ(f.code[11].ra, 3);
  EXPECT_EQ(f.code[11].imm, 11);
}

TEST(AssemblerTest, CanonicalForm) {
  const std::string sloppy =
      "# header\n"
      "\n"
      ".kernel   vadd 0x18   # trailing\n"
      "  arg s1,0\r\n"
      "\tli s2, 0x10\n"
      "  salu.add s3, s2, 16\n"
      "  vfill.f32 s1, #1.50, s2   #note\n"
      "loop: brnz s3 , loop\n"
      "  exit\n"
      ".end\n"
      ".kernel other 0\n"
      "  br #0\n"
      ".end";
  const std::string canonical =
      ".kernel vadd 24\n"
      "  arg s1, 0\n"
      "  li s2, 16\n"
      "  salu.add s3, s2, #16\n"
      "  vfill.f32 s1, #1.5, s2\n"
      "L4:\n"
      "  brnz s3, L4\n"
      "  exit\n"
      ".end\n"
      "\n"
      ".kernel other 0\n"
      "L0:\n"
      "  br L0\n"
      ".end\n";
  EXPECT_EQ(disassemble(assemble(sloppy)), canonical);
  EXPECT_EQ(disassemble(assemble(canonical)), canonical);
}

TEST(AssemblerTest, Labels) {
  Module m = assemble(R"(.kernel k 0
  li s1, 3
top:
loop:  salu.sub s1, s1, #1
  brnz s1, loop
  brz s1, done
  br top
done:
  exit
.end
.kernel k2 0
loop: a.b: br loop
  br a.b
  br 0
.end
)");
  const auto& c = m.functions[0].code;
  EXPECT_EQ(c[2].imm, 1);
  EXPECT_EQ(c[3].imm, 5);
  EXPECT_EQ(c[4].imm, 1);
  const auto& c2 = m.functions[1].code;
  EXPECT_EQ(c2[0].imm, 0);
  EXPECT_EQ(c2[1].imm, 0);
  EXPECT_EQ(c2[2].imm, 0);
}

TEST(AssemblerTest, Immediates) {
  EXPECT_EQ(only("li s1, -9223372036854775808").imm, INT64_MIN);
  EXPECT_EQ(only("li s1, 0xffffffffffffffff").imm, -1);
  EXPECT_EQ(only("li s1, -0x10").imm, -16);
  EXPECT_EQ(only("li s1, +7").imm, 7);
  EXPECT_EQ(only("vfill.f32 s1, #1.5, s2").imm, 0x3FC00000);
  EXPECT_EQ(only("vfill.f16 s1, #1.5, s2").imm, 0x3E00);
  EXPECT_EQ(only("vfill.bf16 s1, #1.5, s2").imm, 0x3FC0);
  EXPECT_EQ(only("vfill.f32 s1, #nan, s2").imm, 0x7FC00000);
  EXPECT_EQ(only("vfill.f32 s1, #-nan, s2").imm, 0xFFC00000);
  EXPECT_EQ(only("vfill.f32 s1, #inf, s2").imm, 0x7F800000);
  EXPECT_EQ(only("vfill.f32 s1, #-inf, s2").imm, 0xFF800000);
  EXPECT_EQ(only("vfill.f16 s1, #-inf, s2").imm, 0xFC00);
  EXPECT_EQ(only("vfill.bf16 s1, #nan, s2").imm, 0x7FC0);
  EXPECT_EQ(only("vfill.f16 s1, #nan, s2").imm, 0x7E00);
  EXPECT_EQ(only("vfill.f32 s1, #-0, s2").imm, 0x80000000);
  EXPECT_EQ(only("vfill.f32 s1, #2, s2").imm, 0x40000000);
  EXPECT_EQ(only("vfill.f32 s1, #.5e1, s2").imm, 0x40A00000);
  EXPECT_EQ(only("vfill.f16 s1, #65520, s2").imm, 0x7C00);  // rounds up to infinity
  EXPECT_EQ(only("vfill.f16 s1, #65519, s2").imm, 0x7BFF);
  EXPECT_EQ(only("vfill.f32 s1, #0f7fc00001, s2").imm, 0x7FC00001);
  EXPECT_EQ(only("vfill.i32 s1, #-1, s2").imm, -1);
  EXPECT_EQ(only("vfill.u8 s1, #255, s2").imm, 255);
  EXPECT_EQ(only("vfill.i8 s1, #-128, s2").imm, -128);
  EXPECT_EQ(only("vfill.i16 s1, #32767, s2").imm, 32767);
  EXPECT_EQ(only("vfill.f64 s1, #0.1, s2").imm, 0x3FB999999999999A);
  EXPECT_EQ(only("vfill.f64 s1, #-inf, s2").imm, int64_t(0xFFF0000000000000));
  EXPECT_EQ(only("vfill.f64 s1, #nan, s2").imm, 0x7FF8000000000000);
  EXPECT_EQ(only("vfill.f64 s1, #4.9e-324, s2").imm, 1);  // the smallest subnormal
  EXPECT_EQ(only("vfill.f64 s1, #0fffffffffffffffff, s2").imm, -1);
  EXPECT_EQ(only("vcmps.lt.i64 s1, s2, #-0x8000000000000000, s3").imm, INT64_MIN);
  EXPECT_EQ(only("scmp.ge s1, s2, #-5").imm, -5);
  EXPECT_EQ(disassemble(only("vfill.f32 s1, #0f7fc00001, s2")), "vfill.f32 s1, #0f7fc00001, s2");
  EXPECT_EQ(disassemble(only("vfill.f16 s1, #65504, s2")), "vfill.f16 s1, #65504, s2");
  EXPECT_EQ(disassemble(only("vfill.f32 s1, #0.1, s2")), "vfill.f32 s1, #0.1, s2");
  EXPECT_EQ(disassemble(only("vfill.f64 s1, #0.1, s2")), "vfill.f64 s1, #0.1, s2");
  EXPECT_EQ(disassemble(only("vfill.f64 s1, #-1e+300, s2")), "vfill.f64 s1, #-1e+300, s2");
  EXPECT_EQ(disassemble(only("vfill.i8 s1, #-5, s2")), "vfill.i8 s1, #-5, s2");
  EXPECT_EQ(disassemble(only("vfill.f32 s1, #-nan, s2")), "vfill.f32 s1, #-nan, s2");
  EXPECT_EQ(disassemble(only("vfill.bf16 s1, #1e30, s2")), "vfill.bf16 s1, #1e+30, s2");
}

TEST(ScalarLiteralTest, EveryHalfAndBfloatPatternRoundTrips) {
  for (DType t : {DType::F16, DType::BF16}) {
    for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
      const std::string text = formatScalar(int64_t(bits), t);
      int64_t back = -1;
      std::string error;
      ASSERT_TRUE(parseScalar(text, t, &back, &error)) << text << ": " << error;
      ASSERT_EQ(back, int64_t(bits)) << dtypeName(t) << " " << text;
      const double value = bitsToFloat(bits, t);
      if (!std::isnan(value)) {
        ASSERT_EQ(floatToBits(value, t), bits) << text;
      }
    }
  }
}

TEST(ScalarLiteralTest, ConversionsMatchTheHardware) {
  std::mt19937_64 rng(1);
  for (int i = 0; i < 200000; ++i) {
    uint64_t raw = rng();
    double d;
    std::memcpy(&d, &raw, 8);
    if (i % 2) d = std::ldexp(double(int64_t(raw) >> 11), int(rng() % 300) - 200);
    if (std::isnan(d)) continue;
    const float f = float(d);
    uint32_t fbits;
    std::memcpy(&fbits, &f, 4);
    ASSERT_EQ(floatToBits(d, DType::F32), fbits) << d;
#ifdef __FLT16_MAX__
    const _Float16 h = _Float16(d);
    uint16_t hbits;
    std::memcpy(&hbits, &h, 2);
    ASSERT_EQ(floatToBits(d, DType::F16), hbits) << d;
#endif
    // Every f32 pattern's text reads back exactly.
    const uint32_t pattern = uint32_t(raw);
    int64_t back;
    std::string error;
    ASSERT_TRUE(parseScalar(formatScalar(pattern, DType::F32), DType::F32, &back, &error));
    ASSERT_EQ(back, int64_t(pattern)) << formatScalar(pattern, DType::F32);
  }
  // bf16 is f32 with the low 16 bits rounded off, nearest even.
  for (uint32_t fbits : {0x3F808000u, 0x3F818000u, 0x3F807FFFu, 0x7F7FFFFFu, 0x00008000u}) {
    float f;
    std::memcpy(&f, &fbits, 4);
    const uint32_t expected = (fbits + 0x7FFF + ((fbits >> 16) & 1)) >> 16;
    EXPECT_EQ(floatToBits(f, DType::BF16), expected) << std::hex << fbits;
  }
}

TEST(DisassemblerTest, SingleInstructions) {
  Instr br;
  br.op = Opcode::Br;
  br.imm = 12;
  EXPECT_EQ(disassemble(br), "br 12");
  EXPECT_EQ(only("br 0").imm, 0);
  EXPECT_EQ(disassemble(only("vshape s1, s2, s3, s4")), "vshape s1, s2, s3, s4");
  EXPECT_EQ(only("vshape s1, s2, s3, s4").rd, 4);
  EXPECT_EQ(disassemble(only("viota.i32 s1, s2")), "viota.i32 s1, s2");
  EXPECT_EQ(disassemble(only("atomic.add.f32 s1, s2, s3")), "atomic.add.f32 s1, s2, s3");
  EXPECT_EQ(disassemble(only("dma.store s1, s2, s3, d7")), "dma.store s1, s2, s3, d7");
  const Instr sload = only("sload.u8 s4, s9");
  EXPECT_EQ(sload.op, Opcode::SLoad);
  EXPECT_EQ(sload.type, DType::U8);
  EXPECT_EQ(sload.rd, 4);
  EXPECT_EQ(sload.ra, 9);
  EXPECT_EQ(disassemble(sload), "sload.u8 s4, s9");
  EXPECT_EQ(disassemble(only("sload.i64 s31, s0")), "sload.i64 s31, s0");
  Instr bad;
  bad.op = Opcode(200);
  EXPECT_EQ(disassemble(bad), "<invalid opcode 200>");
  bad.op = Opcode::VBinaryS;
  bad.sub = 99;
  bad.type = DType(9);
  bad.flags = kImmOperand;
  bad.imm = -3;
  EXPECT_EQ(disassemble(bad), "vbins.?99.?9 s0, s0, #-3, s0");
}

struct ErrorCase {
  std::string text;
  int line;
  std::string message;
};

TEST(AssemblerTest, ErrorsNameTheLine) {
  const ErrorCase cases[] = {
      {kernel("  vbin.ad.f32 s1, s2, s3, s4"), 2, "unknown mnemonic 'vbin.ad.f32'"},
      {kernel("  frob s1"), 2, "unknown mnemonic 'frob'"},
      {kernel("  vbin.add s1, s2, s3, s4"), 2, "expected vbin.<op>.<type>"},
      {kernel("  vfill.f31 s1, s2, s3"), 2, "'f31' is not a type"},
      {kernel("  exit.f32"), 2, "unknown mnemonic 'exit.f32'"},
      {kernel("  nop\n  mov s1, s40"), 3, "register s40 out of range"},
      {kernel("  dma.load s1, s2, s3, d8"), 2, "descriptor d8 out of range"},
      {kernel("  dma.load s1, s2, s3, s4"), 2, "expected a descriptor d0..d7, got 's4'"},
      {kernel("  mov s1, 5"), 2, "expected a register s0..s31, got '5'"},
      {kernel("  nop\n  br lop\nloop: exit"), 3, "undefined label 'lop'"},
      {kernel("loop: nop\n  nop\nloop: exit"), 4,
       "duplicate label 'loop' (first defined on line 2)"},
      {kernel("  exit") + kernel("  exit"), 4, "duplicate kernel 'k' (first defined on line 1)"},
      {kernel("  salu.add s1, s2"), 2, "salu.add takes 3 operands, got 2"},
      {kernel("  exit s1"), 2, "exit takes 0 operands, got 1"},
      {".kernel k 0\n  exit\n", 1, "kernel 'k' has no .end"},
      {kernel("  vun.exp.i32 s1, s2, s3"), 2, "type i32 not allowed for vun.exp"},
      {kernel("  mma.i32 s1, s2, s3"), 2, "type i32 not allowed for mma"},
      {kernel("  mma.f64 s1, s2, s3"), 2, "type f64 not allowed for mma"},
      {kernel("  vun.exp.i16 s1, s2, s3"), 2, "type i16 not allowed for vun.exp"},
      {kernel("  vbins.or.f64 s1, s2, s3, s4"), 2, "type f64 not allowed for vbins.or"},
      {kernel("  atomic.add.u8 s1, s2, s3"), 2, "type u8 not allowed for atomic.add"},
      {kernel("  sload.f32 s1, s2"), 2, "type f32 not allowed for sload"},
      {kernel("  sload.i32 s1"), 2, "sload.i32 takes 2 operands, got 1"},
      {kernel("  sload s1, s2"), 2, "expected sload.<type>"},
      {kernel("  vbins.and.f32 s1, s2, s3, s4"), 2, "type f32 not allowed for vbins.and"},
      {kernel("  vun.not.bf16 s1, s2, s3"), 2, "type bf16 not allowed for vun.not"},
      {"\n  exit\n", 2, "instruction outside a kernel"},
      {kernel(".kernel j 0"), 2, "'.kernel' inside kernel 'k'"},
      {".end\n", 1, "'.end' outside a kernel"},
      {kernel("  exit\n.data"), 3, "unknown directive '.data'"},
      {kernel("  exit", ".kernel k 12"), 1, "argument bytes 12 not a multiple of 8"},
      {kernel("  exit", ".kernel 9k 0"), 1, "kernel name '9k' is not an identifier"},
      {kernel("  exit", ".kernel k"), 1, "'.kernel' takes a name and an argument byte count"},
      {kernel("  exit", ".kernel k -8"), 1, "bad argument byte count '-8'"},
      {kernel("  arg s1, 2"), 2, "argument 2 out of range: the kernel has 2 argument slots"},
      {kernel("  wgid s1, 3"), 2, "grid dimension 3 out of range 0..2"},
      {kernel("  dma.desc.f32 d0, 4, s1, s2, s3"), 2, "descriptor dimension 4 out of range 0..3"},
      {kernel("  vfill.u8 s1, #256, s2"), 2, "immediate 256 out of range for u8"},
      {kernel("  vfill.i8 s1, #128, s2"), 2, "immediate 128 out of range for i8"},
      {kernel("  vfill.i8 s1, #255, s2"), 2, "immediate 255 out of range for i8"},
      {kernel("  vfill.i16 s1, #-32769, s2"), 2, "immediate -32769 out of range for i16"},
      {kernel("  vfill.i32 s1, #2147483648, s2"), 2, "immediate 2147483648 out of range for i32"},
      {kernel("  vfill.i32 s1, #1.5, s2"), 2, "bad integer literal '1.5' for i32"},
      {kernel("  vfill.f32 s1, #1.5.2, s2"), 2, "bad float literal '1.5.2'"},
      {kernel("  vfill.f32 s1, #1e999, s2"), 2, "float literal '1e999' out of range"},
      {kernel("  vfill.f32 s1, #0x10, s2"), 2, "hex literal '0x10' for f32"},
      {kernel("  vfill.f16 s1, #0f10000, s2"), 2, "raw bits '0f10000' wider than f16"},
      {kernel("  br 5\n  exit"), 2, "branch target 5 outside the function (2 instructions)"},
      {kernel("  br -1\n  exit"), 2, "branch target -1 outside the function"},
      {kernel("  br end\nend:"), 2, "label 'end' is not followed by an instruction"},
      {kernel("  br 1x"), 2, "expected a label, got '1x'"},
      {kernel("  salu.add s1, , s2"), 2, "operand 2 is empty"},
      {kernel("  salu.add s1, s2 s3, s4"), 2, "missing comma in operand 's2 s3'"},
      {kernel("  salu.add s1, s2, x"), 2, "expected a register or an integer, got 'x'"},
      {kernel("  li s1, abc"), 2, "expected an integer, got 'abc'"},
      {kernel("  li s1, 9223372036854775808"), 2, "expected an integer"},
      {"# nothing\n", 0, "no kernel in the assembly text"},
      {"x: \n", 1, "label 'x' outside a kernel"},
      {kernel("  exit\n.end junk"), 3, "'.end' takes no operands"},
  };
  for (const ErrorCase& c : cases) {
    try {
      assemble(c.text);
      ADD_FAILURE() << "no error for:\n" << c.text;
    } catch (const AsmError& e) {
      EXPECT_EQ(e.line(), c.line) << e.what();
      const std::string prefix = c.line ? "line " + std::to_string(c.line) + ": " : "";
      EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos)
          << "expected '" << c.message << "' in '" << e.what() << "'";
    }
  }
}

TEST(AssemblerTest, AsmErrorIsARuntimeError) {
  EXPECT_THROW(assemble(kernel("  bogus")), std::runtime_error);
}

}  // namespace
}  // namespace mimic::isa
