#include "tracer.h"

#include <cstring>

namespace mimic::driver {
namespace {

thread_local uint64_t currentCorrelation = 0;

}  // namespace

void fillCounters(const sim::KernelLaunch& launch, const sim::SystemConfig& config,
                  mimicKernelCounters* out) {
  mimicKernelCounters c{};
  const exec::KernelCounters& k = launch.counters;
  c.workgroups = k.workgroups;
  for (int p = 0; p < 4; ++p) c.instructions[p] = k.instructions[p];
  c.flops = k.flops;
  c.hbmBytesRead = k.bytesRead;
  c.hbmBytesWritten = k.bytesWritten;
  c.startNs = launch.start;
  c.endNs = launch.end;
  const double ns = double(launch.end - launch.start);
  c.cycles = static_cast<uint64_t>(ns * config.costs.clockGHz);
  const double capacity = ns * config.compute.computeUnits;
  for (int p = 0; p < 4; ++p) {
    const double ghz =
        p == int(isa::Pipe::Matrix) ? config.costs.matrixClockGHz : config.costs.clockGHz;
    c.busy[p] = capacity > 0 ? double(k.pipeCycles[p]) / ghz / capacity : 0;
  }
  c.cacheHitBytes = launch.cacheHitBytes;
  c.dataDependentReads = k.dataDependentReads;
  *out = c;
}

mimicActivity newActivity(mimicActivityKind kind, int device, uint64_t queueId) {
  mimicActivity a;
  std::memset(&a, 0, sizeof a);
  a.kind = kind;
  a.device = device;
  a.queueId = queueId;
  a.peerDevice = -1;
  return a;
}

bool Tracer::start(size_t capacity) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (active_.load()) return false;
  capacity_ = capacity;
  dropped_ = 0;
  active_ = true;
  return true;
}

bool Tracer::stop() {
  std::lock_guard<std::mutex> lock(mutex_);
  return active_.exchange(false);
}

void Tracer::add(mimicActivity record, std::shared_ptr<sim::Completion> done,
                 std::shared_ptr<sim::Completion> begin,
                 std::shared_ptr<sim::KernelLaunch> launch) {
  record.correlationId = currentCorrelation;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!active_.load()) return;
  if (pending_.size() >= capacity_) {
    ++dropped_;
    return;
  }
  pending_.push_back(Pending{record, std::move(begin), std::move(done), std::move(launch)});
}

size_t Tracer::read(mimicActivity* out, size_t capacity) {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t count = 0;
  while (count < capacity && !pending_.empty()) {
    Pending& p = pending_.front();
    if (p.done && !p.done->done.load(std::memory_order_acquire)) break;
    if (p.begin && !p.begin->done.load(std::memory_order_acquire)) break;
    mimicActivity& r = out[count++] = p.record;
    if (p.done) {
      r.startNs = p.begin ? p.begin->end : p.done->start;
      r.endNs = p.done->end;
    }
    if (p.launch) fillCounters(*p.launch, config_, &r.counters);
    pending_.pop_front();
  }
  return count;
}

uint64_t Tracer::correlation() {
  return currentCorrelation;
}

uint64_t Tracer::exchangeCorrelation(uint64_t id) {
  const uint64_t previous = currentCorrelation;
  currentCorrelation = id;
  return previous;
}

}  // namespace mimic::driver
