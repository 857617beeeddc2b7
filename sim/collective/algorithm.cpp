#include "sim/collective/algorithm.h"

#include <algorithm>
#include <numeric>

namespace mimic::sim::coll {

const std::vector<const Algorithm*>& algorithms() {
  static const std::vector<const Algorithm*> kAll = {
      &ringAlgorithm(),    &treeAlgorithm(),         &directAlgorithm(),
      &twoShotAlgorithm(), &switchReduceAlgorithm(), &hierarchicalAlgorithm(),
  };
  return kAll;
}

const Algorithm* findAlgorithm(const std::string& name) {
  for (const Algorithm* a : algorithms()) {
    if (name == a->name()) return a;
  }
  return nullptr;
}

std::string algorithmNames() {
  std::string names;
  for (const Algorithm* a : algorithms()) {
    names += (names.empty() ? "" : ", ") + std::string(a->name());
  }
  return names;
}

namespace {

// Walecki's decomposition of the complete graph on an even n >= 4 into n/2 - 1 Hamiltonian
// cycles (and a perfect matching, left unused): positions 0..n-2 on a circle and n-1 in the
// middle; cycle i runs n-1, i, i+1, i-1, i+2, i-2, ... around the circle and back to the middle.
// Used in both directions, the rings cover all links but the matching's.
std::vector<int> waleckiCycle(int n, int i) {
  const int m = n - 1;
  std::vector<int> cycle{m};
  for (int k = 0; k < m; ++k) {
    const int offset = k % 2 == 1 ? (k + 1) / 2 : -(k / 2);
    cycle.push_back(((i + offset) % m + m) % m);
  }
  return cycle;
}

}  // namespace

std::vector<int> ringOrder(const CollectiveRequest& request, const CollectiveTopology& topology,
                           int c) {
  const int n = request.ranks();
  std::vector<int> byDevice(n);
  std::iota(byDevice.begin(), byDevice.end(), 0);
  std::stable_sort(byDevice.begin(), byDevice.end(),
                   [&](int a, int b) { return request.devices[a] < request.devices[b]; });
  const bool oneNode = topology.nodeOf(request.devices[byDevice.front()]) ==
                       topology.nodeOf(request.devices[byDevice.back()]);
  std::vector<int> order;
  if (oneNode && topology.intraNode == "full_mesh" && n >= 4 && n % 2 == 0) {
    const int cycles = n / 2 - 1;
    for (int position : waleckiCycle(n, (c / 2) % cycles)) order.push_back(byDevice[position]);
    if (c % 2 == 1) std::reverse(order.begin(), order.end());
    return order;
  }
  if (oneNode && topology.intraNode == "full_mesh") {
    std::vector<int> strides;
    for (int s = 1; s < n; ++s) {
      if (std::gcd(s, n) == 1) strides.push_back(s);
    }
    const int stride = strides.empty() ? 1 : strides[c % strides.size()];
    for (int i = 0, at = 0; i < n; ++i, at = (at + stride) % n) order.push_back(byDevice[at]);
    return order;
  }
  for (size_t first = 0; first < byDevice.size();) {
    size_t last = first;
    const int node = topology.nodeOf(request.devices[byDevice[first]]);
    while (last < byDevice.size() && topology.nodeOf(request.devices[byDevice[last]]) == node) {
      ++last;
    }
    const size_t count = last - first;
    for (size_t i = 0; i < count; ++i) order.push_back(byDevice[first + (i + c) % count]);
    first = last;
  }
  return order;
}

void addSplit(Step& step, const CollectiveRequest& request, int from, int to, uint64_t bytes,
              int channels, bool reduce) {
  if (bytes == 0) return;
  const uint64_t each = divideUp(bytes, uint64_t(channels));
  for (int c = 0; c < channels; ++c) {
    step.transfers.push_back({request.devices[from], request.devices[to], each, c, reduce, 1});
  }
}

}  // namespace mimic::sim::coll
