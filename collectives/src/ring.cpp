// Ring algorithms. Chunk c of a ring collective is reduced by passing it around the ring: in
// reduce-scatter step s rank r sends chunk (r - s - 1) mod n, so after n - 1 steps rank r holds
// chunk r complete; in allgather step s it forwards chunk (r - s) mod n. Partial sums travel
// through two receive slots per rank, alternating by step, so a rank can receive step s + 1
// while it still sends step s.
#include <functional>

#include "algorithms.h"
#include "errors.h"

namespace mimic::coll {
namespace {

// Where chunk c lives for rank r, and how long it is.
struct Chunks {
  std::function<const char*(int r, int c)> in;  // the rank's own contribution
  std::function<char*(int r, int c)> out;       // where the result goes
  std::function<size_t(int c)> count;
};

int mod(int a, int n) {
  return (a % n + n) % n;
}

// Each rank's next (or previous) rank; none on a ring of one, which sends nothing.
std::vector<std::vector<int>> ringNeighbours(const Schedule& s, bool next) {
  std::vector<std::vector<int>> list(s.size());
  if (s.size() == 1) return list;
  for (int r = 0; r < s.size(); ++r) list[r] = {next ? s.next(r) : s.prev(r)};
  return list;
}

mimicResult reduceScatterSteps(Schedule& s, const Chunks& chunks) {
  const int n = s.size();
  const size_t size = s.elementSize();
  for (int step = 0; step + 1 < n; ++step) {
    const int slot = step % 2;
    // A slot is free once the receiver's previous kernel (queued after its previous send out of
    // the same slot) has run.
    if (step > 0)
      for (int r = 0; r < n; ++r) COLL_CHECK(s.wait(r, s.next(r), &RankEvents::reduced));
    for (int r = 0; r < n; ++r) {
      const int c = mod(r - step - 1, n);
      const void* src = step == 0 ? static_cast<const void*>(chunks.in(r, c)) : s.slot(r, 1 - slot);
      COLL_CHECK(s.copyPeer(r, s.slot(s.next(r), slot), s.next(r), src, r, chunks.count(c) * size));
      COLL_CHECK(s.record(r, &RankEvents::sent));
    }
    for (int r = 0; r < n; ++r) {
      const int c = mod(r - step - 2, n);  // the chunk prev(r) sent
      char* dst = step + 2 == n ? chunks.out(r, c) : s.slot(r, slot);
      COLL_CHECK(s.wait(r, s.prev(r), &RankEvents::sent));
      COLL_CHECK(s.reduce(r, dst, chunks.in(r, c), s.slot(r, slot), chunks.count(c)));
      COLL_CHECK(s.record(r, &RankEvents::reduced));
    }
  }
  return MIMIC_SUCCESS;
}

// Rank r starts with chunk r in out(r, r); afterReduce: that chunk was just reduced, and the
// neighbour's kernels must be done with its memory before it is overwritten.
mimicResult allGatherSteps(Schedule& s, const Chunks& chunks, bool afterReduce) {
  const int n = s.size();
  const size_t size = s.elementSize();
  for (int step = 0; step + 1 < n; ++step) {
    for (int r = 0; r < n; ++r) {
      if (step > 0) COLL_CHECK(s.wait(r, s.prev(r), &RankEvents::sent));
      if (step == 0 && afterReduce) COLL_CHECK(s.wait(r, s.next(r), &RankEvents::reduced));
    }
    for (int r = 0; r < n; ++r) {
      const int c = mod(r - step, n);
      COLL_CHECK(s.copyPeer(r, chunks.out(s.next(r), c), s.next(r), chunks.out(r, c), r,
                            chunks.count(c) * size));
      COLL_CHECK(s.record(r, &RankEvents::sent));
    }
  }
  return MIMIC_SUCCESS;
}

}  // namespace

mimicResult ringAllReduce(Schedule& s) {
  const int n = s.size();
  const size_t count = s.call(0).count, size = s.elementSize();
  // Chunk c is [c * count / n, (c + 1) * count / n): sizes differ by at most one element.
  auto begin = [=](int c) { return size_t(c) * count / size_t(n); };
  Chunks chunks{
      [&](int r, int c) { return static_cast<const char*>(s.call(r).send) + begin(c) * size; },
      [&](int r, int c) { return static_cast<char*>(s.call(r).recv) + begin(c) * size; },
      [&](int c) { return begin(c + 1) - begin(c); }};
  COLL_CHECK(s.prepareScratch((count / n + 1) * size, false));
  COLL_CHECK(s.enter(ringNeighbours(s, true)));
  if (n == 1) COLL_CHECK(s.copyLocal(0, chunks.out(0, 0), chunks.in(0, 0), count * size));
  COLL_CHECK(reduceScatterSteps(s, chunks));
  for (int r = 0; r < n; ++r) {
    COLL_CHECK(s.finishAverage(r, chunks.out(r, r), chunks.count(r)));
    COLL_CHECK(s.record(r, &RankEvents::reduced));
  }
  COLL_CHECK(allGatherSteps(s, chunks, true));
  return s.exit(ringNeighbours(s, false));
}

mimicResult ringAllGather(Schedule& s) {
  const size_t count = s.call(0).count, size = s.elementSize();
  Chunks chunks{[&](int r, int) { return static_cast<const char*>(s.call(r).send); },
                [&](int r, int c) { return static_cast<char*>(s.call(r).recv) + c * count * size; },
                [&](int) { return count; }};
  COLL_CHECK(s.enter(ringNeighbours(s, true)));
  for (int r = 0; r < s.size(); ++r)
    COLL_CHECK(s.copyLocal(r, chunks.out(r, r), chunks.in(r, r), count * size));
  COLL_CHECK(allGatherSteps(s, chunks, false));
  return s.exit(ringNeighbours(s, false));
}

mimicResult ringReduceScatter(Schedule& s) {
  const size_t count = s.call(0).count, size = s.elementSize();
  Chunks chunks{
      [&](int r, int c) { return static_cast<const char*>(s.call(r).send) + c * count * size; },
      [&](int r, int) { return static_cast<char*>(s.call(r).recv); }, [&](int) { return count; }};
  COLL_CHECK(s.prepareScratch(count * size, false));
  COLL_CHECK(s.enter(ringNeighbours(s, true)));
  if (s.size() == 1) COLL_CHECK(s.copyLocal(0, chunks.out(0, 0), chunks.in(0, 0), count * size));
  COLL_CHECK(reduceScatterSteps(s, chunks));
  for (int r = 0; r < s.size(); ++r) COLL_CHECK(s.finishAverage(r, chunks.out(r, r), count));
  return s.exit(std::vector<std::vector<int>>(s.size()));
}

}  // namespace mimic::coll
