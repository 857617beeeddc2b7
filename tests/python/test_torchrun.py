"""examples/torchrun_train.py launched as users launch it across machines: two torchrun agents
(python3 -m torch.distributed.run), one per simulated node, two ranks each, on two nodes of
h100-4x8 (MIMIC_NUM_DEVICES=4, network.nodes=2). The static rendezvous runs in timing-only mode,
the c10d rendezvous in full mode. Every rank finishes and ends every step at the same simulated
time; the step takes what the same job takes when one launcher starts all 4 ranks with the same
node layout, and longer than with all 4 ranks on one node: DDP's all_reduce crosses the network
between the nodes."""
import os
import re
import subprocess
import sys
import time

import pytest
import torch.distributed as dist

from dist_harness import free_port

pytestmark = pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not built")

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "torchrun_train.py")
STEPS = 2
RANKS, PER_NODE = 4, 2
DEADLINE_S = 300  # a hang, not slowness: 20 processes share a loaded machine's cores
RANK_LINE = re.compile(r"^rank (\d+) \(node (\d+), local rank (\d+)\): step (\d+)/\d+  "
                       r"sim +([\d.]+) us  all_reduce +([\d.]+) us  ends at (\d+) ns", re.MULTILINE)


def system_env(nodes, mode):
    env = dict(os.environ, MIMIC_PRESET="h100-4x8", MIMIC_NUM_DEVICES=str(RANKS),
               MIMIC_OVERRIDES=f"network.nodes={nodes}", MIMIC_MODE=mode,
               MIMIC_FALLBACK="silent", MIMIC_HOST_THREADS="1",
               SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    env.pop("LOCAL_WORLD_SIZE", None)
    return env


def run_together(launches, log_dir):
    """Starts the processes of every launch ({name: [(argv, env), ...]}) at once, so that one
    launch's waits (rendezvous, start-up) overlap another's work, and waits for all; a hang past
    DEADLINE_S fails the test. Returns {name: the launch's processes' combined output}."""
    started = time.monotonic()
    processes = {}
    for name, commands in launches.items():
        for i, (argv, env) in enumerate(commands):
            with open(log_dir / f"{name}{i}.log", "w") as log:
                processes[name, i] = subprocess.Popen(argv, env=env, stdout=log,
                                                      stderr=subprocess.STDOUT)
    try:
        while any(p.poll() is None for p in processes.values()):
            assert time.monotonic() - started < DEADLINE_S, \
                f"still running after {DEADLINE_S} s; logs in {log_dir}"
            time.sleep(0.2)
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.kill()
            process.wait()
    outputs = {}
    for (name, i), process in processes.items():
        output = (log_dir / f"{name}{i}.log").read_text()
        assert process.returncode == 0, f"{name}, process {i}:\n{output}"
        outputs[name] = outputs.get(name, "") + output
    return outputs


def torchrun(agent_args, env, log_dir):
    """One agent per entry of agent_args (its own options); each starts 2 ranks of 4."""
    # Python 3.11 needs explicit redirects for PyTorch 1.13's torchrun (PLATFORM.md); the agents
    # look at their ranks every 0.5 s instead of 5 s, so that they exit soon after them.
    common = [sys.executable, "-m", "torch.distributed.run", "--nnodes", str(RANKS // PER_NODE),
              "--nproc_per_node", str(PER_NODE), "--monitor_interval", "0.5",
              "--redirects", "2", "--tee", "2"]
    return [(common + ["--log_dir", str(log_dir / f"agent{i}")] + args
             + [EXAMPLE, "--steps", str(STEPS)], env) for i, args in enumerate(agent_args)]


def one_launcher(env, per_node):
    """The 4 ranks started by one process, with the environment torchrun gives them
    (env:// rendezvous, per_node ranks to a node)."""
    port = free_port()
    return [([sys.executable, EXAMPLE, "--steps", str(STEPS)],
             dict(env, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                  WORLD_SIZE=str(RANKS), LOCAL_RANK=str(rank % per_node),
                  LOCAL_WORLD_SIZE=str(per_node), GROUP_RANK=str(rank // per_node)))
            for rank in range(RANKS)]


def rank_steps(output):
    """{rank: [(node, sim_us, all_reduce_us, end_ns) per step]}, checking that each rank printed
    every step once."""
    found = {}
    for rank, node, _local, step, sim_us, reduce_us, end_ns in RANK_LINE.findall(output):
        found.setdefault(int(rank), []).append((int(step), int(node), float(sim_us),
                                                float(reduce_us), int(end_ns)))
    assert sorted(found) == list(range(RANKS)), output
    for steps in found.values():
        assert [s[0] for s in steps] == list(range(1, STEPS + 1)), output
    return {rank: [s[1:] for s in steps] for rank, steps in found.items()}


def step_ends(steps):
    ends = {tuple(s[3] for s in rank) for rank in steps.values()}
    assert len(ends) == 1, f"the ranks end their steps at different simulated times: {steps}"
    return ends.pop()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("torchrun")
    port = free_port()
    static = [["--node_rank", str(node), "--master_addr", "127.0.0.1", "--master_port", str(port)]
              for node in range(2)]
    rendezvous = ["--rdzv_backend", "c10d", "--rdzv_endpoint", f"127.0.0.1:{free_port()}",
                  "--rdzv_id", "mimic-test"]
    return run_together({
        "static": torchrun(static, system_env(2, "timing"), base / "static"),
        "c10d": torchrun([rendezvous, rendezvous], system_env(2, "full"), base / "c10d"),
        "launcher": one_launcher(system_env(2, "timing"), PER_NODE),
        "one_node": one_launcher(system_env(1, "timing"), RANKS)}, base)


@pytest.mark.parametrize("name", ["static", "c10d"])
def test_every_rank_of_both_agents_finishes_on_its_node(runs, name):
    steps = rank_steps(runs[name])
    assert {rank: steps[rank][0][0] for rank in steps} == {0: 0, 1: 0, 2: 1, 3: 1}
    step_ends(steps)
    assert "summary: every rank ends every step at the same simulated time: yes" in runs[name]
    assert "summary: 4 ranks on 2 node(s) of h100-4x8 (2 ranks to a node)" in runs[name]


def test_full_mode_prints_the_loss_and_timing_mode_says_it_has_none(runs):
    first, last = map(float, re.search(r"summary: loss (\d+\.\d+) at step 1 -> (\d+\.\d+) at "
                                       r"step 2", runs["c10d"]).groups())
    assert last < first
    assert "timing-only mode: no values were computed, so no loss is shown" in runs["static"]


def test_two_agents_take_the_time_of_one_launcher_with_the_same_layout(runs):
    assert step_ends(rank_steps(runs["static"])) == step_ends(rank_steps(runs["launcher"]))


def test_timing_only_mode_takes_the_time_of_full_mode(runs):
    """Every step and its all_reduce take the same simulated time in both modes. (The steps start
    at different simulated times: DDP's construction checks the ranks' parameters with a
    collective on the device in full mode, and on the host in timing mode.)"""
    def durations(output):
        return {rank: [step[1:3] for step in steps] for rank, steps in rank_steps(output).items()}

    assert durations(runs["static"]) == durations(runs["c10d"])


def test_the_all_reduce_between_nodes_takes_longer_than_within_one(runs):
    two_nodes, one_node = rank_steps(runs["static"]), rank_steps(runs["one_node"])
    for rank in range(RANKS):
        for across, within in zip(two_nodes[rank], one_node[rank]):
            assert across[2] > within[2] > 0  # all_reduce
            assert across[1] > within[1]  # the step: its compute is the same
