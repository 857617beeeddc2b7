// AllToAll: rank r copies block q of its send buffer into block r of rank q's recv buffer, all
// on its own queue. The device links route copies between ranks that are not neighbours.
#include "algorithms.h"
#include "errors.h"

namespace mimic::coll {

mimicResult directAllToAll(Schedule& s) {
  const int n = s.size();
  const size_t block = s.call(0).count * s.elementSize();
  std::vector<std::vector<int>> others(n);
  for (int r = 0; r < n; ++r)
    for (int q = 0; q < n; ++q)
      if (q != r) others[r].push_back(q);
  COLL_CHECK(s.enter(others));
  for (int r = 0; r < n; ++r) {
    const char* send = static_cast<const char*>(s.call(r).send);
    // Starting at the next rank spreads the first copies of all ranks over different links.
    for (int k = 1; k <= n; ++k) {
      const int q = (r + k) % n;
      char* dst = static_cast<char*>(s.call(q).recv) + size_t(r) * block;
      if (q == r) {
        COLL_CHECK(s.copyLocal(r, dst, send + size_t(q) * block, block));
      } else {
        COLL_CHECK(s.copyPeer(r, dst, q, send + size_t(q) * block, r, block));
      }
    }
    COLL_CHECK(s.record(r, &RankEvents::sent));
  }
  return s.exit(others);
}

}  // namespace mimic::coll
