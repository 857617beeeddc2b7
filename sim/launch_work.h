// What the workgroups of one kernel launch left for the timing model, kept compactly: a launch
// waits in its device's queue from submission until the simulation reaches it, so a step's
// worth of launches is held at once (in timing-only mode, most of what a process grows by).
//
// Workgroups of one kernel mostly leave the same trace and DMA descriptors, and differ only in
// the addresses their DMAs touch. So each distinct trace and descriptor list is stored once,
// and a workgroup keeps two indices and its DMA addresses: 8 bytes a DMA instead of a
// descriptor's 112.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "sim/exec/trace.h"

namespace mimic::sim {

class LaunchWork {
 public:
  // Appends the next workgroup, in workgroup order. `regions` are its DMAs, by token - 1.
  void add(const exec::WorkgroupTrace& trace, const std::vector<exec::DmaRegion>& regions);
  // After the last add(): drops what only add() needs and the spare room of growing.
  void finish();

  size_t size() const { return workgroups_.size(); }
  bool empty() const { return workgroups_.empty(); }
  const exec::WorkgroupTrace& trace(size_t workgroup) const {
    return traces_[workgroups_[workgroup].trace];
  }
  // The HBM side of DMA `token` (from 1) of `workgroup`.
  exec::DmaRegion region(size_t workgroup, uint32_t token) const {
    const Workgroup& w = workgroups_[workgroup];
    return {addresses_[w.firstAddress + token - 1], descriptorLists_[w.descriptors][token - 1]};
  }

 private:
  using DescriptorList = std::vector<exec::DmaDescriptor>;
  struct Workgroup {
    uint32_t trace;         // into traces_
    uint32_t descriptors;   // into descriptorLists_
    uint64_t firstAddress;  // into addresses_
  };

  // The index of `item` in `distinct`, which it joins if it is new. `byHash` indexes `distinct`
  // by content; `last` is the previous workgroup's index, the usual answer, tried first.
  template <typename T>
  static uint32_t intern(const T& item, std::vector<T>& distinct,
                         std::unordered_multimap<uint64_t, uint32_t>& byHash, const uint32_t* last);

  std::vector<exec::WorkgroupTrace> traces_;
  std::vector<DescriptorList> descriptorLists_;
  std::unordered_multimap<uint64_t, uint32_t> tracesByHash_, descriptorListsByHash_;
  std::vector<uint64_t> addresses_;
  std::vector<Workgroup> workgroups_;
};

}  // namespace mimic::sim
