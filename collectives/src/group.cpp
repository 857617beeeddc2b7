// Group semantics: calls are only collected; mimicGroupEnd matches the i-th call of every rank
// of a clique with each other, checks that they agree, and schedules them in order.
#include "group.h"

#include <map>
#include <string>

#include "errors.h"

namespace mimic::coll {
namespace {

thread_local int depth = 0;
thread_local std::vector<Call> pending;

const char* kindName(mimicCollectiveKind kind) {
  static const char* const kNames[] = {"AllReduce", "Broadcast",     "Reduce",
                                       "AllGather", "ReduceScatter", "AllToAll"};
  return kNames[int(kind)];
}

// Why `a` (rank 0's call) and `b` disagree, or "" if they agree.
std::string difference(const Call& a, const Call& b) {
  if (a.kind != b.kind) return std::string(kindName(a.kind)) + " vs " + kindName(b.kind);
  if (a.count != b.count)
    return "count " + std::to_string(a.count) + " vs " + std::to_string(b.count);
  if (a.type != b.type)
    return "datatype " + std::to_string(a.type) + " vs " + std::to_string(b.type);
  const bool reduces = a.kind == MIMIC_COLLECTIVE_ALL_REDUCE || a.kind == MIMIC_COLLECTIVE_REDUCE ||
                       a.kind == MIMIC_COLLECTIVE_REDUCE_SCATTER;
  if (reduces && a.op != b.op) return "op " + std::to_string(a.op) + " vs " + std::to_string(b.op);
  const bool rooted = a.kind == MIMIC_COLLECTIVE_BROADCAST || a.kind == MIMIC_COLLECTIVE_REDUCE;
  if (rooted && a.root != b.root)
    return "root " + std::to_string(a.root) + " vs " + std::to_string(b.root);
  return "";
}

// Checks every clique's calls and lists each collective's calls by rank, in call order.
mimicResult match(const std::vector<Call>& calls,
                  std::vector<std::pair<Clique*, std::vector<const Call*>>>& collectives) {
  std::map<Clique*, std::vector<std::vector<const Call*>>> byClique;
  std::vector<Clique*> order;
  for (const Call& call : calls) {
    Clique* clique = call.comm->clique.get();
    auto& perRank = byClique[clique];
    if (perRank.empty()) {
      perRank.resize(clique->ranks.size());
      order.push_back(clique);
    }
    perRank[call.comm->rank].push_back(&call);
  }
  for (Clique* clique : order) {
    const auto& perRank = byClique[clique];
    for (size_t r = 0; r < perRank.size(); ++r) {
      if (perRank[r].size() != perRank[0].size()) {
        return fail(MIMIC_ERROR_GROUP_INCOMPLETE,
                    "rank 0 called " + std::to_string(perRank[0].size()) + " collectives, rank " +
                        std::to_string(r) + " " + std::to_string(perRank[r].size()));
      }
    }
    for (size_t i = 0; i < perRank[0].size(); ++i) {
      std::vector<const Call*> ranks;
      for (size_t r = 0; r < perRank.size(); ++r) {
        const std::string why = difference(*perRank[0][i], *perRank[r][i]);
        if (!why.empty()) {
          return fail(MIMIC_ERROR_GROUP_MISMATCH, "collective " + std::to_string(i) +
                                                      ": ranks 0 and " + std::to_string(r) +
                                                      " disagree: " + why);
        }
        ranks.push_back(perRank[r][i]);
      }
      if (perRank[0][i]->count > 0) collectives.emplace_back(clique, std::move(ranks));
    }
  }
  return MIMIC_SUCCESS;
}

// A rank's collective on another queue than its previous one waits for that one first.
mimicResult orderAfterPrevious(Rank& rank, mimicQueue queue) {
  if (rank.launched && rank.lastQueue != queue) {
    const mimicResult recorded = mimicEventRecord(rank.previous, rank.lastQueue);
    // A destroyed queue has nothing left to wait for (its work still completes on its own).
    if (recorded != MIMIC_ERROR_INVALID_QUEUE) {
      COLL_TRY(recorded);
      COLL_TRY(mimicQueueWaitEvent(queue, rank.previous));
    }
  }
  rank.lastQueue = queue;
  rank.launched = true;
  return MIMIC_SUCCESS;
}

// One collective of a clique: the driver moves the data and queues each rank's part.
mimicResult launch(Clique& clique, const std::vector<const Call*>& calls) {
  const Call& first = *calls[0];
  std::vector<int> devices;
  std::vector<const void*> sends;
  std::vector<void*> recvs;
  std::vector<mimicQueue> queues;
  for (size_t r = 0; r < calls.size(); ++r) {
    COLL_CHECK(orderAfterPrevious(clique.ranks[r], calls[r]->queue));
    devices.push_back(clique.ranks[r].device);
    sends.push_back(calls[r]->send);
    recvs.push_back(calls[r]->recv);
    queues.push_back(calls[r]->queue);
  }
  const mimicCollectiveDesc desc{first.kind, first.count,       first.type,    first.op,
                                 first.root, int(calls.size()), devices.data()};
  COLL_TRY(mimicCollectiveLaunch(&desc, sends.data(), recvs.data(), queues.data(), nullptr));
  return MIMIC_SUCCESS;
}

}  // namespace

mimicResult enqueue(const Call& call) {
  if (depth > 0) {
    pending.push_back(call);
    return MIMIC_SUCCESS;
  }
  if (call.comm->clique->ranks.size() > 1) {
    return fail(MIMIC_ERROR_GROUP_REQUIRED,
                "a communicator of more than one rank needs mimicGroupStart/mimicGroupEnd");
  }
  mimicGroupStart();
  pending.push_back(call);
  return mimicGroupEnd();
}

}  // namespace mimic::coll

using namespace mimic::coll;

extern "C" {

mimicResult mimicGroupStart(void) {
  ++depth;
  return MIMIC_SUCCESS;
}

mimicResult mimicGroupEnd(void) {
  if (depth == 0) return fail(MIMIC_ERROR_GROUP_NOT_STARTED, "no mimicGroupStart to end");
  if (--depth > 0) return MIMIC_SUCCESS;
  const std::vector<Call> calls = std::move(pending);
  pending.clear();
  std::vector<std::pair<Clique*, std::vector<const Call*>>> collectives;
  COLL_CHECK(match(calls, collectives));
  for (const auto& [clique, ranks] : collectives) COLL_CHECK(launch(*clique, ranks));
  return MIMIC_SUCCESS;
}

}  // extern "C"
