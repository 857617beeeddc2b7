// The index ops (torch_backend/ops/index.h) against host references, comparing the whole
// storage of every written tensor: every dtype, dims first/middle/last, strided, transposed and
// broadcast views, I32 and I64 indices, duplicates, empty inputs, shapes beyond the kernel's
// ranks and the scratchpad, out-of-range indices (device faults) and bad arguments.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <functional>

#include "index_test.h"

namespace indextest {
namespace {

// ---- index_select ----

void referenceIndexSelect(Tensor& out, Tensor& in, int d, Tensor& index) {
  forEach(out.sizes(), [&](const Sizes& p) {
    Sizes q = p;
    q[d] = index.index({p[d]});
    out.at(p) = in.at(q);
  });
}

TEST_F(IndexOps, IndexSelectEmbeddingRows) {
  for (DType it : {DType::I64, DType::I32}) {
    Tensor table(DType::F32, {50, 33});
    Tensor index(it, {300});
    index.setIndices(randomIndices(300, 0, 50, 1));
    Tensor out(DType::F32, {300, 33}, {}, 0, 2);
    mimic::ops::indexSelect(ctx_, out.view(), table.view(), 0, index.view());
    referenceIndexSelect(out, table, 0, index);
    EXPECT_TRUE(matches(out)) << mimic::isa::dtypeName(it);
  }
}

TEST_F(IndexOps, IndexSelectEveryDtypeDimAndLayout) {
  const Sizes inSizes{6, 7, 5};
  int seed = 0;
  for (DType t : kAllTypes) {
    for (int d : {0, 1, 2}) {
      for (const Sizes& inStrides : layouts(inSizes)) {
        const DType it = ++seed % 2 ? DType::I64 : DType::I32;
        Tensor in(t, inSizes, inStrides, 3, seed);
        Tensor index(it, {9}, {2});  // strided, with duplicates
        index.setIndices(randomIndices(9, 0, inSizes[d], seed));
        Sizes outSizes = inSizes;
        outSizes[d] = 9;
        Tensor out(t, outSizes, seed % 3 ? transposed(outSizes) : Sizes{}, 1, seed + 7);
        mimic::ops::indexSelect(ctx_, out.view(), in.view(), d - (seed % 2 ? 3 : 0), index.view());
        referenceIndexSelect(out, in, d, index);
        ASSERT_TRUE(matches(out)) << mimic::isa::dtypeName(t) << " dim " << d << " seed " << seed;
      }
    }
  }
}

TEST_F(IndexOps, IndexSelectRowsLargerThanTheScratchpad) {
  // 20000 f32 = 80 KB per row: the kernel splits each row into chunks across grid z.
  Tensor table(DType::F32, {4, 20000});
  Tensor index(DType::I64, {5});
  index.setIndices({3, 0, 3, 1, 2});
  Tensor out(DType::F32, {5, 20000});
  mimic::ops::indexSelect(ctx_, out.view(), table.view(), 0, index.view());
  referenceIndexSelect(out, table, 0, index);
  EXPECT_TRUE(matches(out));
  // A column per index: 20000 elements 4 apart.
  Tensor tall(DType::F32, {20000, 4});
  Tensor index2(DType::I32, {3});
  index2.setIndices({3, 0, 3});
  Tensor cols(DType::F32, {20000, 3});
  mimic::ops::indexSelect(ctx_, cols.view(), tall.view(), 1, index2.view());
  referenceIndexSelect(cols, tall, 1, index2);
  EXPECT_TRUE(matches(cols));
}

TEST_F(IndexOps, IndexSelectEmptyAndZeroDim) {
  Tensor in(DType::F32, {4, 3});
  Tensor index(DType::I64, {0});
  Tensor out(DType::F32, {0, 3});
  mimic::ops::indexSelect(ctx_, out.view(), in.view(), 0, index.view());
  EXPECT_TRUE(matches(out));
  // An empty slice: nothing to move even though the index would be out of range.
  Tensor empty(DType::F32, {0, 3});
  Tensor bad(DType::I64, {2});
  bad.setIndices({0, 0});
  Tensor out2(DType::F32, {0, 2});
  mimic::ops::indexSelect(ctx_, out2.view(), empty.view(), 1, bad.view());
  EXPECT_EQ(mimicDeviceSynchronize(0), MIMIC_SUCCESS);
  // A 0-d index selects one slice and keeps the dim.
  Tensor scalar(DType::I32, {});
  scalar.setIndices({2});
  Tensor one(DType::F32, {1, 3}, {}, 0, 5);
  mimic::ops::indexSelect(ctx_, one.view(), in.view(), 0, scalar.view());
  referenceIndexSelect(one, in, 0, scalar);
  EXPECT_TRUE(matches(one));
}

// ---- gather ----

void referenceGather(Tensor& out, Tensor& in, int d, Tensor& index) {
  forEach(index.sizes(), [&](const Sizes& p) {
    Sizes q = p;
    q[d] = index.index(p);
    out.at(p) = in.at(q);
  });
}

TEST_F(IndexOps, GatherEveryDtypeDimAndLayout) {
  const Sizes inSizes{5, 6, 7};
  int seed = 100;
  for (DType t : kAllTypes) {
    for (int d : {0, 1, 2}) {
      for (const Sizes& inStrides : layouts(inSizes)) {
        ++seed;
        Tensor in(t, inSizes, inStrides, 2, seed);
        Sizes indexSizes{4, 6, 3};
        indexSizes[d] = 9;  // may exceed in along dim
        Tensor index(seed % 2 ? DType::I64 : DType::I32, indexSizes,
                     seed % 3 ? transposed(indexSizes) : Sizes{});
        index.setIndices(randomIndices(numelOf(indexSizes), 0, inSizes[d], seed));
        Tensor out(t, indexSizes, seed % 3 == 1 ? spread(indexSizes) : Sizes{}, 0, seed + 3);
        mimic::ops::gather(ctx_, out.view(), in.view(), d, index.view());
        referenceGather(out, in, d, index);
        ASSERT_TRUE(matches(out)) << mimic::isa::dtypeName(t) << " dim " << d << " seed " << seed;
      }
    }
  }
}

TEST_F(IndexOps, GatherBroadcastIndexAndManyDims) {
  // A broadcast index (stride 0 in two dims), and six dims no two of which merge: more item
  // dims than one launch takes.
  Tensor in(DType::F32, {4, 5, 6});
  Tensor index(DType::I64, {4, 3, 6}, {0, 1, 0});
  index.setIndices(randomIndices(72, 0, 5, 3));
  Tensor out(DType::F32, {4, 3, 6});
  mimic::ops::gather(ctx_, out.view(), in.view(), 1, index.view());
  referenceGather(out, in, 1, index);
  EXPECT_TRUE(matches(out));

  const Sizes sizes{2, 3, 2, 3, 2, 3};
  Tensor in6(DType::I32, sizes, transposed(sizes));
  Tensor index6(DType::I64, sizes, spread(sizes));
  index6.setIndices(randomIndices(numelOf(sizes), 0, 2, 4));
  Tensor out6(DType::I32, sizes);
  mimic::ops::gather(ctx_, out6.view(), in6.view(), 4, index6.view());
  referenceGather(out6, in6, 4, index6);
  EXPECT_TRUE(matches(out6));
}

// ---- scatter / scatter_add ----

void referenceScatter(Tensor& self, int d, Tensor& index, Tensor& src, bool accumulate) {
  forEach(index.sizes(), [&](const Sizes& p) {
    Sizes q = p;
    q[d] = index.index(p);
    self.at(q) = accumulate ? addBits(self.dtype(), self.at(q), src.at(p), 1) : src.at(p);
  });
}

TEST_F(IndexOps, ScatterAndScatterAddEveryDtypeDimAndLayout) {
  const Sizes selfSizes{5, 6, 7}, srcSizes{6, 7, 8};
  int seed = 200;
  for (bool accumulate : {false, true}) {
    for (DType t : kAllTypes) {
      for (int d : {0, 1, 2}) {
        for (const Sizes& selfStrides : layouts(selfSizes)) {
          ++seed;
          Tensor self(t, selfSizes, selfStrides, 1, seed);
          Tensor src(t, srcSizes, seed % 2 ? transposed(srcSizes) : Sizes{}, 0, seed + 1);
          Sizes indexSizes{4, 5, 6};
          Tensor index(seed % 3 ? DType::I64 : DType::I32, indexSizes,
                       seed % 3 == 2 ? spread(indexSizes) : Sizes{});
          // Few distinct targets: duplicates everywhere (last wins, or all add).
          index.setIndices(
              randomIndices(numelOf(indexSizes), 0, std::min<int64_t>(3, selfSizes[d]), seed));
          mimic::ops::scatter(ctx_, self.view(), d, index.view(), src.view(), accumulate);
          referenceScatter(self, d, index, src, accumulate);
          ASSERT_TRUE(matches(self)) << mimic::isa::dtypeName(t) << " dim " << d << " seed " << seed
                                     << (accumulate ? " add" : "");
        }
      }
    }
  }
}

TEST_F(IndexOps, ScatterEmptyIndexWritesNothing) {
  Tensor self(DType::F32, {3, 4});
  Tensor src(DType::F32, {3, 4});
  Tensor index(DType::I64, {0, 4});
  mimic::ops::scatter(ctx_, self.view(), 0, index.view(), src.view(), false);
  mimic::ops::scatter(ctx_, self.view(), 0, index.view(), src.view(), true);
  EXPECT_TRUE(matches(self));
}

// Training-sized embedding lookups and gradients, and the serial paths (index_put, a bf16
// index_add) at the same size: prints host (wall and CPU) and simulated times.
TEST_F(IndexOps, EmbeddingThroughput) {
  const int64_t vocab = 10000, dim = 64, lookups = 16384;
  Tensor table(DType::F32, {vocab, dim}), tableBf16(DType::BF16, {vocab, dim});
  Tensor index(DType::I64, {lookups});
  index.setIndices(randomIndices(lookups, 0, vocab, 5));
  Tensor rows(DType::F32, {lookups, dim}), rowsBf16(DType::BF16, {lookups, dim});
  Tensor grad(DType::F32, {vocab, dim});
  auto time = [&](const char* what, const std::function<void()>& op) {
    uint64_t simStart = 0, simEnd = 0;
    ASSERT_EQ(mimicDeviceSynchronize(0), MIMIC_SUCCESS);
    mimicGetSimTime(&simStart);
    const auto start = std::chrono::steady_clock::now();
    const std::clock_t cpu = std::clock();
    op();
    ASSERT_EQ(mimicDeviceSynchronize(0), MIMIC_SUCCESS);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    mimicGetSimTime(&simEnd);
    std::printf("%-22s %lld rows of %lld: host %6.2f ms (cpu %6.2f ms), simulated %7.1f us\n", what,
                (long long)lookups, (long long)dim, ms,
                double(std::clock() - cpu) * 1000.0 / CLOCKS_PER_SEC,
                double(simEnd - simStart) / 1000.0);
  };
  for (int round = 0; round < 2; ++round) {  // the first round includes building the kernels
    time("index_select f32",
         [&] { mimic::ops::indexSelect(ctx_, rows.view(), table.view(), 0, index.view()); });
    time("index_add f32",
         [&] { mimic::ops::indexAdd(ctx_, grad.view(), 0, index.view(), rows.view(), 1.0); });
    time("index_put f32",
         [&] { mimic::ops::indexPut(ctx_, table.view(), {index.view()}, rows.view(), false); });
    time("index_add bf16", [&] {
      mimic::ops::indexAdd(ctx_, tableBf16.view(), 0, index.view(), rowsBf16.view(), 1.0);
    });
  }
  // index_put wrote the gathered rows back where they came from: the table is unchanged.
  referenceIndexSelect(rows, table, 0, index);
  mimic::ops::indexSelect(ctx_, rows.view(), table.view(), 0, index.view());
  EXPECT_TRUE(matches(rows));
}

}  // namespace
}  // namespace indextest
