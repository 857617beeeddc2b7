#include "torch_backend/ops/reduce_split.h"

#include <algorithm>
#include <stdexcept>

#include "torch_backend/ops/kernel_cache.h"

namespace mimic::ops::detail {
namespace {

using isa::DType;

// Workgroups per compute unit a split aims for, each in its share of the scratchpad so that they
// are resident together: one's DMA latency hides behind the other's stream.
constexpr int64_t kWorkgroupsPerUnit = 2;
// Tiles per part at least, so that each part overlaps a load with a fold.
constexpr int64_t kTilesPerPart = 2;
// Tiles no smaller than this many elements: each tile costs host time in the interpreter.
constexpr int64_t kMinTileElements = 8192;

bool isArg(ReduceKind k) {
  return k == ReduceKind::ArgMax || k == ReduceKind::ArgMin;
}

// Elements per ns one workgroup reduces: the slower of its DMA engine and its vector pipe,
// which passes over each element once per instruction (conversion, map, reduction) at about a
// lane per cycle.
double unitRate(const mimicDeviceProperties& d, const ReduceShape& s, int64_t elementBytes) {
  int passes = 1 + (s.map != ReduceMap::Identity ? 1 : 0) +
               (s.map == ReduceMap::SquaredDifference ? 1 : 0) + (isArg(s.kind) ? 1 : 0);
  if (s.acc != s.in) passes += s.pairs() ? 2 : 1;
  return std::min(d.dmaBandwidthGBps / static_cast<double>(elementBytes),
                  d.vectorLanes * d.clockMHz / 1000 / passes);
}

}  // namespace

Plan splitPlan(const Dims& kept, const Dims& red, const ReduceShape& shape, int device) {
  Plan p = makePlan(kept, red, shape, device, false, kWorkgroupsPerUnit);
  const ReduceShape& s = p.shape;
  const int64_t units = computeUnits(device), workgroups = p.gridX() * p.gridY();
  const int64_t elementBytes =
      isa::dtypeSize(s.in) + (s.hasOther() ? isa::dtypeSize(s.otherType()) : 0);
  const double elements = static_cast<double>(p.keptElements() * product(p.red, 0, p.red.size()));
  // One pass streams through its workgroups; a split streams at what HBM achieves but pays a
  // second launch and the partials' round trip through HBM.
  const mimicDeviceProperties& d = deviceProperties(device);
  const double hbm = d.hbmBandwidthGBps * d.hbmEfficiency / static_cast<double>(elementBytes);
  const double unit = unitRate(d, s, elementBytes);
  const double onePassNs = elements / std::min(hbm, static_cast<double>(workgroups) * unit);
  const double splitNs = elements / std::min(hbm, static_cast<double>(units) * unit) +
                         static_cast<double>(d.commandLatencyNs + 2 * d.hbmLatencyNs);
  if (workgroups >= units || splitNs >= onePassNs) return p;
  const int64_t wanted = ceilDiv(kWorkgroupsPerUnit * units, workgroups);
  const int64_t loops = product(p.red, 0, s.loopRed), redOuter = p.red[s.loopRed].size;
  const int64_t tileRow = p.keptCap * p.innerRed();  // elements of a tile per unit of rc
  const int64_t smallest = std::min(p.rc, ceilDiv(kMinTileElements, tileRow));
  const int64_t chunks = ceilDiv(kTilesPerPart * wanted, loops);
  setRedChunk(p, std::max(smallest, ceilDiv(redOuter, chunks)));
  p.parts = std::max<int64_t>(1, std::min(wanted, p.tiles() / kTilesPerPart));
  return p;
}

void reduceInParts(const LaunchContext& ctx, const ReduceCall& call, const Plan& p,
                   const Workspace& workspace) {
  const bool arg = isArg(call.kind);
  const DType partialType = arg ? DType::I64 : p.shape.acc;
  const int64_t kept = p.keptElements();
  const int64_t partialBytes = p.parts * kept * isa::dtypeSize(partialType);
  const int64_t valuesBytes = arg ? p.parts * kept * isa::dtypeSize(p.shape.in) : 0;
  auto* partials =
      static_cast<uint8_t*>(workspace(static_cast<size_t>(partialBytes + valuesBytes)));
  if (partials == nullptr) throw std::invalid_argument("reduce: the workspace gave no memory");
  uint8_t* values = partials + partialBytes;

  // The partials: [part][kept dims], dense, in the accumulation type (indices and extremes for
  // ArgMax / ArgMin).
  Plan first = p;
  first.shape.out = partialType;
  first.shape.divide = first.shape.sqrt = false;
  first.shape.storeValues = arg;
  std::vector<int64_t> sizes{p.parts}, strides{kept}, outSizes{1}, outStrides{0};
  int64_t dense = 1;
  for (auto d = first.kept.rbegin(); d != first.kept.rend(); ++d) {
    d->out = dense;
    dense *= d->size;
  }
  for (size_t i = 0; i < p.kept.size(); ++i) {
    sizes.push_back(p.kept[i].size);
    strides.push_back(first.kept[i].out);
    outSizes.push_back(p.kept[i].size);
    outStrides.push_back(p.kept[i].out);
  }
  LaunchOperands operands;
  operands.out = partials;
  operands.in = call.in.data;
  operands.other = call.other.data;
  operands.values = values;
  operands.splitStride = kept * isa::dtypeSize(partialType);
  launchPlan(ctx, first, operands);

  ReduceCall combine;
  combine.kind = call.kind;
  combine.gather = arg;
  combine.divisor = call.divisor;
  combine.sqrt = call.sqrt;
  combine.dims = {0};
  combine.out = {call.out.data, call.out.dtype, outSizes, outStrides};
  if (arg) {
    combine.in = {values, p.shape.in, sizes, strides};
    combine.other = {partials, DType::I64, sizes, strides};
  } else {
    combine.in = {partials, partialType, sizes, strides};
  }
  runReduce(ctx, combine, nullptr);
}

}  // namespace mimic::ops::detail
