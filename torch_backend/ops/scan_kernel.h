// The device side of the scans (scan.h). A workgroup owns kc consecutive lanes along C of one g
// (grid x: groups of kc lanes, grid y: G). Its scratchpad holds a tile [nc + 1][pitch] in the
// compute type (f32 or i64): row 0 is the carry (the lane's running result before the chunk),
// rows 1..nc a chunk of nc steps along N. The lanes lie along a tile row, so step j is one
// vector instruction over kc lanes: row[j + 1] = op(row[j], row[j + 1]).
//
// Rows of N that do not fit are streamed in chunks (a single chunk when N fits): each chunk is
// loaded, converted, scanned, converted and stored, and its last row becomes the next chunk's
// carry. Each input element is read once and each output element written once, whatever N;
// a chunk waits for the previous one's stores, so the DMA of one chunk does not overlap the
// scan of the next (simpler, and the scan's instructions dominate for few lanes).
//
// Sum, Prod and LogSumExp start from the identity (0, 1, -inf), which gives the first element
// exactly; Max and Min start from the first element itself (the extreme's index 0).
#pragma once

#include <string>

#include "sim/isa/module.h"
#include "torch_backend/ops/scan.h"

namespace mimic::ops::detail {

// Everything the generated code depends on (the kernel cache key).
struct ScanShape {
  ScanKind kind = ScanKind::Sum;
  isa::DType in = isa::DType::F32, out = isa::DType::F32;
  isa::DType compute() const { return isa::isFloat(in) ? isa::DType::F32 : isa::DType::I64; }
  bool withIndex() const { return kind == ScanKind::Max || kind == ScanKind::Min; }
  std::string key() const;
};

// Operands: the address, then byte strides along G, N and C.
enum ScanOperandField { kScAddr, kScG, kScN, kScC, kScFields };

// Argument slots.
enum ScanArg : int {
  kScanG,
  kScanN,
  kScanC,
  kScanKc,     // lanes per workgroup
  kScanNc,     // steps per chunk
  kScanPitch,  // elements from one tile row to the next
  kScanIn,
  kScanOut = kScanIn + kScFields,
  kScanIdx = kScanOut + kScFields,
  // Scratchpad byte addresses.
  kScanSpRawIn = kScanIdx + kScFields,  // [nc][pitch] in's dtype (when not the compute type)
  kScanSpRawOut,                        // [nc][pitch] out's dtype (when not the compute type)
  kScanSpTile,                          // [nc + 1][pitch] compute type
  kScanSpIdx,                           // [nc + 1][pitch] i64 (Max, Min)
  kScanSpStep,                          // [pitch] i64: the step's index along N (Max, Min)
  kScanSpMask0,                         // [pitch] u8
  kScanSpMask1,                         // [pitch] u8
  kScanSpT0,                            // [pitch] f32 temporaries (LogSumExp)
  kScanSpT1,
  kScanSpT2,   //   zeros
  kScanSpLow,  //   the carry's low part (see scan.h)
  kScanSpT4,
  kScanSpT5,
  kScanArgCount,
};

// Grid: x = groups of kc lanes along C, y = G.
isa::Function buildScanKernel(const ScanShape& shape);

}  // namespace mimic::ops::detail
