// One collective call on every rank of a clique, checked against the host reference.
#pragma once

#include <string>

#include "coll_helpers.h"

enum class Kind { AllReduce, Broadcast, Reduce, AllGather, ReduceScatter, AllToAll };

inline const char* kindName(Kind k) {
  static const char* const kNames[] = {"AllReduce", "Broadcast",     "Reduce",
                                       "AllGather", "ReduceScatter", "AllToAll"};
  return kNames[int(k)];
}

inline bool reduces(Kind k) {
  return k == Kind::AllReduce || k == Kind::Reduce || k == Kind::ReduceScatter;
}

struct Case {
  Kind kind;
  mimicDataType type;
  mimicReduceOp op;
  size_t count;  // the count argument of the call
  bool inPlace;
  int root;
};

// Issues the collective of rank r.
inline mimicResult issue(const Case& c, Clique& q, int r, const void* send, void* recv) {
  switch (c.kind) {
    case Kind::AllReduce:
      return mimicAllReduce(send, recv, c.count, c.type, c.op, q.comms[r], q.queues[r]);
    case Kind::Broadcast:
      return mimicBroadcast(send, recv, c.count, c.type, c.root, q.comms[r], q.queues[r]);
    case Kind::Reduce:
      return mimicReduce(send, recv, c.count, c.type, c.op, c.root, q.comms[r], q.queues[r]);
    case Kind::AllGather:
      return mimicAllGather(send, recv, c.count, c.type, q.comms[r], q.queues[r]);
    case Kind::ReduceScatter:
      return mimicReduceScatter(send, recv, c.count, c.type, c.op, q.comms[r], q.queues[r]);
    case Kind::AllToAll:
      return mimicAllToAll(send, recv, c.count, c.type, q.comms[r], q.queues[r]);
  }
  return MIMIC_ERROR_INVALID_VALUE;
}

// Runs the case on the clique and compares every rank's result with the reference.
inline void runCase(const Case& c, Clique& q) {
  const int n = q.size();
  const size_t size = typeSize(c.type);
  const bool wideSend = c.kind == Kind::ReduceScatter || c.kind == Kind::AllToAll;
  const bool wideRecv = c.kind == Kind::AllGather || c.kind == Kind::AllToAll;
  const size_t sendCount = wideSend ? c.count * n : c.count;
  const size_t recvCount = wideRecv ? c.count * n : c.count;
  const std::string what = std::string(kindName(c.kind)) + " n=" + std::to_string(n) +
                           " type=" + std::to_string(c.type) + " op=" + std::to_string(c.op) +
                           " count=" + std::to_string(c.count) + (c.inPlace ? " in place" : "");
  std::vector<std::vector<uint8_t>> inputs(n);
  std::vector<void*> sends(n), recvs(n), allocations;
  for (int r = 0; r < n; ++r) {
    inputs[r] = makeInput(c.type, c.op, sendCount, r + 1);
    if (c.inPlace) {
      void* buffer = devAlloc(r, std::max(sendCount, recvCount) * size);
      allocations.push_back(buffer);
      char* base = static_cast<char*>(buffer);
      sends[r] = c.kind == Kind::AllGather ? base + r * c.count * size : base;
      recvs[r] = c.kind == Kind::ReduceScatter ? base + r * c.count * size : base;
    } else {
      sends[r] = devAlloc(r, sendCount * size);
      recvs[r] = devAlloc(r, recvCount * size);
      allocations.push_back(sends[r]);
      allocations.push_back(recvs[r]);
    }
    toDevice(sends[r], inputs[r]);
  }
  ASSERT_COLL_OK(mimicGroupStart());
  for (int r = 0; r < n; ++r) ASSERT_COLL_OK(issue(c, q, r, sends[r], recvs[r])) << what;
  ASSERT_COLL_OK(mimicGroupEnd()) << what;
  q.synchronize();

  for (int r = 0; r < n; ++r) {
    if (c.kind == Kind::Reduce && r != c.root) continue;
    const std::vector<uint8_t> got = fromDevice(recvs[r], recvCount * size);
    std::vector<uint8_t> want(recvCount * size);
    for (size_t i = 0; i < recvCount; ++i) {
      switch (c.kind) {
        case Kind::AllReduce:
        case Kind::Reduce:
          setValue(c.type, want, i, reduceRef(c.type, c.op, inputs, i));
          break;
        case Kind::Broadcast:
          setValue(c.type, want, i, getValue(c.type, inputs[c.root], i));
          break;
        case Kind::AllGather:
          setValue(c.type, want, i, getValue(c.type, inputs[i / c.count], i % c.count));
          break;
        case Kind::ReduceScatter:
          setValue(c.type, want, i, reduceRef(c.type, c.op, inputs, r * c.count + i));
          break;
        case Kind::AllToAll:
          setValue(c.type, want, i,
                   getValue(c.type, inputs[i / c.count], r * c.count + i % c.count));
          break;
      }
    }
    if (got != want) {
      size_t i = 0;
      while (std::memcmp(&got[i * size], &want[i * size], size) == 0) ++i;
      ADD_FAILURE() << what << ": rank " << r << " element " << i << " is "
                    << getValue(c.type, got, i) << ", expected " << getValue(c.type, want, i);
    }
  }
  for (void* p : allocations) EXPECT_EQ(mimicMemFree(p), MIMIC_SUCCESS);
}
