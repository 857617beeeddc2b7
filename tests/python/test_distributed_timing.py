"""The c10d backend "mimic" in timing-only mode (MIMIC_MODE=timing): every collective ends at the
same simulated time as in full mode, moves no byte of its tensors, and checks its arguments
against the other ranks' as in full mode; DDP's steps take the same simulated times, and DDP's
check of the ranks' parameters still works. One group of 2 ranks per mode runs every check
(dist_timing_workers.every_check): a rank process costs seconds to start."""
import pytest
import torch.distributed as dist

import dist_timing_workers
from dist_harness import run_ranks, values

pytestmark = pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not built")

EVERY_COLLECTIVE = {"allreduce", "broadcast", "reduce", "allgather", "allgather_base",
                    "reduce_scatter_base", "alltoall_base", "gather", "scatter", "p2p"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("timing")
    return {mode: values(run_ranks(dist_timing_workers.every_check, 2, base / mode, mode))
            for mode in ("full", "timing")}


def test_every_collective_ends_when_it_does_in_full_mode(runs):
    full = [rank["times"] for rank in runs["full"]]
    timing = [rank["times"] for rank in runs["timing"]]
    assert set(full[0]) == EVERY_COLLECTIVE | {"barrier"}
    assert timing == full
    # The ranks computed for different times before each call, and end it together.
    assert full[0]["allreduce"] == full[1]["allreduce"]
    assert list(full[0].values()) == sorted(full[0].values())


def test_no_tensor_byte_is_moved(runs):
    assert [rank["changed"] for rank in runs["timing"]] == [[], []]
    # The same program in full mode sees every collective write somewhere: the check can fail.
    full = runs["full"]
    assert set(full[0]["changed"]) | set(full[1]["changed"]) == EVERY_COLLECTIVE


def test_argument_errors_and_mismatches_as_in_full_mode(runs):
    full = [rank["errors"] for rank in runs["full"]]
    timing = [rank["errors"] for rank in runs["timing"]]
    for errors in timing:
        assert all(error is not None for error in errors.values()), errors
    assert timing == full
    assert "disagree on the number of elements" in timing[0]["shape"]
    assert "rank(s) 1 passed invalid arguments" in timing[0]["gather_size"]


def test_ddp_runs_past_its_bucket_rebuild(runs):
    """The second step rebuilds DDP's buckets from an order sent through a device tensor and read
    back, which timing mode keeps (small copies move their bytes); it crashed when the read-back
    gave zeros."""
    for mode in ("full", "timing"):
        for rank in runs[mode]:
            assert len(rank["ddp_ns"]) == 3 and all(ns > 0 for ns in rank["ddp_ns"]), rank


def test_ddp_first_step_takes_the_same_simulated_time(runs):
    full = [rank["ddp_ns"][0] for rank in runs["full"]]
    assert [rank["ddp_ns"][0] for rank in runs["timing"]] == full


@pytest.mark.xfail(strict=True, reason="measured: timing mode's first step makes 4 more 512-byte "
                   "allocations than full mode, whose device-side DDP parameter check left such "
                   "blocks cached (timing mode checks on the host), so the second step's "
                   "optimizer kernels run on other addresses and end 1-2 ns later (issue 20)")
def test_ddp_later_steps_take_the_same_simulated_time(runs):
    full = [rank["ddp_ns"] for rank in runs["full"]]
    assert [rank["ddp_ns"] for rank in runs["timing"]] == full


def test_ddp_checks_the_ranks_parameters_on_the_host(runs):
    """In timing mode the device holds no values: DDP's check of the parameters' shapes across
    ranks runs on the host (torch_mimic/_distributed.py) and still finds a difference."""
    for rank, result in enumerate(runs["timing"]):
        errors = result["ddp_errors"]
        assert "DDP expects same model across all ranks" in errors["shape"], errors
        assert f"Rank {rank}'s 0-th param has shape [{8 + rank}, 4]" in errors["shape"], errors
        assert f"Rank {rank} has {2 * (1 + rank)} params" in errors["count"], errors
