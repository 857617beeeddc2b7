#include "torch_backend/ops/index_plan.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>

#include "mimic/mimic.hpp"
#include "torch_backend/ops/kernel_cache.h"

namespace mimic::ops::detail {
namespace {

constexpr int64_t kMaxGridDim = 65535;
// Tiles one workgroup goes through at most: the timing model's cost of a workgroup's waits grows
// with all the DMAs it has issued, so long serial runs are split into launches.
constexpr int64_t kTilesPerWorkgroup = 4;
constexpr int64_t kMinSerialChunk = 1024;  // elements
constexpr int64_t kOrderedTile = 128;      // items

struct DeviceFacts {
  int units;
  double bytesInFlight;  // per compute unit, to keep its share of HBM bandwidth busy
};

DeviceFacts deviceFacts(int device) {
  static std::mutex m;
  static std::map<int, DeviceFacts> facts;
  std::lock_guard<std::mutex> lock(m);
  auto found = facts.find(device);
  if (found != facts.end()) return found->second;
  mimicDeviceProperties props{};
  MIMIC_CHECK(mimicDeviceGetProperties(device, &props));
  const int units = std::max(1, props.computeUnits);
  // GB/s are bytes per ns: this CU's share of the bandwidth x the latency.
  const double inFlight = props.hbmBandwidthGBps / units * double(props.hbmLatencyNs);
  return facts[device] = {units, inFlight};
}

int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

int64_t product(const std::vector<int64_t>& v, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= v[i];
  return p;
}

// Drops size-1 dims and merges a dim into the one outside it when every stride set allows it.
void collapse(std::vector<int64_t>& sizes, const std::vector<std::vector<int64_t>*>& sets) {
  std::vector<int64_t> outSizes;
  std::vector<std::vector<int64_t>> outSets(sets.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    bool merge = !outSizes.empty();
    for (size_t s = 0; merge && s < sets.size(); ++s) {
      merge = outSets[s].back() == (*sets[s])[d] * sizes[d];
    }
    if (merge) outSizes.back() *= sizes[d];
    if (!merge) outSizes.push_back(sizes[d]);
    for (size_t s = 0; s < sets.size(); ++s) {
      if (merge) outSets[s].back() = (*sets[s])[d];
      if (!merge) outSets[s].push_back((*sets[s])[d]);
    }
  }
  sizes = std::move(outSizes);
  for (size_t s = 0; s < sets.size(); ++s) *sets[s] = std::move(outSets[s]);
}

void* shifted(const void* p, int64_t elements, isa::DType t) {
  return static_cast<char*>(const_cast<void*>(p)) + elements * isa::dtypeSize(t);
}

void normalize(IndexedCopy& c) {
  std::vector<std::vector<int64_t>*> items = {&c.indexed.itemStrides, &c.item.itemStrides};
  for (IndexOperand& index : c.indices) items.push_back(&index.itemStrides);
  collapse(c.itemSizes, items);
  if (c.itemSizes.empty()) {
    c.itemSizes = {1};
    for (std::vector<int64_t>* s : items) *s = {0};
  }
  collapse(c.blockSizes, {&c.indexed.blockStrides, &c.item.blockStrides});
}

// The copy without its outermost item dim, at position i of it.
IndexedCopy itemSlice(const IndexedCopy& c, int64_t i) {
  IndexedCopy s = c;
  s.itemSizes.erase(s.itemSizes.begin());
  for (DataOperand* d : {&s.indexed, &s.item}) {
    d->data = shifted(d->data, i * d->itemStrides.front(), c.dtype);
    d->itemStrides.erase(d->itemStrides.begin());
  }
  for (IndexOperand& index : s.indices) {
    index.data = shifted(index.data, i * index.itemStrides.front(), index.dtype);
    index.itemStrides.erase(index.itemStrides.begin());
  }
  return s;
}

// The copy without its outermost block dim, at position i of it.
IndexedCopy blockSlice(const IndexedCopy& c, int64_t i) {
  IndexedCopy s = c;
  s.blockSizes.erase(s.blockSizes.begin());
  for (DataOperand* d : {&s.indexed, &s.item}) {
    d->data = shifted(d->data, i * d->blockStrides.front(), c.dtype);
    d->blockStrides.erase(d->blockStrides.begin());
  }
  return s;
}

// Index tile capacity: the index work tiles take about a sixth of the scratchpad.
int indexTile(size_t scratchpad, const std::vector<isa::DType>& types) {
  int64_t perItem = 4 * 8 + 2;
  for (isa::DType t : types) perItem += isa::dtypeSize(t);
  int tile = 16;
  while (tile < 1024 && int64_t(tile) * 2 * perItem * 6 <= int64_t(scratchpad)) tile *= 2;
  return tile;
}

// The arguments every launch of the copy shares; launchFitted sets the item ranges.
std::vector<int64_t> sharedArgs(const IndexedCopy& c, const IndexArgs& a, int64_t chunk,
                                int64_t tileItems, int64_t window) {
  const int64_t e = isa::dtypeSize(c.dtype);
  const size_t r = c.itemSizes.size(), b = c.blockSizes.size();
  const int64_t inner = b > 0 ? product(c.blockSizes, 1, b) : 1;
  std::vector<int64_t> args(a.count, 0);
  args[a.indexedBase] = reinterpret_cast<int64_t>(c.indexed.data);
  args[a.itemBase] = reinterpret_cast<int64_t>(c.item.data);
  for (size_t i = 0; i < r; ++i) {
    const size_t d = r - 1 - i;
    if (i > 0) args[a.itemSize[i]] = c.itemSizes[d];
    args[a.indexedItemStride[i]] = c.indexed.itemStrides[d] * e;
    args[a.itemItemStride[i]] = c.item.itemStrides[d] * e;
    for (size_t t = 0; t < c.indices.size(); ++t) {
      args[a.indexItemStride[t][i]] =
          c.indices[t].itemStrides[d] * isa::dtypeSize(c.indices[t].dtype);
    }
  }
  for (size_t i = 0; i < b; ++i) {
    const size_t d = b - 1 - i;
    args[a.blockSize[i]] = c.blockSizes[d];
    args[a.indexedBlockStride[i]] = c.indexed.blockStrides[d] * e;
    args[a.itemBlockStride[i]] = c.item.blockStrides[d] * e;
  }
  for (size_t t = 0; t < c.indices.size(); ++t) {
    args[a.indexBase[t]] = reinterpret_cast<int64_t>(c.indices[t].data);
    args[a.indexDimSize[t]] = c.indices[t].dimSize;
    args[a.indexDimStride[t]] = c.indices[t].dimStride * e;
  }
  args[a.chunk] = chunk;
  args[a.innerElements] = inner;
  args[a.tileItems] = tileItems;
  args[a.window] = window;
  args[a.alphaBits] = scalarBits(c.alpha, c.dtype);
  return args;
}

void launchFitted(const LaunchContext& ctx, const IndexedCopy& c, const IndexKernelKey& key,
                  int64_t chunk, int64_t tileItems) {
  const DeviceFacts facts = deviceFacts(ctx.device);
  const int64_t d0 = c.itemSizes.back();
  const int64_t rows = product(c.itemSizes, 0, c.itemSizes.size() - 1);
  const size_t b = c.blockSizes.size();
  const int64_t slab = chunk * (b > 0 ? product(c.blockSizes, 1, b) : 1) * isa::dtypeSize(c.dtype);
  const int64_t window =
      std::min(tileItems, std::max<int64_t>(4, int64_t(facts.bytesInFlight / slab) + 1));
  const IndexArgs a = indexArgs(key);
  std::vector<int64_t> args = sharedArgs(c, a, chunk, tileItems, window);
  args[a.targetSlab] = indexScratchBytes(key) + tileItems * slab;
  args[a.alphaSlab] = args[a.targetSlab] + tileItems * slab;

  const std::string name = std::string(c.op) + "_" + isa::dtypeName(c.dtype);
  const KernelRef fn = cachedKernel(ctx.device, name + "." + key.cacheKey(),
                                    [&] { return buildIndexKernel(key, name); });
  const unsigned chunks = static_cast<unsigned>(b > 0 ? ceilDiv(c.blockSizes.front(), chunk) : 1);
  // Items [firstD0, d0Limit) x rows [firstRow, rowLimit), split over x and y.
  auto run = [&](int64_t firstD0, int64_t d0Limit, int64_t d0PerWorkgroup, int64_t firstRow,
                 int64_t rowLimit, int64_t rowsPerWorkgroup) {
    args[a.firstD0] = firstD0;
    args[a.d0Limit] = d0Limit;
    args[a.d0PerWorkgroup] = d0PerWorkgroup;
    args[a.firstRow] = firstRow;
    args[a.rowLimit] = rowLimit;
    args[a.rowsPerWorkgroup] = rowsPerWorkgroup;
    const mimicDim3 grid{static_cast<unsigned>(ceilDiv(d0Limit - firstD0, d0PerWorkgroup)),
                         static_cast<unsigned>(ceilDiv(rowLimit - firstRow, rowsPerWorkgroup)),
                         chunks};
    launch(ctx, fn, grid, args);
  };
  const int64_t wide = 4 * facts.units;
  const int64_t span = kTilesPerWorkgroup * tileItems;  // items of D0 one workgroup takes
  // Rows per workgroup when each row has d0 items: up to a tile's worth of items (and the tile
  // limit), fewer while that leaves CUs idle.
  auto rowsPer = [&](int64_t d0Items) {
    const int64_t tiles = ceilDiv(d0Items, tileItems);
    const int64_t n =
        std::min({tileItems / d0Items, kTilesPerWorkgroup / tiles, ceilDiv(rows, wide)});
    return std::max({n, int64_t(1), ceilDiv(rows, kMaxGridDim)});
  };
  switch (c.order) {
    case ItemOrder::Any: {
      const int64_t tiles = ceilDiv(d0, tileItems);
      run(0, d0, ceilDiv(tiles, std::min(tiles, kMaxGridDim)) * tileItems, 0, rows, rowsPer(d0));
      break;
    }
    case ItemOrder::SerialInner:  // rows in parallel, each row's D0 range after range
      for (int64_t first = 0; first < d0; first += span) {
        const int64_t limit = std::min(d0, first + span);
        run(first, limit, limit - first, 0, rows, rowsPer(limit - first));
      }
      break;
    case ItemOrder::Serial:  // one workgroup (per block chunk), launch after launch
      if (ceilDiv(d0, tileItems) >= kTilesPerWorkgroup) {
        for (int64_t row = 0; row < rows; ++row) {
          for (int64_t first = 0; first < d0; first += span) {
            run(first, std::min(d0, first + span), span, row, row + 1, 1);
          }
        }
      } else {
        const int64_t perLaunch = kTilesPerWorkgroup / ceilDiv(d0, tileItems);
        for (int64_t row = 0; row < rows; row += perLaunch) {
          run(0, d0, d0, row, std::min(rows, row + perLaunch), perLaunch);
        }
      }
      break;
  }
}

}  // namespace

void runIndexedCopy(const LaunchContext& ctx, IndexedCopy c) {
  for (int64_t s : c.itemSizes) {
    if (s == 0) return;
  }
  for (int64_t s : c.blockSizes) {
    if (s == 0) return;
  }
  normalize(c);
  // What the kernel cannot take in one launch becomes a loop of launches, in item order.
  if (c.itemSizes.size() > size_t(kMaxItemRank)) {
    for (int64_t i = 0; i < c.itemSizes.front(); ++i) runIndexedCopy(ctx, itemSlice(c, i));
    return;
  }
  if (c.blockSizes.size() > size_t(kMaxBlockRank)) {
    for (int64_t i = 0; i < c.blockSizes.front(); ++i) runIndexedCopy(ctx, blockSlice(c, i));
    return;
  }

  IndexKernelKey key;
  key.mode = c.mode;
  key.dtype = c.dtype;
  for (const IndexOperand& index : c.indices) key.indexTypes.push_back(index.dtype);
  key.itemRank = static_cast<int>(c.itemSizes.size());
  key.blockRank = static_cast<int>(c.blockSizes.size());
  key.wrapNegative = c.wrapNegative;
  key.indexedMovesWithItem = std::any_of(c.indexed.itemStrides.begin(), c.indexed.itemStrides.end(),
                                         [](int64_t s) { return s; });
  const bool adds = c.mode == IndexMode::AtomicAdd || c.mode == IndexMode::OrderedAdd;
  key.scaled = adds && c.alpha != 1.0;
  key.atomicPerElement =
      c.mode == IndexMode::AtomicAdd && key.blockRank > 0 && c.indexed.blockStrides.back() != 1;
  const size_t scratchpad = scratchpadBytes(ctx.device);
  key.indexTile = indexTile(scratchpad, key.indexTypes);

  // The data tile holds tileItems blocks (chunks of the block); OrderedAdd has a target tile
  // as large and one block of alpha.
  const int64_t e = isa::dtypeSize(c.dtype);
  const int64_t budget = int64_t(scratchpad) - indexScratchBytes(key);
  const bool ordered = c.mode == IndexMode::OrderedAdd;
  const int64_t perItem = ordered ? 2 : 1, extra = ordered ? 1 : 0;
  const int b = key.blockRank;
  const int64_t inner = b > 0 ? product(c.blockSizes, 1, c.blockSizes.size()) : 1;
  if ((perItem + extra) * inner * e > budget) {
    for (int64_t i = 0; i < c.blockSizes.front(); ++i) runIndexedCopy(ctx, blockSlice(c, i));
    return;
  }
  int64_t chunk = 1;
  if (b > 0) {
    const int64_t top = c.blockSizes.front();
    chunk = std::min(top, budget / ((perItem + extra) * inner * e));
    // Serial items leave the block as the only source of parallelism; but each chunk repeats
    // the per-item work, so chunks stay large.
    if (c.order == ItemOrder::Serial) {
      const int64_t parallel = ceilDiv(top, deviceFacts(ctx.device).units);
      chunk = std::min(chunk, std::max(parallel, ceilDiv(kMinSerialChunk, inner)));
    }
  }
  // OrderedAdd's duplicate search costs a pass over the tile per item.
  const int64_t tileItems = std::clamp<int64_t>((budget / (chunk * inner * e) - extra) / perItem, 1,
                                                ordered ? kOrderedTile : key.indexTile);
  launchFitted(ctx, c, key, chunk, tileItems);
}

}  // namespace mimic::ops::detail
