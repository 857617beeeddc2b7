#include "sim/collective/algorithm.h"

#include <algorithm>
#include <numeric>

namespace mimic::sim::coll {

const std::vector<const Algorithm*>& algorithms() {
  static const std::vector<const Algorithm*> kAll = {
      &ringAlgorithm(),         &treeAlgorithm(),         &directAlgorithm(),
      &twoShotAlgorithm(),      &switchReduceAlgorithm(), &hierarchicalAlgorithm(),
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
