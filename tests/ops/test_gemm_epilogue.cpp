// gemm with an epilogue program (torch_backend/ops/gemm.h's GemmEpilogue): bit-identical to gemm
// followed by elementwise with the same program (both round the same f32 operations), for
// strided and broadcast inputs, scalars, edge tiles and the transposed path; 4-D operands with
// two strided batch dims; errors; and the launch and HBM traffic it saves in simulated time.
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "strided_host.h"
#include "torch_backend/ops/elementwise.h"
#include "torch_backend/ops/gemm.h"
#include "torch_backend/ops/gemm_plan.h"

namespace {

using namespace stridedtest;
using mimic::ops::GemmEpilogue;
using mimic::ops::ScalarArg;
using mimic::ops::TensorView;

class GemmEpilogueTest : public OpsTest {};

// The stored bits of every element of the view, row-major.
std::vector<uint64_t> bitsOf(Strided& s) {
  s.download();
  std::vector<uint64_t> bits;
  for (int64_t i = 0; i < s.numel(); ++i) {
    uint8_t b[8] = {};
    encode(s.at(i), s.type, b);
    uint64_t v = 0;
    std::memcpy(&v, b, sizeOf(s.type));
    bits.push_back(v);
  }
  return bits;
}

struct EpilogueCase {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  std::string program = {};
  // Strides of each extra input ([batch, m, n] sizes; 0 broadcasts); empty: contiguous.
  std::vector<std::vector<int64_t>> inputStrides = {};
  std::vector<ScalarArg> scalars = {};
  bool transposed = false;                // A and B both transposed: the kernel computes C^T
  std::vector<int64_t> biasStrides = {};  // empty: no bias
  double alpha = 1, beta = 0;
  DType type = DType::F32;
};

// Runs gemm then elementwise, and gemm with the program as its epilogue, on the same random
// data; the results must have the same bits.
void expectSameAsTwoLaunches(const EpilogueCase& e, uint32_t seed = 1) {
  SCOPED_TRACE("'" + e.program + "' b" + std::to_string(e.batch) + " m" + std::to_string(e.m) +
               " n" + std::to_string(e.n) + " k" + std::to_string(e.k) +
               (e.transposed ? " transposed" : ""));
  std::mt19937 rng(seed);
  const std::vector<int64_t> aStrides =
      e.transposed ? std::vector<int64_t>{e.m * e.k, 1, e.m} : std::vector<int64_t>{};
  const std::vector<int64_t> bStrides =
      e.transposed ? std::vector<int64_t>{e.k * e.n, 1, e.k} : std::vector<int64_t>{};
  Strided a(e.type, {e.batch, e.m, e.k}, aStrides), b(e.type, {e.batch, e.k, e.n}, bStrides);
  Strided c(e.type, {e.batch, e.m, e.n}), fused(e.type, {e.batch, e.m, e.n});
  Strided twoStep(e.type, {e.batch, e.m, e.n});
  Strided bias(e.type, {e.batch, e.m, e.n},
               e.biasStrides.empty() ? std::vector<int64_t>{0, 0, 1} : e.biasStrides);
  std::vector<std::unique_ptr<Strided>> inputs;
  for (const auto& strides : e.inputStrides) {
    inputs.push_back(
        std::make_unique<Strided>(DType::F32, std::vector<int64_t>{e.batch, e.m, e.n}, strides));
  }
  for (Strided* s : {&a, &b, &bias}) fillRandom(*s, rng, -1, 1);
  for (auto& in : inputs) fillRandom(*in, rng, -1, 1);
  for (Strided* s : {&a, &b, &bias, &c, &fused, &twoStep}) s->upload();
  for (auto& in : inputs) in->upload();

  const TensorView biasView = bias.view();
  const TensorView* biasArg = e.biasStrides.empty() ? nullptr : &biasView;
  std::vector<TensorView> elementwiseInputs{c.view()};
  GemmEpilogue epilogue{e.program, {}, e.scalars};
  for (auto& in : inputs) {
    elementwiseInputs.push_back(in->view());
    epilogue.inputs.push_back(in->view());
  }
  mimic::ops::gemm({}, c.view(), a.view(), b.view(), e.alpha, e.beta, biasArg);
  mimic::ops::elementwise({}, twoStep.view(), elementwiseInputs, e.program, DType::F32, e.scalars);
  mimic::ops::gemm({}, fused.view(), a.view(), b.view(), e.alpha, e.beta, biasArg, &epilogue);
  const std::vector<uint64_t> expected = bitsOf(twoStep), actual = bitsOf(fused);
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(actual[i], expected[i])
        << "element " << i << ": " << fused.at(i) << " vs " << twoStep.at(i);
  }
}

TEST_F(GemmEpilogueTest, LinearBiasAndActivation) {
  // A linear layer's bias [N] (strides 0), then relu or a tanh-based gelu-like chain.
  expectSameAsTwoLaunches({1, 70, 45, 33, "x0 relu", {}, {}, false, {0, 0, 1}, 1, 1});
  expectSameAsTwoLaunches({2,
                           130,
                           65,
                           40,
                           "x0 0.5 mul x0 0.79788456 mul tanh 1 add mul",
                           {},
                           {},
                           false,
                           {0, 0, 1},
                           1,
                           1});
}

TEST_F(GemmEpilogueTest, ResidualScaledAndBroadcastInputs) {
  // A residual add of a contiguous tensor, of a transposed one, and of a column [M].
  expectSameAsTwoLaunches({1, 64, 64, 32, "x0 x1 add", {{}}});
  expectSameAsTwoLaunches({2, 70, 45, 77, "x1 x0 s0 mul add", {{45 * 70, 1, 70}}, {0.125}});
  expectSameAsTwoLaunches(
      {3, 9, 130, 5, "x0 x1 mul x2 sub s0 max", {{0, 1, 0}, {130, 0, 1}}, {-0.25}});
  // A mask from an input, as relu's backward reads its saved output.
  expectSameAsTwoLaunches({1, 65, 129, 31, "x1 0 gt x0 0 where", {{}}});
}

TEST_F(GemmEpilogueTest, TransposedPathTransposesTheInputs) {
  // Both operands transposed: the kernel computes C^T = B^T A^T, and its inputs with it.
  expectSameAsTwoLaunches({2, 50, 30, 20, "x0 x1 sub", {{}}, {}, true});
  expectSameAsTwoLaunches(
      {1, 33, 70, 9, "x0 x1 x2 fma", {{}, {0, 0, 1}}, {}, true, {0, 0, 1}, 1, 1});
}

TEST_F(GemmEpilogueTest, AlphaBetaAndEmptyK) {
  expectSameAsTwoLaunches({1, 40, 50, 60, "x0 neg", {}, {}, false, {0, 1, 0}, 0.5, 2.0});
  expectSameAsTwoLaunches({2, 9, 11, 0, "x0 x1 add", {{}}, {}, false, {0, 0, 1}, 1, 0.5});
}

TEST_F(GemmEpilogueTest, HalfOutputRoundsOnce) {
  // relu commutes with rounding to f16, so one rounding at the end equals two launches'.
  EpilogueCase e{2, 70, 45, 33, "x0 relu"};
  e.type = DType::F16;
  expectSameAsTwoLaunches(e);
  e.type = DType::BF16;
  e.biasStrides = {0, 0, 1};
  e.beta = 1;
  expectSameAsTwoLaunches(e);
}

// The attention head split: a third of [S, B, 3*H*D] activations (q, k, v side by side) seen
// as [B, H, S, D] (strides 3*H*D, D, B*3*H*D, 1), which no single batch stride walks. 4-D gemm
// reads them where they are; it must equal the 3-D gemm of contiguous copies bit for bit (the same
// tiles and sums).
TEST_F(GemmEpilogueTest, TwoStridedBatchDims) {
  constexpr int64_t S = 40, B = 3, H = 4, D = 16;
  std::mt19937 rng(5);
  constexpr int64_t W = 3 * H * D;
  Strided q(DType::F32, {B, H, S, D}, {W, D, B * W, 1});
  Strided kT(DType::F32, {B, H, D, S}, {W, D, 1, B * W});  // keys, transposed
  Strided scores(DType::F32, {B, H, S, S}), residual(DType::F32, {B, H, S, S});
  fillRandom(q, rng, -1, 1);
  fillRandom(kT, rng, -1, 1);
  fillRandom(residual, rng, -1, 1);
  Strided qCopy(DType::F32, {B * H, S, D}), kTCopy(DType::F32, {B * H, D, S}, {S * D, 1, D});
  Strided reference(DType::F32, {B * H, S, S}), residual3(DType::F32, {B * H, S, S});
  for (int64_t i = 0; i < q.numel(); ++i) qCopy.at(i) = q.at(i);
  for (int64_t i = 0; i < kT.numel(); ++i) kTCopy.at(i) = kT.at(i);
  for (int64_t i = 0; i < residual.numel(); ++i) residual3.at(i) = residual.at(i);
  for (Strided* s : {&q, &kT, &scores, &residual, &qCopy, &kTCopy, &reference, &residual3}) {
    s->upload();
  }
  GemmEpilogue epilogue{"x0 s0 mul x1 add", {residual3.view()}, {0.25}};
  mimic::ops::gemm({}, reference.view(), qCopy.view(), kTCopy.view(), 1.0, 0.0, nullptr, &epilogue);
  epilogue.inputs = {residual.view()};
  mimic::ops::gemm({}, scores.view(), q.view(), kT.view(), 1.0, 0.0, nullptr, &epilogue);
  EXPECT_EQ(bitsOf(scores), bitsOf(reference));
  // Without an epilogue too, and with a 4-D C whose batch dims are strided as well.
  Strided scoresT(DType::F32, {B, H, S, S}, {S * S, B * S * S, S, 1});
  scoresT.upload();
  mimic::ops::gemm({}, reference.view(), qCopy.view(), kTCopy.view(), 1.0, 0.0);
  mimic::ops::gemm({}, scoresT.view(), q.view(), kT.view(), 1.0, 0.0);
  EXPECT_EQ(bitsOf(scoresT), bitsOf(reference));
}

TEST_F(GemmEpilogueTest, NewScalarValuesReuseTheKernel) {
  Strided a(DType::F32, {1, 20, 30}), b(DType::F32, {1, 30, 40}), c(DType::F32, {1, 20, 40});
  std::mt19937 rng(2);
  fillRandom(a, rng, -1, 1);
  fillRandom(b, rng, -1, 1);
  a.upload();
  b.upload();
  GemmEpilogue epilogue{"x0 s0 mul", {}, {2.0}};
  mimic::ops::gemm({}, c.view(), a.view(), b.view(), 1.0, 0.0, nullptr, &epilogue);
  const int64_t built = mimic::ops::kernelCacheStats().misses;
  epilogue.scalars = {-3.0};
  mimic::ops::gemm({}, c.view(), a.view(), b.view(), 1.0, 0.0, nullptr, &epilogue);
  EXPECT_EQ(mimic::ops::kernelCacheStats().misses, built);
  c.download();
  double dot = 0;
  for (int64_t p = 0; p < 30; ++p) dot += a.at(p) * b.at(p * 40);
  EXPECT_NEAR(c.at(0), -3.0 * dot, 30 * 0x1p-22);
}

TEST_F(GemmEpilogueTest, BadProgramsAndInputsThrowInvalidArgument) {
  Strided a(DType::F32, {1, 4, 5}), b(DType::F32, {1, 5, 6}), c(DType::F32, {1, 4, 6});
  Strided wrong(DType::F32, {1, 4, 5});
  auto call = [&](const GemmEpilogue& epilogue) {
    mimic::ops::gemm({}, c.view(), a.view(), b.view(), 1.0, 0.0, nullptr, &epilogue);
  };
  EXPECT_THROW(call({"x0 rand add", {}, {}}), std::invalid_argument);  // tiles are not runs
  EXPECT_THROW(call({"x0 idx add", {}, {}}), std::invalid_argument);
  EXPECT_THROW(call({"x0 x1 add", {}, {}}), std::invalid_argument);  // no x1
  EXPECT_THROW(call({"x0 bogus", {}, {}}), std::invalid_argument);
  EXPECT_THROW(call({"x0 s0 add", {}, {}}), std::invalid_argument);  // no s0
  EXPECT_THROW(call({"x0 x1 add", {wrong.view()}, {}}), std::invalid_argument);
  std::vector<TensorView> eight(8, c.view());
  EXPECT_THROW(call({"x0", eight, {}}), std::invalid_argument);
  Strided a4(DType::F32, {1, 1, 4, 5});  // ranks must agree
  EXPECT_THROW(mimic::ops::gemm({}, c.view(), a4.view(), b.view(), 1.0, 0.0),
               std::invalid_argument);
}

// The plan leaves room for the epilogue's buffers: every plan fits with them, and buffers
// that fit beside the A and B tiles (which they overlap) do not change it.
TEST(GemmEpiloguePlan, BuffersFitTheScratchpad) {
  mimicDeviceProperties device{};
  device.computeUnits = 16;
  device.scratchpadBytes = 256 << 10;
  device.mmaF32MacsPerCycle = 256;
  device.mmaF16MacsPerCycle = 1024;
  device.matrixClockMHz = 1500;
  device.hbmBandwidthGBps = 1000;
  device.hbmEfficiency = 1;
  device.hbmLatencyNs = 500;
  device.dmaBandwidthGBps = 200;
  using mimic::ops::detail::gemmScratchpadBytes;
  using mimic::ops::detail::planGemm;
  const std::vector<std::vector<int>> programs = {{}, {4}, {4, 4, 4}, {1, 4, 4, 4, 4}};
  for (const auto& buffers : programs) {
    for (bool readC : {false, true}) {
      const auto t = planGemm(device, 1, 256, 2048, 1024, 4, readC, buffers);
      EXPECT_LE(gemmScratchpadBytes(t, 4, readC, buffers), int64_t{256} << 10);
    }
  }
  const auto plain = planGemm(device, 1, 64, 64, 512, 4, false);
  const auto small = planGemm(device, 1, 64, 64, 512, 4, false, {4});
  EXPECT_EQ(small.m * small.n * small.k, plain.m * plain.n * plain.k);
  const auto offsets = mimic::ops::detail::gemmEpilogueOffsets(64 * 64, 4, true, {1, 4});
  ASSERT_EQ(offsets.size(), 3u);
  EXPECT_EQ(offsets[0] % 64, 0);
  EXPECT_GE(offsets[0], 2 * 64 * 64 * 4);  // after the accumulator and the bias tile
  EXPECT_EQ(offsets[1] - offsets[0], 64 * 64);
  EXPECT_EQ(offsets[2] - offsets[1], 64 * 64 * 4);
}

// Simulated milliseconds of `launch` (deterministic for the preset).
template <class F>
float simulatedMs(F launch) {
  launch();  // builds and loads the kernels
  EXPECT_EQ(mimicDeviceSynchronize(0), MIMIC_SUCCESS);
  mimicEvent start = newEvent(), stop = newEvent();
  EXPECT_EQ(mimicEventRecord(start, nullptr), MIMIC_SUCCESS);
  launch();
  EXPECT_EQ(mimicEventRecord(stop, nullptr), MIMIC_SUCCESS);
  EXPECT_EQ(mimicEventSynchronize(stop), MIMIC_SUCCESS);
  float ms = 0;
  EXPECT_EQ(mimicEventElapsedTime(&ms, start, stop), MIMIC_SUCCESS);
  mimicEventDestroy(start);
  mimicEventDestroy(stop);
  return ms;
}

// The epilogue saves the second launch and C's round trip through HBM; its own work (vector
// instructions, the residual's DMA) still costs simulated time.
TEST_F(GemmEpilogueTest, SavesALaunchAndTheRoundTrip) {
  constexpr int64_t m = 256, n = 256, k = 128;
  std::mt19937 rng(4);
  Strided a(DType::F32, {1, m, k}), b(DType::F32, {1, k, n}), c(DType::F32, {1, m, n});
  Strided out(DType::F32, {1, m, n}), residual(DType::F32, {1, m, n});
  for (Strided* s : {&a, &b, &residual}) fillRandom(*s, rng, -1, 1);
  for (Strided* s : {&a, &b, &residual, &c, &out}) s->upload();
  const std::string program = "x0 relu x1 add";
  const float plain =
      simulatedMs([&] { mimic::ops::gemm({}, c.view(), a.view(), b.view(), 1.0, 0.0); });
  const float twoLaunches = simulatedMs([&] {
    mimic::ops::gemm({}, c.view(), a.view(), b.view(), 1.0, 0.0);
    mimic::ops::elementwise({}, out.view(), {c.view(), residual.view()}, program, DType::F32, {});
  });
  GemmEpilogue epilogue{program, {residual.view()}, {}};
  const float fused = simulatedMs(
      [&] { mimic::ops::gemm({}, out.view(), a.view(), b.view(), 1.0, 0.0, nullptr, &epilogue); });
  std::printf(
      "[ figures  ] %lldx%lldx%lld f32: gemm %.4f ms, gemm + elementwise '%s' %.4f ms, "
      "with the epilogue %.4f ms\n",
      static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k), plain,
      program.c_str(), twoLaunches, fused);
  EXPECT_LT(fused, twoLaunches);
  EXPECT_GT(fused, plain);
}

}  // namespace
