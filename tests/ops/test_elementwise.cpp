// The generic elementwise kernel against the host reference: every token class in every dtype
// it applies to, every layout (strided, transposed, broadcast, negative strides, > 4 dims),
// rand's determinism and quality, and the error paths. Also prints a throughput figure.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "elementwise_test.h"
#include "mimic/mimic.hpp"

namespace {

class Elementwise : public ::testing::Test {
 protected:
  // More memory than tiny's 64 MiB, for the throughput check's three 64 MiB tensors.
  void SetUp() override {
    ASSERT_EQ(mimicInitWithPreset(0, "tiny", "hbm.capacity=512MiB"), MIMIC_SUCCESS);
  }
};

const std::vector<int64_t> kShape{33, 65};  // not a multiple of anything

// ------------------------------------------------------------------------------------------
// Token classes

TEST_F(Elementwise, CopyAndCastEveryDtypePair) {
  for (DType from : kAllTypes) {
    for (DType to : kAllTypes) {
      Tensor x(from, kShape, {}, values(from, 1));
      Tensor out(to, kShape);
      check("x0", to, {&x}, out);
      Tensor outT(to, kShape, {1, 33});  // transposed out
      check("x0", from, {&x}, outT);
    }
  }
}

TEST_F(Elementwise, CastThroughComputeTypeRounds) {
  Tensor x(DType::F32, {1000}, {}, [](int64_t k) { return Num{1.0 + k * 1e-4, 0}; });
  Tensor out(DType::F32, {1000});
  check("x0", DType::F16, {&x}, out);
  check("x0", DType::BF16, {&x}, out);
}

TEST_F(Elementwise, FillEveryDtype) {
  for (DType t : kAllTypes) {
    Tensor out(t, {37, 41});
    check("s0", t, {}, out, {3.0});
    Tensor strided(t, {37, 20}, {41, 2});  // every other element: the rest must stay
    check("s0", t, {}, strided, {t == DType::U8 ? 254.0 : -2.0});
    check("7", t, {}, strided);
    check("s0 s1 mul 1 add", t, {}, strided, {3, 4});
  }
  Tensor f(DType::F32, {100});
  check("inf", DType::F32, {}, f);
  check("-inf", DType::F32, {}, f);
  check("nan", DType::F32, {}, f);
  check("s0", DType::F32, {}, f, {-0.0});
  check("s0", DType::F16, {}, f, {70000.0});  // inf in f16
}

TEST_F(Elementwise, UnaryFloat) {
  const char* const ops[] = {"neg",  "abs",     "exp",   "log",   "sqrt", "rsqrt",
                             "tanh", "sigmoid", "erf",   "sin",   "cos",  "floor",
                             "ceil", "round",   "trunc", "recip", "relu"};
  for (DType t : kFloatTypes) {
    Tensor x(t, kShape, {}, values(t, 2));
    Tensor out(t, kShape);
    const double tolerance = t == DType::F32 ? 1e-5 : t == DType::F16 ? 2e-3 : 1.6e-2;
    for (const char* op : ops) check(std::string("x0 ") + op, t, {&x}, out, {}, tolerance);
  }
}

TEST_F(Elementwise, UnaryInteger) {
  for (DType t : kIntTypes) {
    Tensor x(t, kShape, {}, values(t, 3));
    Tensor out(t, kShape);
    for (const char* op : {"neg", "abs", "floor", "ceil", "round", "trunc", "relu", "not"}) {
      check(std::string("x0 ") + op, t, {&x}, out);
    }
  }
}

TEST_F(Elementwise, BinaryEveryDtype) {
  for (DType t : kAllTypes) {
    Tensor a(t, kShape, {}, values(t, 4)), b(t, kShape, {}, values(t, 5));
    Tensor out(t, kShape);
    std::vector<std::string> ops{"add", "sub", "mul", "div", "max", "min", "pow", "rem"};
    if (ewref::isInt(t)) ops.insert(ops.end(), {"and", "or", "xor"});
    const double tolerance = t == DType::F32 ? 1e-6 : 0;
    for (const std::string& op : ops) {
      check("x0 x1 " + op, t, {&a, &b}, out, {}, op == "pow" ? tolerance : 0);
      check("x0 3 " + op, t, {&a}, out, {}, op == "pow" ? tolerance : 0);
      check("2 x0 " + op, t, {&a}, out, {}, op == "pow" ? tolerance : 0);
      check("x0 s0 " + op, t, {&a}, out, {5}, op == "pow" ? tolerance : 0);
      check("s0 x0 " + op, t, {&a}, out, {5}, op == "pow" ? tolerance : 0);
    }
  }
}

TEST_F(Elementwise, CompareGivesMask) {
  for (DType t : {DType::F32, DType::BF16, DType::I32, DType::I64, DType::U8}) {
    Tensor a(t, kShape, {}, values(t, 6)), b(t, kShape, {}, values(t, 7));
    Tensor mask(DType::U8, kShape), asFloat(DType::F32, kShape), asType(t, kShape);
    for (const char* c : {"eq", "ne", "lt", "le", "gt", "ge"}) {
      const std::string op = c;
      check("x0 x1 " + op, t, {&a, &b}, mask);
      check("x0 x1 " + op, t, {&a, &b}, asFloat);
      check("x0 1 " + op, t, {&a}, asType);
      check("1 x0 " + op, t, {&a}, mask);  // literal first: the mirrored compare
      check("x0 s0 " + op, t, {&a}, mask, {2});
      check("s0 x0 " + op, t, {&a}, mask, {2});
    }
  }
  Tensor nan(DType::F32, {64}, {}, [](int64_t k) { return Num{k % 2 ? NAN : 1.0, 0}; });
  Tensor mask(DType::U8, {64});
  check("x0 x0 eq", DType::F32, {&nan}, mask);
  check("x0 x0 ne", DType::F32, {&nan}, mask);
}

TEST_F(Elementwise, MasksCombineAndConvert) {
  for (DType t : {DType::F32, DType::F16, DType::I32, DType::U8}) {
    Tensor a(t, kShape, {}, values(t, 8)), b(t, kShape, {}, values(t, 9));
    Tensor c(t, kShape, {}, values(t, 10)), out(t, kShape), mask(DType::U8, kShape);
    check("x0 x1 lt x1 x2 ge and not", t, {&a, &b, &c}, mask);
    check("x0 x1 lt x1 x2 ge or x0 0 eq xor", t, {&a, &b, &c}, out);
    check("x0 x1 lt x0 x1 where", t, {&a, &b}, out);  // minimum
    check("x0 x1 x2 where", t, {&a, &b, &c}, out);    // a value as a mask: != 0
    check("x0 x1 lt x0 add", t, {&a, &b}, out);       // a mask in arithmetic: 1 or 0
    check("x0 x1 lt x1 x2 lt x0 x1 gt where", t, {&a, &b, &c}, mask);  // where of masks
    check("x0 0 gt s0 s1 where", t, {&a}, out, {3, 2});
    check("1 x0 x1 where", t, {&a, &b}, out);
  }
  Tensor flags(DType::U8, kShape, {}, [](int64_t k) { return Num{0, k % 3 == 0}; });
  Tensor x(DType::F32, kShape, {}, values(DType::F32, 11)), out(DType::F32, kShape);
  check("x0 x1 0 where", DType::F32, {&flags, &x}, out);  // a bool tensor as the condition
}

TEST_F(Elementwise, IntegerBitwiseWithMasks) {
  for (DType t : {DType::I32, DType::I64}) {
    Tensor a(t, kShape, {}, values(t, 12)), out(t, kShape);
    check("x0 0 gt x0 and", t, {&a}, out);  // mask as 1/0, then bitwise
    check("x0 255 xor not", t, {&a}, out);
  }
}

TEST_F(Elementwise, FmaAndDeepPrograms) {
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64}) {
    Tensor a(t, kShape, {}, values(t, 13)), b(t, kShape, {}, values(t, 14));
    Tensor c(t, kShape, {}, values(t, 15)), out(t, kShape);
    check("x0 x1 x2 fma", t, {&a, &b, &c}, out);
    check("x0 2 s0 fma", t, {&a}, out, {-1});
    // Many values live at once: exercises temporary slot reuse.
    check("x0 x1 x2 x0 x1 x2 add mul sub x0 x1 mul x2 x0 sub x1 max fma x2 min add add", t,
          {&a, &b, &c}, out);
  }
}

TEST_F(Elementwise, MixedInputDtypes) {
  Tensor flags(DType::U8, kShape, {}, values(DType::U8, 16));
  Tensor h(DType::F16, kShape, {}, values(DType::F16, 17));
  Tensor i(DType::I64, kShape, {}, values(DType::I64, 18));
  Tensor outB(DType::BF16, kShape), outI(DType::I32, kShape);
  check("x0 x1 mul x2 add", DType::F32, {&flags, &h, &i}, outB);
  check("x0 x1 add x2 sub", DType::I64, {&flags, &h, &i}, outI);
  check("x1 x2 add", DType::F16, {&flags, &h, &i}, outI);  // x0 unused
}

// ------------------------------------------------------------------------------------------
// Layouts

TEST_F(Elementwise, StridedTransposedBroadcastNegative) {
  const DType f = DType::F32;
  Tensor a(f, {45, 70}, {}, values(f, 20));
  Tensor t(f, {45, 70}, {1, 45}, values(f, 21));      // transposed
  Tensor s(f, {45, 70}, {300, 3}, values(f, 22));     // strided rows and columns
  Tensor row(f, {45, 70}, {0, 1}, values(f, 23));     // a row vector broadcast
  Tensor col(f, {45, 70}, {1, 0}, values(f, 24));     // a column vector broadcast
  Tensor one(f, {45, 70}, {0, 0}, values(f, 25));     // a scalar broadcast
  Tensor neg(f, {45, 70}, {-70, -1}, values(f, 26));  // flipped both ways
  Tensor out(f, {45, 70}), outT(f, {45, 70}, {1, 45}), outNeg(f, {45, 70}, {-80, 1});
  const std::vector<Tensor*> all{&a, &t, &s, &row, &col, &one, &neg};
  for (Tensor* o : {&out, &outT, &outNeg}) {
    check("x0 x1 add x2 mul x3 sub x4 max x5 add x6 min", f, all, *o);
    check("x5", f, all, *o);
    check("x3 x4 mul", f, all, *o);
  }
  Tensor i64(DType::I64, {45, 70}, {0, 1}, values(DType::I64, 27));
  Tensor outH(DType::F16, {45, 70}, {1, 45});
  check("x0 x1 add", DType::F32, {&i64, &neg}, outH);
}

TEST_F(Elementwise, SixDimensionsPermuted) {
  const std::vector<int64_t> sizes{3, 4, 5, 2, 3, 7};
  // Strides of a contiguous [7, 2, 3, 5, 4, 3] tensor, permuted to the sizes above.
  const std::vector<int64_t> permuted{1, 3, 12, 180, 60, 360};
  for (DType t : {DType::F32, DType::BF16, DType::I64}) {
    Tensor a(t, sizes, permuted, values(t, 30));
    Tensor b(t, sizes, {}, values(t, 31));
    Tensor out(t, sizes), outP(t, sizes, permuted);
    check("x0 x1 sub", t, {&a, &b}, out);
    check("x0", t, {&a}, out);
    check("x0", t, {&b}, outP);
    check("x0 x1 mul", t, {&a, &b}, outP);
  }
}

TEST_F(Elementwise, EightInputsManyDims) {
  const std::vector<int64_t> sizes{2, 3, 4, 5, 6};
  std::vector<std::unique_ptr<Tensor>> owned;
  std::vector<Tensor*> inputs;
  for (int i = 0; i < 8; ++i) {
    std::vector<int64_t> strides = mimic::ops::contiguousStrides(sizes);
    std::swap(strides[i % 5], strides[(i + 2) % 5]);  // a different permutation for each
    if (i == 7) strides = {0, 0, 0, 0, 0};
    owned.push_back(
        std::make_unique<Tensor>(DType::F32, sizes, strides, values(DType::F32, 40 + i)));
    inputs.push_back(owned.back().get());
  }
  Tensor out(DType::F32, sizes, {1, 2, 6, 24, 120});
  check("x0 x1 add x2 add x3 mul x4 sub x5 max x6 min x7 add s7 mul", DType::F32, inputs, out,
        {1, 2, 3, 4, 5, 6, 7, 0.5});
  check("x0 x1 x2 x3 x4 x5 x6 x7 fma fma fma add", DType::F32, inputs, out);
  // Eight inputs loaded per tile, double-buffered, with rand: the most registers a kernel uses.
  Tensor x7(DType::F32, sizes, {1, 2, 6, 24, 120}, values(DType::F32, 48));
  inputs[7] = &x7;
  check("x0 0 gt x1 x2 add x3 add x4 add x5 add x6 add x7 rand mul add s0 where", DType::F32,
        inputs, out, {2.5}, 0, {9, 9});
}

TEST_F(Elementwise, InPlace) {
  for (DType t : {DType::F32, DType::I64}) {
    Tensor a(t, {3001}, {}, values(t, 60)), b(t, {3001}, {}, values(t, 61));
    std::vector<Num> expected;
    for (int64_t k = 0; k < 3001; ++k) {
      expected.push_back(ewref::isInt(t) ? Num{0, a.at(k).i * 2 + b.at(k).i}
                                         : Num{a.at(k).f * 2 + b.at(k).f, 0});
    }
    mimic::ops::elementwise({}, a.view(), {a.view(), b.view()}, "x0 2 mul x1 add", t, {});
    a.download();
    for (int64_t k = 0; k < 3001; ++k) {
      ASSERT_TRUE(close(a.at(k), expected[k], t, 0)) << k;
    }
  }
}

TEST_F(Elementwise, SizeOneDimsScalarsAndManyTiles) {
  const DType f = DType::F32;
  Tensor a(f, {1, 37, 1, 3}, {}, values(f, 50)), out(f, {1, 37, 1, 3}, {999, 3, 7, 1});
  check("x0 1 add", f, {&a}, out);
  Tensor s(f, {}, {}, values(f, 51)), outS(f, {});
  check("x0 x0 mul", f, {&s}, outS);
  // Many tiles per workgroup: the double-buffered loop and the direct copy's triple buffer.
  Tensor big(f, {300001}, {}, values(f, 52)), big2(f, {300001}, {}, values(f, 53));
  Tensor outBig(f, {300001}), outHalf(DType::F16, {300001});
  check("x0 x1 add", f, {&big, &big2}, outBig);
  check("x0", f, {&big}, outBig);
  check("x0", f, {&big}, outHalf);
  Tensor rows(f, {300, 1001}, {1002, 1}, values(f, 54)), outRows(f, {300, 1001});
  check("x0 2 mul", f, {&rows}, outRows);
  Tensor cols(f, {7, 50000}, {1, 7}, values(f, 55)), outCols(f, {7, 50000});
  check("x0 neg", f, {&cols}, outCols);
}

// idx is the row-major counter (offset + index), whatever the output's layout: arange.
TEST_F(Elementwise, IndexCountsRowMajorInEveryLayout) {
  for (DType type : {DType::F32, DType::I32, DType::I64}) {
    Tensor out(type, {37, 300}, {1, 37});  // transposed: row-major order differs from memory
    mimic::ops::elementwise({0, nullptr}, out.view(), {}, "idx s0 mul s1 add", type, {3, -5},
                            RandomKey{0, 100});
    out.download();
    forEachIndex(out.sizes(), [&](const std::vector<int64_t>& index, int64_t linear) {
      const Num value = out.at(out.position(index));
      ASSERT_EQ(mimic::isa::isFloat(type) ? value.f : double(value.i),
                double((100 + linear) * 3 - 5))
          << mimic::isa::dtypeName(type) << " element " << linear;
    });
  }
}

TEST_F(Elementwise, EmptyLaunchesNothing) {
  mimicQueue queue = newQueue();
  Tensor a(DType::F32, {0, 5}), out(DType::F32, {0, 5});
  mimic::ops::elementwise({0, queue}, out.view(), {a.view()}, "x0 1 add", DType::F32, {});
  mimicKernelCounters counters{};
  EXPECT_EQ(mimicQueueGetKernelCounters(queue, &counters), MIMIC_ERROR_NO_KERNEL);
  // The program is still checked.
  EXPECT_THROW(
      mimic::ops::elementwise({0, queue}, out.view(), {a.view()}, "x0 bogus", DType::F32, {}),
      std::invalid_argument);
  EXPECT_EQ(mimicQueueDestroy(queue), MIMIC_SUCCESS);
}

// ------------------------------------------------------------------------------------------
// Errors

TEST_F(Elementwise, BadProgramsThrowNamingTheToken) {
  Tensor a(DType::F32, {8}), out(DType::F32, {8});
  struct Case {
    const char* program;
    DType compute;
    size_t scalars;
    const char* message;
  };
  const Case cases[] = {
      {"x0 foo", DType::F32, 0, "unknown token 'foo'"},
      {"x0 add", DType::F32, 0, "stack underflow at 'add'"},
      {"x0 x0 where", DType::F32, 0, "stack underflow at 'where'"},
      {"x0 x0", DType::F32, 0, "2 values left"},
      {"", DType::F32, 0, "no tokens"},
      {"x1", DType::F32, 0, "input 'x1'"},
      {"x0 s1 add", DType::F32, 1, "scalar 's1'"},
      {"x0 exp", DType::I64, 0, "'exp' is not defined for compute type i64"},
      {"x0 sqrt", DType::U8, 0, "'sqrt' is not defined for compute type u8"},
      {"x0 x0 and", DType::F32, 0, "'and' is not defined for compute type f32"},
      {"x0 not", DType::F16, 0, "'not' is not defined for compute type f16"},
      {"rand", DType::I32, 0, "'rand' needs a float compute type"},
      {"x0 256 add", DType::U8, 0, "literal '256'"},
      {"x0 -1 add", DType::U8, 0, "literal '-1'"},
      {"x0 0.5 add", DType::I32, 0, "literal '0.5'"},
      {"x0 3e9 add", DType::I32, 0, "literal '3e9'"},
      {"x0 inf max", DType::I64, 0, "literal 'inf'"},
  };
  for (const Case& c : cases) {
    const std::vector<mimic::ops::ScalarArg> scalars(c.scalars, 1.0);
    try {
      mimic::ops::elementwise({}, out.view(), {a.view()}, c.program, c.compute, scalars);
      ADD_FAILURE() << "no exception for '" << c.program << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(std::string("'") + c.program + "'"), std::string::npos)
          << e.what();
    }
  }
}

TEST_F(Elementwise, BadArgumentsThrow) {
  Tensor a(DType::F32, {8}), b(DType::F32, {4, 2}), out(DType::F32, {8});
  auto run = [&](const TensorView& o, const std::vector<TensorView>& in, size_t scalars) {
    mimic::ops::elementwise({}, o, in, "x0", DType::F32,
                            std::vector<mimic::ops::ScalarArg>(scalars, 0.0));
  };
  EXPECT_THROW(run(out.view(), {b.view()}, 0), std::invalid_argument);  // rank
  TensorView shorter = a.view();
  shorter.sizes = {7};
  EXPECT_THROW(run(out.view(), {shorter}, 0), std::invalid_argument);  // sizes
  TensorView noStrides = a.view();
  noStrides.strides.clear();
  EXPECT_THROW(run(out.view(), {noStrides}, 0), std::invalid_argument);
  EXPECT_THROW(run(noStrides, {a.view()}, 0), std::invalid_argument);
  EXPECT_THROW(run(out.view(), std::vector<TensorView>(9, a.view()), 0), std::invalid_argument);
  EXPECT_THROW(run(out.view(), {a.view()}, 9), std::invalid_argument);
  // 130 values live at once need more than 64 KiB for even 64 elements each.
  std::string program;
  for (int i = 0; i < 130; ++i) program += "x0 1 add ";
  for (int i = 0; i < 129; ++i) program += "add ";
  try {
    mimic::ops::elementwise({}, out.view(), {a.view()}, program, DType::I64, {});
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("bytes of scratchpad"), std::string::npos) << e.what();
  }
}

// ------------------------------------------------------------------------------------------
// Throughput (printed, not asserted)

TEST_F(Elementwise, Throughput16M) {
  const int64_t n = 16 << 20;
  void* a = deviceAlloc(n * 4);
  void* b = deviceAlloc(n * 4);
  void* c = deviceAlloc(n * 4);
  const TensorView va{a, DType::F32, {n}, {1}}, vb{b, DType::F32, {n}, {1}};
  const TensorView vc{c, DType::F32, {n}, {1}}, vh{c, DType::F16, {n}, {1}};
  auto measure = [&](const char* what, const std::string& program,
                     const std::vector<TensorView>& in, const TensorView& out) {
    mimic::ops::elementwise({}, out, in, program, DType::F32, {1.0});  // builds the kernel
    ASSERT_EQ(mimicDeviceSynchronize(0), MIMIC_SUCCESS);
    const uint64_t sim0 = simTime();
    const auto t0 = std::chrono::steady_clock::now();
    mimic::ops::elementwise({}, out, in, program, DType::F32, {1.0});
    const auto t1 = std::chrono::steady_clock::now();
    ASSERT_EQ(mimicDeviceSynchronize(0), MIMIC_SUCCESS);
    const auto t2 = std::chrono::steady_clock::now();
    const double launchMs = std::chrono::duration<double, std::milli>(t1 - t0).count();
    const double totalMs = std::chrono::duration<double, std::milli>(t2 - t0).count();
    std::printf("[ throughput ] 16M %-14s host %7.1f ms (launch %6.1f ms), simulated %7.3f ms\n",
                what, totalMs, launchMs, (simTime() - sim0) / 1e6);
  };
  measure("f32 add", "x0 x1 add", {va, vb}, vc);
  measure("f32 copy", "x0", {va}, vc);
  measure("f32->f16 cast", "x0", {va}, vh);
  measure("f32 fill", "s0", {}, vc);
  for (void* p : {a, b, c}) EXPECT_EQ(mimicMemFree(p), MIMIC_SUCCESS);
}

}  // namespace
