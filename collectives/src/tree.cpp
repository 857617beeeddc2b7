// Binary-tree algorithms, for messages too small for the ring's 2(n - 1) latency-bound steps:
// a tree reduce or broadcast takes about 2 log2(n) steps of the whole message. Rank r has the
// virtual rank v = (r - root) mod n; v's children are 2v + 1 and 2v + 2.
#include "algorithms.h"
#include "errors.h"

namespace mimic::coll {
namespace {

struct Tree {
  int n, root;
  int rank(int v) const { return (v + root) % n; }
  int virtualOf(int r) const { return (r - root + n) % n; }
  int parent(int r) const { return rank((virtualOf(r) - 1) / 2); }
  std::vector<int> children(int r) const {
    std::vector<int> list;
    for (int v = 2 * virtualOf(r) + 1; v <= 2 * virtualOf(r) + 2 && v < n; ++v)
      list.push_back(rank(v));
    return list;
  }
};

// Reduces the ranks' `in` into `work(root)`. Each rank accumulates its children's partial
// results into work(r) (receiving them in its two slots) and sends work(r) to its parent.
template <typename In, typename Work>
mimicResult reduceUp(Schedule& s, const Tree& tree, In in, Work work) {
  const size_t count = s.call(0).count, bytes = count * s.elementSize();
  for (int r = 0; r < s.size(); ++r) COLL_CHECK(s.copyLocal(r, work(r), in(r), bytes));
  // Children have larger virtual ranks: going down the virtual ranks queues each send (and its
  // record) before the parent's wait for it.
  for (int v = s.size() - 1; v >= 0; --v) {
    const int r = tree.rank(v);
    const std::vector<int> children = tree.children(r);
    for (size_t k = 0; k < children.size(); ++k) {
      COLL_CHECK(s.wait(r, children[k], &RankEvents::sent));
      COLL_CHECK(s.reduce(r, work(r), work(r), s.slot(r, int(k)), count));
    }
    if (v == 0) break;
    const int p = tree.parent(r);
    COLL_CHECK(s.copyPeer(r, s.slot(p, (v - 1) % 2), p, work(r), r, bytes));
    COLL_CHECK(s.record(r, &RankEvents::sent));
  }
  return s.finishAverage(tree.root, work(tree.root), count);
}

// Copies recv of the root down the tree: each rank pulls from its parent on its own queue once
// the parent has the data (its `sent` record), so siblings copy in parallel.
mimicResult broadcastDown(Schedule& s, const Tree& tree) {
  const size_t bytes = s.call(0).count * s.elementSize();
  COLL_CHECK(s.record(tree.root, &RankEvents::sent));
  for (int v = 1; v < s.size(); ++v) {
    const int r = tree.rank(v), p = tree.parent(r);
    COLL_CHECK(s.wait(r, p, &RankEvents::sent));
    COLL_CHECK(s.copyPeer(r, s.call(r).recv, r, s.call(p).recv, p, bytes));
    COLL_CHECK(s.record(r, &RankEvents::sent));
  }
  return MIMIC_SUCCESS;
}

std::vector<std::vector<int>> parents(const Schedule& s, const Tree& tree) {
  std::vector<std::vector<int>> list(s.size());
  for (int r = 0; r < s.size(); ++r)
    if (r != tree.root) list[r] = {tree.parent(r)};
  return list;
}

// A parent's buffer is read by its children's copies until their `sent` records.
std::vector<std::vector<int>> childrenOf(const Schedule& s, const Tree& tree) {
  std::vector<std::vector<int>> list(s.size());
  for (int r = 0; r < s.size(); ++r) list[r] = tree.children(r);
  return list;
}

}  // namespace

mimicResult treeAllReduce(Schedule& s) {
  const Tree tree{s.size(), 0};
  COLL_CHECK(s.prepareScratch(s.call(0).count * s.elementSize(), false));
  COLL_CHECK(s.enter(parents(s, tree)));
  COLL_CHECK(reduceUp(
      s, tree, [&](int r) { return s.call(r).send; }, [&](int r) { return s.call(r).recv; }));
  COLL_CHECK(broadcastDown(s, tree));
  return s.exit(childrenOf(s, tree));
}

mimicResult treeBroadcast(Schedule& s) {
  const Tree tree{s.size(), s.call(0).root};
  COLL_CHECK(s.enter(std::vector<std::vector<int>>(s.size())));
  COLL_CHECK(s.copyLocal(tree.root, s.call(tree.root).recv, s.call(tree.root).send,
                         s.call(0).count * s.elementSize()));
  COLL_CHECK(broadcastDown(s, tree));
  return s.exit(childrenOf(s, tree));
}

mimicResult treeReduce(Schedule& s) {
  const Tree tree{s.size(), s.call(0).root};
  COLL_CHECK(s.prepareScratch(s.call(0).count * s.elementSize(), true));
  COLL_CHECK(s.enter(parents(s, tree)));
  // The root accumulates in recv; other ranks in their work area, except leaves, which send
  // their input as it is.
  auto work = [&](int r) -> void* {
    if (r == tree.root) return s.call(r).recv;
    if (tree.children(r).empty()) return const_cast<void*>(s.call(r).send);
    return s.work(r);
  };
  COLL_CHECK(reduceUp(
      s, tree, [&](int r) { return s.call(r).send; }, work));
  return s.exit(std::vector<std::vector<int>>(s.size()));
}

}  // namespace mimic::coll
