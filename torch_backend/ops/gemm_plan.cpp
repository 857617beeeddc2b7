#include "torch_backend/ops/gemm_plan.h"

#include <algorithm>
#include <cmath>

#include "torch_backend/ops/gemm_kernel.h"

namespace mimic::ops::detail {
namespace {

int64_t roundUp8(int64_t bytes) {
  return (bytes + 7) / 8 * 8;
}

int64_t roundUp64(int64_t bytes) {
  return (bytes + 63) / 64 * 64;
}

int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

constexpr int64_t kSides[] = {16, 32, 64, 128, 256};
constexpr int64_t kDepths[] = {16, 32, 64, 128};
// Triton's and CUTLASS's usual swizzle: eight tile rows share their B panels.
constexpr int64_t kGroupRows = 8;
// Shapes whose estimates are this close count as equally fast.
constexpr double kTie = 1.02;

// The estimated time of the whole GEMM with tiles `t`, ns.
double estimateNs(const mimicDeviceProperties& d, int64_t batch, int64_t m, int64_t n, int64_t k,
                  int64_t e, const GemmTiles& t) {
  const int64_t tiles = batch * ceilDiv(m, t.m) * ceilDiv(n, t.n);
  const int64_t units = std::max(1, d.computeUnits);
  const int64_t busy = std::min(tiles, units);
  const double rate = e == 4 ? d.mmaF32MacsPerCycle : d.mmaF16MacsPerCycle;
  const double matrixGHz = d.matrixClockMHz / 1000;
  const double hbm = d.hbmBandwidthGBps * d.hbmEfficiency;
  const double shared = d.cacheBytes > 0 ? d.cacheBandwidthGBps : hbm;
  const double perUnit = std::min(d.dmaBandwidthGBps, shared / double(busy));
  const double stepBytes = double((t.m + t.n) * t.k * e);
  const double latency = double(d.cacheBytes > 0 ? d.cacheLatencyNs : d.hbmLatencyNs);
  // The load of step s + stages - 1 starts when step s - 1's multiply ends and must land before
  // step s + stages - 1 starts, stages - 1 multiplies later.
  const double loadNs = stepBytes / perUnit;
  const double stepNs = std::max({std::ceil(double(t.m * t.n * t.k) / rate) / matrixGHz, loadNs,
                                  (latency + loadNs) / (t.stages - 1)});
  // The first step's load is exposed, and so is the epilogue's store.
  const double tileNs = double(ceilDiv(k, t.k)) * stepNs + 2 * latency + stepBytes / perUnit +
                        double(t.m * t.n * e) / perUnit;
  const double waves = double(ceilDiv(tiles, units));
  const double compulsory = double((batch * (m * k + k * n) + batch * m * n) * e) / hbm;
  return std::max(waves * tileNs, compulsory);
}

}  // namespace

std::vector<int64_t> gemmEpilogueOffsets(int64_t mn, int64_t e, bool readC,
                                         const std::vector<int>& bufferElementBytes) {
  const int64_t old = readC ? roundUp8(mn * e) + (e != 4 ? roundUp8(mn * 4) : 0) : 0;
  std::vector<int64_t> offsets{roundUp64(roundUp8(mn * 4) + old)};
  for (int bytes : bufferElementBytes) offsets.push_back(offsets.back() + roundUp64(mn * bytes));
  return offsets;
}

int64_t gemmScratchpadBytes(const GemmTiles& t, int64_t e, bool readC,
                            const std::vector<int>& epilogueBuffers) {
  // The f32 accumulator, then a set of A and B tiles per stage, which the epilogue's buffers
  // reuse: C's old tile (and as f32) if it is read, and the result in C's type unless f32.
  const int64_t ab = t.stages * (roundUp8(t.m * t.k * e) + roundUp8(t.k * t.n * e));
  const int64_t mn = t.m * t.n;
  const int64_t old = readC ? roundUp8(mn * e) + (e != 4 ? roundUp8(mn * 4) : 0) : 0;
  const int64_t epilogue = old + (e != 4 ? roundUp8(mn * e) : 0);
  const int64_t bytes = roundUp8(mn * 4) + std::max(ab, epilogue);
  if (epilogueBuffers.empty()) return bytes;
  return std::max(bytes, gemmEpilogueOffsets(mn, e, readC, epilogueBuffers).back());
}

GemmTiles planGemm(const mimicDeviceProperties& d, int64_t batch, int64_t m, int64_t n, int64_t k,
                   int64_t e, bool readC, const std::vector<int>& epilogueBuffers) {
  const int64_t budget = static_cast<int64_t>(d.scratchpadBytes);
  GemmTiles best{1, 1, 1, 2, 1};
  double bestNs = INFINITY;
  for (int64_t sm : kSides) {
    for (int64_t sn : kSides) {
      for (int64_t sk : kDepths) {
        for (int stages = 2; stages <= kGemmMaxStages; ++stages) {
          const GemmTiles t{std::min(m, sm), std::min(n, sn), std::clamp<int64_t>(k, 1, sk), stages,
                            1};
          if (gemmScratchpadBytes(t, e, readC, epilogueBuffers) > budget) continue;
          const double ns = estimateNs(d, batch, m, n, k, e, t);
          const bool larger = t.m * t.n * t.k > best.m * best.n * best.k;
          if (ns * kTie < bestNs || (ns < bestNs * kTie && larger)) {
            best = t;
            bestNs = std::min(ns, bestNs);
          }
        }
      }
    }
  }
  // Nothing fits (a tiny scratchpad): shrink the smallest shape until it does.
  if (bestNs == INFINITY) best = {std::min(m, kSides[0]), std::min(n, kSides[0]), 1, 2, 1};
  while (gemmScratchpadBytes(best, e, readC, epilogueBuffers) > budget &&
         (best.m > 1 || best.n > 1 || best.k > 1)) {
    int64_t& side = best.k > 1 ? best.k : best.m >= best.n ? best.m : best.n;
    side = (side + 1) / 2;
  }
  best.groupM = std::min(kGroupRows, ceilDiv(m, best.m));
  return best;
}

}  // namespace mimic::ops::detail
