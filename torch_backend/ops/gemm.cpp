// Host side of gemm: checks, the tiles for the device (gemm_plan.h), and the launch.
#include "torch_backend/ops/gemm.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>

#include "torch_backend/ops/elementwise_emit.h"
#include "torch_backend/ops/elementwise_program.h"
#include "torch_backend/ops/gemm_kernel.h"
#include "torch_backend/ops/gemm_plan.h"
#include "torch_backend/ops/kernel_cache.h"

namespace mimic::ops {
namespace {

using isa::DType;

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("gemm: " + what);
}

std::string shapeText(const TensorView& v) {
  std::string text = "[";
  for (size_t i = 0; i < v.sizes.size(); ++i) text += (i ? ", " : "") + std::to_string(v.sizes[i]);
  return text + "]";
}

void check(const TensorView& c, const TensorView& a, const TensorView& b) {
  const size_t rank = c.sizes.size();
  for (auto [v, name] : {std::pair{&a, "a"}, {&b, "b"}, {&c, "c"}}) {
    if ((v->sizes.size() != 3 && v->sizes.size() != 4) || v->strides.size() != v->sizes.size() ||
        v->sizes.size() != rank) {
      fail(std::string(name) +
           " must be 3-D [batch, rows, cols] or 4-D [batch0, batch1, rows, cols] as c is, with a "
           "stride per dim, not " +
           shapeText(*v));
    }
    if (v->dtype != DType::F32 && v->dtype != DType::F16 && v->dtype != DType::BF16) {
      fail(std::string(name) + " has dtype " + isa::dtypeName(v->dtype) +
           "; only f32, f16 and bf16 are supported");
    }
  }
  if (a.dtype != c.dtype || b.dtype != c.dtype) {
    fail(std::string("dtypes differ: a ") + isa::dtypeName(a.dtype) + ", b " +
         isa::dtypeName(b.dtype) + ", c " + isa::dtypeName(c.dtype));
  }
  const size_t r = rank - 2;  // the rows dim
  bool sizesMatch =
      a.sizes[r] == c.sizes[r] && b.sizes[r + 1] == c.sizes[r + 1] && a.sizes[r + 1] == b.sizes[r];
  for (size_t d = 0; d < r; ++d)
    sizesMatch = sizesMatch && a.sizes[d] == c.sizes[d] && b.sizes[d] == c.sizes[d];
  if (!sizesMatch) {
    fail("sizes do not match: a " + shapeText(a) + " @ b " + shapeText(b) + " into c " +
         shapeText(c) + " (expected [batch.., M, K] @ [batch.., K, N] -> [batch.., M, N])");
  }
  for (int64_t s : c.sizes) {
    if (s < 0) fail("negative size in c " + shapeText(c));
  }
  if (a.sizes[r + 1] < 0) fail("negative K in a " + shapeText(a));
}

int64_t roundUp8(int64_t bytes) {
  return (bytes + 7) / 8 * 8;
}

int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

int64_t f32Bits(double v) {
  return scalarBits(v, DType::F32);
}

void checkBias(const TensorView& bias, const TensorView& c) {
  if (bias.sizes != c.sizes || bias.strides.size() != c.sizes.size()) {
    fail("bias must have c's sizes " + shapeText(c) + " (strides 0 to broadcast), not " +
         shapeText(bias));
  }
  if (bias.dtype != c.dtype) {
    fail(std::string("bias has dtype ") + isa::dtypeName(bias.dtype) + ", c " +
         isa::dtypeName(c.dtype));
  }
}

struct ParsedEpilogue {
  Program program;
  int temps;
};

// Parsed once per program text and dtypes; entries stay for the life of the process.
const ParsedEpilogue& parseEpilogue(const GemmEpilogue& epilogue, DType c) {
  std::vector<DType> inputs{DType::F32};  // x0: the GEMM value
  std::string key = epilogue.program + "|" + isa::dtypeName(c) + "|" +
                    std::to_string(epilogue.scalars.size()) + "|";
  for (const TensorView& in : epilogue.inputs) {
    inputs.push_back(in.dtype);
    key += isa::dtypeName(in.dtype) + std::string(",");
  }
  static std::mutex m;
  static std::unordered_map<std::string, std::unique_ptr<ParsedEpilogue>> parsed;
  std::lock_guard<std::mutex> lock(m);
  auto found = parsed.find(key);
  if (found != parsed.end()) return *found->second;
  Program program = parseProgram(epilogue.program, DType::F32, inputs, c, epilogue.scalars.size());
  if (program.usesCounter()) {
    fail("epilogue program '" + epilogue.program +
         "' uses rand or idx, which need C's row-major element indices");
  }
  const int temps = countTemps(program);
  auto& entry = parsed[key];
  entry = std::make_unique<ParsedEpilogue>(ParsedEpilogue{std::move(program), temps});
  return *entry;
}

void checkEpilogue(const GemmEpilogue& epilogue, const TensorView& c) {
  if (epilogue.inputs.size() + 1 > static_cast<size_t>(kMaxElementwiseInputs)) {
    fail("epilogue program '" + epilogue.program + "' has " +
         std::to_string(epilogue.inputs.size()) + " inputs besides the GEMM value; at most " +
         std::to_string(kMaxElementwiseInputs - 1));
  }
  for (size_t i = 0; i < epilogue.inputs.size(); ++i) {
    const TensorView& in = epilogue.inputs[i];
    if (in.sizes != c.sizes || in.strides.size() != in.sizes.size()) {
      fail("epilogue input " + std::to_string(i) + " (x" + std::to_string(i + 1) + " of '" +
           epilogue.program + "') must have c's sizes " + shapeText(c) +
           " (strides 0 to broadcast), not " + shapeText(in));
    }
  }
}

// A view as [batch0, batch1, rows, cols]: a 3-D one has an inner batch of 1.
TensorView fourD(const TensorView& v) {
  TensorView f = v;
  if (f.sizes.size() == 3) {
    f.sizes.insert(f.sizes.begin() + 1, 1);
    f.strides.insert(f.strides.begin() + 1, 0);
  }
  return f;
}

// Folds the two batch dims into dim 0 where every view allows it, so that only kernels whose
// operands need two batch strides pay for the second.
void foldBatch(const std::vector<TensorView*>& views) {
  const int64_t outer = views[0]->sizes[0], inner = views[0]->sizes[1];
  bool fold = inner == 1 || outer == 1;
  if (!fold) {
    fold = std::all_of(views.begin(), views.end(),
                       [&](const TensorView* v) { return v->strides[0] == v->strides[1] * inner; });
  }
  if (!fold) return;
  for (TensorView* v : views) {
    v->strides[0] = inner == 1 ? v->strides[0] : v->strides[1];
    v->strides[1] = 0;
    v->sizes[0] = outer * inner;
    v->sizes[1] = 1;
  }
}

void transposeMatrix(TensorView* v) {
  std::swap(v->sizes[2], v->sizes[3]);
  std::swap(v->strides[2], v->strides[3]);
}

}  // namespace

void gemm(const LaunchContext& ctx, const TensorView& c, const TensorView& a, const TensorView& b,
          double alpha, double beta, const TensorView* biasView) {
  gemm(ctx, c, a, b, alpha, beta, biasView, nullptr);
}

void gemm(const LaunchContext& ctx, const TensorView& c, const TensorView& a, const TensorView& b,
          double alpha, double beta, const TensorView* biasView, const GemmEpilogue* epilogue) {
  check(c, a, b);
  if (biasView != nullptr) checkBias(*biasView, c);
  const ParsedEpilogue* parsed = nullptr;
  if (epilogue != nullptr) {
    checkEpilogue(*epilogue, c);
    parsed = &parseEpilogue(*epilogue, c.dtype);
  }
  // A bias scaled by 0 is ignored, as C's old contents are.
  const bool withBias = biasView != nullptr && beta != 0.0;
  TensorView ca = fourD(a), cb = fourD(b), cc = fourD(c);
  TensorView cbias = withBias ? fourD(*biasView) : TensorView{};
  std::vector<TensorView> inputs;
  if (epilogue != nullptr) {
    for (const TensorView& in : epilogue->inputs) inputs.push_back(fourD(in));
  }
  std::vector<TensorView*> views{&ca, &cb, &cc};
  if (withBias) views.push_back(&cbias);
  for (TensorView& in : inputs) views.push_back(&in);
  foldBatch(views);
  // With both operands transposed, C^T = B^T A^T reads them along contiguous rows; the
  // epilogue is elementwise, so its inputs are transposed with C.
  if (ca.strides[3] != 1 && ca.strides[2] == 1 && cb.strides[3] != 1 && cb.strides[2] == 1) {
    std::swap(ca, cb);
    for (TensorView* v : views) transposeMatrix(v);
  }
  const int64_t outer = cc.sizes[0], inner = cc.sizes[1];
  const int64_t batch = outer * inner, m = cc.sizes[2], n = cc.sizes[3], k = ca.sizes[3];
  if (batch == 0 || m == 0 || n == 0) return;
  const int64_t e = isa::dtypeSize(c.dtype);
  const bool readC = beta != 0.0 && !withBias;
  const bool readOld = readC || withBias;  // the epilogue loads a tile: C's old one or the bias

  detail::GemmShape shape;
  shape.type = c.dtype;
  shape.readC = readC;
  shape.bias = withBias;
  shape.batch2 = inner > 1;
  std::vector<int> epilogueBuffers;
  if (parsed != nullptr) {
    shape.program = &parsed->program;
    shape.temps = parsed->temps;
    shape.numScalars = epilogue->scalars.size();
    for (const TensorView& in : inputs) {
      shape.inputColumnWalk.push_back(std::llabs(in.strides[2]) < std::llabs(in.strides[3]));
    }
    epilogueBuffers = detail::epilogueBufferBytes(shape);
  }
  const detail::GemmTiles t =
      detail::planGemm(deviceProperties(ctx.device), batch, m, n, k, e, readOld, epilogueBuffers);
  shape.stages = t.stages;
  shape.tileElements = t.m * t.n;
  const detail::GemmExtraArgs x = detail::gemmExtraArgs(shape);

  std::vector<int64_t> args(x.total, 0);
  if (withBias) {
    args[detail::kGemmBias] = reinterpret_cast<int64_t>(cbias.data);
    args[detail::kGemmBiasBatch] = cbias.strides[0] * e;
    args[detail::kGemmBiasRow] = cbias.strides[2] * e;
    args[detail::kGemmBiasCol] = cbias.strides[3] * e;
  }
  args[detail::kGemmC] = reinterpret_cast<int64_t>(cc.data);
  args[detail::kGemmA] = reinterpret_cast<int64_t>(ca.data);
  args[detail::kGemmB] = reinterpret_cast<int64_t>(cb.data);
  args[detail::kGemmM] = m;
  args[detail::kGemmN] = n;
  args[detail::kGemmK] = k;
  const TensorView* operands[] = {&ca, &cb, &cc};
  const int firstStride[] = {detail::kGemmABatch, detail::kGemmBBatch, detail::kGemmCBatch};
  for (int v = 0; v < 3; ++v) {
    args[firstStride[v]] = operands[v]->strides[0] * e;
    args[firstStride[v] + 1] = operands[v]->strides[2] * e;
    args[firstStride[v] + 2] = operands[v]->strides[3] * e;
  }
  if (shape.batch2) {
    args[x.innerBatch] = inner;
    for (int v = 0; v < 3; ++v) args[x.batch2Strides + v] = operands[v]->strides[1] * e;
    if (withBias) args[x.batch2Strides + 3] = cbias.strides[1] * e;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const int slot = x.inputs + detail::kGemmInputSlots * static_cast<int>(i);
    const int64_t size = isa::dtypeSize(inputs[i].dtype);
    args[slot] = reinterpret_cast<int64_t>(inputs[i].data);
    for (int d = 0; d < 4; ++d) args[slot + 1 + d] = inputs[i].strides[d] * size;
  }
  for (size_t i = 0; parsed != nullptr && i < epilogue->scalars.size(); ++i) {
    args[x.scalars + static_cast<int>(i)] = scalarBits(epilogue->scalars[i], DType::F32);
  }
  args[detail::kGemmTileM] = t.m;
  args[detail::kGemmTileN] = t.n;
  args[detail::kGemmTileK] = t.k;
  args[detail::kGemmAlpha] = f32Bits(alpha);
  args[detail::kGemmBeta] = f32Bits(beta);
  const int64_t accBytes = roundUp8(t.m * t.n * 4);
  const int64_t aBytes = roundUp8(t.m * t.k * e), bBytes = roundUp8(t.k * t.n * e);
  args[detail::kGemmSpAcc] = 0;
  for (int s = 0; s < t.stages; ++s) {
    args[detail::kGemmSpA0 + s] = accBytes + s * aBytes;
    args[detail::kGemmSpB0 + s] = accBytes + t.stages * aBytes + s * bBytes;
  }
  args[detail::kGemmSpOld] = accBytes;
  args[detail::kGemmSpOldF32] = accBytes + roundUp8(t.m * t.n * e);
  args[detail::kGemmSpOut] = readOld ? args[detail::kGemmSpOldF32] + accBytes : accBytes;
  const int64_t tilesM = ceilDiv(m, t.m), tilesN = ceilDiv(n, t.n);
  args[detail::kGemmTilesM] = tilesM;
  args[detail::kGemmTilesN] = tilesN;
  args[detail::kGemmGroupM] = t.groupM;

  for (int v = 0; v < 3; ++v) {
    shape.columnWalk[v] = std::llabs(operands[v]->strides[2]) < std::llabs(operands[v]->strides[3]);
  }
  const KernelRef fn =
      cachedKernel(ctx.device, shape.key(), [&] { return detail::buildGemmKernel(shape); });
  const mimicDim3 grid{static_cast<uint32_t>(tilesM * tilesN), 1, static_cast<uint32_t>(batch)};
  launch(ctx, fn, grid, args);
}

}  // namespace mimic::ops
