// index_add and index_put (torch_backend/ops/index.h) against host references: every dtype
// (f32/i32/i64 through AtomicAdd, f16/bf16/u8 through ordered read-add-write), dims
// first/middle/last, strided and transposed views, alpha, duplicates, negative indices,
// broadcast indices and values, several index tensors, empty and 0-d indices, and blocks
// larger than the scratchpad.
#include "index_test.h"

namespace indextest {
namespace {

// ---- index_add ----

void referenceIndexAdd(Tensor& self, int d, Tensor& index, Tensor& source, double alpha) {
  forEach(source.sizes(), [&](const Sizes& p) {
    Sizes q = p;
    q[d] = index.index({p[d]});
    self.at(q) = addBits(self.dtype(), self.at(q), source.at(p), alpha);
  });
}

TEST_F(IndexOps, IndexAddEmbeddingGradient) {
  for (DType it : {DType::I64, DType::I32}) {
    Tensor grad(DType::F32, {40, 17});
    Tensor index(it, {500});
    index.setIndices(randomIndices(500, 0, 40, 2));
    Tensor source(DType::F32, {500, 17}, {}, 0, 3);
    mimic::ops::indexAdd(ctx_, grad.view(), 0, index.view(), source.view(), 1.0);
    referenceIndexAdd(grad, 0, index, source, 1.0);
    EXPECT_TRUE(matches(grad)) << mimic::isa::dtypeName(it);
  }
}

TEST_F(IndexOps, IndexAddEveryDtypeDimLayoutAndAlpha) {
  const Sizes selfSizes{5, 6, 7};
  int seed = 300;
  for (DType t : kAllTypes) {
    const double alphas[] = {1.0, mimic::isa::isFloat(t) ? -0.5 : 3.0};
    for (int d : {0, 1, 2}) {
      for (const Sizes& selfStrides : layouts(selfSizes)) {
        for (double alpha : alphas) {
          ++seed;
          Tensor self(t, selfSizes, selfStrides, 2, seed);
          Sizes sourceSizes = selfSizes;
          sourceSizes[d] = 8;
          Tensor source(t, sourceSizes, seed % 2 ? transposed(sourceSizes) : Sizes{}, 0, seed);
          Tensor index(seed % 3 ? DType::I64 : DType::I32, {8}, {seed % 2 ? 1 : 3});
          index.setIndices(randomIndices(8, 0, 3, seed));
          mimic::ops::indexAdd(ctx_, self.view(), d - 3 * (seed % 2), index.view(), source.view(),
                               alpha);
          referenceIndexAdd(self, d, index, source, alpha);
          ASSERT_TRUE(matches(self))
              << mimic::isa::dtypeName(t) << " dim " << d << " seed " << seed << " alpha " << alpha;
        }
      }
    }
  }
}

TEST_F(IndexOps, IndexAddRowsLargerThanTheScratchpad) {
  for (DType t : {DType::F32, DType::BF16}) {
    Tensor self(t, {3, 40000});
    Tensor index(DType::I64, {4});
    index.setIndices({2, 0, 2, 2});
    Tensor source(t, {4, 40000}, {}, 0, 9);
    mimic::ops::indexAdd(ctx_, self.view(), 0, index.view(), source.view(), 1.0);
    referenceIndexAdd(self, 0, index, source, 1.0);
    EXPECT_TRUE(matches(self)) << mimic::isa::dtypeName(t);
  }
}

TEST_F(IndexOps, IndexAddEmptyIndex) {
  Tensor self(DType::F16, {3, 4});
  Tensor index(DType::I64, {0});
  Tensor source(DType::F16, {0, 4});
  mimic::ops::indexAdd(ctx_, self.view(), 0, index.view(), source.view(), 2.0);
  EXPECT_TRUE(matches(self));
}

// ---- index_put ----

void referenceIndexPut(Tensor& self, std::vector<Tensor*> indices, Tensor& values,
                       bool accumulate) {
  const size_t m = indices.size();
  const Sizes& items = indices[0]->sizes();
  const Sizes block(self.sizes().begin() + m, self.sizes().end());
  forEach(items, [&](const Sizes& p) {
    Sizes q;
    for (size_t k = 0; k < m; ++k) {
      const int64_t v = indices[k]->index(p);
      q.push_back(v < 0 ? v + self.sizes()[k] : v);
    }
    forEach(block, [&](const Sizes& b) {
      Sizes target = q, source = p;
      target.insert(target.end(), b.begin(), b.end());
      source.insert(source.end(), b.begin(), b.end());
      self.at(target) = accumulate ? addBits(self.dtype(), self.at(target), values.at(source), 1)
                                   : values.at(source);
    });
  });
}

TEST_F(IndexOps, IndexPutRowsWithNegativeAndDuplicateIndices) {
  for (bool accumulate : {false, true}) {
    for (DType t : kAllTypes) {
      Tensor self(t, {10, 6}, {}, 0, 4);
      Tensor index(accumulate ? DType::I32 : DType::I64, {7});
      index.setIndices({0, -1, 3, 9, -10, 3, -7});  // -7 is 3 again, -1 is 9, -10 is 0
      Tensor values(t, {7, 6}, transposed({7, 6}), 0, 5);
      mimic::ops::indexPut(ctx_, self.view(), {index.view()}, values.view(), accumulate);
      std::vector<Tensor*> indices{&index};
      referenceIndexPut(self, indices, values, accumulate);
      ASSERT_TRUE(matches(self)) << mimic::isa::dtypeName(t) << (accumulate ? " add" : "");
    }
  }
}

TEST_F(IndexOps, IndexPutSeveralBroadcastIndexTensors) {
  int seed = 400;
  for (bool accumulate : {false, true}) {
    for (DType t : kAllTypes) {
      ++seed;
      // self[i0, i1] with i0 [3, 4] broadcast along dim 1 and i1 strided: values [3, 4, 5].
      Tensor self(t, {5, 6, 5}, transposed({5, 6, 5}), 1, seed);
      Tensor i0(DType::I64, {3, 4}, {1, 0});
      i0.setIndices(randomIndices(12, -5, 5, seed));
      Tensor i1(DType::I32, {3, 4}, {9, 2});
      i1.setIndices(randomIndices(12, -6, 6, seed + 1));
      Tensor values(t, {3, 4, 5}, spread({3, 4, 5}), 0, seed);
      mimic::ops::indexPut(ctx_, self.view(), {i0.view(), i1.view()}, values.view(), accumulate);
      referenceIndexPut(self, {&i0, &i1}, values, accumulate);
      ASSERT_TRUE(matches(self)) << mimic::isa::dtypeName(t) << (accumulate ? " add" : "");
    }
  }
}

TEST_F(IndexOps, IndexPutEveryDimIndexedAndBroadcastValues) {
  for (bool accumulate : {false, true}) {
    for (DType t : {DType::F32, DType::F16, DType::I64}) {
      Tensor self(t, {4, 5});
      Tensor i0(DType::I64, {30}), i1(DType::I64, {30});
      i0.setIndices(randomIndices(30, -4, 4, 7));
      i1.setIndices(randomIndices(30, 0, 2, 8));
      Tensor values(t, {30}, {0});  // one value broadcast to every item
      mimic::ops::indexPut(ctx_, self.view(), {i0.view(), i1.view()}, values.view(), accumulate);
      referenceIndexPut(self, {&i0, &i1}, values, accumulate);
      ASSERT_TRUE(matches(self)) << mimic::isa::dtypeName(t) << (accumulate ? " add" : "");
    }
  }
}

TEST_F(IndexOps, IndexPutZeroDimAndEmptyIndices) {
  Tensor self(DType::F32, {4, 3});
  Tensor scalar(DType::I64, {});
  scalar.setIndices({-2});
  Tensor row(DType::F32, {3}, {}, 0, 6);
  mimic::ops::indexPut(ctx_, self.view(), {scalar.view()}, row.view(), false);
  referenceIndexPut(self, {&scalar}, row, false);
  EXPECT_TRUE(matches(self));
  Tensor none(DType::I64, {0});
  Tensor noValues(DType::F32, {0, 3});
  mimic::ops::indexPut(ctx_, self.view(), {none.view()}, noValues.view(), true);
  EXPECT_TRUE(matches(self));
}

TEST_F(IndexOps, IndexPutRowsLargerThanTheScratchpad) {
  for (bool accumulate : {false, true}) {
    Tensor self(DType::F16, {3, 50000});
    Tensor index(DType::I64, {3});
    index.setIndices({1, -1, 1});
    Tensor values(DType::F16, {3, 50000}, {}, 0, 10);
    mimic::ops::indexPut(ctx_, self.view(), {index.view()}, values.view(), accumulate);
    referenceIndexPut(self, {&index}, values, accumulate);
    EXPECT_TRUE(matches(self)) << (accumulate ? "add" : "put");
  }
}

}  // namespace
}  // namespace indextest
