// Every collective x datatype x op (AllToAll: out of place only) against the host reference on 2
// and 4 devices, for sizes 0, 1, sizes not divisible by the rank count and a few MiB, out of place
// and in place.
#include "coll_cases.h"

namespace {

constexpr mimicDataType kTypes[] = {mimicFloat32, mimicFloat16, mimicBfloat16,
                                    mimicInt32,   mimicInt64,   mimicUint8};
constexpr mimicReduceOp kOps[] = {mimicSum, mimicProd, mimicMin, mimicMax, mimicAvg};
constexpr size_t kLarge = 3 * (size_t{1} << 18) + 5;  // 3 MiB of f32, odd

struct Param {
  Kind kind;
  int ranks;
};

class Correctness : public CollTest, public ::testing::WithParamInterface<Param> {};

TEST_P(Correctness, EveryTypeOpAndSize) {
  const Param p = GetParam();
  Clique q(p.ranks);
  for (mimicDataType t : kTypes) {
    for (mimicReduceOp op : kOps) {
      if (!reduces(p.kind) && op != mimicSum) continue;
      for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1001}, kLarge}) {
        for (bool inPlace : {false, true}) {
          if (inPlace && p.kind == Kind::AllToAll) continue;  // not supported
          runCase({p.kind, t, op, count, inPlace, p.ranks - 1}, q);
          if (HasFailure()) return;
        }
      }
    }
  }
}

std::vector<Param> params() {
  std::vector<Param> list;
  for (Kind k : {Kind::AllReduce, Kind::Broadcast, Kind::Reduce, Kind::AllGather,
                 Kind::ReduceScatter, Kind::AllToAll})
    for (int n : {2, 4}) list.push_back({k, n});
  return list;
}

INSTANTIATE_TEST_SUITE_P(Collectives, Correctness, ::testing::ValuesIn(params()),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           return std::string(kindName(info.param.kind)) + "_" +
                                  std::to_string(info.param.ranks) + "ranks";
                         });

}  // namespace
