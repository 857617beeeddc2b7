// The list form of the elementwise kernel (elementwiseList, the _foreach_ ops' one launch):
// every entry bit-identical to elementwise() on it alone, lists longer than one launch takes,
// empty entries, one launch per kMaxListSegments tensors, and the error paths.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>

#include "elementwise_test.h"
#include "mimic/mimic.hpp"
#include "mimic/mimic_trace.h"

namespace {

using mimic::ops::elementwise;
using mimic::ops::elementwiseList;
using mimic::ops::kMaxListSegments;

class ElementwiseList : public ::testing::Test {
 public:
  void SetUp() override { ASSERT_EQ(mimicInitWithPreset(0, "tiny", nullptr), MIMIC_SUCCESS); }

  // Entry j of a list: an output and two inputs of `sizes[j]` elements.
  struct Entry {
    std::unique_ptr<Tensor> out, a, b;
  };
  std::vector<Entry> make(const std::vector<int64_t>& sizes, DType type, uint64_t salt) {
    std::vector<Entry> entries;
    for (size_t j = 0; j < sizes.size(); ++j) {
      entries.push_back(
          {std::make_unique<Tensor>(type, std::vector<int64_t>{sizes[j]}),
           std::make_unique<Tensor>(type, std::vector<int64_t>{sizes[j]}, std::vector<int64_t>{},
                                    values(type, salt + j)),
           std::make_unique<Tensor>(type, std::vector<int64_t>{sizes[j]}, std::vector<int64_t>{},
                                    values(type, salt + 100 + j))});
    }
    return entries;
  }
};

// The list's results equal those of one elementwise() per entry, byte for byte.
void expectSameAsOneByOne(std::vector<ElementwiseList::Entry>& list,
                          std::vector<ElementwiseList::Entry>& single, const std::string& program,
                          DType compute, const std::vector<mimic::ops::ScalarArg>& scalars) {
  std::vector<TensorView> outs;
  std::vector<std::vector<TensorView>> inputs;
  for (auto& e : list) {
    outs.push_back(e.out->view());
    inputs.push_back({e.a->view(), e.b->view()});
  }
  elementwiseList({}, outs, inputs, program, compute, scalars);
  for (auto& e : single) {
    elementwise({}, e.out->view(), {e.a->view(), e.b->view()}, program, compute, scalars);
  }
  ASSERT_EQ(mimicDeviceSynchronize(0), MIMIC_SUCCESS);
  for (size_t j = 0; j < list.size(); ++j) {
    list[j].out->download();
    single[j].out->download();
    for (int64_t k = 0; k < list[j].out->elements(); ++k) {
      const Num x = list[j].out->at(k), y = single[j].out->at(k);
      ASSERT_TRUE(x.i == y.i && (x.f == y.f || (std::isnan(x.f) && std::isnan(y.f))))
          << "entry " << j << " element " << k;
    }
  }
}

TEST_F(ElementwiseList, EqualsOneLaunchPerTensor) {
  const std::vector<int64_t> sizes{1, 100, 8192, 8193, 30000, 0, 7, 65536};
  for (DType type : {DType::F32, DType::BF16, DType::I64}) {
    auto list = make(sizes, type, 1), single = make(sizes, type, 1);
    const DType compute = type == DType::BF16 ? DType::F32 : type;
    expectSameAsOneByOne(list, single, "x0 x1 s0 mul add", compute, {0.5});
    expectSameAsOneByOne(list, single, "x0 x1 x0 mul s0 mul sub", compute, {3});
  }
}

TEST_F(ElementwiseList, LongListsTakeOneLaunchPerSegmentGroup) {
  std::vector<int64_t> sizes(kMaxListSegments * 2 + 3, 257);
  auto list = make(sizes, DType::F32, 5), single = make(sizes, DType::F32, 5);
  std::vector<TensorView> outs;
  std::vector<std::vector<TensorView>> inputs;
  for (auto& e : list) {
    outs.push_back(e.out->view());
    inputs.push_back({e.a->view(), e.b->view()});
  }
  ASSERT_EQ(mimicDeviceSynchronize(0), MIMIC_SUCCESS);
  EXPECT_EQ(kernelLaunches([&] { elementwiseList({}, outs, inputs, "x0 x1 mul", DType::F32, {}); }),
            3);
  expectSameAsOneByOne(list, single, "x0 x1 div", DType::F32, {});
}

TEST_F(ElementwiseList, RejectsWhatItCannotRun) {
  auto list = make({16, 16}, DType::F32, 9);
  Tensor strided(DType::F32, {16}, {2});
  Tensor wrongSize(DType::F32, {15});
  auto call = [&](const TensorView& out, const TensorView& a, const std::string& program) {
    elementwiseList({}, {list[0].out->view(), out}, {{list[0].a->view()}, {a}}, program, DType::F32,
                    {});
  };
  EXPECT_THROW(call(list[1].out->view(), strided.view(), "x0"), std::invalid_argument);
  EXPECT_THROW(call(strided.view(), list[1].a->view(), "x0"), std::invalid_argument);
  EXPECT_THROW(call(list[1].out->view(), wrongSize.view(), "x0"), std::invalid_argument);
  EXPECT_THROW(call(list[1].out->view(), list[1].a->view(), "x0 rand add"), std::invalid_argument);
  EXPECT_THROW(elementwiseList({}, {}, {}, "x0", DType::F32, {}), std::invalid_argument);
}

}  // namespace
