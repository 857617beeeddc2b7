// How the index ops (index.h) describe their work to the generic index kernel (index_kernel.h):
// an item space, a block per item, the index tensors and the two data tensors. This layer
// simplifies the shapes (drops size-1 dims, merges dims that are contiguous in every operand),
// splits what the kernel cannot take in one launch into several launches, picks tile sizes for
// the device's scratchpad and launches.
#pragma once

#include <cstdint>
#include <vector>

#include "torch_backend/ops/index_kernel.h"
#include "torch_backend/ops/tensor_view.h"

namespace mimic::ops::detail {

// An index tensor: one value per item.
struct IndexOperand {
  const void* data = nullptr;
  isa::DType dtype = isa::DType::I64;
  std::vector<int64_t> itemStrides;  // elements, one per item dim (outer to inner)
  int64_t dimSize = 0;               // valid values are [0, dimSize) (after wrapping)
  int64_t dimStride = 0;             // elements of the indexed tensor per index step
};

// A data tensor, addressed by item position and block position.
struct DataOperand {
  void* data = nullptr;
  std::vector<int64_t> itemStrides;   // elements, one per item dim
  std::vector<int64_t> blockStrides;  // elements, one per block dim
};

// Which items must be processed in order by one workgroup.
enum class ItemOrder {
  Any,          // items are independent (or accumulate atomically)
  SerialInner,  // the innermost item dim in order; different rows never touch the same data
  Serial,       // all items in row-major order
};

struct IndexedCopy {
  const char* op = "index";  // the kernel's name: "<op>_<dtype>"
  IndexMode mode = IndexMode::Gather;
  isa::DType dtype = isa::DType::F32;
  std::vector<int64_t> itemSizes;   // outer to inner
  std::vector<int64_t> blockSizes;  // outer to inner
  std::vector<IndexOperand> indices;
  DataOperand indexed;  // addressed through the index values
  DataOperand item;     // addressed by item position
  bool wrapNegative = false;
  double alpha = 1.0;  // the add modes scale the item side by it
  ItemOrder order = ItemOrder::Any;
};

// Launches the copy on ctx.queue (nothing when there are no items or the block is empty).
// Throws mimic::Error when a launch fails.
void runIndexedCopy(const LaunchContext& ctx, IndexedCopy copy);

}  // namespace mimic::ops::detail
