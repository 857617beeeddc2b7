// Exact result codes for bad arguments, group misuse and ranks that disagree.
#include <cstdlib>
#include <string>

#include "coll_cases.h"

namespace {

using Errors = CollTest;

constexpr size_t kCount = 64;

TEST_F(Errors, InitAll) {
  mimicComm comms[4];
  const int twice[] = {0, 0}, missing[] = {0, 9};
  EXPECT_COLL(MIMIC_ERROR_NULL_POINTER, mimicCommInitAll(nullptr, 2, nullptr));
  EXPECT_COLL(MIMIC_ERROR_INVALID_VALUE, mimicCommInitAll(comms, 0, nullptr));
  EXPECT_COLL(MIMIC_ERROR_INVALID_VALUE, mimicCommInitAll(comms, 2, twice));
  EXPECT_COLL(MIMIC_ERROR_INVALID_DEVICE, mimicCommInitAll(comms, 2, missing));
  EXPECT_COLL(MIMIC_ERROR_INVALID_DEVICE, mimicCommInitAll(comms, 5, nullptr));
  EXPECT_NE(collDetail().find("devices[4]"), std::string::npos) << collDetail();
}

TEST_F(Errors, QueriesAndDestroy) {
  mimicComm comms[2];
  const int devices[] = {3, 1};
  ASSERT_COLL_OK(mimicCommInitAll(comms, 2, devices));
  int value = -1;
  EXPECT_COLL(MIMIC_SUCCESS, mimicCommGetRank(comms[1], &value));
  EXPECT_EQ(value, 1);
  EXPECT_COLL(MIMIC_SUCCESS, mimicCommGetSize(comms[1], &value));
  EXPECT_EQ(value, 2);
  EXPECT_COLL(MIMIC_SUCCESS, mimicCommGetDevice(comms[0], &value));
  EXPECT_EQ(value, 3);
  EXPECT_COLL(MIMIC_ERROR_NULL_POINTER, mimicCommGetRank(comms[0], nullptr));
  EXPECT_COLL(MIMIC_ERROR_NULL_POINTER, mimicCommGetSize(comms[0], nullptr));
  EXPECT_COLL(MIMIC_ERROR_NULL_POINTER, mimicCommGetDevice(comms[0], nullptr));
  EXPECT_COLL(MIMIC_ERROR_INVALID_COMM, mimicCommGetRank(nullptr, &value));
  EXPECT_COLL(MIMIC_ERROR_INVALID_COMM, mimicCommDestroy(nullptr));
  EXPECT_COLL(MIMIC_SUCCESS, mimicCommDestroy(comms[0]));
  EXPECT_COLL(MIMIC_ERROR_INVALID_COMM, mimicCommDestroy(comms[0]));
  EXPECT_COLL(MIMIC_SUCCESS, mimicCommDestroy(comms[1]));
}

TEST_F(Errors, ErrorNamesAndDetail) {
  EXPECT_STREQ(mimicCollGetErrorName(MIMIC_ERROR_GROUP_MISMATCH), "MIMIC_ERROR_GROUP_MISMATCH");
  EXPECT_STREQ(mimicCollGetErrorName(MIMIC_ERROR_INVALID_ROOT), "MIMIC_ERROR_INVALID_ROOT");
  EXPECT_STREQ(mimicCollGetErrorName(MIMIC_ERROR_NULL_POINTER), "MIMIC_ERROR_NULL_POINTER");
  EXPECT_COLL(MIMIC_ERROR_NULL_POINTER, mimicCollGetErrorDetail(nullptr));
}

TEST_F(Errors, GroupMisuse) {
  EXPECT_COLL(MIMIC_ERROR_GROUP_NOT_STARTED, mimicGroupEnd());
  Clique q(2);
  void* a = devAlloc(0, kCount * 4);
  EXPECT_COLL(MIMIC_ERROR_GROUP_REQUIRED,
              mimicAllReduce(a, a, kCount, mimicFloat32, mimicSum, q.comms[0], q.queues[0]));
  // Nested groups: only the outermost end schedules.
  ASSERT_COLL_OK(mimicGroupStart());
  ASSERT_COLL_OK(mimicGroupStart());
  ASSERT_COLL_OK(mimicGroupEnd());
  ASSERT_COLL_OK(mimicGroupEnd());
  EXPECT_COLL(MIMIC_ERROR_GROUP_NOT_STARTED, mimicGroupEnd());
}

TEST_F(Errors, SingleRankOutsideGroup) {
  Clique q(1);
  for (Kind k : {Kind::AllReduce, Kind::Broadcast, Kind::Reduce, Kind::AllGather,
                 Kind::ReduceScatter, Kind::AllToAll})
    for (size_t count : {size_t{100}, size_t{100000}}) {
      runCase({k, mimicInt32, mimicSum, count, false, 0}, q);
      setenv("MIMIC_COLL_ALGO", "tree", 1);
      runCase({k, mimicInt32, mimicMax, count, false, 0}, q);
      unsetenv("MIMIC_COLL_ALGO");
    }
  std::vector<uint8_t> in = makeInput(mimicInt32, mimicSum, 10, 1);
  void* send = devAlloc(0, in.size());
  void* recv = devAlloc(0, in.size());
  toDevice(send, in);
  ASSERT_COLL_OK(mimicAllReduce(send, recv, 10, mimicInt32, mimicAvg, q.comms[0], q.queues[0]));
  q.synchronize();
  EXPECT_EQ(fromDevice(recv, in.size()), in);
}

// Each bad call is made inside a group of its own; the group then holds nothing and ends well.
class BadArguments : public CollTest {
 protected:
  void SetUp() override {
    CollTest::SetUp();
    q = std::make_unique<Clique>(2);
    for (int r = 0; r < 2; ++r) buf[r] = devAlloc(r, kCount * 8);
    pageable.resize(kCount * 8);
  }
  mimicResult inGroup(mimicResult result) {
    EXPECT_EQ(mimicGroupEnd(), MIMIC_SUCCESS);
    return result;
  }
  std::unique_ptr<Clique> q;
  void* buf[2];
  std::vector<uint8_t> pageable;
};

#define BAD(code, call)                \
  do {                                 \
    ASSERT_COLL_OK(mimicGroupStart()); \
    EXPECT_COLL(code, inGroup(call));  \
  } while (0)

TEST_F(BadArguments, Pointers) {
  mimicComm c = q->comms[0];
  mimicQueue s = q->queues[0];
  BAD(MIMIC_ERROR_NULL_POINTER,
      mimicAllReduce(nullptr, buf[0], kCount, mimicFloat32, mimicSum, c, s));
  BAD(MIMIC_ERROR_NULL_POINTER,
      mimicAllReduce(buf[0], nullptr, kCount, mimicFloat32, mimicSum, c, s));
  BAD(MIMIC_ERROR_NULL_POINTER, mimicBroadcast(nullptr, buf[0], kCount, mimicFloat32, 0, c, s));
  BAD(MIMIC_ERROR_NULL_POINTER,
      mimicReduce(buf[0], nullptr, kCount, mimicFloat32, mimicSum, 0, c, s));
  BAD(MIMIC_ERROR_NULL_POINTER, mimicAllGather(nullptr, buf[0], kCount / 2, mimicFloat32, c, s));
  BAD(MIMIC_ERROR_NULL_POINTER,
      mimicReduceScatter(buf[0], nullptr, kCount / 2, mimicFloat32, mimicSum, c, s));
  BAD(MIMIC_ERROR_WRONG_DEVICE,
      mimicAllReduce(buf[1], buf[0], kCount, mimicFloat32, mimicSum, c, s));
  EXPECT_NE(collDetail().find("send is on device 1"), std::string::npos) << collDetail();
  BAD(MIMIC_ERROR_INVALID_DEVICE_POINTER,
      mimicAllReduce(pageable.data(), buf[0], kCount, mimicFloat32, mimicSum, c, s));
  BAD(MIMIC_ERROR_OUT_OF_BOUNDS,
      mimicAllReduce(buf[0], buf[0], kCount * 4, mimicFloat32, mimicSum, c, s));
  BAD(MIMIC_ERROR_INVALID_VALUE, mimicAllToAll(buf[0], buf[0], 1, mimicFloat32, c, s));
  void* other = devAlloc(0, kCount * 8);  // AllToAll's buffers hold size x count elements
  BAD(MIMIC_ERROR_OUT_OF_BOUNDS, mimicAllToAll(buf[0], other, kCount * 2, mimicFloat32, c, s));
  // AllGather's recv holds size x sendCount elements.
  BAD(MIMIC_ERROR_OUT_OF_BOUNDS, mimicAllGather(buf[0], buf[0], kCount * 2, mimicFloat32, c, s));
  // Non-root ranks of Broadcast need no send; count 0 needs no buffers at all.
  ASSERT_COLL_OK(mimicGroupStart());
  EXPECT_COLL(MIMIC_SUCCESS, mimicBroadcast(nullptr, buf[0], kCount, mimicFloat32, 1, c, s));
  EXPECT_COLL(MIMIC_SUCCESS,
              mimicBroadcast(buf[1], buf[1], kCount, mimicFloat32, 1, q->comms[1], q->queues[1]));
  EXPECT_COLL(MIMIC_SUCCESS, mimicGroupEnd());
  ASSERT_COLL_OK(mimicGroupStart());
  for (int r = 0; r < 2; ++r) {
    EXPECT_COLL(MIMIC_SUCCESS, mimicAllReduce(nullptr, nullptr, 0, mimicFloat32, mimicSum,
                                              q->comms[r], q->queues[r]));
  }
  EXPECT_COLL(MIMIC_SUCCESS, mimicGroupEnd());
}

TEST_F(BadArguments, CommQueueTypeOpRoot) {
  mimicComm c = q->comms[0];
  mimicQueue s = q->queues[0];
  void* b = buf[0];
  BAD(MIMIC_ERROR_INVALID_COMM, mimicAllReduce(b, b, kCount, mimicFloat32, mimicSum, nullptr, s));
  BAD(MIMIC_ERROR_WRONG_DEVICE,
      mimicAllReduce(b, b, kCount, mimicFloat32, mimicSum, c, q->queues[1]));
  mimicQueue dead = nullptr;
  ASSERT_EQ(mimicQueueCreate(0, 0, MIMIC_QUEUE_PRIORITY_LOW, &dead), MIMIC_SUCCESS);
  ASSERT_EQ(mimicQueueDestroy(dead), MIMIC_SUCCESS);
  BAD(MIMIC_ERROR_INVALID_QUEUE, mimicAllReduce(b, b, kCount, mimicFloat32, mimicSum, c, dead));
  BAD(MIMIC_ERROR_INVALID_DATATYPE, mimicAllReduce(b, b, kCount, mimicDataType(6), mimicSum, c, s));
  BAD(MIMIC_ERROR_INVALID_DATATYPE, mimicAllGather(b, b, 1, mimicDataType(-1), c, s));
  BAD(MIMIC_ERROR_INVALID_REDUCE_OP,
      mimicAllReduce(b, b, kCount, mimicFloat32, mimicReduceOp(5), c, s));
  BAD(MIMIC_ERROR_INVALID_REDUCE_OP,
      mimicReduceScatter(b, b, 1, mimicFloat32, mimicReduceOp(-1), c, s));
  BAD(MIMIC_ERROR_INVALID_ROOT, mimicBroadcast(b, b, kCount, mimicFloat32, 2, c, s));
  BAD(MIMIC_ERROR_INVALID_ROOT, mimicReduce(b, b, kCount, mimicFloat32, mimicSum, -1, c, s));
}

// Both ranks call; rank 1's call differs from rank 0's in one field.
mimicResult mismatched(Clique& q, void* const buf[2], const Case& c0, const Case& c1) {
  EXPECT_EQ(mimicGroupStart(), MIMIC_SUCCESS);
  EXPECT_EQ(issue(c0, q, 0, buf[0], buf[0]), MIMIC_SUCCESS);
  EXPECT_EQ(issue(c1, q, 1, buf[1], buf[1]), MIMIC_SUCCESS);
  return mimicGroupEnd();
}

TEST_F(BadArguments, RanksDisagree) {
  const Case base{Kind::AllReduce, mimicFloat32, mimicSum, 16, true, 0};
  Case other = base;
  other.count = 8;
  EXPECT_COLL(MIMIC_ERROR_GROUP_MISMATCH, mismatched(*q, buf, base, other));
  EXPECT_NE(collDetail().find("ranks 0 and 1 disagree: count 16 vs 8"), std::string::npos)
      << collDetail();
  other = base;
  other.type = mimicInt32;
  EXPECT_COLL(MIMIC_ERROR_GROUP_MISMATCH, mismatched(*q, buf, base, other));
  EXPECT_NE(collDetail().find("datatype"), std::string::npos) << collDetail();
  other = base;
  other.op = mimicMax;
  EXPECT_COLL(MIMIC_ERROR_GROUP_MISMATCH, mismatched(*q, buf, base, other));
  EXPECT_NE(collDetail().find("op"), std::string::npos) << collDetail();
  other = base;
  other.kind = Kind::Broadcast;
  EXPECT_COLL(MIMIC_ERROR_GROUP_MISMATCH, mismatched(*q, buf, base, other));
  EXPECT_NE(collDetail().find("AllReduce vs Broadcast"), std::string::npos) << collDetail();
  Case b0 = base, b1 = base;
  b0.kind = b1.kind = Kind::Broadcast;
  b1.root = 1;
  EXPECT_COLL(MIMIC_ERROR_GROUP_MISMATCH, mismatched(*q, buf, b0, b1));
  EXPECT_NE(collDetail().find("root 0 vs 1"), std::string::npos) << collDetail();

  // Only rank 0 calls.
  ASSERT_COLL_OK(mimicGroupStart());
  ASSERT_COLL_OK(issue(base, *q, 0, buf[0], buf[0]));
  EXPECT_COLL(MIMIC_ERROR_GROUP_INCOMPLETE, mimicGroupEnd());
  EXPECT_NE(collDetail().find("rank 1 0"), std::string::npos) << collDetail();

  // The failed groups left nothing behind: a correct one works.
  runCase({Kind::AllReduce, mimicFloat32, mimicSum, 100, false, 0}, *q);
}

}  // namespace
