// The commands one collective queues: what every algorithm is made of. A Schedule holds the
// calls of all ranks of one clique for one collective and queues, for a chosen rank, copies,
// reduction kernels and the event records and waits that order the ranks' queues.
#pragma once

#include <cstddef>
#include <vector>

#include "comm.h"

namespace mimic::coll {

enum class CollKind { AllReduce, Broadcast, Reduce, AllGather, ReduceScatter, AllToAll };

// One rank's call, as checked by the API function.
struct Call {
  CollKind kind;
  const void* send;
  void* recv;
  size_t count;  // elements: sendCount for AllGather, recvCount for ReduceScatter
  mimicDataType type;
  mimicReduceOp op;
  int root;
  mimicComm comm;
  mimicQueue queue;
};

using EventSlot = mimicEvent RankEvents::*;

class Schedule {
 public:
  Schedule(Clique& clique, std::vector<const Call*> calls);

  int size() const { return int(calls_.size()); }
  int next(int r) const { return (r + 1) % size(); }
  int prev(int r) const { return (r + size() - 1) % size(); }
  const Call& call(int r) const { return *calls_[r]; }
  size_t elementSize() const { return dataTypeSize(calls_[0]->type); }
  int device(int r) const { return clique_.ranks[r].device; }

  // Makes room for two receive slots of `slotBytes` and, if `work`, a work area as large;
  // slot(r, i) and work(r) then point into rank r's scratch.
  mimicResult prepareScratch(size_t slotBytes, bool work);
  char* slot(int r, int i) const;
  char* work(int r) const;

  // Each rank's queue first waits for the rank's previous collective (it may have used another
  // queue) and records `ready`; then waits for the `ready` of every rank in targets[r], the
  // ranks whose memory it writes.
  mimicResult enter(const std::vector<std::vector<int>>& targets);
  // Rank r's queue waits for the `sent` of every rank in sources[r] (copies that touch r's
  // memory and are queued elsewhere) and records `done`.
  mimicResult exit(const std::vector<std::vector<int>>& sources);

  mimicResult record(int r, EventSlot event);
  // Rank r's queue waits for rank `other`'s event.
  mimicResult wait(int r, int other, EventSlot event);

  // Queued on rank `on`'s queue; nothing for zero bytes or a copy onto itself.
  mimicResult copyPeer(int on, void* dst, int dstRank, const void* src, int srcRank, size_t bytes);
  mimicResult copyLocal(int r, void* dst, const void* src, size_t bytes);
  // dst = a op b over `count` elements on rank r's queue (Avg reduces with Sum).
  mimicResult reduce(int r, void* dst, const void* a, const void* b, size_t count);
  // buf = buf / size() when the op is Avg; nothing otherwise.
  mimicResult finishAverage(int r, void* buf, size_t count);

 private:
  mimicResult launch(int r, mimicFunction fn, void* dst, const void* a, const void* b,
                     size_t count);

  Clique& clique_;
  std::vector<const Call*> calls_;
  size_t slotBytes_ = 0;
};

}  // namespace mimic::coll
