#include "schedule.h"

#include "errors.h"

namespace mimic::coll {
namespace {

constexpr size_t kSlotAlignment = 256;

}  // namespace

Schedule::Schedule(Clique& clique, std::vector<const Call*> calls)
    : clique_(clique), calls_(std::move(calls)) {}

mimicResult Schedule::prepareScratch(size_t slotBytes, bool work) {
  slotBytes_ = (slotBytes + kSlotAlignment - 1) / kSlotAlignment * kSlotAlignment;
  for (Rank& rank : clique_.ranks) {
    if (mimicResult r = ensureScratch(rank, slotBytes_ * (work ? 3 : 2))) return r;
  }
  return MIMIC_SUCCESS;
}

char* Schedule::slot(int r, int i) const {
  return static_cast<char*>(clique_.ranks[r].scratch) + size_t(i) * slotBytes_;
}

char* Schedule::work(int r) const {
  return slot(r, 2);
}

mimicResult Schedule::enter(const std::vector<std::vector<int>>& targets) {
  for (int r = 0; r < size(); ++r) {
    if (clique_.ranks[r].doneRecorded) COLL_CHECK(wait(r, r, &RankEvents::done));
    COLL_CHECK(record(r, &RankEvents::ready));
  }
  for (int r = 0; r < size(); ++r)
    for (int t : targets[r]) COLL_CHECK(wait(r, t, &RankEvents::ready));
  return MIMIC_SUCCESS;
}

mimicResult Schedule::exit(const std::vector<std::vector<int>>& sources) {
  for (int r = 0; r < size(); ++r) {
    for (int s : sources[r]) COLL_CHECK(wait(r, s, &RankEvents::sent));
    COLL_CHECK(record(r, &RankEvents::done));
    clique_.ranks[r].doneRecorded = true;
  }
  return MIMIC_SUCCESS;
}

mimicResult Schedule::record(int r, EventSlot event) {
  COLL_TRY(mimicEventRecord(clique_.ranks[r].events.*event, calls_[r]->queue));
  return MIMIC_SUCCESS;
}

mimicResult Schedule::wait(int r, int other, EventSlot event) {
  COLL_TRY(mimicQueueWaitEvent(calls_[r]->queue, clique_.ranks[other].events.*event));
  return MIMIC_SUCCESS;
}

mimicResult Schedule::copyPeer(int on, void* dst, int dstRank, const void* src, int srcRank,
                               size_t bytes) {
  if (bytes == 0 || dst == src) return MIMIC_SUCCESS;
  COLL_TRY(mimicMemcpyPeerAsync(dst, clique_.ranks[dstRank].device, src,
                                clique_.ranks[srcRank].device, bytes, calls_[on]->queue));
  return MIMIC_SUCCESS;
}

mimicResult Schedule::copyLocal(int r, void* dst, const void* src, size_t bytes) {
  if (bytes == 0 || dst == src) return MIMIC_SUCCESS;
  COLL_TRY(mimicMemcpyAsync(dst, src, bytes, calls_[r]->queue));
  return MIMIC_SUCCESS;
}

mimicResult Schedule::reduce(int r, void* dst, const void* a, const void* b, size_t count) {
  const Call& c = *calls_[r];
  const int op = c.op == mimicAvg ? mimicSum : c.op;
  return launch(r, clique_.ranks[r].reduce[c.type][op], dst, a, b, count);
}

mimicResult Schedule::finishAverage(int r, void* buf, size_t count) {
  const Call& c = *calls_[r];
  if (c.op != mimicAvg || size() == 1) return MIMIC_SUCCESS;
  return launch(r, clique_.ranks[r].scale[c.type], buf, buf, buf, count);
}

mimicResult Schedule::launch(int r, mimicFunction fn, void* dst, const void* a, const void* b,
                             size_t count) {
  if (count == 0) return MIMIC_SUCCESS;
  const Rank& rank = clique_.ranks[r];
  const uint64_t tile = tileElements(rank.scratchpadBytes, calls_[r]->type);
  const int64_t args[4] = {int64_t(reinterpret_cast<uintptr_t>(dst)),
                           int64_t(reinterpret_cast<uintptr_t>(a)),
                           int64_t(reinterpret_cast<uintptr_t>(b)), int64_t(count)};
  const mimicDim3 grid{uint32_t((count + tile - 1) / tile), 1, 1};
  COLL_TRY(mimicLaunchKernel(fn, grid, args, sizeof args, calls_[r]->queue));
  return MIMIC_SUCCESS;
}

}  // namespace mimic::coll
