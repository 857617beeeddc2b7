"""Sharded training on the c10d backend "mimic" (issue 20): DDP with ZeroRedundancyOptimizer
against the same on Gloo/CPU, the tensor-parallel layers of examples/scale/tensor_parallel.py
against the unsharded ones, and both in timing-only mode (MIMIC_MODE=timing), where they must
take the simulated times of full mode and compute no values. One group of 2 ranks per mode runs
every check (sharded_workers.every_check): a rank process costs seconds to start."""
import pytest
import torch.distributed as dist

import sharded_workers
from dist_harness import run_in_both_modes

pytestmark = pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not built")

FLOAT32_ULP = 2.0 ** -23  # at 1.0; every parameter here stays below 1 in magnitude


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return run_in_both_modes(sharded_workers.every_check, 2, tmp_path_factory.mktemp("sharded"))


def test_zero_matches_zero_on_gloo_cpu(runs):
    """Both sides compute the same float32 program, but not in the same order (the device's
    matmuls and all_reduce sum otherwise), so their gradients differ by rounding: grad_diffs,
    measured each step. AdamW's update lr * m / (sqrt(v) + eps) moves by at most
    lr * (|dm| + |m| / (sqrt(v) + eps) * |d sqrt(v)|) / eps <= about 2 * lr * dgrad / eps over
    these steps (m and sqrt(v) are averages of the gradients with weights summing to 1, and
    |m| <= 1.01 sqrt(v) for their weights at 3 steps), 3 with slack for second-order terms; the
    update's own rounding adds a few ulps a step."""
    lr, eps = sharded_workers.ADAMW["lr"], sharded_workers.ADAMW["eps"]
    for rank in runs["full"]:
        zero = rank["zero"]
        assert zero["moved"] > lr  # training changed the parameters (by up to lr a step)
        # Rounding of float32 gradients of size ~0.1, nothing more.
        assert max(zero["grad_diffs"]) < 1e-6, zero["grad_diffs"]
        tolerance = (sum(3 * lr * max(zero["grad_diffs"][:step + 1]) / eps
                         for step in range(sharded_workers.STEPS))
                     + sharded_workers.STEPS * 4 * FLOAT32_ULP)
        assert zero["param_diff"] <= tolerance, (zero["param_diff"], tolerance)


@pytest.mark.parametrize("mode", ["full", "timing"])
def test_each_rank_keeps_optimizer_state_of_its_shard_only(runs, mode):
    first, second = (rank["zero"] for rank in runs[mode])
    sizes = first["sizes"]
    held = [set(first["state_params"]), set(second["state_params"])]
    assert held[0] and held[1] and not held[0] & held[1]
    assert held[0] | held[1] == set(range(len(sizes)))
    for rank, zero in enumerate((first, second)):
        # exp_avg and exp_avg_sq of its own parameters, and of no other.
        assert zero["state_elements"] == 2 * sum(sizes[i] for i in held[rank])
        assert zero["state_elements"] < 2 * sum(sizes) * 0.75


def test_tensor_parallel_block_matches_the_unsharded_block(runs):
    """The tensor-parallel block adds the same float32 products as the unsharded one in another
    order (each rank its half of every sum, then the all_reduce): at most K * 2**-24 of the sum
    of their magnitudes for sums of K <= 256 terms, about 1.5e-5; the values here cancel little,
    so the largest difference stays within that of the tensor's largest value."""
    for rank in runs["full"]:
        diffs = rank["tensor_parallel"]["diffs"]
        assert len(diffs) == 2 + 12  # output, input gradient, the block's 12 parameters
        for name, (diff, largest) in diffs.items():
            assert largest > 0 and diff <= 1.5e-5 * largest, (name, diff, largest)


def test_timing_mode_computes_no_update_and_moves_small_collectives(runs):
    """One more ZeRO step, with every parameter's device bytes overwritten first: in full mode
    it writes each of them (its owner updates it, the other rank receives it by broadcast). In
    timing mode the owner computes no update, while the broadcasts, at most 64 KiB each here,
    move their bytes as control data does (driver/src/timing_mode_transfers.h; bulk ones move
    nothing: test_distributed_timing.py): only the parameters another rank owns are written.
    One more pass of the tensor-parallel block with each all_reduce's tensor overwritten before
    the call: two in the forward pass, two in the backward pass, as small, so written in both
    modes."""
    for full, timing in zip(runs["full"], runs["timing"]):
        assert full["zero"]["params_written"] == len(full["zero"]["sizes"])
        zero = timing["zero"]
        assert zero["params_written"] == len(zero["sizes"]) - len(zero["state_params"])
        assert full["tensor_parallel"]["all_reduces_written"] == [True] * 4
        assert timing["tensor_parallel"]["all_reduces_written"] == [True] * 4


def test_every_step_takes_the_simulated_time_of_full_mode(runs):
    for full, timing in zip(runs["full"], runs["timing"]):
        for program in ("zero", "tensor_parallel"):
            assert all(ns > 0 for ns in full[program]["step_ns"])
            assert timing[program]["step_ns"] == full[program]["step_ns"], program


@pytest.mark.parametrize("mode", ["full", "timing"])
def test_ranks_that_disagree_on_shapes_get_an_error(runs, mode):
    for rank, result in enumerate(runs[mode]):
        errors = result["errors"]
        assert "disagree on the number of elements" in errors["tensor parallel"], errors
        assert "disagree on the number of elements" in errors["zero"], errors
        assert f"rank {rank} of 2" in errors["zero"], errors
