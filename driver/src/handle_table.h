// Opaque handles for queues and events. A handle is an id, never a pointer, and ids are never
// reused: a destroyed or forged handle is recognised and rejected, never dereferenced.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace mimic::driver {

template <typename T>
class HandleTable {
 public:
  // `tag` is stored in the low bits, so a queue handle passed as an event is rejected too.
  explicit HandleTable(uint64_t tag) : tag_(tag) {}

  uint64_t add(std::shared_ptr<T> object) {
    std::lock_guard<std::mutex> lock(mutex_);
    uint64_t handle = (nextId_++ << kTagBits) | tag_;
    live_.emplace(handle, std::move(object));
    return handle;
  }

  std::shared_ptr<T> find(uint64_t handle) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(handle);
    return it == live_.end() ? nullptr : it->second;
  }

  bool remove(uint64_t handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.erase(handle) > 0;
  }

 private:
  static constexpr int kTagBits = 4;
  uint64_t tag_;
  uint64_t nextId_ = 1;
  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, std::shared_ptr<T>> live_;
};

}  // namespace mimic::driver
