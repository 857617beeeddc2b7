#include "reduce_kernel.h"

#include <array>
#include <string>

#include "sim/isa/builder.h"

namespace mimic::coll {
namespace {

using isa::BinaryOp;
using isa::DType;
using isa::KernelBuilder;
using isa::Reg;
using isa::ScalarOp;

constexpr const char* kTypeNames[kNumDataTypes] = {"f32", "f16", "bf16", "i32", "i64", "u8"};
constexpr DType kTypes[kNumDataTypes] = {DType::F32, DType::F16, DType::BF16,
                                         DType::I32, DType::I64, DType::U8};
constexpr BinaryOp kOps[4] = {BinaryOp::Add, BinaryOp::Mul, BinaryOp::Min, BinaryOp::Max};
constexpr const char* kOpNames[4] = {"sum", "prod", "min", "max"};

// One workgroup per tile: loads its tile of a (and b), applies `body`, stores to dst.
template <typename Body>
isa::Function tileKernel(const std::string& name, mimicDataType type, uint64_t tile, bool twoInputs,
                         Body body) {
  const DType t = kTypes[type];
  const int64_t size = int64_t(dataTypeSize(type));
  const int64_t tileBytes = int64_t(tile) * size;
  KernelBuilder k(name, 4);
  Reg dst = k.arg(0), a = k.arg(1), b = k.arg(2), count = k.arg(3);
  Reg start = k.workgroupId(0);
  k.alu(ScalarOp::Mul, start, start, int64_t(tile));
  Reg n = k.reg();
  k.alu(ScalarOp::Sub, n, count, start);
  k.alu(ScalarOp::Min, n, n, int64_t(tile));
  Reg offset = k.reg();
  k.alu(ScalarOp::Mul, offset, start, size);
  for (Reg base : {dst, a, b}) k.alu(ScalarOp::Add, base, base, offset);
  isa::Desc d = k.desc();
  Reg stride = k.li(size);
  k.dmaDim(d, t, 0, n, stride, stride);
  Reg spA = k.li(0), spB = k.li(tileBytes), spOut = k.li(2 * tileBytes);
  Reg ta = k.dmaLoad(spA, a, d);
  if (twoInputs) {
    Reg tb = k.dmaLoad(spB, b, d);
    k.wait(tb);
  }
  k.wait(ta);
  body(k, t, spOut, spA, spB, n);
  Reg ts = k.dmaStore(dst, spOut, d);
  k.wait(ts);
  return k.finish();
}

}  // namespace

size_t dataTypeSize(mimicDataType type) {
  static constexpr size_t kSizes[kNumDataTypes] = {4, 2, 2, 4, 8, 1};
  return kSizes[type];
}

uint64_t tileElements(size_t scratchpadBytes, mimicDataType type) {
  return scratchpadBytes / 3 / dataTypeSize(type) / 64 * 64;
}

const char* reduceKernelName(mimicDataType type, mimicReduceOp op) {
  static const auto kNames = [] {
    std::array<std::array<std::string, 4>, kNumDataTypes> names;
    for (int t = 0; t < kNumDataTypes; ++t)
      for (int o = 0; o < 4; ++o)
        names[t][o] = std::string("coll_") + kOpNames[o] + "_" + kTypeNames[t];
    return names;
  }();
  return kNames[type][op == mimicAvg ? mimicSum : op].c_str();
}

const char* scaleKernelName(mimicDataType type) {
  static const auto kNames = [] {
    std::array<std::string, kNumDataTypes> names;
    for (int t = 0; t < kNumDataTypes; ++t) names[t] = std::string("coll_avg_") + kTypeNames[t];
    return names;
  }();
  return kNames[type].c_str();
}

isa::Module buildCollectiveModule(size_t scratchpadBytes, int ranks) {
  isa::Module module;
  for (int ti = 0; ti < kNumDataTypes; ++ti) {
    const auto type = mimicDataType(ti);
    const uint64_t tile = tileElements(scratchpadBytes, type);
    for (int o = 0; o < 4; ++o) {
      module.functions.push_back(tileKernel(reduceKernelName(type, mimicReduceOp(o)), type, tile,
                                            true,
                                            [&](KernelBuilder& k, DType t, Reg out, Reg x, Reg y,
                                                Reg n) { k.binary(kOps[o], t, out, x, y, n); }));
    }
    module.functions.push_back(
        tileKernel(scaleKernelName(type), type, tile, false,
                   [&](KernelBuilder& k, DType t, Reg out, Reg x, Reg, Reg n) {
                     k.binaryScalar(BinaryOp::Div, t, out, x, double(ranks), n);
                   }));
  }
  return module;
}

}  // namespace mimic::coll
