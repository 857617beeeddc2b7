// The generic elementwise op: every pointwise torch op, copy, cast and fill runs through it.
//
//   elementwise(ctx, out, {a, b}, "x0 x1 s0 mul add", isa::DType::F32, {alpha});  // a + alpha*b
//
// The program language is described in elementwise_program.h: reverse-Polish tokens over the
// inputs x0..x7 (each loaded in its dtype and converted to `compute`), the scalars s0..s7,
// literals, `rand`, and unary, binary, compare, where and fma ops computed in `compute`. The one
// value left is converted to out.dtype as VCast does (float to int truncates and saturates,
// NaN gives 0; a mask gives 0/1).
//
// `rand` gives uniform values in [0, 1) (float compute types only) from a counter-based hash:
// the value at the output element of row-major linear index i (over out.sizes, whatever out's
// strides) is a pure function of (random.seed, random.offset + i, n), where n counts the rand
// tokens before it; see elementwise_rand.h. Results are the same on every run and device.
// Advance random.offset by out.numel() between calls with one seed to get fresh values.
//
// out may be one of the inputs (the same view: in place); other overlaps are not supported.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "torch_backend/ops/kernel_cache.h"
#include "torch_backend/ops/tensor_view.h"

namespace mimic::ops {

struct RandomKey {
  uint64_t seed = 0;
  uint64_t offset = 0;
};

// out[i] = program(inputs[0][i], inputs[1][i], ..., scalars) for every index i of out.sizes.
// Every input has exactly out's rank and sizes (broadcasts are expanded with stride 0); any
// strides and dtypes for inputs and out (out must not overlap itself). Up to 8 inputs and 8
// scalars; scalars are converted to `compute` (kernel arguments: one compiled kernel serves
// all values). A zero-element out launches nothing. The launch is queued on ctx.queue.
// Throws std::invalid_argument for a bad program (elementwise_program.h), mismatched ranks or
// sizes, or too many inputs or scalars; mimic::Error if the launch fails.
void elementwise(const LaunchContext& ctx, const TensorView& out,
                 const std::vector<TensorView>& inputs, const std::string& program,
                 isa::DType compute, const std::vector<ScalarArg>& scalars, RandomKey random = {});

// One launch of several programs over one index space: outs[j] = programs[j](inputs..., scalars)
// for every index of outs[0].sizes, each bit-identical to elementwise(ctx, outs[j], inputs,
// programs[j], ...) with the same random key (each program numbers its own rand streams from
// 0). Program j may also read output i < j as x<inputs.size() + i> (while that index is below
// 8): the value it stored, without computing it again. The inputs are loaded once per tile for
// all programs; every program computes a tile
// before any output of it is stored, so an output may be one of the inputs (in place). Every
// out has outs[0]'s sizes, each its own strides and dtype; outs do not overlap each other. 1 to
// 8 programs (kMaxElementwiseOutputs). Throws std::invalid_argument for bad programs, counts or
// shapes; mimic::Error if the launch fails.
void elementwiseMulti(const LaunchContext& ctx, const std::vector<TensorView>& outs,
                      const std::vector<TensorView>& inputs,
                      const std::vector<std::string>& programs, isa::DType compute,
                      const std::vector<ScalarArg>& scalars, RandomKey random = {});

// One launch for a list of tensors (the _foreach_ ops): outs[j] = program(inputs[j][0], ...)
// for every j, as elementwise() computes each, with workgroups sharing the tiles of all of
// them. Every out and input is contiguous; entry j's inputs have outs[j]'s size; every entry has
// entry 0's dtypes; scalars are shared. Lists longer than kMaxListSegments take one launch per
// kMaxListSegments tensors (their arguments, like CUDA's multi_tensor_apply's, are bounded).
// Throws std::invalid_argument for lists that break these rules, and for programs with rand or
// idx; mimic::Error if a launch fails.
constexpr size_t kMaxListSegments = 32;
void elementwiseList(const LaunchContext& ctx, const std::vector<TensorView>& outs,
                     const std::vector<std::vector<TensorView>>& inputs, const std::string& program,
                     isa::DType compute, const std::vector<ScalarArg>& scalars);

}  // namespace mimic::ops
