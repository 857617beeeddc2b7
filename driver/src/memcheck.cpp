#include "memcheck.h"

#include <cstdio>

#include "errors.h"
#include "sim/device.h"
#include "sim/device_memory.h"
#include "sim/simulator.h"
#include "tracer.h"

namespace mimic::driver {
namespace {

constexpr unsigned kShadowTools =
    MIMIC_SANITIZE_MEMCHECK | MIMIC_SANITIZE_INITCHECK | MIMIC_SANITIZE_LEAKCHECK;

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

std::string microseconds(uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f us", static_cast<double>(ns) / 1000.0);
  return text;
}

}  // namespace

bool MemoryChecker::tracking() const {
  return (sanitizer_.tools() & kShadowTools) != 0;
}

bool MemoryChecker::checking() const {
  return sanitizer_.on(MIMIC_SANITIZE_MEMCHECK | MIMIC_SANITIZE_INITCHECK);
}

MemoryChecker::Site MemoryChecker::here() const {
  return {sim_.hostTime(), Tracer::correlation()};
}

std::string MemoryChecker::issuer(const std::string& what, uint64_t correlation) const {
  return what + sanitizer_.hostOp(correlation);
}

std::string MemoryChecker::describe(const Block& block, bool region) const {
  std::string text = "the " + std::to_string(block.size) + "-byte " +
                     (region ? "region" : "allocation") + " at " + hex(block.base) + " (" +
                     (region ? "region #" : "mimicMemAlloc #") + std::to_string(block.number) +
                     " at " + microseconds(block.made.timeNs) +
                     sanitizer_.hostOp(block.made.correlation) + ")";
  if (!block.live) {
    text += ", which was freed at " + microseconds(block.freed.timeNs) +
            sanitizer_.hostOp(block.freed.correlation);
  }
  return text;
}

const MemoryChecker::Block* MemoryChecker::containing(const Blocks& blocks, uint64_t address) {
  auto it = blocks.upper_bound(address);
  if (it == blocks.begin()) return nullptr;
  --it;
  return address - it->second.base < it->second.size ? &it->second : nullptr;
}

void MemoryChecker::forgetOverlapping(Blocks& blocks, uint64_t low, uint64_t high) {
  auto it = blocks.upper_bound(low);
  if (it != blocks.begin() && std::prev(it)->second.base + std::prev(it)->second.size > low) --it;
  while (it != blocks.end() && it->first < high) it = blocks.erase(it);
}

void MemoryChecker::markWritten(Shadow& shadow, uint64_t low, uint64_t high) {
  auto& written = shadow.written;
  auto it = written.upper_bound(low);
  if (it != written.begin() && std::prev(it)->second >= low) --it;
  while (it != written.end() && it->first <= high) {
    low = std::min(low, it->first);
    high = std::max(high, it->second);
    it = written.erase(it);
  }
  written.emplace(low, high);
}

void MemoryChecker::markUnwritten(Shadow& shadow, uint64_t low, uint64_t high) {
  auto& written = shadow.written;
  auto it = written.upper_bound(low);
  if (it != written.begin() && std::prev(it)->second > low) --it;
  while (it != written.end() && it->first < high) {
    const uint64_t first = it->first, last = it->second;
    it = written.erase(it);
    if (first < low) written.emplace(first, low);
    if (last > high) it = written.emplace(high, last).first;
  }
}

uint64_t MemoryChecker::firstUnwritten(const Shadow& shadow, uint64_t low, uint64_t high) {
  auto it = shadow.written.upper_bound(low);
  if (it == shadow.written.begin()) return low;
  --it;
  return it->second >= high ? high : std::max(low, it->second);
}

void MemoryChecker::onAlloc(int device, uint64_t base, uint64_t size) {
  if (!tracking()) return;
  const Site made = here();
  std::lock_guard<std::mutex> lock(mutex_);
  Shadow& shadow = devices_[device];
  forgetOverlapping(shadow.allocations, base, base + size);
  forgetOverlapping(shadow.regions, base, base + size);
  markUnwritten(shadow, base, base + size);
  shadow.allocations[base] = Block{base, size, ++allocations_, made, Site{}, true, false};
}

void MemoryChecker::onFree(int device, uint64_t base) {
  const Site freed = here();
  std::lock_guard<std::mutex> lock(mutex_);
  Shadow& shadow = devices_[device];
  auto it = shadow.allocations.find(base);
  if (it == shadow.allocations.end()) return;
  Block& block = it->second;
  block.live = false;
  block.freed = freed;
  // Its regions die with it.
  for (auto r = shadow.regions.lower_bound(base);
       r != shadow.regions.end() && r->first < base + block.size; ++r) {
    if (r->second.live) r->second.freed = freed;
    r->second.live = false;
  }
  markUnwritten(shadow, base, base + block.size);
}

void MemoryChecker::onDoubleFree(int device, uint64_t base, const std::string& call) {
  if (!sanitizer_.on(MIMIC_SANITIZE_MEMCHECK)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  Shadow& shadow = devices_[device];
  std::string message = call + sanitizer_.hostOp(Tracer::correlation()) + " frees " + hex(base) +
                        " on device " + std::to_string(device) + " again (double free)";
  std::string key = call + sanitizer_.hostOp(Tracer::correlation());
  const bool region = call == "mimicDebugRegionUnregister";
  auto& blocks = region ? shadow.regions : shadow.allocations;
  auto it = blocks.find(base);
  if (it != blocks.end()) {
    message += ": it is " + describe(it->second, region);
    key += "|" + sanitizer_.hostOp(it->second.made.correlation);
  }
  sanitizer_.report(FindingKind::DoubleFree, key, message);
}

void MemoryChecker::onDeviceReset(int device) {
  std::lock_guard<std::mutex> lock(mutex_);
  devices_.erase(device);
}

void MemoryChecker::registerRegion(int device, uint64_t base, uint64_t size) {
  if (!tracking()) return;
  const Site made = here();
  std::lock_guard<std::mutex> lock(mutex_);
  Shadow& shadow = devices_[device];
  auto next = shadow.regions.lower_bound(base);
  const Block* before = containing(shadow.regions, base);
  if ((before && before->live) ||
      (next != shadow.regions.end() && next->first < base + size && next->second.live)) {
    fail(MIMIC_ERROR_INVALID_VALUE,
         "the region [" + hex(base) + ", " + hex(base + size) + ") overlaps a live region");
  }
  forgetOverlapping(shadow.regions, base, base + size);
  markUnwritten(shadow, base, base + size);
  auto pool = shadow.allocations.upper_bound(base);
  if (pool != shadow.allocations.begin()) std::prev(pool)->second.pool = true;
  shadow.regions[base] = Block{base, size, ++regions_, made, Site{}, true, false};
}

void MemoryChecker::unregisterRegion(int device, uint64_t base) {
  if (!tracking()) return;
  const Site freed = here();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Shadow& shadow = devices_[device];
    auto it = shadow.regions.find(base);
    if (it == shadow.regions.end()) {
      fail(MIMIC_ERROR_INVALID_DEVICE_POINTER, hex(base) + " is not the start of a region");
    }
    if (it->second.live) {
      it->second.live = false;
      it->second.freed = freed;
      markUnwritten(shadow, base, base + it->second.size);
      return;
    }
  }
  onDoubleFree(device, base, "mimicDebugRegionUnregister");
  fail(MIMIC_ERROR_DOUBLE_FREE, "the region at " + hex(base) + " was already unregistered");
}

bool MemoryChecker::checkBounds(int device, Shadow& shadow, const Access& access,
                                const std::string& issuer) {
  const char* verb = access.write ? " writes " : " reads ";
  const std::string range = std::to_string(access.high - access.low) + " bytes at " +
                            hex(access.low) + " on device " + std::to_string(device);
  const Block* allocation = containing(shadow.allocations, access.low);
  if (!allocation) return true;  // not an allocation the shadow saw
  const Block* outer = allocation;
  bool region = false;
  if (allocation->live && allocation->pool) {
    const Block* part = containing(shadow.regions, access.low);
    if (!part) {
      const std::string key = issuer + "|pool|" + hex(allocation->base);
      sanitizer_.report(FindingKind::OutOfBounds, key,
                        issuer + verb + range + ", which no live region of the pool " +
                            describe(*allocation, false) + " holds");
      return false;
    }
    outer = part;
    region = true;
  }
  const std::string key = issuer + "|" + sanitizer_.hostOp(outer->made.correlation) +
                          (outer->made.correlation ? "" : hex(outer->base));
  if (!outer->live) {
    sanitizer_.report(FindingKind::UseAfterFree, key,
                      issuer + verb + range + ", " + std::to_string(access.low - outer->base) +
                          " bytes into " + describe(*outer, region) + " (use after free)");
    return false;
  }
  if (access.high > outer->base + outer->size) {
    sanitizer_.report(FindingKind::OutOfBounds, key,
                      issuer + verb + range + ", which run " +
                          std::to_string(access.high - (outer->base + outer->size)) +
                          " bytes past the end of " + describe(*outer, region));
    return false;
  }
  return true;
}

void MemoryChecker::checkDefined(int device, Shadow& shadow, const Access& access,
                                 const std::string& issuer) {
  const uint64_t first = firstUnwritten(shadow, access.low, access.high);
  if (first >= access.high) return;
  const Block* region = containing(shadow.regions, first);
  const Block* allocation = containing(shadow.allocations, first);
  const Block* owner = region && region->live ? region : allocation;
  if (!owner) return;  // memory the shadow never saw allocated
  const bool isRegion = owner == region;
  const std::string key = issuer + "|" + sanitizer_.hostOp(owner->made.correlation) +
                          (owner->made.correlation ? "" : hex(owner->base));
  sanitizer_.report(FindingKind::UninitializedRead, key,
                    issuer + " reads " + hex(first) + " on device " + std::to_string(device) +
                        ", " + std::to_string(first - owner->base) + " bytes into " +
                        describe(*owner, isRegion) +
                        ", which nothing has written since it was allocated");
  markWritten(shadow, access.low, access.high);  // report each range once
}

void MemoryChecker::onAccesses(int device, const std::vector<Access>& accesses,
                               const std::string& what, uint64_t correlation) {
  const bool memcheck = sanitizer_.on(MIMIC_SANITIZE_MEMCHECK);
  const bool initcheck = sanitizer_.on(MIMIC_SANITIZE_INITCHECK);
  const std::string who = issuer(what, correlation);
  std::lock_guard<std::mutex> lock(mutex_);
  Shadow& shadow = devices_[device];
  for (const Access& access : accesses) {
    if (access.high <= access.low) continue;
    if (memcheck && !checkBounds(device, shadow, access, who)) continue;
    if (access.write) {
      markWritten(shadow, access.low, access.high);
    } else if (initcheck) {
      checkDefined(device, shadow, access, who);
    }
  }
}

void MemoryChecker::onInvalidAddress(int device, uint64_t address, const char* verb,
                                     const std::string& what, uint64_t correlation) {
  if (!sanitizer_.on(MIMIC_SANITIZE_MEMCHECK)) return;
  const std::string who = issuer(what, correlation);
  std::lock_guard<std::mutex> lock(mutex_);
  Shadow& shadow = devices_[device];
  const std::string at =
      " " + std::string(verb) + " " + hex(address) + " on device " + std::to_string(device);
  if (const Block* freed = containing(shadow.allocations, address)) {
    sanitizer_.report(FindingKind::UseAfterFree,
                      who + "|" + sanitizer_.hostOp(freed->made.correlation),
                      who + at + ", " + std::to_string(address - freed->base) + " bytes into " +
                          describe(*freed, false) + " (use after free)");
    return;
  }
  auto next = shadow.allocations.upper_bound(address);
  std::string where = ", outside every allocation";
  std::string key = who;
  if (next != shadow.allocations.begin()) {
    const Block& before = std::prev(next)->second;
    where = ", " + std::to_string(address - (before.base + before.size)) +
            " bytes past the end of " + describe(before, false);
    key += "|" + sanitizer_.hostOp(before.made.correlation);
  }
  sanitizer_.report(FindingKind::OutOfBounds, key, who + at + where);
}

void MemoryChecker::onHostView(int device, uint64_t low, uint64_t high) {
  std::lock_guard<std::mutex> lock(mutex_);
  markWritten(devices_[device], low, high);
}

uint64_t MemoryChecker::checkLeaks() {
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t live = 0;
  for (const auto& [deviceIndex, shadow] : devices_) {
    const int device = deviceIndex;  // a lambda cannot capture a structured binding (C++17)
    auto leak = [&](const Block& block, bool region) {
      ++live;
      const std::string key = std::to_string(device) + "|" +
                              sanitizer_.hostOp(block.made.correlation) +
                              (block.made.correlation ? "" : hex(block.base));
      sanitizer_.report(
          FindingKind::Leak, key,
          describe(block, region) + " on device " + std::to_string(device) + " was never freed");
    };
    for (const auto& [base, block] : shadow.allocations)
      if (block.live && !block.pool) leak(block, false);
    for (const auto& [base, block] : shadow.regions)
      if (block.live) leak(block, true);
  }
  return live;
}

}  // namespace mimic::driver
