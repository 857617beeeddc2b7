// The index ops' error paths: an index outside its dimension makes the kernel fault (a sticky
// MIMIC_ERROR_ILLEGAL_ADDRESS naming the kernel, cleared by mimicDeviceReset), and bad
// arguments throw std::invalid_argument before anything is launched.
#include <functional>
#include <stdexcept>

#include "index_test.h"

namespace indextest {
namespace {

using mimic::ops::TensorView;

// Runs `op`, which must make the device fail, and checks the sticky error and its detail;
// resets the device afterwards (which frees every allocation).
void expectIndexFault(const std::function<void()>& op, const std::string& kernel) {
  SCOPED_TRACE(kernel);
  op();
  EXPECT_EQ(mimicDeviceSynchronize(0), MIMIC_ERROR_ILLEGAL_ADDRESS);
  const char* detail = "";
  mimicGetErrorDetail(&detail);
  EXPECT_NE(std::string(detail).find("kernel '" + kernel + "'"), std::string::npos) << detail;
  EXPECT_NE(std::string(detail).find("HBM range [0x0, 0x1)"), std::string::npos) << detail;
  EXPECT_EQ(mimicDeviceReset(0), MIMIC_SUCCESS);
  EXPECT_EQ(mimicDeviceSynchronize(0), MIMIC_SUCCESS);
}

TEST_F(IndexOps, OutOfRangeIndicesFaultTheDevice) {
  auto indexSelect = [&](DType it, std::vector<int64_t> values) {
    return [=] {
      Tensor table(DType::F32, {50, 8});
      Tensor index(it, {int64_t(values.size())});
      index.setIndices(values);
      Tensor out(DType::F32, {int64_t(values.size()), 8});
      mimic::ops::indexSelect(ctx_, out.view(), table.view(), 0, index.view());
    };
  };
  std::vector<int64_t> many = randomIndices(1000, 0, 50, 1);
  many[700] = 50;  // in a later tile
  expectIndexFault(indexSelect(DType::I64, many), "index_select_f32");
  expectIndexFault(indexSelect(DType::I32, {3, -1}), "index_select_f32");  // no wrapping
  expectIndexFault(indexSelect(DType::I64, {int64_t(1) << 40}), "index_select_f32");

  expectIndexFault(
      [&] {
        Tensor in(DType::I32, {4, 5});
        Tensor index(DType::I64, {4, 2});
        index.setIndices({0, 1, 2, 3, 4, 5, 1, 0});
        Tensor out(DType::I32, {4, 2});
        mimic::ops::gather(ctx_, out.view(), in.view(), 1, index.view());
      },
      "gather_i32");
  for (DType t : {DType::F32, DType::F16}) {
    expectIndexFault(
        [&] {
          Tensor self(t, {3, 4});
          Tensor index(DType::I64, {2, 4});
          index.setIndices({0, 1, 2, 0, 1, 2, -3, 1});
          Tensor src(t, {2, 4});
          mimic::ops::scatter(ctx_, self.view(), 0, index.view(), src.view(), true);
        },
        std::string("scatter_add_") + mimic::isa::dtypeName(t));
  }
  expectIndexFault(
      [&] {
        Tensor self(DType::U8, {3, 4});
        Tensor index(DType::I32, {1, 1});
        index.setIndices({4});
        Tensor src(DType::U8, {1, 1});
        mimic::ops::scatter(ctx_, self.view(), 1, index.view(), src.view(), false);
      },
      "scatter_u8");
  for (DType t : {DType::F32, DType::BF16}) {
    expectIndexFault(
        [&] {
          Tensor self(t, {10, 3});
          Tensor index(DType::I64, {3});
          index.setIndices({9, 10, 0});
          Tensor source(t, {3, 3});
          mimic::ops::indexAdd(ctx_, self.view(), 0, index.view(), source.view(), 1.0);
        },
        std::string("index_add_") + mimic::isa::dtypeName(t));
  }
  for (bool accumulate : {false, true}) {
    expectIndexFault(
        [&] {
          Tensor self(DType::I64, {4, 3});
          Tensor index(DType::I64, {2});
          index.setIndices({-4, -5});  // -4 wraps to 0; -5 is outside
          Tensor values(DType::I64, {2, 3});
          mimic::ops::indexPut(ctx_, self.view(), {index.view()}, values.view(), accumulate);
        },
        accumulate ? "index_put_acc_i64" : "index_put_i64");
  }
}

TEST_F(IndexOps, BadArgumentsThrowInvalidArgument) {
  Tensor in(DType::F32, {4, 5}), out(DType::F32, {3, 5}), out2(DType::F32, {4, 3});
  Tensor index(DType::I64, {3}), index2d(DType::I64, {3, 1}), floatIndex(DType::F32, {3});
  Tensor u8Index(DType::U8, {3}), ints(DType::I32, {3, 5}), index43(DType::I64, {4, 3});
  index.setIndices({0, 1, 2});
  index43.setIndices(std::vector<int64_t>(12, 0));
  using std::invalid_argument;
  const TensorView v = in.view();

  EXPECT_THROW(mimic::ops::indexSelect(ctx_, out.view(), v, 2, index.view()), invalid_argument);
  EXPECT_THROW(mimic::ops::indexSelect(ctx_, out.view(), v, -3, index.view()), invalid_argument);
  EXPECT_THROW(mimic::ops::indexSelect(ctx_, out.view(), v, 0, floatIndex.view()),
               invalid_argument);
  EXPECT_THROW(mimic::ops::indexSelect(ctx_, out.view(), v, 0, index2d.view()), invalid_argument);
  EXPECT_THROW(mimic::ops::indexSelect(ctx_, out.view(), v, 1, index.view()), invalid_argument);
  EXPECT_THROW(mimic::ops::indexSelect(ctx_, ints.view(), v, 0, index.view()), invalid_argument);
  TensorView broken = v;
  broken.strides.pop_back();
  EXPECT_THROW(mimic::ops::indexSelect(ctx_, out.view(), broken, 0, index.view()),
               invalid_argument);

  EXPECT_THROW(mimic::ops::gather(ctx_, out.view(), v, 0, index.view()), invalid_argument);
  Tensor wide(DType::I64, {4, 6}), wideOut(DType::F32, {4, 6});
  EXPECT_THROW(mimic::ops::gather(ctx_, wideOut.view(), v, 0, wide.view()), invalid_argument);
  EXPECT_THROW(mimic::ops::gather(ctx_, out2.view(), v, 1, wide.view()), invalid_argument);

  TensorView overlapping = v;
  overlapping.strides = {0, 1};
  EXPECT_THROW(mimic::ops::scatter(ctx_, overlapping, 0, index43.view(), out2.view(), false),
               invalid_argument);
  Tensor bigIndex(DType::I64, {4, 4});
  EXPECT_THROW(mimic::ops::scatter(ctx_, v, 0, bigIndex.view(), out2.view(), false),
               invalid_argument);
  EXPECT_THROW(mimic::ops::scatter(ctx_, v, 0, index43.view(), ints.view(), true),
               invalid_argument);

  Tensor intSelf(DType::I32, {4, 5}), intSource(DType::I32, {3, 5});
  EXPECT_THROW(mimic::ops::indexAdd(ctx_, intSelf.view(), 0, index.view(), intSource.view(), 0.5),
               invalid_argument);
  EXPECT_THROW(mimic::ops::indexAdd(ctx_, v, 1, index.view(), out.view(), 1.0), invalid_argument);
  EXPECT_THROW(mimic::ops::indexAdd(ctx_, v, 0, u8Index.view(), out.view(), 1.0), invalid_argument);

  EXPECT_THROW(mimic::ops::indexPut(ctx_, v, {}, out.view(), false), invalid_argument);
  EXPECT_THROW(
      mimic::ops::indexPut(ctx_, v, {index.view(), index.view(), index.view()}, out.view(), false),
      invalid_argument);
  EXPECT_THROW(mimic::ops::indexPut(ctx_, v, {index.view(), wide.view()}, out.view(), false),
               invalid_argument);
  EXPECT_THROW(mimic::ops::indexPut(ctx_, v, {index.view()}, out2.view(), true), invalid_argument);
  EXPECT_THROW(mimic::ops::indexPut(ctx_, v, {u8Index.view()}, out.view(), true), invalid_argument);
  EXPECT_EQ(mimicDeviceSynchronize(0), MIMIC_SUCCESS);  // nothing was launched
}

}  // namespace
}  // namespace indextest
