#include "sim/launch_work.h"

namespace mimic::sim {
namespace {

uint64_t mix(uint64_t hash, uint64_t value) {
  return (hash ^ value) * 0x100000001b3ull;
}

uint64_t contentHash(const exec::WorkgroupTrace& trace) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (const exec::TraceOp& op : trace) {
    hash = mix(hash, uint64_t(op.kind) | uint64_t(op.pipe) << 8 |
                         uint64_t(op.afterOtherPipe) << 16 | uint64_t(op.token) << 32);
    hash = mix(hash, op.amount);
  }
  return hash;
}

uint64_t contentHash(const std::vector<exec::DmaDescriptor>& descriptors) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (const exec::DmaDescriptor& d : descriptors) {
    hash = mix(hash, d.elementBytes);
    for (int i = 0; i < isa::kDmaDims; ++i) {
      hash = mix(mix(mix(hash, uint64_t(d.count[i])), uint64_t(d.hbmStride[i])),
                 uint64_t(d.spStride[i]));
    }
  }
  return hash;
}

}  // namespace

template <typename T>
uint32_t LaunchWork::intern(const T& item, std::vector<T>& distinct,
                            std::unordered_multimap<uint64_t, uint32_t>& byHash,
                            const uint32_t* last) {
  if (last && distinct[*last] == item) return *last;
  const uint64_t hash = contentHash(item);
  auto [first, end] = byHash.equal_range(hash);
  for (auto it = first; it != end; ++it) {
    if (distinct[it->second] == item) return it->second;
  }
  const auto index = static_cast<uint32_t>(distinct.size());
  distinct.push_back(item);
  byHash.emplace(hash, index);
  return index;
}

void LaunchWork::add(const exec::WorkgroupTrace& trace,
                     const std::vector<exec::DmaRegion>& regions) {
  const Workgroup* previous = workgroups_.empty() ? nullptr : &workgroups_.back();
  // Room reused from workgroup to workgroup: a launch keeps only the lists that are new.
  thread_local DescriptorList descriptors;
  descriptors.clear();
  for (const exec::DmaRegion& r : regions) descriptors.push_back(r.descriptor);
  Workgroup w;
  w.trace = intern(trace, traces_, tracesByHash_, previous ? &previous->trace : nullptr);
  w.descriptors = intern(descriptors, descriptorLists_, descriptorListsByHash_,
                         previous ? &previous->descriptors : nullptr);
  w.firstAddress = addresses_.size();
  for (const exec::DmaRegion& r : regions) addresses_.push_back(r.address);
  workgroups_.push_back(w);
}

void LaunchWork::finish() {
  tracesByHash_ = {};
  descriptorListsByHash_ = {};
  traces_.shrink_to_fit();
  descriptorLists_.shrink_to_fit();
  addresses_.shrink_to_fit();
  workgroups_.shrink_to_fit();
}

}  // namespace mimic::sim
