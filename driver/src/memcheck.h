// memcheck, initcheck and leakcheck: a shadow of every device allocation and allocator region
// (mimicDebugRegionRegister) made while one of them is on, with where it was made and freed,
// and of which bytes have been written. Commands are checked at submission, when their bytes
// move: copies and fills by their ranges, kernels by each DMA's bounding range.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "sanitizer.h"

namespace mimic::sim {
class Simulator;
}

namespace mimic::driver {

// A byte range a command reads or writes.
struct Access {
  uint64_t low;
  uint64_t high;
  bool write;
};

class MemoryChecker {
 public:
  MemoryChecker(sim::Simulator& sim, Sanitizer& sanitizer) : sim_(sim), sanitizer_(sanitizer) {}
  // Whether allocations are being shadowed (memcheck, initcheck or leakcheck on).
  bool tracking() const;
  bool checking() const;  // memcheck or initcheck: accesses are checked

  void onAlloc(int device, uint64_t base, uint64_t size);
  void onFree(int device, uint64_t base);
  void onDoubleFree(int device, uint64_t base, const std::string& call);
  void onDeviceReset(int device);
  // Throw ApiError (MIMIC_ERROR_INVALID_VALUE, DOUBLE_FREE, INVALID_DEVICE_POINTER) when the
  // region overlaps a live one or is not live; the checks need the shadow, so they run only
  // while tracking.
  void registerRegion(int device, uint64_t base, uint64_t size);
  void unregisterRegion(int device, uint64_t base);

  // The accesses of one command, in program order; `what` names it ("kernel 'gemm'").
  void onAccesses(int device, const std::vector<Access>& accesses, const std::string& what,
                  uint64_t correlation);
  // A command that failed (an API error or a kernel fault) on an address outside every live
  // allocation: a memcheck finding naming what the address was.
  // `verb`: "reads", "writes" or "accesses".
  void onInvalidAddress(int device, uint64_t address, const char* verb, const std::string& what,
                        uint64_t correlation);
  // The caller may write through a host view: its bytes count as written.
  void onHostView(int device, uint64_t low, uint64_t high);
  // Reports every live allocation and region as a leak; returns how many there are.
  uint64_t checkLeaks();

 private:
  struct Site {
    uint64_t timeNs = 0;
    uint64_t correlation = 0;
  };
  struct Block {
    uint64_t base = 0, size = 0;
    uint64_t number = 0;  // the n-th allocation or region
    Site made, freed;
    bool live = true;
    bool pool = false;  // an allocation with regions in it
  };
  using Blocks = std::map<uint64_t, Block>;  // by base; freed ones stay until overlapped
  struct Shadow {
    Blocks allocations, regions;
    std::map<uint64_t, uint64_t> written;  // disjoint byte ranges [first, second)
  };

  Site here() const;
  std::string describe(const Block& block, bool region) const;
  static const Block* containing(const Blocks& blocks, uint64_t address);
  static void forgetOverlapping(Blocks& blocks, uint64_t low, uint64_t high);
  static void markWritten(Shadow& shadow, uint64_t low, uint64_t high);
  static void markUnwritten(Shadow& shadow, uint64_t low, uint64_t high);
  static uint64_t firstUnwritten(const Shadow& shadow, uint64_t low, uint64_t high);
  // memcheck: whether [low, high) lies in one live allocation (and region, in a pool); if not,
  // reports why. Addresses the shadow never saw are assumed valid.
  bool checkBounds(int device, Shadow& shadow, const Access& access, const std::string& issuer);
  void checkDefined(int device, Shadow& shadow, const Access& access, const std::string& issuer);
  std::string issuer(const std::string& what, uint64_t correlation) const;

  sim::Simulator& sim_;
  Sanitizer& sanitizer_;
  std::mutex mutex_;
  std::map<int, Shadow> devices_;
  uint64_t allocations_ = 0, regions_ = 0;
};

}  // namespace mimic::driver
