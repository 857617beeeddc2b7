"""The c10d backend "mimic" across processes (torch.multiprocessing spawn and torchrun): every
collective against Gloo on CPU tensors, init methods, simulated time, stream ordering, bad
input, a dead peer, and DDP against DDP on Gloo/CPU. The rank programs are in dist_workers.py."""
import os
import subprocess
import sys

import pytest
import torch.distributed as dist

import dist_workers
from dist_harness import free_port, run_ranks, values

pytestmark = pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not built")


# What the device adds around a collective that the model leaves out: filling the input (4 MiB
# at the default HBM's 1000 GB/s), recording and waiting for a few events. The lower bounds
# allow 2 ns for rounding (the end is a whole ns, elapsed_time a float in ms). The model's time ("model_ns") is the collective model's estimate
# of the same all_reduce run in one process (mimicCollectiveGetPlan), which the communicator
# matches within 1 % (tests/collectives/test_fidelity.cpp): so the c10d backend and the
# in-process communicator agree.
OVERHEAD_NS = 10_000


@pytest.mark.parametrize("size", [2, 4])
def test_every_collective_matches_gloo(tmp_path, size):
    mismatches = values(run_ranks(dist_workers.collectives_match_gloo, size, tmp_path))
    assert mismatches == [[]] * size


@pytest.mark.parametrize("method", ["env", "file", "tcp"])
def test_init_methods(tmp_path, method):
    if method == "env":
        init = "env://"
    elif method == "file":
        init = f"file://{tmp_path}/rendezvous"
    else:
        init = f"tcp://127.0.0.1:{free_port()}"
    results = values(run_ranks(dist_workers.init_method, 2, tmp_path, init))
    assert results == [{"sum": [3.0] * 5, "backend": "mimic"}] * 2


def test_ranks_agree_on_simulated_time_and_it_is_deterministic(tmp_path):
    first = values(run_ranks(dist_workers.simulated_time, 2, tmp_path / "a"))
    second = values(run_ranks(dist_workers.simulated_time, 2, tmp_path / "b"))
    assert first == second
    # Both ranks finish the collective at the same simulated time; rank 1 arrived later (more
    # compute), so rank 0 waited for it.
    assert first[0]["end_ns"] == first[1]["end_ns"]
    assert first[0]["arrived_to_done_ms"] > first[1]["arrived_to_done_ms"]
    assert first[0]["x0"] == 2.0
    # The later rank waits for nothing but the collective itself: the model's time for 4 MiB.
    model_ns = first[1]["model_ns"]
    assert model_ns - 2 <= first[1]["arrived_to_done_ms"] * 1e6 <= model_ns + OVERHEAD_NS


def test_ranks_on_two_nodes_cross_the_network(tmp_path):
    results = values(run_ranks(dist_workers.multinode_allreduce, 4, tmp_path))
    assert [r["x0"] for r in results] == [4.0] * 4
    for r in results:
        assert r["two_nodes_ns"] > 1.5 * r["one_node_ns"]  # the NICs, not NVLink, bind
        # The ranks arrive together (nothing before the call), so each waits for the model's
        # time of the collective on devices 0, 1, 8, 9, give or take an event record.
        assert r["two_nodes_ns"] - 2 <= r["arrived_to_done_ns"] <= r["two_nodes_ns"] + 5_000


def test_one_launcher_with_more_ranks_than_a_node_spans_nodes(tmp_path):
    """torchrun --nproc_per_node 4 on 2 simulated nodes of 2 devices (one agent, as on a machine
    standing in for two): ranks 2 and 3 are on the second node."""
    results = values(run_ranks(dist_workers.one_launcher_over_two_nodes, 4, tmp_path))
    assert [r["x0"] for r in results] == [4.0] * 4
    for r in results:
        assert r["two_nodes_ns"] > 1.5 * r["one_node_ns"]
        assert r["two_nodes_ns"] - 2 <= r["arrived_to_done_ns"] <= r["two_nodes_ns"] + 5_000


def test_a_group_larger_than_the_system_is_named(tmp_path):
    """Rank 2 has no device in a system of 2: it says why, the others name it."""
    errors = values(run_ranks(dist_workers.too_many_ranks, 3, tmp_path))
    assert "a group of 3 ranks" in errors[2] and "MIMIC_NUM_DEVICES" in errors[2], errors[2]
    for error in errors[:2]:
        assert "rank(s) 2 passed invalid arguments" in error, error


def test_async_collective_overlaps_with_compute(tmp_path):
    spans = values(run_ranks(dist_workers.async_overlap, 2, tmp_path))[0]
    assert spans["matmul"] > 0 and spans["allreduce"] > 0
    assert spans["both"] < spans["allreduce"] + spans["matmul"]


def test_collective_is_ordered_by_streams_and_events(tmp_path):
    for result in values(run_ranks(dist_workers.stream_ordering, 2, tmp_path)):
        assert result["y0"] == result["expected"]
        # The collective started after the producer: between them lies the whole collective.
        model_ns = result["model_ns"]
        assert model_ns - 2 <= result["produced_to_reduced_ms"] * 1e6 <= model_ns + OVERHEAD_NS
        assert result["reduced_to_consumed_ms"] > 0  # the consumer waited for the collective


def test_bad_input_names_the_collective_and_ranks(tmp_path):
    results = values(run_ranks(dist_workers.bad_inputs, 2, tmp_path))
    for rank, result in enumerate(results):
        errors = result["errors"]
        assert all(errors[k] is not None for k in errors), errors
        assert all(f"rank {rank} of 2" in e for e in errors.values())
        assert "disagree on the number of elements: rank 0 has 10, rank 1 has 12" in errors["shape"]
        assert "disagree on the dtype: rank 0 has Float, rank 1 has Int" in errors["dtype"]
        assert "reduce op BAND is not supported" in errors["op"]
        assert "root rank 5 is outside 0..1" in errors["root"]
        assert "disagree on the collective" in errors["collective"]
        assert result["after"] == [2.0, 2.0, 2.0]  # the group still works
    assert "tensors[0] is on cpu" in results[1]["errors"]["device"]
    assert "rank(s) 1 passed invalid arguments" in results[0]["errors"]["device"]
    assert "not contiguous" in results[1]["errors"]["contiguous"]
    assert "rank(s) 1 passed invalid arguments" in results[0]["errors"]["contiguous"]


def test_dead_peer_is_an_error_naming_it_within_the_timeout(tmp_path):
    results = run_ranks(dist_workers.dead_peer, 2, tmp_path)
    survivor = values(results[:1])[0]
    assert "mimic allreduce (collective #2, rank 0 of 2)" in survivor["error"]
    assert "Ranks that never reached this collective: 1" in survivor["error"]
    assert survivor["seconds"] < 10


def test_late_peer_is_an_error_naming_it_within_the_timeout(tmp_path):
    results = run_ranks(dist_workers.late_peer, 2, tmp_path)
    survivor = values(results)[0]
    assert "Ranks that never reached this collective: 1" in survivor["error"]
    assert survivor["seconds"] < 3 + 5


def test_group_of_one_rank(tmp_path):
    result = values(run_ranks(dist_workers.single_rank, 1, tmp_path))[0]
    assert result == {"x": [0.0, 1.0, 2.0, 3.0], "gathered": [0.0, 1.0, 2.0, 3.0]}


def test_profiled_collective_is_a_named_range_of_its_host_op(tmp_path):
    first, second = values(run_ranks(dist_workers.profiled_collective, 2, tmp_path))
    assert first == second  # the same range, op and simulated span on both ranks
    assert len(first) == 1
    assert first[0]["name"] == "c10d allreduce"
    assert first[0]["op"] is not None and "allreduce" in first[0]["op"]
    assert first[0]["span_ns"] > 0


def test_ddp_matches_ddp_on_gloo_cpu(tmp_path):
    for result in values(run_ranks(dist_workers.ddp_parity, 2, tmp_path)):
        assert result["moved"] > 1e-3  # training changed the parameters
        assert result["max_diff"] < 1e-5


TORCHRUN_SCRIPT = """
import sys, torch, torch.distributed as dist, torch_mimic
dist.init_process_group("mimic")
x = torch.full((3,), float(dist.get_rank() + 1), device="privateuseone")
dist.all_reduce(x)
print("rank", dist.get_rank(), "sum", x.cpu().tolist(), file=sys.stderr)
dist.destroy_process_group()
"""


def test_torchrun(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(TORCHRUN_SCRIPT)
    logs = tmp_path / "logs"
    # Python 3.11 needs explicit redirects for torchrun (PLATFORM.md).
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
               "--master_port", str(free_port()), "--redirects", "2", "--tee", "2",
               "--log_dir", str(logs), str(script)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180,
                          env=dict(os.environ))
    assert done.returncode == 0, done.stdout + done.stderr
    rank_logs = sorted(logs.rglob("stderr.log"))  # --redirects 2: each rank's stderr
    assert len(rank_logs) == 2, done.stdout + done.stderr
    for log in rank_logs:
        assert "sum [3.0, 3.0, 3.0]" in log.read_text()
