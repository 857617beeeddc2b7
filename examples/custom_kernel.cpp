// custom_kernel: two kernels written with the ISA builder (sim/isa/builder.h), loaded as one
// module and launched from C++ with MIMIC_CHECK:
//
//   saxpy  y[i] = alpha * x[i] + y[i]            args: y, x, n, alpha (f32 bits)
//   dot    *out += sum over i of x[i] * y[i]     args: out, x, y, n
//
// Both use a grid-stride loop over tiles of kTile elements, so any grid size covers any n, and
// an edge tile is simply shorter (count = min(kTile, n - start)). `dot` reduces each tile on
// the vector pipe, keeps a running sum in the scratchpad and adds it to *out with one atomic
// add per workgroup (atomics are applied in workgroup order: the result is deterministic).
//
// The results are checked against the host, the kernel counters are printed, and the kernel's
// simulated time is checked against the HBM floor (bytes moved / hbm bandwidth).
//
//   build/examples/mimic-example-custom-kernel
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "mimic/mimic.hpp"
#include "sim/isa/builder.h"
#include "sim/isa/disassembler.h"
#include "sim/isa/module_image.h"

namespace {

using mimic::isa::BinaryOp;
using mimic::isa::Cond;
using mimic::isa::DType;
using mimic::isa::KernelBuilder;
using mimic::isa::ReduceOp;
using mimic::isa::Reg;
using mimic::isa::ScalarOp;

constexpr int64_t kTile = 2048;  // f32 elements per tile: 8 KiB of scratchpad per buffer

// The loop head both kernels share: start = wgid * kTile, step = griddim * kTile; each pass
// sets `count` = min(kTile, n - start) and the byte offset of the tile, or leaves at `done`.
struct TileLoop {
  Reg start, step, count, offset;
  mimic::isa::Label top, done;
};

TileLoop beginTileLoop(KernelBuilder& k, Reg n) {
  TileLoop t{k.reg(), k.reg(), k.reg(), k.reg(), k.label(), k.label()};
  k.alu(ScalarOp::Mul, t.start, k.workgroupId(0), kTile);
  k.alu(ScalarOp::Mul, t.step, k.gridDim(0), kTile);
  k.bind(t.top);
  Reg inside = k.reg();
  k.cmp(Cond::Lt, inside, t.start, n);
  k.brz(inside, t.done);
  k.release(inside);
  k.alu(ScalarOp::Sub, t.count, n, t.start);
  k.alu(ScalarOp::Min, t.count, t.count, kTile);
  k.alu(ScalarOp::Mul, t.offset, t.start, 4);
  return t;
}

void endTileLoop(KernelBuilder& k, TileLoop& t) {
  k.alu(ScalarOp::Add, t.start, t.start, t.step);
  k.br(t.top);
  k.bind(t.done);
}

mimic::isa::Function saxpy() {
  KernelBuilder k("saxpy", 4);
  Reg y = k.arg(0), x = k.arg(1), n = k.arg(2), alpha = k.arg(3);
  Reg four = k.li(4);
  Reg xs = k.li(0), ys = k.li(kTile * 4);  // scratchpad byte addresses of the two tiles
  mimic::isa::Desc d = k.desc();
  TileLoop t = beginTileLoop(k, n);
  k.dmaDim(d, DType::F32, 0, t.count, four, four);  // count elements, 4-byte strides
  Reg xa = k.reg(), ya = k.reg();
  k.alu(ScalarOp::Add, xa, x, t.offset);
  k.alu(ScalarOp::Add, ya, y, t.offset);
  Reg loadX = k.dmaLoad(xs, xa, d);
  Reg loadY = k.dmaLoad(ys, ya, d);
  k.wait(loadX);  // reading a tile while its DMA is in flight is a SCRATCHPAD_HAZARD fault
  k.wait(loadY);
  k.binaryScalar(BinaryOp::Mul, DType::F32, xs, xs, alpha, t.count);  // alpha: f32 bits
  k.binary(BinaryOp::Add, DType::F32, ys, xs, ys, t.count);
  Reg store = k.dmaStore(ya, ys, d);
  k.wait(store);  // the next load into ys must not overwrite it while the store reads it
  endTileLoop(k, t);
  return k.finish();
}

mimic::isa::Function dot() {
  KernelBuilder k("dot", 4);
  Reg out = k.arg(0), x = k.arg(1), y = k.arg(2), n = k.arg(3);
  Reg four = k.li(4), one = k.li(1);
  Reg xs = k.li(0), ys = k.li(kTile * 4);
  Reg partial = k.li(2 * kTile * 4), sum = k.li(2 * kTile * 4 + 4);
  k.fill(DType::F32, sum, 0.0, one);
  mimic::isa::Desc d = k.desc();
  TileLoop t = beginTileLoop(k, n);
  k.dmaDim(d, DType::F32, 0, t.count, four, four);
  Reg xa = k.reg(), ya = k.reg();
  k.alu(ScalarOp::Add, xa, x, t.offset);
  k.alu(ScalarOp::Add, ya, y, t.offset);
  Reg loadX = k.dmaLoad(xs, xa, d);
  Reg loadY = k.dmaLoad(ys, ya, d);
  k.waitAll();
  k.binary(BinaryOp::Mul, DType::F32, xs, xs, ys, t.count);
  k.reduce(ReduceOp::Sum, DType::F32, partial, xs, t.count);
  k.binary(BinaryOp::Add, DType::F32, sum, sum, partial, one);
  (void)loadX;
  (void)loadY;
  endTileLoop(k, t);
  k.atomicAdd(DType::F32, out, sum, one);
  return k.finish();
}

uint64_t f32Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

void printCounters(const char* name, const mimicKernelCounters& c) {
  std::printf("%s: %llu workgroups, %.3f us simulated (%llu cycles)\n", name,
              static_cast<unsigned long long>(c.workgroups), (c.endNs - c.startNs) / 1e3,
              static_cast<unsigned long long>(c.cycles));
  std::printf("  instructions  scalar %llu  vector %llu  matrix %llu  dma %llu\n",
              static_cast<unsigned long long>(c.instructions[MIMIC_PIPE_SCALAR]),
              static_cast<unsigned long long>(c.instructions[MIMIC_PIPE_VECTOR]),
              static_cast<unsigned long long>(c.instructions[MIMIC_PIPE_MATRIX]),
              static_cast<unsigned long long>(c.instructions[MIMIC_PIPE_DMA]));
  std::printf("  pipe busy     scalar %.3f  vector %.3f  matrix %.3f  dma %.3f\n",
              c.busy[MIMIC_PIPE_SCALAR], c.busy[MIMIC_PIPE_VECTOR], c.busy[MIMIC_PIPE_MATRIX],
              c.busy[MIMIC_PIPE_DMA]);
  std::printf("  %llu FLOPs, HBM %llu bytes read, %llu bytes written\n",
              static_cast<unsigned long long>(c.flops),
              static_cast<unsigned long long>(c.hbmBytesRead),
              static_cast<unsigned long long>(c.hbmBytesWritten));
}

int run() {
  const char* preset = std::getenv("MIMIC_PRESET");
  MIMIC_CHECK(mimicInitWithPreset(0, preset && *preset ? preset : "tiny", nullptr));
  mimicDeviceProperties props;
  MIMIC_CHECK(mimicDeviceGetProperties(0, &props));

  // Build the module and show the start of saxpy as assembly text.
  mimic::isa::Module module{{saxpy(), dot()}};
  std::string text = mimic::isa::disassemble(module);
  std::printf("%s...\n", text.substr(0, text.find("\n  dma.desc")).c_str());
  std::vector<uint8_t> image = mimic::isa::encodeImage(module);
  mimicModule mod;
  mimicFunction saxpyFn, dotFn;
  MIMIC_CHECK(mimicModuleLoad(0, image.data(), image.size(), &mod));
  MIMIC_CHECK(mimicModuleGetFunction(mod, "saxpy", &saxpyFn));
  MIMIC_CHECK(mimicModuleGetFunction(mod, "dot", &dotFn));

  // Data: n is not a multiple of the tile, so the last tile is short.
  const int64_t n = (1 << 20) + 1000;
  const float alpha = 1.5f;
  std::vector<float> x(n), y(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 97) * 0.25f - 8.0f;
    y[i] = static_cast<float>(i % 13) - 6.0f;
  }
  const size_t bytes = n * sizeof(float);
  void *dx, *dy, *dout;
  MIMIC_CHECK(mimicMemAlloc(0, bytes, &dx));
  MIMIC_CHECK(mimicMemAlloc(0, bytes, &dy));
  MIMIC_CHECK(mimicMemAlloc(0, sizeof(float), &dout));
  mimicQueue queue;
  MIMIC_CHECK(mimicQueueCreate(0, 0, MIMIC_QUEUE_PRIORITY_LOW, &queue));
  MIMIC_CHECK(mimicMemcpyAsync(dx, x.data(), bytes, queue));
  MIMIC_CHECK(mimicMemcpyAsync(dy, y.data(), bytes, queue));
  MIMIC_CHECK(mimicMemsetAsync(dout, 0, sizeof(float), queue));

  // One workgroup per compute unit, twice over: two waves of grid-stride loops.
  const mimicDim3 grid{static_cast<uint32_t>(2 * props.computeUnits), 1, 1};
  struct {
    void* y;
    const void* x;
    int64_t n;
    uint64_t alpha;
  } saxpyArgs{dy, dx, n, f32Bits(alpha)};
  static_assert(sizeof saxpyArgs == 32, "four 8-byte argument slots");
  MIMIC_CHECK(mimicLaunchKernel(saxpyFn, grid, &saxpyArgs, sizeof saxpyArgs, queue));
  MIMIC_CHECK(mimicQueueSynchronize(queue));
  mimicKernelCounters saxpyCounters;
  MIMIC_CHECK(mimicQueueGetKernelCounters(queue, &saxpyCounters));
  printCounters("saxpy", saxpyCounters);

  struct {
    void* out;
    const void* x;
    const void* y;
    int64_t n;
  } dotArgs{dout, dx, dy, n};
  MIMIC_CHECK(mimicLaunchKernel(dotFn, grid, &dotArgs, sizeof dotArgs, queue));
  MIMIC_CHECK(mimicQueueSynchronize(queue));
  mimicKernelCounters dotCounters;
  MIMIC_CHECK(mimicQueueGetKernelCounters(queue, &dotCounters));
  printCounters("dot", dotCounters);

  // Check against the host.
  std::vector<float> result(n);
  float dotResult = 0;
  MIMIC_CHECK(mimicMemcpy(result.data(), dy, bytes));
  MIMIC_CHECK(mimicMemcpy(&dotResult, dout, sizeof dotResult));
  int failures = 0;
  double want = 0, magnitude = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float expected = alpha * x[i] + y[i];
    if (result[i] != expected && ++failures <= 5) {
      std::fprintf(stderr, "saxpy: y[%lld] = %g, expected %g\n", static_cast<long long>(i),
                   result[i], expected);
    }
    want += static_cast<double>(x[i]) * expected;
    magnitude += std::fabs(static_cast<double>(x[i]) * expected);
  }
  const double error = std::fabs(dotResult - want);
  std::printf("dot = %.6g (host, in double: %.6g; |error| %.3g)\n", dotResult, want, error);
  if (error > 1e-5 * magnitude) {
    std::fprintf(stderr, "dot: error %g is larger than 1e-5 x %g\n", error, magnitude);
    ++failures;
  }

  // Timing: saxpy moves 3 x 4 bytes per element through HBM, and cannot beat its bandwidth.
  const double saxpyNs = double(saxpyCounters.endNs - saxpyCounters.startNs);
  const double floorNs = 3.0 * bytes / props.hbmBandwidthGBps;  // GB/s = bytes per ns
  std::printf("saxpy: %.1f GB/s of HBM traffic, %.0f%% of the %.0f GB/s peak\n",
              3.0 * bytes / saxpyNs, 100.0 * floorNs / saxpyNs, props.hbmBandwidthGBps);
  if (saxpyCounters.hbmBytesRead != 2 * bytes || saxpyCounters.hbmBytesWritten != bytes) {
    std::fprintf(stderr, "saxpy: unexpected HBM byte counts\n");
    ++failures;
  }
  if (saxpyNs < floorNs || saxpyCounters.flops != 2 * static_cast<uint64_t>(n)) {
    std::fprintf(stderr, "saxpy: faster than HBM allows, or wrong FLOP count\n");
    ++failures;
  }

  MIMIC_CHECK(mimicModuleUnload(mod));
  MIMIC_CHECK(mimicQueueDestroy(queue));
  MIMIC_CHECK(mimicMemFree(dx));
  MIMIC_CHECK(mimicMemFree(dy));
  MIMIC_CHECK(mimicMemFree(dout));
  if (failures > 0) {
    std::fprintf(stderr, "custom_kernel: %d check(s) failed\n", failures);
    return 1;
  }
  std::printf("custom_kernel: OK\n");
  return 0;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& e) {  // mimic::Error from MIMIC_CHECK, or a builder error
    std::fprintf(stderr, "custom_kernel: %s\n", e.what());
    return 1;
  }
}
