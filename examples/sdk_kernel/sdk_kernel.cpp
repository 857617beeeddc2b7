// sdk_kernel: two kernels, one written with the builder (mimic/isa/builder.h) and one in
// assembler text (mimic/isa/assembler.h), loaded as one module and launched through the driver
// API, with everything from an installed SDK (find_package(mimic)).
//
//   scale  y[i] = alpha * x[i]   builder; grid-stride loop over tiles, any n
//   add    z[i] = x[i] + y[i]    assembler; 256 elements per workgroup, n a multiple of 256
//
// The results are compared with the host's, exactly: one float multiply or add per element.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <vector>

#include <mimic/isa/assembler.h>
#include <mimic/isa/builder.h>
#include <mimic/isa/module_image.h>
#include <mimic/mimic.hpp>

namespace {

using namespace mimic::isa;

constexpr int64_t kTile = 1024;  // f32 elements per tile

Function scale() {
  KernelBuilder k("scale", 4);  // y, x, n, alpha (f32 bits)
  Reg y = k.arg(0), x = k.arg(1), n = k.arg(2), alpha = k.arg(3);
  Reg start = k.reg(), step = k.reg(), count = k.reg(), offset = k.reg(), inside = k.reg();
  Reg four = k.li(4), sp = k.li(0), xa = k.reg(), ya = k.reg();
  Desc d = k.desc();
  Label top = k.label(), done = k.label();
  k.alu(ScalarOp::Mul, start, k.workgroupId(0), kTile);
  k.alu(ScalarOp::Mul, step, k.gridDim(0), kTile);
  k.bind(top);
  k.cmp(Cond::Lt, inside, start, n);
  k.brz(inside, done);
  k.alu(ScalarOp::Sub, count, n, start);
  k.alu(ScalarOp::Min, count, count, kTile);  // the last tile may be short
  k.alu(ScalarOp::Mul, offset, start, 4);
  k.alu(ScalarOp::Add, xa, x, offset);
  k.alu(ScalarOp::Add, ya, y, offset);
  k.dmaDim(d, DType::F32, 0, count, four, four);
  k.wait(k.dmaLoad(sp, xa, d));
  k.binaryScalar(BinaryOp::Mul, DType::F32, sp, sp, alpha, count);
  k.wait(k.dmaStore(ya, sp, d));
  k.alu(ScalarOp::Add, start, start, step);
  k.br(top);
  k.bind(done);
  return k.finish();
}

constexpr const char* kAddSource = R"(
.kernel add 24                    # z, x, y
  arg s1, 0
  arg s2, 1
  arg s3, 2
  wgid s4, 0
  salu.mul s5, s4, #1024          # 256 floats per workgroup
  salu.add s1, s1, s5
  salu.add s2, s2, s5
  salu.add s3, s3, s5
  li s6, 256
  li s7, 4
  dma.desc.f32 d0, 0, s6, s7, s7
  li s8, 0
  li s9, 1024
  dma.load s10, s8, s2, d0
  dma.load s11, s9, s3, d0
  wait s10
  wait s11
  vbin.add.f32 s8, s8, s9, s6
  dma.store s12, s1, s8, d0
  wait s12
  exit
.end
)";

uint64_t f32Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

int run() {
  MIMIC_CHECK(mimicInitWithPreset(0, "tiny", nullptr));
  Module module = assemble(kAddSource);
  module.functions.insert(module.functions.begin(), scale());
  const std::vector<uint8_t> image = encodeImage(module);
  mimicModule mod;
  mimicFunction scaleFn, addFn;
  MIMIC_CHECK(mimicModuleLoad(0, image.data(), image.size(), &mod));
  MIMIC_CHECK(mimicModuleGetFunction(mod, "scale", &scaleFn));
  MIMIC_CHECK(mimicModuleGetFunction(mod, "add", &addFn));

  const int64_t n = 256 * 37;  // 9 scale tiles, the last one short
  const float alpha = -1.75f;
  std::vector<float> x(n), y(n), z(n);
  for (int64_t i = 0; i < n; ++i) x[i] = float(i % 101) * 0.5f - 20.0f;
  const size_t bytes = n * sizeof(float);
  void *dx, *dy, *dz;
  MIMIC_CHECK(mimicMemAlloc(0, bytes, &dx));
  MIMIC_CHECK(mimicMemAlloc(0, bytes, &dy));
  MIMIC_CHECK(mimicMemAlloc(0, bytes, &dz));
  MIMIC_CHECK(mimicMemcpy(dx, x.data(), bytes));

  struct {
    void* y;
    const void* x;
    int64_t n;
    uint64_t alpha;
  } scaleArgs{dy, dx, n, f32Bits(alpha)};
  MIMIC_CHECK(
      mimicLaunchKernel(scaleFn, mimicDim3{4, 1, 1}, &scaleArgs, sizeof scaleArgs, nullptr));
  struct {
    void* z;
    const void* x;
    const void* y;
  } addArgs{dz, dx, dy};
  const mimicDim3 addGrid{uint32_t(n / 256), 1, 1};
  MIMIC_CHECK(mimicLaunchKernel(addFn, addGrid, &addArgs, sizeof addArgs, nullptr));
  MIMIC_CHECK(mimicMemcpy(y.data(), dy, bytes));
  MIMIC_CHECK(mimicMemcpy(z.data(), dz, bytes));

  int failures = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float wantY = alpha * x[i];
    const float wantZ = x[i] + wantY;
    if ((y[i] != wantY || z[i] != wantZ) && ++failures <= 5) {
      std::fprintf(stderr, "element %lld: y = %g, z = %g; expected %g, %g\n", (long long)i, y[i],
                   z[i], wantY, wantZ);
    }
  }
  MIMIC_CHECK(mimicModuleUnload(mod));
  MIMIC_CHECK(mimicMemFree(dx));
  MIMIC_CHECK(mimicMemFree(dy));
  MIMIC_CHECK(mimicMemFree(dz));
  if (failures > 0) {
    std::fprintf(stderr, "sdk_kernel: %d element(s) wrong\n", failures);
    return 1;
  }
  std::printf("sdk_kernel: OK (%lld elements, builder and assembler kernels)\n", (long long)n);
  return 0;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& e) {  // mimic::Error, or a builder or assembler error
    std::fprintf(stderr, "sdk_kernel: %s\n", e.what());
    return 1;
  }
}
