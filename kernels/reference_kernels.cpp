#include "kernels/reference_kernels.h"

#include <vector>

#include "sim/isa/builder.h"

namespace mimic::kernels {
namespace {

using isa::BinaryOp;
using isa::DType;
using isa::KernelBuilder;
using isa::Reg;
using isa::ScalarOp;

constexpr int64_t kF32 = 4;

// d = min(limit, total - start), for the size of an edge tile.
Reg remaining(KernelBuilder& k, int64_t limit, Reg total, Reg start) {
  Reg d = k.reg();
  k.alu(ScalarOp::Sub, d, total, start);
  k.alu(ScalarOp::Min, d, d, limit);
  return d;
}

// Sets dimension `dim` of descriptor `d` to `count` f32 elements with the given byte strides.
void dim(KernelBuilder& k, isa::Desc d, int dim, Reg count, Reg hbmStride, int64_t spStride) {
  Reg sp = k.li(spStride);
  k.dmaDim(d, DType::F32, dim, count, hbmStride, sp);
  k.release(sp);
}

void dim(KernelBuilder& k, isa::Desc d, int dim, Reg count, int64_t hbmStride, int64_t spStride) {
  Reg hbm = k.li(hbmStride);
  ::mimic::kernels::dim(k, d, dim, count, hbm, spStride);
  k.release(hbm);
}

// address = base + index * scale (bytes)
Reg offsetAddress(KernelBuilder& k, Reg base, Reg index, int64_t scale) {
  Reg address = k.reg();
  k.alu(ScalarOp::Mul, address, index, scale);
  k.alu(ScalarOp::Add, address, address, base);
  return address;
}

}  // namespace

isa::Function addStrided(uint32_t tile) {
  KernelBuilder k("add_strided", 8);
  Reg c = k.arg(0), a = k.arg(1), b = k.arg(2), cols = k.arg(3);
  Reg aRowStride = k.arg(4), aColStride = k.arg(5), bRowStride = k.arg(6), bColStride = k.arg(7);
  Reg x = k.workgroupId(0), row = k.workgroupId(1);
  Reg col0 = k.reg();
  k.alu(ScalarOp::Mul, col0, x, tile);
  Reg n = remaining(k, tile, cols, col0);

  // Element offset row * rowStride + col0 * colStride, in bytes, for each input.
  auto source = [&](Reg base, Reg rowStride, Reg colStride) {
    Reg offset = k.reg(), t = k.reg();
    k.alu(ScalarOp::Mul, offset, row, rowStride);
    k.alu(ScalarOp::Mul, t, col0, colStride);
    k.alu(ScalarOp::Add, offset, offset, t);
    k.release(t);
    Reg address = offsetAddress(k, base, offset, kF32);
    k.release(offset);
    return address;
  };
  Reg aAddress = source(a, aRowStride, aColStride);
  Reg bAddress = source(b, bRowStride, bColStride);
  Reg cIndex = k.reg();
  k.alu(ScalarOp::Mul, cIndex, row, cols);
  k.alu(ScalarOp::Add, cIndex, cIndex, col0);
  Reg cAddress = offsetAddress(k, c, cIndex, kF32);

  auto strided = [&](Reg colStride) {
    isa::Desc d = k.desc();
    Reg bytes = k.reg();
    k.alu(ScalarOp::Mul, bytes, colStride, kF32);
    dim(k, d, 0, n, bytes, kF32);
    k.release(bytes);
    return d;
  };
  isa::Desc aDesc = strided(aColStride);
  isa::Desc bDesc = strided(bColStride);
  isa::Desc cDesc = k.desc();
  dim(k, cDesc, 0, n, kF32, kF32);

  Reg spA = k.li(0), spB = k.li(tile * kF32), spC = k.li(2 * tile * kF32);
  Reg ta = k.dmaLoad(spA, aAddress, aDesc);
  Reg tb = k.dmaLoad(spB, bAddress, bDesc);
  k.wait(ta);
  k.wait(tb);
  k.binary(BinaryOp::Add, DType::F32, spC, spA, spB, n);
  Reg tc = k.dmaStore(cAddress, spC, cDesc);
  k.wait(tc);
  return k.finish();
}

isa::Function axpyPipelined(uint32_t tile, uint32_t tilesPerWorkgroup, int depth) {
  KernelBuilder k(depth == 2 ? "axpy_double_buffered" : "axpy_pipelined", 4);
  Reg y = k.arg(0), x = k.arg(1), n = k.arg(2), alpha = k.arg(3);
  const int64_t chunk = int64_t(tile) * tilesPerWorkgroup;
  const int64_t tileBytes = int64_t(tile) * kF32;
  Reg start = k.workgroupId(0);
  k.alu(ScalarOp::Mul, start, start, chunk);
  Reg tiles = remaining(k, chunk, n, start);
  k.alu(ScalarOp::Div, tiles, tiles, int64_t(tile));
  Reg xAddress = offsetAddress(k, x, start, kF32);
  Reg yAddress = offsetAddress(k, y, start, kF32);
  k.release(start);
  k.release(x);
  k.release(y);
  Reg count = k.li(tile);
  isa::Desc d = k.desc();
  dim(k, d, 0, count, kF32, kF32);

  // Per buffer set: x and y inputs and the result, which has buffers of its own so that loads
  // never wait for stores. Tile i uses set i % depth; tile i + depth - 1 is loaded meanwhile.
  struct BufferSet {
    Reg x, y, out, xToken, yToken, storeToken;
  };
  std::vector<BufferSet> sets;
  for (int b = 0; b < depth; ++b) {
    sets.push_back({k.li(3 * b * tileBytes), k.li((3 * b + 1) * tileBytes),
                    k.li((3 * b + 2) * tileBytes), k.reg(), k.reg(),
                    k.li(0)});  // token 0 is never issued: waiting on it is free
  }
  Reg i = k.li(0), t = k.reg(), address = k.reg(), ahead = k.reg();

  // Loads tile `index` into `set` if it exists.
  auto loadIfAny = [&](const BufferSet& set, Reg index) {
    isa::Label skip = k.label();
    k.cmp(isa::Cond::Lt, t, index, tiles);
    k.brz(t, skip);
    k.alu(ScalarOp::Mul, t, index, tileBytes);
    k.alu(ScalarOp::Add, address, xAddress, t);
    k.dmaLoad(set.xToken, set.x, address, d);
    k.alu(ScalarOp::Add, address, yAddress, t);
    k.dmaLoad(set.yToken, set.y, address, d);
    k.bind(skip);
  };
  isa::Label done = k.label(), loop = k.label();
  k.brz(tiles, done);
  for (int b = 0; b + 1 < depth; ++b) {
    k.li(ahead, b);
    loadIfAny(sets[b], ahead);
  }
  k.bind(loop);
  for (int p = 0; p < depth; ++p) {
    const BufferSet& set = sets[p];
    k.alu(ScalarOp::Add, ahead, i, depth - 1);
    loadIfAny(sets[(p + depth - 1) % depth], ahead);
    k.wait(set.xToken);
    k.wait(set.yToken);
    k.wait(set.storeToken);  // the store of tile i - depth read set.out
    k.binaryScalar(BinaryOp::Mul, DType::F32, set.x, set.x, alpha, count);
    k.binary(BinaryOp::Add, DType::F32, set.out, set.x, set.y, count);
    k.alu(ScalarOp::Mul, t, i, tileBytes);
    k.alu(ScalarOp::Add, address, yAddress, t);
    k.dmaStore(set.storeToken, address, set.out, d);
    k.alu(ScalarOp::Add, i, i, 1);
    k.cmp(isa::Cond::Ge, t, i, tiles);
    k.brnz(t, done);
  }
  k.br(loop);
  k.bind(done);
  k.waitAll();
  return k.finish();
}

isa::Function rowSum(uint32_t rowsPerWorkgroup, uint32_t colTile) {
  KernelBuilder k("row_sum", 4);
  Reg out = k.arg(0), in = k.arg(1), rows = k.arg(2), cols = k.arg(3);
  Reg r0 = k.workgroupId(0);
  k.alu(ScalarOp::Mul, r0, r0, rowsPerWorkgroup);
  Reg nr = remaining(k, rowsPerWorkgroup, rows, r0);
  const int64_t accBytes = int64_t(rowsPerWorkgroup) * kF32;
  Reg acc = k.li(0), partial = k.li(accBytes), tileBuf = k.li(2 * accBytes);
  k.fill(DType::F32, acc, 0.0, nr);

  Reg rowBytes = k.reg();
  k.alu(ScalarOp::Mul, rowBytes, cols, kF32);
  Reg address = k.reg();
  k.alu(ScalarOp::Mul, address, r0, rowBytes);
  k.alu(ScalarOp::Add, address, address, in);
  isa::Desc d = k.desc();
  Reg c = k.li(0), nc = k.reg(), t = k.reg();
  Reg one = k.li(1), zero = k.li(0), f32 = k.li(kF32), tileRowBytes = k.li(colTile * kF32);
  isa::Label loop = k.label(), done = k.label();
  k.bind(loop);
  k.cmp(isa::Cond::Ge, t, c, cols);
  k.brnz(t, done);
  k.alu(ScalarOp::Sub, nc, cols, c);
  k.alu(ScalarOp::Min, nc, nc, int64_t(colTile));
  dim(k, d, 0, nc, kF32, kF32);
  k.dmaDim(d, DType::F32, 1, nr, rowBytes, tileRowBytes);
  Reg token = k.dmaLoad(tileBuf, address, d);
  k.wait(token);
  k.release(token);
  k.vshape(nr, f32, tileRowBytes, zero);
  k.reduce(isa::ReduceOp::Sum, DType::F32, partial, tileBuf, nc);
  k.vshape(one, zero, zero, zero);
  k.binary(BinaryOp::Add, DType::F32, acc, acc, partial, nr);
  k.alu(ScalarOp::Mul, t, nc, kF32);
  k.alu(ScalarOp::Add, address, address, t);
  k.alu(ScalarOp::Add, c, c, int64_t(colTile));
  k.br(loop);
  k.bind(done);

  isa::Desc outDesc = k.desc();
  dim(k, outDesc, 0, nr, kF32, kF32);
  Reg outAddress = offsetAddress(k, out, r0, kF32);
  Reg stored = k.dmaStore(outAddress, acc, outDesc);
  k.wait(stored);
  return k.finish();
}

isa::Function vectorSpin(uint32_t elements) {
  KernelBuilder k("vector_spin", 1);
  Reg iterations = k.arg(0), buffer = k.li(0), count = k.li(elements);
  k.fill(DType::F32, buffer, 1.0, count);
  isa::Label loop = k.label(), done = k.label();
  k.brz(iterations, done);
  k.bind(loop);
  k.binaryScalar(BinaryOp::Mul, DType::F32, buffer, buffer, 1.0, count);
  k.alu(ScalarOp::Sub, iterations, iterations, 1);
  k.brnz(iterations, loop);
  k.bind(done);
  return k.finish();
}

isa::Function gemm(uint32_t tile) {
  KernelBuilder k("gemm", 6);
  // Registers are scarce here: arguments are released once used, and c is read again at the end.
  Reg m = k.arg(3), n = k.arg(4), kk = k.arg(5);
  const int64_t tileBytes = int64_t(tile) * tile * kF32;
  Reg n0 = k.workgroupId(0), m0 = k.workgroupId(1);
  k.alu(ScalarOp::Mul, n0, n0, tile);
  k.alu(ScalarOp::Mul, m0, m0, tile);
  Reg tm = remaining(k, tile, m, m0), tn = remaining(k, tile, n, n0);
  k.release(m);
  Reg aBuf[2] = {k.li(0), k.li(tileBytes)};
  Reg bBuf[2] = {k.li(2 * tileBytes), k.li(3 * tileBytes)};
  Reg cBuf = k.li(4 * tileBytes);
  Reg t = k.reg();
  k.alu(ScalarOp::Mul, t, tm, tn);
  k.fill(DType::F32, cBuf, 0.0, t);

  // The a tile starts at row m0, column k0; the b tile at row k0, column n0.
  Reg aRowBytes = k.reg(), bRowBytes = k.reg();
  k.alu(ScalarOp::Mul, aRowBytes, kk, kF32);
  k.alu(ScalarOp::Mul, bRowBytes, n, kF32);
  k.release(n);
  Reg aAddress = k.reg(), bAddress = k.reg();
  Reg a = k.arg(1);
  k.alu(ScalarOp::Mul, aAddress, m0, aRowBytes);
  k.alu(ScalarOp::Add, aAddress, aAddress, a);
  k.release(a);
  Reg b = k.arg(2);
  k.alu(ScalarOp::Mul, bAddress, n0, kF32);
  k.alu(ScalarOp::Add, bAddress, bAddress, b);
  k.release(b);
  isa::Desc aDesc = k.desc(), bDesc = k.desc();
  Reg tk[2] = {k.reg(), k.reg()};
  Reg aToken[2] = {k.reg(), k.reg()}, bToken[2] = {k.reg(), k.reg()};
  Reg k0 = k.li(0);

  // Loads the tiles at k0 into buffers p: tk[p] = min(tile, k - k0) along k.
  auto load = [&](int p) {
    k.alu(ScalarOp::Sub, tk[p], kk, k0);
    k.alu(ScalarOp::Min, tk[p], tk[p], int64_t(tile));
    Reg spRow = k.reg();
    k.alu(ScalarOp::Mul, spRow, tk[p], kF32);
    Reg f32 = k.li(kF32);
    k.dmaDim(aDesc, DType::F32, 0, tk[p], f32, f32);
    k.dmaDim(aDesc, DType::F32, 1, tm, aRowBytes, spRow);
    k.alu(ScalarOp::Mul, spRow, tn, kF32);
    k.dmaDim(bDesc, DType::F32, 0, tn, f32, f32);
    k.dmaDim(bDesc, DType::F32, 1, tk[p], bRowBytes, spRow);
    k.release(f32);
    k.release(spRow);
    k.alu(ScalarOp::Mul, t, k0, kF32);
    k.alu(ScalarOp::Add, t, t, aAddress);
    k.dmaLoad(aToken[p], aBuf[p], t, aDesc);
    k.alu(ScalarOp::Mul, t, k0, bRowBytes);
    k.alu(ScalarOp::Add, t, t, bAddress);
    k.dmaLoad(bToken[p], bBuf[p], t, bDesc);
  };
  isa::Label loop = k.label(), done = k.label();
  load(0);
  k.bind(loop);
  for (int p = 0; p < 2; ++p) {
    isa::Label compute = k.label();
    k.alu(ScalarOp::Add, k0, k0, int64_t(tile));
    k.cmp(isa::Cond::Lt, t, k0, kk);
    k.brz(t, compute);
    load(1 - p);
    k.bind(compute);
    k.wait(aToken[p]);
    k.wait(bToken[p]);
    k.mshape(tm, tn, tk[p]);
    k.mma(DType::F32, cBuf, aBuf[p], bBuf[p]);
    k.cmp(isa::Cond::Ge, t, k0, kk);
    k.brnz(t, done);
  }
  k.br(loop);
  k.bind(done);

  isa::Desc cDesc = aDesc;
  Reg f32 = k.li(kF32), spRow = k.reg();
  k.alu(ScalarOp::Mul, spRow, tn, kF32);
  k.dmaDim(cDesc, DType::F32, 0, tn, f32, f32);
  k.dmaDim(cDesc, DType::F32, 1, tm, bRowBytes, spRow);
  Reg cAddress = k.reg(), c = k.arg(0);
  k.alu(ScalarOp::Mul, cAddress, m0, bRowBytes);
  k.alu(ScalarOp::Add, cAddress, cAddress, c);
  k.alu(ScalarOp::Mul, t, n0, kF32);
  k.alu(ScalarOp::Add, cAddress, cAddress, t);
  Reg stored = k.dmaStore(cAddress, cBuf, cDesc);
  k.wait(stored);
  return k.finish();
}

}  // namespace mimic::kernels
