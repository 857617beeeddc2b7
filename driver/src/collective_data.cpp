#include "collective_data.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "sim/exec/half.h"

namespace mimic::driver {
namespace {

// The element type as arithmetic: load widens, store narrows.
template <typename Stored, typename Math>
struct Element {
  using Wide = Math;
  static constexpr size_t kBytes = sizeof(Stored);
  static Math load(const uint8_t* p) {
    Stored v;
    std::memcpy(&v, p, sizeof v);
    return Math(v);
  }
  static void store(uint8_t* p, Math v) {
    const Stored s = Stored(v);
    std::memcpy(p, &s, sizeof s);
  }
};

// f16 and bf16: stored as 16 bits, computed in f32.
template <float (*Widen)(uint16_t), uint16_t (*Narrow)(float)>
struct Half {
  using Wide = float;
  static constexpr size_t kBytes = 2;
  static float load(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return Widen(h);
  }
  static void store(uint8_t* p, float v) {
    const uint16_t h = Narrow(v);
    std::memcpy(p, &h, 2);
  }
};
using F16 = Half<exec::f16ToF32, exec::f32ToF16>;
using BF16 = Half<exec::bf16ToF32, exec::f32ToBf16>;

template <typename T>
T combine(mimicReduceOp op, T a, T b) {
  switch (op) {
    case mimicProd:
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        return T(U(a) * U(b));  // integers wrap
      } else {
        return a * b;
      }
    case mimicMin:
      return std::min(a, b);
    case mimicMax:
      return std::max(a, b);
    default:
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        return T(U(a) + U(b));
      } else {
        return a + b;
      }
  }
}

// out[i] = op over ranks of in[r][offset + i], i < count, in rank order, narrowed after every
// step. Rank by rank over the whole range, so each pass streams through memory.
template <typename E>
void reduceInto(uint8_t* out, const std::vector<const uint8_t*>& in, size_t offset, size_t count,
                mimicReduceOp op, int ranks) {
  using W = typename E::Wide;
  constexpr size_t elem = E::kBytes;
  std::memcpy(out, in[0] + offset * elem, count * elem);
  for (int r = 1; r < ranks; ++r) {
    const uint8_t* from = in[r] + offset * elem;
    for (size_t i = 0; i < count; ++i) {
      E::store(out + i * elem, combine<W>(op, E::load(out + i * elem), E::load(from + i * elem)));
    }
  }
  if (op == mimicAvg) {
    for (size_t i = 0; i < count; ++i) {
      E::store(out + i * elem, W(E::load(out + i * elem) / W(ranks)));
    }
  }
}

void reduce(mimicDataType type, uint8_t* out, const std::vector<const uint8_t*>& in, size_t offset,
            size_t count, mimicReduceOp op, int ranks) {
  switch (type) {
    case mimicFloat32:
      return reduceInto<Element<float, float>>(out, in, offset, count, op, ranks);
    case mimicFloat16:
      return reduceInto<F16>(out, in, offset, count, op, ranks);
    case mimicBfloat16:
      return reduceInto<BF16>(out, in, offset, count, op, ranks);
    case mimicInt32:
      return reduceInto<Element<int32_t, int32_t>>(out, in, offset, count, op, ranks);
    case mimicInt64:
      return reduceInto<Element<int64_t, int64_t>>(out, in, offset, count, op, ranks);
    case mimicUint8:
      return reduceInto<Element<uint8_t, uint8_t>>(out, in, offset, count, op, ranks);
  }
}

}  // namespace

size_t dataTypeBytes(mimicDataType type) {
  static const size_t kBytes[] = {4, 2, 2, 4, 8, 1};
  return kBytes[int(type)];
}

void applyCollective(const mimicCollectiveDesc& desc, const std::vector<const uint8_t*>& sends,
                     const std::vector<uint8_t*>& recvs) {
  const int n = desc.numRanks;
  const size_t elem = dataTypeBytes(desc.datatype);
  const size_t block = desc.count * elem;
  // Results go to a scratch buffer first, stores after: a rank's receive buffer may be another
  // rank's input. The buffer is kept, so repeated collectives do not fault its pages in again.
  thread_local std::vector<uint8_t> scratch;
  const auto room = [&](size_t bytes) {
    if (scratch.size() < bytes) scratch.resize(bytes);
    return scratch.data();
  };
  switch (desc.kind) {
    case MIMIC_COLLECTIVE_ALL_REDUCE:
    case MIMIC_COLLECTIVE_REDUCE: {
      uint8_t* sum = room(block);
      reduce(desc.datatype, sum, sends, 0, desc.count, desc.op, n);
      for (int r = 0; r < n; ++r) {
        if (desc.kind == MIMIC_COLLECTIVE_ALL_REDUCE || r == desc.root) {
          std::memcpy(recvs[r], sum, block);
        }
      }
      return;
    }
    case MIMIC_COLLECTIVE_BROADCAST: {
      uint8_t* data = room(block);
      std::memcpy(data, sends[desc.root], block);
      for (int r = 0; r < n; ++r) std::memcpy(recvs[r], data, block);
      return;
    }
    case MIMIC_COLLECTIVE_ALL_GATHER: {
      uint8_t* all = room(block * n);
      for (int r = 0; r < n; ++r) std::memcpy(all + r * block, sends[r], block);
      for (int r = 0; r < n; ++r) std::memcpy(recvs[r], all, block * n);
      return;
    }
    case MIMIC_COLLECTIVE_REDUCE_SCATTER: {
      uint8_t* parts = room(block * n);
      for (int r = 0; r < n; ++r) {
        reduce(desc.datatype, parts + r * block, sends, r * desc.count, desc.count, desc.op, n);
      }
      for (int r = 0; r < n; ++r) std::memcpy(recvs[r], parts + r * block, block);
      return;
    }
    case MIMIC_COLLECTIVE_ALL_TO_ALL: {
      uint8_t* blocks = room(block * n * n);
      for (int r = 0; r < n; ++r) {
        for (int q = 0; q < n; ++q) {
          std::memcpy(blocks + (r * n + q) * block, sends[q] + r * block, block);
        }
      }
      for (int r = 0; r < n; ++r) std::memcpy(recvs[r], blocks + r * n * block, block * n);
      return;
    }
  }
}

}  // namespace mimic::driver
