"""The c10d backend "mimic" in timing-only mode (MIMIC_MODE=timing): every collective ends at the
same simulated time as in full mode, moves no byte of bulk tensors (a small call's, control
data, it moves as in full mode), and checks its arguments against the other ranks' as in full
mode; DDP's steps take the same simulated times, and DDP's check of the ranks' parameters finds
what it finds in full mode. One group of 2 ranks per mode runs every check
(dist_timing_workers.every_check): a rank process costs seconds to start."""
import pytest
import torch.distributed as dist

import dist_timing_workers
from dist_harness import run_in_both_modes

pytestmark = pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not built")

EVERY_COLLECTIVE = {"allreduce", "broadcast", "reduce", "allgather", "allgather_base",
                    "reduce_scatter_base", "alltoall_base", "gather", "scatter", "p2p"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return run_in_both_modes(dist_timing_workers.every_check, 2,
                             tmp_path_factory.mktemp("timing"))


def test_every_collective_ends_when_it_does_in_full_mode(runs):
    full = [rank["times"] for rank in runs["full"]]
    timing = [rank["times"] for rank in runs["timing"]]
    assert set(full[0]) == EVERY_COLLECTIVE | {"barrier"}
    assert timing == full
    # The ranks computed for different times before each call, and end it together.
    assert full[0]["allreduce"] == full[1]["allreduce"]
    assert list(full[0].values()) == sorted(full[0].values())


def test_no_byte_of_a_bulk_tensor_is_moved(runs):
    assert [rank["changed"]["bulk"] for rank in runs["timing"]] == [{}, {}]
    # The same program in full mode sees every collective write somewhere: the check can fail.
    full = [rank["changed"]["bulk"] for rank in runs["full"]]
    assert set(full[0]) | set(full[1]) == EVERY_COLLECTIVE


def test_small_tensors_arrive_as_in_full_mode(runs):
    timing = [rank["changed"]["small"] for rank in runs["timing"]]
    assert set(timing[0]) | set(timing[1]) == EVERY_COLLECTIVE
    assert timing == [rank["changed"]["small"] for rank in runs["full"]]


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
            ns = rank["ddp"]["ns"]
            assert len(ns) == 3 and all(t > 0 for t in ns), rank


def test_ddp_first_step_takes_the_same_simulated_time(runs):
    full = [rank["ddp"]["ns"][0] for rank in runs["full"]]
    assert [rank["ddp"]["ns"][0] for rank in runs["timing"]] == full


def test_ddp_later_steps_take_the_same_simulated_time(runs):
    full = [rank["ddp"]["ns"] for rank in runs["full"]]
    assert [rank["ddp"]["ns"] for rank in runs["timing"]] == full


def test_ddp_leaves_the_caching_allocator_as_in_full_mode(runs):
    """Kernels' times depend on their addresses, so the steps take full mode's times only while
    tensors land where they do in full mode: DDP's parameter check, PyTorch's own in both modes,
    allocates and caches the same device blocks."""
    full = [rank["ddp"]["memory"] for rank in runs["full"]]
    assert [rank["ddp"]["memory"] for rank in runs["timing"]] == full


def test_ddp_checks_the_ranks_parameters_as_in_full_mode(runs):
    """PyTorch's own check reads back the parameters' counts and rank 0's shapes from device
    tensors: in timing mode they are control data, moved and read exactly
    (torch_mimic/_distributed.py)."""
    timing = [rank["ddp_errors"] for rank in runs["timing"]]
    assert timing == [rank["ddp_errors"] for rank in runs["full"]]
    for rank, errors in enumerate(timing):
        assert f"Rank {rank} has {2 * (1 + rank)} params, while rank {1 - rank} has " \
               f"inconsistent {2 * (2 - rank)} params" in errors["count"], errors
    assert "params[0] in this process with sizes [9, 4] appears not to match sizes of the same " \
           "param in process 0" in timing[1]["shape"], timing
    assert "the ranks disagree on the collective" in timing[0]["shape"], timing
