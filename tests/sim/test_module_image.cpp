// Module images: exact round trips, the byte layout, a distinct error for each kind of damage,
// and the validation rules every module obeys.
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "sim/exec/vector_math.h"
#include "sim/isa/assembler.h"
#include "sim/isa/disassembler.h"
#include "sim/isa/mnemonics.h"
#include "sim/isa/module_image.h"
#include "sim/isa/validate.h"

namespace mimic::isa {
namespace {

using Kind = ImageError::Kind;

const char* const kEveryOpcode = R"(.kernel every_op 24
  nop
  li s1, -5
  mov s2, s1
  salu.shl s3, s2, #3
  scmp.lt s4, s3, s2
  arg s5, 2
  wgid s6, 1
  griddim s7, 2
  dma.desc.bf16 d3, 1, s1, s2, s3
  dma.load s8, s9, s10, d3
  dma.store s8, s9, s10, d7
  wait s8
  waitall
  vshape s1, s2, s3, s4
  vun.rsqrt.f16 s1, s2, s3
  vbin.xor.u8 s1, s2, s3, s4
  vbins.pow.bf16 s1, s2, #-inf, s4
  vfma.i64 s1, s2, s3, s4, s5
  vsel.u8 s1, s2, s3, s4, s31
  vcmp.ne.i32 s1, s2, s3, s4
  vcmps.ge.f32 s1, s2, #0.25, s4
  vcast.bf16.i64 s1, s2, s3
  vred.argmin.f16 s1, s2, s3
  vfill.i64 s1, #-9223372036854775808, s3
  viota.f32 s1, s3
  mshape s1, s2, s3
  mma.bf16 s1, s2, s3
  barrier
  atomic.add.i64 s1, s2, s3
loop:
  brnz s1, loop
  brz s1, end
  br loop
end:
  exit
.end
.kernel second 0
  exit
.end
)";

// Writes the image layout without validating, to build damaged images and to check the layout
// independently of encodeImage.
std::vector<uint8_t> rawImage(const Module& m, uint32_t version = kImageVersion) {
  std::vector<uint8_t> out;
  auto le = [&](uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out.push_back(uint8_t(v >> (8 * i)));
  };
  for (char c : std::string("MIMICMOD")) out.push_back(uint8_t(c));
  le(version, 4);
  le(m.functions.size(), 4);
  for (const Function& f : m.functions) {
    le(f.name.size(), 4);
    out.insert(out.end(), f.name.begin(), f.name.end());
    le(f.argBytes, 4);
    le(f.code.size(), 4);
    for (const Instr& in : f.code) {
      for (uint8_t b : {uint8_t(in.op), in.sub, uint8_t(in.type), uint8_t(in.type2), in.rd, in.ra,
                        in.rb, in.rc, in.re, in.flags}) {
        out.push_back(b);
      }
      le(uint64_t(in.imm), 8);
    }
  }
  return out;
}

ImageError decodeError(const std::vector<uint8_t>& image) {
  try {
    decodeImage(image.data(), image.size());
  } catch (const ImageError& e) {
    return e;
  }
  ADD_FAILURE() << "image decoded without error";
  return ImageError(Kind::Malformed, "");
}

// A random valid module, drawn field by field from the operand formats.
Module randomModule(std::mt19937& rng) {
  auto pick = [&](int n) { return int(rng() % unsigned(n)); };
  Module m;
  const int functions = 1 + pick(3);
  for (int fi = 0; fi < functions; ++fi) {
    Function f{"f" + std::to_string(fi), uint32_t(8 * pick(4)), {}};
    const size_t size = 1 + pick(40);
    while (f.code.size() < size) {
      Instr in;
      in.op = Opcode(pick(kNumOpcodes));
      const OpFormat& format = opFormat(in.op);
      if (format.sub != SubKind::None) in.sub = uint8_t(pick(subCount(format.sub)));
      if (format.numTypes >= 1) in.type = DType(pick(kNumDTypes));
      if (format.numTypes >= 2) in.type2 = DType(pick(kNumDTypes));
      if (format.numTypes >= 1 && !typeAllowed(in.op, in.sub, in.type)) continue;
      for (int i = 0; i < format.numOperands; ++i) {
        const Operand& o = format.operands[i];
        switch (o.kind) {
          case OperandKind::Reg:
            setRegField(in, o.field, uint8_t(pick(kNumScalarRegs)));
            break;
          case OperandKind::Desc:
            setRegField(in, o.field, uint8_t(pick(kNumDescriptors)));
            break;
          case OperandKind::Int:
            in.imm = int64_t(uint64_t(rng()) << 32 | rng());
            break;
          case OperandKind::ArgIndex:
            if (f.argBytes == 0) f.argBytes = 8;
            in.imm = pick(int(f.argBytes / 8));
            break;
          case OperandKind::GridDim:
            in.imm = pick(3);
            break;
          case OperandKind::DmaDim:
            in.imm = pick(kDmaDims);
            break;
          case OperandKind::Target:
            in.imm = pick(int(size));
            break;
          case OperandKind::RegOrInt:
          case OperandKind::RegOrTyped:
            if (pick(2)) {
              setRegField(in, o.field, uint8_t(pick(kNumScalarRegs)));
              break;
            }
            in.flags = kImmOperand;
            in.imm = int64_t(int32_t(rng()));
            if (o.kind == OperandKind::RegOrTyped && dtypeSize(in.type) < 8) {
              in.imm = int64_t(rng() & ((1ull << (8 * dtypeSize(in.type))) - 1));
              if (in.type == DType::I32) in.imm = int32_t(in.imm);
              if (in.type == DType::I16) in.imm = int16_t(in.imm);
              if (in.type == DType::I8) in.imm = int8_t(in.imm);
            }
            break;
        }
      }
      f.code.push_back(in);
    }
    m.functions.push_back(f);
  }
  return m;
}

TEST(ModuleImageTest, RoundTrip) {
  const Module m = assemble(kEveryOpcode);
  const std::vector<uint8_t> image = encodeImage(m);
  EXPECT_EQ(image, rawImage(m));
  const Module back = decodeImage(image.data(), image.size());
  EXPECT_TRUE(back == m);
  EXPECT_EQ(disassemble(back), disassemble(m));
  EXPECT_EQ(encodeImage(back), image);
}

TEST(ModuleImageTest, RandomModulesRoundTripThroughImageAndText) {
  std::mt19937 rng(7);
  for (int i = 0; i < 300; ++i) {
    const Module m = randomModule(rng);
    ASSERT_NO_THROW(validate(m)) << disassemble(m);
    const std::vector<uint8_t> image = encodeImage(m);
    ASSERT_TRUE(decodeImage(image.data(), image.size()) == m);
    const std::string text = disassemble(m);
    ASSERT_TRUE(assemble(text) == m) << text;
  }
}

TEST(ModuleImageTest, Layout) {
  Module m;
  Instr li;
  li.op = Opcode::Li;
  li.rd = 3;
  li.imm = 0x0102030405060708;
  m.functions.push_back({"ab", 8, {li}});
  const std::vector<uint8_t> expected = {'M', 'I', 'M', 'I', 'C', 'M', 'O', 'D',  // magic
                                         1,   0,   0,   0,                        // version
                                         1,   0,   0,   0,                        // functions
                                         2,   0,   0,   0,   'a', 'b',            // name
                                         8,   0,   0,   0,                        // argument bytes
                                         1,   0,   0,   0,                        // instructions
                                         2,   0,   0,   0,   3,   0,   0,   0,
                                         0,   0,  // op, sub, type, type2, rd..re, flags
                                         8,   7,   6,   5,   4,   3,   2,   1};  // imm
  EXPECT_EQ(encodeImage(m), expected);
}

TEST(ModuleImageTest, EveryTruncationIsDetected) {
  const std::vector<uint8_t> image = encodeImage(assemble(kEveryOpcode));
  for (size_t n = 0; n < image.size(); ++n) {
    try {
      decodeImage(image.data(), n);
      ADD_FAILURE() << "truncated to " << n << " bytes, decoded";
    } catch (const ImageError& e) {
      EXPECT_EQ(e.kind(), Kind::Truncated) << n << ": " << e.what();
    }
  }
  EXPECT_EQ(decodeError({}).kind(), Kind::Truncated);
  try {
    decodeImage(nullptr, 0);
    ADD_FAILURE();
  } catch (const ImageError& e) {
    EXPECT_EQ(e.kind(), Kind::Truncated);
  }
}

TEST(ModuleImageTest, BadMagicAndVersion) {
  const Module m = assemble(kEveryOpcode);
  for (size_t i = 0; i < 8; ++i) {
    std::vector<uint8_t> image = encodeImage(m);
    image[i] ^= 0x20;
    EXPECT_EQ(decodeError(image).kind(), Kind::BadMagic) << i;
    image.resize(i + 1);  // a damaged prefix is not mistaken for a short image
    EXPECT_EQ(decodeError(image).kind(), Kind::BadMagic) << i;
  }
  for (uint32_t version : {0u, 2u, 0xFFFFFFFFu}) {
    ImageError e = decodeError(rawImage(m, version));
    EXPECT_EQ(e.kind(), Kind::UnsupportedVersion);
    EXPECT_NE(std::string(e.what()).find(std::to_string(version)), std::string::npos) << e.what();
  }
}

TEST(ModuleImageTest, HugeCountsAreTruncationNotAllocation) {
  std::vector<uint8_t> image = encodeImage(assemble(kEveryOpcode));
  auto setU32 = [&](size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) image[at + i] = uint8_t(v >> (8 * i));
  };
  const std::vector<uint8_t> original = image;
  setU32(12, 0xFFFFFFFF);  // function count
  EXPECT_EQ(decodeError(image).kind(), Kind::Truncated);
  image = original;
  setU32(16, 0xFFFFFFFF);  // first name length
  EXPECT_EQ(decodeError(image).kind(), Kind::Truncated);
  image = original;
  setU32(16 + 4 + 8 + 4, 0xFFFFFFFF);  // first instruction count ("every_op" is 8 bytes)
  EXPECT_EQ(decodeError(image).kind(), Kind::Truncated);
}

struct BadModule {
  std::string what;
  std::function<void(Module&)> damage;
  std::string message;
};

TEST(ModuleImageTest, MalformedImagesNameTheFunctionAndInstruction) {
  const Module good = assemble(kEveryOpcode);
  const BadModule cases[] = {
      {"opcode", [](Module& m) { m.functions[0].code[2].op = Opcode(kNumOpcodes); },
       "instruction 2: invalid opcode " + std::to_string(kNumOpcodes)},
      {"sub", [](Module& m) { m.functions[0].code[3].sub = 12; },
       "instruction 3: invalid sub-operation 12 for salu"},
      {"type", [](Module& m) { m.functions[0].code[14].type = DType(kNumDTypes); },
       "instruction 14: invalid type 9"},
      {"type2", [](Module& m) { m.functions[0].code[21].type2 = DType(200); },
       "instruction 21: invalid type2 200"},
      {"type not allowed", [](Module& m) { m.functions[0].code[26].type = DType::U8; },
       "instruction 26: type u8 not allowed for mma"},
      {"register", [](Module& m) { m.functions[0].code[2].ra = 32; },
       "instruction 2: register s32 out of range"},
      {"descriptor", [](Module& m) { m.functions[0].code[9].rc = 8; },
       "instruction 9: descriptor d8 out of range"},
      {"target", [](Module& m) { m.functions[0].code[31].imm = 33; },
       "instruction 31: branch target 33 outside the function (33 instructions)"},
      {"negative target", [](Module& m) { m.functions[0].code[31].imm = -1; }, "branch target -1"},
      {"argument", [](Module& m) { m.functions[0].argBytes = 16; },
       "instruction 5: argument 2 out of range"},
      {"flags", [](Module& m) { m.functions[0].code[2].flags = kImmOperand; },
       "instruction 2: invalid flags 1"},
      {"imm flag bits", [](Module& m) { m.functions[0].code[3].flags = 3; }, "invalid flags 3"},
      {"unused field", [](Module& m) { m.functions[0].code[0].re = 1; },
       "instruction 0: unused field re must be 0"},
      {"unused imm", [](Module& m) { m.functions[0].code[4].imm = 9; },
       "instruction 4: unused field imm must be 0"},
      {"unused rb", [](Module& m) { m.functions[0].code[3].rb = 9; },
       "instruction 3: unused field rb must be 0"},
      {"unused sub", [](Module& m) { m.functions[0].code[0].sub = 1; }, "unused field sub"},
      {"unused type", [](Module& m) { m.functions[0].code[1].type = DType::I32; },
       "unused field type must be 0"},
      {"typed immediate", [](Module& m) { m.functions[0].code[16].imm = 0x10000; },
       "instruction 16: immediate 65536 out of range for bf16"},
      {"duplicate name", [](Module& m) { m.functions[1].name = "every_op"; },
       "function 1 'every_op': duplicate name"},
      {"empty name", [](Module& m) { m.functions[1].name = ""; }, "function 1 '': empty name"},
      {"name characters", [](Module& m) { m.functions[1].name = "a b"; },
       "name is not an identifier"},
      {"argument bytes", [](Module& m) { m.functions[1].argBytes = 12; },
       "function 1 'second': argument bytes 12 not a multiple of 8"},
      {"no functions", [](Module& m) { m.functions.clear(); }, "module has no functions"},
  };
  for (const BadModule& c : cases) {
    Module bad = good;
    c.damage(bad);
    ImageError e = decodeError(rawImage(bad));
    EXPECT_EQ(e.kind(), Kind::Malformed) << c.what;
    EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos)
        << c.what << ": expected '" << c.message << "' in '" << e.what() << "'";
    EXPECT_THROW(encodeImage(bad), ValidationError) << c.what;
    EXPECT_THROW(validate(bad), ValidationError) << c.what;
  }
  std::vector<uint8_t> trailing = encodeImage(good);
  trailing.push_back(0);
  ImageError e = decodeError(trailing);
  EXPECT_EQ(e.kind(), Kind::Malformed);
  EXPECT_NE(std::string(e.what()).find("1 trailing bytes"), std::string::npos) << e.what();
}

TEST(ModuleImageTest, MalformedMessageIncludesTheFunctionName) {
  Module bad = assemble(kEveryOpcode);
  bad.functions[0].code[2].ra = 40;
  ImageError e = decodeError(rawImage(bad));
  EXPECT_EQ(std::string(e.what()),
            "malformed module image: function 0 'every_op' instruction 2: register s40 out of "
            "range (mov s2, s40)");
}

TEST(ModuleImageTest, FlippedBytesDecodeCanonicallyOrFail) {
  const std::vector<uint8_t> image = encodeImage(assemble(kEveryOpcode));
  int decoded = 0, failed = 0;
  for (size_t i = 0; i < image.size(); ++i) {
    for (uint8_t mask : {0x01, 0x02, 0x10, 0x80, 0xFF}) {
      std::vector<uint8_t> flipped = image;
      flipped[i] ^= mask;
      try {
        const Module m = decodeImage(flipped.data(), flipped.size());
        // A module has one image: whatever decodes re-encodes to the same bytes.
        ASSERT_EQ(encodeImage(m), flipped) << "byte " << i;
        ++decoded;
      } catch (const ImageError&) {
        ++failed;
      }
    }
  }
  EXPECT_GT(decoded, 0);
  EXPECT_GT(failed, 0);
}

TEST(ModuleImageTest, RandomBytesNeverCrash) {
  std::mt19937 rng(3);
  const std::vector<uint8_t> good = encodeImage(assemble(kEveryOpcode));
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> bytes;
    if (i % 2) bytes.assign(good.begin(), good.begin() + 16);  // past magic and version
    const size_t extra = rng() % 200;
    for (size_t j = 0; j < extra; ++j) bytes.push_back(uint8_t(rng() % 4 ? rng() % 3 : rng()));
    try {
      decodeImage(bytes.data(), bytes.size());
    } catch (const ImageError&) {
    }
  }
}

TEST(ValidateTest, ErrorsCarryTheirLocation) {
  Module m = assemble(kEveryOpcode);
  m.functions[1].code[0].rd = 1;
  try {
    validate(m);
    FAIL();
  } catch (const ValidationError& e) {
    EXPECT_EQ(e.function(), 1);
    EXPECT_EQ(e.instruction(), 0);
    EXPECT_EQ(e.rule(), "unused field rd must be 0");
  }
  m.functions[1].argBytes = 4;
  m.functions[1].code[0].rd = 0;
  try {
    validate(m);
    FAIL();
  } catch (const ValidationError& e) {
    EXPECT_EQ(e.function(), 1);
    EXPECT_EQ(e.instruction(), -1);
  }
}

// The validator and the interpreter's vector math must agree, or a valid program could fault.
TEST(ValidateTest, TypeRulesMatchTheVectorMath) {
  for (int t = 0; t < kNumDTypes; ++t) {
    const DType type = DType(t);
    for (int op = 0; op < subCount(SubKind::Unary); ++op) {
      EXPECT_EQ(typeAllowed(Opcode::VUnary, uint8_t(op), type),
                exec::supportsUnary(UnaryOp(op), type))
          << subName(SubKind::Unary, uint8_t(op)) << "." << dtypeName(type);
    }
    for (int op = 0; op < subCount(SubKind::Binary); ++op) {
      for (Opcode o : {Opcode::VBinary, Opcode::VBinaryS}) {
        EXPECT_EQ(typeAllowed(o, uint8_t(op), type), exec::supportsBinary(BinaryOp(op), type))
            << subName(SubKind::Binary, uint8_t(op)) << "." << dtypeName(type);
      }
    }
    for (int op = 0; op < subCount(SubKind::Cond); ++op) {
      EXPECT_EQ(typeAllowed(Opcode::VCmp, uint8_t(op), type),
                exec::supportsCompare(Cond(op), type));
      EXPECT_EQ(typeAllowed(Opcode::VCmpS, uint8_t(op), type),
                exec::supportsCompare(Cond(op), type));
    }
    for (int op = 0; op < subCount(SubKind::Reduce); ++op) {
      EXPECT_EQ(typeAllowed(Opcode::VReduce, uint8_t(op), type),
                exec::supportsReduce(ReduceOp(op), type));
    }
    EXPECT_EQ(typeAllowed(Opcode::VFma, 0, type), exec::supportsFma(type));
    EXPECT_EQ(typeAllowed(Opcode::VSelect, 0, type), exec::supportsSelect(type));
    EXPECT_EQ(typeAllowed(Opcode::VFill, 0, type), exec::supportsFill(type));
    EXPECT_EQ(typeAllowed(Opcode::VIota, 0, type), exec::supportsIota(type));
    EXPECT_EQ(typeAllowed(Opcode::Mma, 0, type), exec::supportsMma(type));
    for (int t2 = 0; t2 < kNumDTypes; ++t2) {
      EXPECT_EQ(typeAllowed(Opcode::VCast, 0, type), exec::supportsCast(type, DType(t2)));
    }
  }
}

TEST(ValidateTest, Rules) {
  EXPECT_TRUE(isValidName("_a.b9"));
  EXPECT_FALSE(isValidName("9a"));
  EXPECT_FALSE(isValidName(".a"));
  EXPECT_FALSE(isValidName(""));
  EXPECT_TRUE(typeAllowed(Opcode::VUnary, uint8_t(UnaryOp::Not), DType::U8));
  EXPECT_FALSE(typeAllowed(Opcode::VUnary, uint8_t(UnaryOp::Not), DType::F32));
  EXPECT_TRUE(typeAllowed(Opcode::VBinary, uint8_t(BinaryOp::Pow), DType::I32));
  EXPECT_FALSE(typeAllowed(Opcode::VUnary, uint8_t(UnaryOp::Exp), DType::I64));
  EXPECT_FALSE(typeAllowed(Opcode::VBinary, uint8_t(BinaryOp::And), DType::F16));
  EXPECT_TRUE(typeAllowed(Opcode::AtomicAdd, 0, DType::I32));
  EXPECT_FALSE(typeAllowed(Opcode::AtomicAdd, 0, DType::F16));
  EXPECT_FALSE(typeAllowed(Opcode::VFill, 0, DType(kNumDTypes)));
  EXPECT_TRUE(typeAllowed(Opcode::VFill, 0, DType::I8));
  EXPECT_TRUE(typeAllowed(Opcode::AtomicAdd, 0, DType::F64));
  EXPECT_FALSE(typeAllowed(Opcode::Mma, 0, DType::F64));
  EXPECT_FALSE(typeAllowed(Opcode::AtomicAdd, 0, DType::I16));

  Instr in;
  in.op = Opcode::Br;
  in.imm = 3;
  EXPECT_EQ(instrError(in, 4, 0), "");
  EXPECT_NE(instrError(in, 3, 0), "");
  EXPECT_EQ(instrError(in, SIZE_MAX, 0), "");
  Instr arg;
  arg.op = Opcode::Arg;
  arg.imm = 0;
  EXPECT_NE(instrError(arg, 1, 0), "");
  EXPECT_EQ(instrError(arg, 1, 8), "");
  Instr empty;  // a function may hold nothing but nops
  EXPECT_NO_THROW(validate(Module{{{"k", 0, {empty}}}}));
}

}  // namespace
}  // namespace mimic::isa
