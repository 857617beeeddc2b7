// The multi-output form of the elementwise kernel (elementwiseMulti, fused pointwise trees that
// also write values the graph needs elsewhere): every output bit-identical to elementwise() of
// its program alone (strided and broadcast operands, mixed output dtypes, rand, in place), one
// launch for all of them, and the error paths.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <stdexcept>

#include "elementwise_test.h"
#include "mimic/mimic.hpp"
#include "mimic/mimic_trace.h"
#include "torch_backend/ops/elementwise_program.h"

namespace {

using mimic::ops::elementwise;
using mimic::ops::elementwiseMulti;
using mimic::ops::ScalarArg;

class ElementwiseMulti : public ::testing::Test {
 public:
  void SetUp() override { ASSERT_EQ(mimicInitWithPreset(0, "tiny", nullptr), MIMIC_SUCCESS); }
};

void expectSameBytes(Tensor& a, Tensor& b, const std::string& what) {
  a.download();
  b.download();
  ASSERT_EQ(a.elements(), b.elements());
  for (int64_t k = 0; k < a.elements(); ++k) {
    const Num x = a.at(k), y = b.at(k);
    ASSERT_TRUE(x.i == y.i && (x.f == y.f || (std::isnan(x.f) && std::isnan(y.f))))
        << what << " element " << k;
  }
}

// Runs `programs` in one elementwiseMulti launch and each in an elementwise() launch of its
// own, over outputs of `types` (with `outStrides`), and compares every output byte for byte.
void expectSameAsSeparate(const std::vector<int64_t>& sizes,
                          const std::vector<const Tensor*>& inputs,
                          const std::vector<std::string>& programs, const std::vector<DType>& types,
                          const std::vector<int64_t>& outStrides,
                          const std::vector<ScalarArg>& scalars, RandomKey random = {}) {
  std::vector<std::unique_ptr<Tensor>> multi, single;
  std::vector<TensorView> outs, ins;
  for (const Tensor* in : inputs) ins.push_back(in->view());
  for (size_t j = 0; j < programs.size(); ++j) {
    multi.push_back(std::make_unique<Tensor>(types[j], sizes, outStrides));
    single.push_back(std::make_unique<Tensor>(types[j], sizes, outStrides));
    outs.push_back(multi.back()->view());
  }
  EXPECT_EQ(kernelLaunches(
                [&] { elementwiseMulti({}, outs, ins, programs, DType::F32, scalars, random); }),
            1);
  for (size_t j = 0; j < programs.size(); ++j) {
    elementwise({}, single[j]->view(), ins, programs[j], DType::F32, scalars, random);
  }
  ASSERT_EQ(mimicDeviceSynchronize(0), MIMIC_SUCCESS);
  for (size_t j = 0; j < programs.size(); ++j) {
    expectSameBytes(*multi[j], *single[j],
                    "output " + std::to_string(j) + " ('" + programs[j] + "')");
  }
}

TEST_F(ElementwiseMulti, EachOutputEqualsItsOwnLaunch) {
  for (const std::vector<int64_t>& sizes :
       std::vector<std::vector<int64_t>>{{1}, {100}, {8193}, {3, 70, 129}, {4, 1, 2, 3, 500}}) {
    Tensor a(DType::F32, sizes, {}, values(DType::F32, 1));
    Tensor b(DType::F16, sizes, {}, values(DType::F16, 2));
    expectSameAsSeparate(sizes, {&a, &b}, {"x0 x1 s0 mul add", "x0 x1 mul relu", "x1"},
                         {DType::F32, DType::BF16, DType::F16}, {}, {0.5});
    expectSameAsSeparate(sizes, {&a, &b}, {"x0 exp", "x0 s0 gt", "x1 x0 sub s1 mul", "x0"},
                         {DType::F32, DType::U8, DType::F32, DType::I32}, {}, {0.25, 3});
  }
}

TEST_F(ElementwiseMulti, StridedAndBroadcastOperands) {
  const std::vector<int64_t> sizes{33, 65};
  Tensor a(DType::F32, sizes, {1, 40}, values(DType::F32, 3));   // transposed
  Tensor row(DType::F32, sizes, {0, 1}, values(DType::F32, 4));  // broadcast over dim 0
  Tensor scalar(DType::F32, sizes, {0, 0}, values(DType::F32, 5));
  expectSameAsSeparate(sizes, {&a, &row, &scalar}, {"x0 x1 add", "x0 x1 add x2 mul tanh"},
                       {DType::F32, DType::F32}, {130, 2}, {});
  expectSameAsSeparate(sizes, {&row, &scalar}, {"x0 x1 add", "x1 neg"}, {DType::F32, DType::F32},
                       {}, {});
}

// A dropout mask drawn in the program that uses it and written as an extra output: the same
// values as the mask's own launch with the same key, and its product equal too.
TEST_F(ElementwiseMulti, RandStreamsAreNumberedPerProgram) {
  const std::vector<int64_t> sizes{5, 3000};
  Tensor a(DType::F32, sizes, {}, values(DType::F32, 6));
  const RandomKey key{1234, 777};
  expectSameAsSeparate(
      sizes, {&a}, {"rand s0 lt 1 0 where", "rand s0 lt 1 0 where x0 mul s1 mul", "rand rand add"},
      {DType::F32, DType::F32, DType::F32}, {}, {0.9, 1.0 / 0.9}, key);
}

// A later program reads an earlier output instead of computing it again: the same values as
// a program that recomputes it (float32 outputs hold the computed values exactly), rand too.
TEST_F(ElementwiseMulti, LaterProgramsReadEarlierOutputs) {
  const std::vector<int64_t> sizes{7, 3001};
  Tensor a(DType::F32, sizes, {}, values(DType::F32, 9));
  Tensor b(DType::F32, sizes, {}, values(DType::F32, 10));
  const RandomKey key{99, 12345};
  Tensor mask(DType::F32, sizes), product(DType::F32, sizes), twice(DType::F32, sizes);
  Tensor expectMask(DType::F32, sizes), expectProduct(DType::F32, sizes),
      expectTwice(DType::F32, sizes);
  EXPECT_EQ(kernelLaunches([&] {
              elementwiseMulti({}, {mask.view(), product.view(), twice.view()},
                               {a.view(), b.view()},
                               {"rand s0 lt 1 0 where", "x0 x2 s1 div mul", "x3 x3 add x2 sub"},
                               DType::F32, {0.8, 0.8}, key);
            }),
            1);
  elementwise({}, expectMask.view(), {}, "rand s0 lt 1 0 where", DType::F32, {0.8}, key);
  elementwise({}, expectProduct.view(), {a.view()}, "x0 rand s0 lt 1 0 where s1 div mul",
              DType::F32, {0.8, 0.8}, key);
  elementwise({}, expectTwice.view(), {expectProduct.view(), expectMask.view()}, "x0 x0 add x1 sub",
              DType::F32, {});
  ASSERT_EQ(mimicDeviceSynchronize(0), MIMIC_SUCCESS);
  expectSameBytes(mask, expectMask, "mask");
  expectSameBytes(product, expectProduct, "product");
  expectSameBytes(twice, expectTwice, "twice");
}

TEST_F(ElementwiseMulti, OutputsMayOverwriteTheirInputs) {
  const std::vector<int64_t> sizes{20000};
  Tensor a(DType::F32, sizes, {}, values(DType::F32, 7));
  Tensor b(DType::F32, sizes, {}, values(DType::F32, 8));
  Tensor expectA(DType::F32, sizes), expectB(DType::F32, sizes);
  elementwise({}, expectA.view(), {a.view(), b.view()}, "x0 x1 mul", DType::F32, {});
  elementwise({}, expectB.view(), {a.view(), b.view()}, "x0 x1 sub", DType::F32, {});
  elementwiseMulti({}, {a.view(), b.view()}, {a.view(), b.view()}, {"x0 x1 mul", "x0 x1 sub"},
                   DType::F32, {});
  ASSERT_EQ(mimicDeviceSynchronize(0), MIMIC_SUCCESS);
  expectSameBytes(a, expectA, "a = a * b");
  expectSameBytes(b, expectB, "b = a - b");
}

TEST_F(ElementwiseMulti, EmptyOutputsLaunchNothing) {
  Tensor a(DType::F32, {0, 4}), out0(DType::F32, {0, 4}), out1(DType::F32, {0, 4});
  EXPECT_EQ(kernelLaunches([&] {
              elementwiseMulti({}, {out0.view(), out1.view()}, {a.view()}, {"x0", "x0 neg"},
                               DType::F32, {});
            }),
            0);
}

TEST_F(ElementwiseMulti, RejectsWhatItCannotRun) {
  Tensor a(DType::F32, {16}), b(DType::F32, {15}), out(DType::F32, {16}), short15(DType::F32, {15});
  auto call = [&](const std::vector<TensorView>& outs, const std::vector<TensorView>& ins,
                  const std::vector<std::string>& programs) {
    elementwiseMulti({}, outs, ins, programs, DType::F32, {});
  };
  EXPECT_THROW(call({}, {a.view()}, {}), std::invalid_argument);
  EXPECT_THROW(call({out.view()}, {a.view()}, {"x0", "x0 neg"}), std::invalid_argument);
  EXPECT_THROW(call({out.view(), short15.view()}, {a.view()}, {"x0", "x0 neg"}),
               std::invalid_argument);
  EXPECT_THROW(call({out.view(), a.view()}, {b.view()}, {"x0", "x0 neg"}), std::invalid_argument);
  EXPECT_THROW(call({out.view(), a.view()}, {a.view()}, {"x1", "x2"}), std::invalid_argument);
  std::vector<std::unique_ptr<Tensor>> many;
  std::vector<TensorView> outs;
  for (int j = 0; j < mimic::ops::kMaxElementwiseOutputs + 1; ++j) {
    many.push_back(std::make_unique<Tensor>(DType::F32, std::vector<int64_t>{16}));
    outs.push_back(many.back()->view());
  }
  EXPECT_THROW(call(outs, {a.view()}, std::vector<std::string>(outs.size(), "x0")),
               std::invalid_argument);
  outs.pop_back();
  EXPECT_EQ(kernelLaunches(
                [&] { call(outs, {a.view()}, std::vector<std::string>(outs.size(), "x0 abs")); }),
            1);
}

}  // namespace
