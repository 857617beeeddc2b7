// The collective entry points: each checks its own arguments and hands the call to the group.
#include <string>

#include "errors.h"
#include "group.h"

namespace mimic::coll {
namespace {

// A buffer of `bytes` on the rank's device; NULL is allowed only when nothing is read or
// written.
mimicResult checkBuffer(const Rank& rank, const void* ptr, size_t bytes, const char* name) {
  if (bytes == 0) return MIMIC_SUCCESS;
  if (!ptr) return fail(MIMIC_ERROR_NULL_POINTER, std::string(name) + " is NULL");
  mimicPointerAttributes attrs{};
  const mimicResult r = mimicPointerGetAttributes(ptr, &attrs);
  if (r != MIMIC_SUCCESS || attrs.type != MIMIC_MEMORY_TYPE_DEVICE) {
    return fail(MIMIC_ERROR_INVALID_DEVICE_POINTER,
                std::string(name) + " is not in a live device allocation");
  }
  if (attrs.device != rank.device) {
    return fail(MIMIC_ERROR_WRONG_DEVICE, std::string(name) + " is on device " +
                                              std::to_string(attrs.device) + ", the rank on " +
                                              std::to_string(rank.device));
  }
  const size_t offset =
      size_t(static_cast<const char*>(ptr) - static_cast<const char*>(attrs.base));
  if (offset + bytes > attrs.size) {
    return fail(MIMIC_ERROR_OUT_OF_BOUNDS, std::string(name) + " needs " + std::to_string(bytes) +
                                               " bytes but its allocation has " +
                                               std::to_string(attrs.size - offset) + " left");
  }
  return MIMIC_SUCCESS;
}

// NULL is the rank's device's default queue.
mimicResult checkQueue(const Rank& rank, mimicQueue queue) {
  if (!queue) return MIMIC_SUCCESS;
  int device = -1;
  const mimicResult r = mimicQueueGetDevice(queue, &device);
  if (r != MIMIC_SUCCESS) return failDriver(r, "queue");
  if (device != rank.device) {
    return fail(MIMIC_ERROR_WRONG_DEVICE, "queue is on device " + std::to_string(device) +
                                              ", not the rank's device " +
                                              std::to_string(rank.device));
  }
  return MIMIC_SUCCESS;
}

// Checks a call; sendElems and recvElems are the elements each rank reads and writes.
mimicResult submit(const Call& call, size_t sendElems, size_t recvElems, bool reduces,
                   bool rooted) {
  COLL_CHECK(checkComm(call.comm));
  if (unsigned(call.type) >= unsigned(kNumDataTypes))
    return fail(MIMIC_ERROR_INVALID_DATATYPE, "datatype " + std::to_string(call.type));
  if (reduces && unsigned(call.op) >= unsigned(kNumReduceOps))
    return fail(MIMIC_ERROR_INVALID_REDUCE_OP, "op " + std::to_string(call.op));
  const Clique& clique = *call.comm->clique;
  const int size = int(clique.ranks.size());
  if (rooted && (call.root < 0 || call.root >= size)) {
    return fail(MIMIC_ERROR_INVALID_ROOT,
                "root " + std::to_string(call.root) + " outside 0.." + std::to_string(size - 1));
  }
  const Rank& rank = clique.ranks[call.comm->rank];
  const size_t elem = dataTypeSize(call.type);
  COLL_CHECK(checkBuffer(rank, call.send, sendElems * elem, "send"));
  COLL_CHECK(checkBuffer(rank, call.recv, recvElems * elem, "recv"));
  COLL_CHECK(checkQueue(rank, call.queue));
  return enqueue(call);
}

int sizeOf(mimicComm comm) {
  return checkComm(comm) ? 0 : int(comm->clique->ranks.size());
}
int rankOf(mimicComm comm) {
  return checkComm(comm) ? -1 : comm->rank;
}

}  // namespace
}  // namespace mimic::coll

using namespace mimic::coll;

extern "C" {

mimicResult mimicAllReduce(const void* send, void* recv, size_t count, mimicDataType datatype,
                           mimicReduceOp op, mimicComm comm, mimicQueue queue) {
  return submit({MIMIC_COLLECTIVE_ALL_REDUCE, send, recv, count, datatype, op, 0, comm, queue},
                count, count, true, false);
}

mimicResult mimicBroadcast(const void* send, void* recv, size_t count, mimicDataType datatype,
                           int root, mimicComm comm, mimicQueue queue) {
  const bool isRoot = rankOf(comm) == root;
  return submit(
      {MIMIC_COLLECTIVE_BROADCAST, send, recv, count, datatype, mimicSum, root, comm, queue},
      isRoot ? count : 0, count, false, true);
}

mimicResult mimicReduce(const void* send, void* recv, size_t count, mimicDataType datatype,
                        mimicReduceOp op, int root, mimicComm comm, mimicQueue queue) {
  const bool isRoot = rankOf(comm) == root;
  return submit({MIMIC_COLLECTIVE_REDUCE, send, recv, count, datatype, op, root, comm, queue},
                count, isRoot ? count : 0, true, true);
}

mimicResult mimicAllGather(const void* send, void* recv, size_t sendCount, mimicDataType datatype,
                           mimicComm comm, mimicQueue queue) {
  return submit(
      {MIMIC_COLLECTIVE_ALL_GATHER, send, recv, sendCount, datatype, mimicSum, 0, comm, queue},
      sendCount, sendCount * size_t(sizeOf(comm)), false, false);
}

mimicResult mimicReduceScatter(const void* send, void* recv, size_t recvCount,
                               mimicDataType datatype, mimicReduceOp op, mimicComm comm,
                               mimicQueue queue) {
  return submit(
      {MIMIC_COLLECTIVE_REDUCE_SCATTER, send, recv, recvCount, datatype, op, 0, comm, queue},
      recvCount * size_t(sizeOf(comm)), recvCount, true, false);
}

mimicResult mimicAllToAll(const void* send, void* recv, size_t count, mimicDataType datatype,
                          mimicComm comm, mimicQueue queue) {
  if (send && send == recv) return fail(MIMIC_ERROR_INVALID_VALUE, "AllToAll cannot run in place");
  const size_t total = count * size_t(sizeOf(comm));
  return submit(
      {MIMIC_COLLECTIVE_ALL_TO_ALL, send, recv, count, datatype, mimicSum, 0, comm, queue}, total,
      total, false, false);
}

}  // extern "C"
