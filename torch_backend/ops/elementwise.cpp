#include "torch_backend/ops/elementwise.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include "torch_backend/ops/elementwise_emit.h"
#include "torch_backend/ops/elementwise_kernel.h"
#include "torch_backend/ops/elementwise_program.h"
#include "torch_backend/ops/elementwise_rand.h"
#include "torch_backend/ops/kernel_cache.h"

namespace mimic::ops {
namespace {

struct CompiledProgram {
  Program program;
  int temps;
};

// Parsed once per program text and dtypes; entries stay for the life of the process.
const CompiledProgram& compiledProgram(const std::string& key, const std::string& text,
                                       isa::DType compute, const std::vector<isa::DType>& inputs,
                                       isa::DType out, size_t numScalars) {
  static std::mutex m;
  static std::unordered_map<std::string, std::unique_ptr<CompiledProgram>> programs;
  std::lock_guard<std::mutex> lock(m);
  auto found = programs.find(key);
  if (found != programs.end()) return *found->second;
  Program program = parseProgram(text, compute, inputs, out, numScalars);
  const int temps = countTemps(program);
  auto& entry = programs[key];
  entry = std::make_unique<CompiledProgram>(CompiledProgram{std::move(program), temps});
  return *entry;
}

void checkShapes(const TensorView& out, const std::vector<TensorView>& inputs,
                 const std::string& program) {
  auto where = [&] { return " (elementwise program '" + program + "')"; };
  if (out.strides.size() != out.sizes.size()) {
    throw std::invalid_argument("elementwise: out has " + std::to_string(out.sizes.size()) +
                                " sizes but " + std::to_string(out.strides.size()) + " strides" +
                                where());
  }
  for (int64_t s : out.sizes) {
    if (s < 0) throw std::invalid_argument("elementwise: negative size in out" + where());
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorView& in = inputs[i];
    if (in.sizes != out.sizes || in.strides.size() != in.sizes.size()) {
      throw std::invalid_argument("elementwise: input " + std::to_string(i) +
                                  " does not have out's rank and sizes, with one stride per dim" +
                                  where());
    }
  }
}

// The op's dims after dropping size-1 dims and merging neighbours that are contiguous with
// each other in every operand, innermost first. Row-major element order is unchanged.
struct Coalesced {
  std::vector<int64_t> sizes;
  std::vector<std::vector<int64_t>> strides;  // [operand][dim], in elements
};

Coalesced coalesce(const std::vector<const TensorView*>& operands) {
  Coalesced c;
  c.strides.resize(operands.size());
  const std::vector<int64_t>& sizes = operands[0]->sizes;
  for (int d = static_cast<int>(sizes.size()) - 1; d >= 0; --d) {
    if (sizes[d] == 1) continue;
    bool merge = !c.sizes.empty();
    for (size_t j = 0; j < operands.size() && merge; ++j) {
      merge = operands[j]->strides[d] == c.strides[j].back() * c.sizes.back();
    }
    if (merge) {
      c.sizes.back() *= sizes[d];
      continue;
    }
    c.sizes.push_back(sizes[d]);
    for (size_t j = 0; j < operands.size(); ++j) c.strides[j].push_back(operands[j]->strides[d]);
  }
  if (c.sizes.empty()) {  // one element
    c.sizes.push_back(1);
    for (auto& s : c.strides) s.push_back(0);
  }
  return c;
}

int64_t roundUp(int64_t value, int64_t quantum) {
  return (value + quantum - 1) / quantum * quantum;
}

// How the coalesced dims are cut into tiles (see elementwise_kernel.h).
struct TilePlan {
  int split = 0;
  int64_t capacity = 0;  // elements per tile at most
  int64_t inner = 1;     // elements of dims 0..split-1
  int64_t extent = 0;    // elements of dim split per tile
  int64_t chunks = 0;    // tiles along dim split
  int64_t tiles = 0;
};

// Tiles of about numel / (2 x units) elements, so that every unit gets work and overlaps its
// loads with compute; but at least 8192 elements, because each tile and each workgroup costs
// host time in the interpreter while a small op's simulated time is mostly launch latency.
TilePlan planTiles(const Coalesced& dims, int64_t numel, int64_t maxCapacity, int units) {
  TilePlan plan;
  plan.capacity = roundUp((numel + 2 * units - 1) / (2 * units), 64);
  plan.capacity = std::max(plan.capacity, std::min<int64_t>(maxCapacity, 8192));
  plan.capacity = std::min({plan.capacity, maxCapacity, roundUp(numel, 64)});
  const int rank = static_cast<int>(dims.sizes.size());
  const int maxSplit = std::min(rank, isa::kDmaDims) - 1;
  while (plan.split < maxSplit && plan.inner * dims.sizes[plan.split] <= plan.capacity) {
    plan.inner *= dims.sizes[plan.split++];
  }
  const int64_t size = dims.sizes[plan.split];
  plan.extent = std::min(size, plan.capacity / plan.inner);
  plan.chunks = (size + plan.extent - 1) / plan.extent;
  plan.tiles = plan.chunks;
  for (int d = plan.split + 1; d < rank; ++d) plan.tiles *= dims.sizes[d];
  return plan;
}

std::vector<int64_t> kernelArgs(const KernelPrograms& programs, const IterationClass& iteration,
                                const Coalesced& dims, const TilePlan& plan,
                                const std::vector<const TensorView*>& operands,
                                const std::vector<ScalarArg>& scalars, RandomKey random) {
  const ElementwiseArgs a = elementwiseArgs(programs, iteration, scalars.size());
  std::vector<int64_t> args(a.total);
  args[ElementwiseArgs::kTiles] = plan.tiles;
  args[ElementwiseArgs::kChunks] = plan.chunks;
  args[ElementwiseArgs::kTileExtent] = plan.extent;
  args[ElementwiseArgs::kSplitSize] = dims.sizes[plan.split];
  args[ElementwiseArgs::kInner] = plan.inner;
  args[ElementwiseArgs::kCapacity] = plan.capacity;
  args[ElementwiseArgs::kRandOffset] = static_cast<int64_t>(random.offset);
  int64_t dense = 1;
  for (int d = 0; d < iteration.rank; ++d) {
    args[ElementwiseArgs::kSizes + d] = dims.sizes[d];
    if (d <= plan.split) args[a.spElements + d] = dense;
    if (d < plan.split) dense *= dims.sizes[d];
  }
  for (size_t j = 0; j < operands.size(); ++j) {
    const int base = a.operands + static_cast<int>(j) * (iteration.rank + 1);
    const int64_t size = isa::dtypeSize(operands[j]->dtype);
    args[base] = reinterpret_cast<int64_t>(operands[j]->data);
    for (int d = 0; d < iteration.rank; ++d) args[base + 1 + d] = dims.strides[j][d] * size;
  }
  for (size_t s = 0; s < scalars.size(); ++s) {
    args[a.scalars + s] = scalarBits(scalars[s], programs.front()->compute);
  }
  // Each program numbers its own streams, as it would in a launch of its own.
  int key = a.randKeys;
  for (const Program* program : programs) {
    for (int n = 0; n < program->numRand; ++n) args[key++] = randKey(random.seed, n);
  }
  return args;
}

// The program's cache key (text, compute, out and input dtypes, scalar count) and its parse.
const CompiledProgram& programFor(const std::string& text, isa::DType compute,
                                  const TensorView& out, const std::vector<TensorView>& inputs,
                                  size_t numScalars, std::string* key) {
  std::vector<isa::DType> dtypes;
  *key = text + "|" + isa::dtypeName(compute) + "|" + isa::dtypeName(out.dtype) + "|" +
         std::to_string(numScalars) + "|";
  for (const TensorView& in : inputs) {
    dtypes.push_back(in.dtype);
    *key += isa::dtypeName(in.dtype) + std::string(",");
  }
  return compiledProgram(*key, text, compute, dtypes, out.dtype, numScalars);
}

// One launch of `programs` (their parses and cache keys), program j writing outs[j]; every
// out has outs[0]'s sizes and every input those sizes too (checked by the callers).
void launchPrograms(const LaunchContext& ctx, const std::vector<TensorView>& outs,
                    const std::vector<const CompiledProgram*>& compiled, const std::string& key,
                    const std::vector<TensorView>& inputs, const std::vector<ScalarArg>& scalars,
                    RandomKey random) {
  KernelPrograms programs;
  int temps = 0;
  unsigned used = 0;
  const unsigned real = (1u << inputs.size()) - 1;  // the others are earlier outputs
  for (const CompiledProgram* c : compiled) {
    programs.push_back(&c->program);
    temps = std::max(temps, c->temps);
    used |= c->program.usedInputs & real;
  }
  std::vector<const TensorView*> operands;
  for (const TensorView& out : outs) operands.push_back(&out);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (used >> i & 1u) operands.push_back(&inputs[i]);
  }
  const Coalesced dims = coalesce(operands);
  IterationClass iteration;
  iteration.rank = static_cast<int>(dims.sizes.size());
  for (size_t i = 0, op = outs.size(); i < inputs.size(); ++i) {
    if (!(used >> i & 1u)) continue;
    const auto& s = dims.strides[op++];
    if (std::all_of(s.begin(), s.end(), [](int64_t x) { return x == 0; })) {
      iteration.uniformInputs |= 1u << i;
    }
  }
  const KernelLayout layout =
      planLayout(programs, temps, iteration.uniformInputs, scratchpadBytes(ctx.device));
  const int units = computeUnits(ctx.device);
  const TilePlan plan = planTiles(dims, outs[0].numel(), layout.capacity, units);
  iteration.split = plan.split;

  const std::string kernelKey = "elementwise|" + key + "|r" + std::to_string(iteration.rank) +
                                "|p" + std::to_string(plan.split) + "|u" +
                                std::to_string(iteration.uniformInputs);
  const KernelRef fn = cachedKernel(ctx.device, kernelKey, [&] {
    return buildElementwiseKernel(programs, iteration, layout, scalars.size());
  });
  const uint32_t grid = static_cast<uint32_t>(std::min<int64_t>(plan.tiles, units));
  launch(ctx, fn, {grid, 1, 1},
         kernelArgs(programs, iteration, dims, plan, operands, scalars, random));
}

}  // namespace

void elementwise(const LaunchContext& ctx, const TensorView& out,
                 const std::vector<TensorView>& inputs, const std::string& text, isa::DType compute,
                 const std::vector<ScalarArg>& scalars, RandomKey random) {
  std::string key;
  const CompiledProgram& compiled = programFor(text, compute, out, inputs, scalars.size(), &key);
  checkShapes(out, inputs, text);
  if (out.numel() == 0) return;
  launchPrograms(ctx, {out}, {&compiled}, key, inputs, scalars, random);
}

void elementwiseMulti(const LaunchContext& ctx, const std::vector<TensorView>& outs,
                      const std::vector<TensorView>& inputs, const std::vector<std::string>& texts,
                      isa::DType compute, const std::vector<ScalarArg>& scalars, RandomKey random) {
  if (outs.empty() || outs.size() != texts.size() ||
      outs.size() > static_cast<size_t>(kMaxElementwiseOutputs)) {
    throw std::invalid_argument("elementwiseMulti: " + std::to_string(outs.size()) +
                                " outputs for " + std::to_string(texts.size()) +
                                " programs (1 to " + std::to_string(kMaxElementwiseOutputs) +
                                " of each, as many outputs as programs)");
  }
  std::vector<const CompiledProgram*> compiled;
  std::string key = "multi";
  // Program j reads output i < j as x<inputs.size() + i>, while inputs fit in the program.
  std::vector<TensorView> readable = inputs;
  for (size_t j = 0; j < outs.size(); ++j) {
    if (outs[j].sizes != outs[0].sizes) {
      throw std::invalid_argument("elementwiseMulti: output " + std::to_string(j) + " (program '" +
                                  texts[j] + "') does not have output 0's sizes");
    }
    std::string programKey;
    compiled.push_back(
        &programFor(texts[j], compute, outs[j], readable, scalars.size(), &programKey));
    checkShapes(outs[j], inputs, texts[j]);
    key += "|" + programKey;
    if (readable.size() < static_cast<size_t>(kMaxElementwiseInputs)) readable.push_back(outs[j]);
  }
  if (outs[0].numel() == 0) return;
  launchPrograms(ctx, outs, compiled, key, inputs, scalars, random);
}

void elementwiseList(const LaunchContext& ctx, const std::vector<TensorView>& outs,
                     const std::vector<std::vector<TensorView>>& inputs, const std::string& text,
                     isa::DType compute, const std::vector<ScalarArg>& scalars) {
  if (outs.empty() || inputs.size() != outs.size()) {
    throw std::invalid_argument("elementwiseList: " + std::to_string(outs.size()) +
                                " outputs for " + std::to_string(inputs.size()) + " input lists");
  }
  std::string key;
  const CompiledProgram& compiled =
      programFor(text, compute, outs[0], inputs[0], scalars.size(), &key);
  const Program& program = compiled.program;
  if (program.usesCounter()) {
    throw std::invalid_argument("elementwiseList: program '" + text + "' uses rand or idx");
  }
  std::vector<size_t> members;  // the non-empty entries
  int64_t total = 0, largest = 0;
  for (size_t j = 0; j < outs.size(); ++j) {
    auto where = [&] {
      return "elementwiseList: entry " + std::to_string(j) + " (program '" + text + "')";
    };
    if (inputs[j].size() != inputs[0].size() || !outs[j].isContiguous() ||
        outs[j].dtype != outs[0].dtype) {
      throw std::invalid_argument(where() + " is not contiguous or differs from entry 0");
    }
    for (size_t i = 0; i < inputs[j].size(); ++i) {
      const TensorView& in = inputs[j][i];
      if (in.dtype != inputs[0][i].dtype || in.numel() != outs[j].numel() || !in.isContiguous()) {
        throw std::invalid_argument(
            where() + ": input " + std::to_string(i) +
            " is not a contiguous tensor of out's size and entry 0's dtype");
      }
    }
    const int64_t n = outs[j].numel();
    if (n == 0) continue;
    members.push_back(j);
    total += n;
    largest = std::max(largest, n);
  }
  if (members.empty()) return;

  const KernelPrograms programs{&program};
  const KernelLayout layout = planLayout(programs, compiled.temps, 0, scratchpadBytes(ctx.device));
  const int units = computeUnits(ctx.device);
  // Tiles sized for the whole list as planTiles sizes them for one tensor of its total size.
  int64_t capacity = roundUp((total + 2 * units - 1) / (2 * units), 64);
  capacity = std::max(capacity, std::min<int64_t>(layout.capacity, 8192));
  capacity = std::min({capacity, layout.capacity, roundUp(largest, 64)});

  for (size_t first = 0; first < members.size(); first += kMaxListSegments) {
    const int segments = static_cast<int>(std::min(members.size() - first, kMaxListSegments));
    IterationClass iteration;
    iteration.segments = segments;
    const ElementwiseArgs a = elementwiseArgs(programs, iteration, scalars.size());
    std::vector<int64_t> args(a.total);
    int64_t tiles = 0;
    for (int s = 0; s < segments; ++s) {
      const size_t j = members[first + s];
      const int64_t n = outs[j].numel(), chunks = (n + capacity - 1) / capacity;
      int64_t* block = args.data() + s * a.segmentBlock;
      block[ElementwiseArgs::kTiles] = chunks;
      block[ElementwiseArgs::kChunks] = chunks;
      block[ElementwiseArgs::kTileExtent] = std::min(capacity, n);
      block[ElementwiseArgs::kSplitSize] = n;
      block[ElementwiseArgs::kInner] = 1;
      block[ElementwiseArgs::kCapacity] = capacity;
      block[ElementwiseArgs::kSizes] = n;
      block[a.spElements] = 1;
      std::vector<const TensorView*> operands{&outs[j]};
      for (size_t i = 0; i < inputs[j].size(); ++i) {
        if (program.usedInputs >> i & 1u) operands.push_back(&inputs[j][i]);
      }
      for (size_t o = 0; o < operands.size(); ++o) {
        block[a.operands + 2 * o] = reinterpret_cast<int64_t>(operands[o]->data);
        block[a.operands + 2 * o + 1] = isa::dtypeSize(operands[o]->dtype);
      }
      args[a.tileStarts + s] = tiles;
      tiles += chunks;
    }
    args[a.totalTiles] = tiles;
    for (size_t s = 0; s < scalars.size(); ++s) {
      args[a.scalars + s] = scalarBits(scalars[s], program.compute);
    }
    const std::string kernelKey = "elementwise_list|" + key + "|s" + std::to_string(segments);
    const KernelRef fn = cachedKernel(ctx.device, kernelKey, [&] {
      return buildElementwiseKernel(programs, iteration, layout, scalars.size());
    });
    const uint32_t grid = static_cast<uint32_t>(std::min<int64_t>(tiles, units));
    launch(ctx, fn, {grid, 1, 1}, args);
  }
}

}  // namespace mimic::ops
