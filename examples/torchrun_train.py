"""torchrun_train: DistributedDataParallel training on simulated devices, launched with torchrun on
one machine or several. Each rank prints its simulated step times; rank 0 then prints a summary:
the node layout, the median step, the time of DDP's all_reduce, and whether every rank ended
every step at the same simulated time.

Every rank process simulates the whole system (all nodes, all devices: MIMIC_PRESET,
MIMIC_NUM_DEVICES, MIMIC_OVERRIDES) and computes on its device 0. The c10d backend "mimic"
places the ranks on the system's devices node by node, as torchrun numbers them: the
LOCAL_WORLD_SIZE ranks of one agent (--nproc_per_node) share a node. So the system needs as many
nodes as agents (--nnodes) and --nproc_per_node devices in each node; then a collective among
ranks of several agents crosses the simulated network between nodes.

Two machines (or two agents on one machine), two ranks each, on two nodes of h100-4x8; run the
second agent with --node_rank 1 (PyTorch 1.13's torchrun spells its options with underscores;
on Python 3.11 it needs `--redirects 2 --tee 2 --log_dir DIR`, a PyTorch 1.13 bug):

    export MIMIC_PRESET=h100-4x8 MIMIC_NUM_DEVICES=4 MIMIC_OVERRIDES=network.nodes=2
    export PYTHONPATH=build/python
    python3 -m torch.distributed.run --nnodes 2 --nproc_per_node 2 --node_rank 0 \\
        --master_addr HOST0 --master_port 29500 --redirects 2 --tee 2 --log_dir logs \\
        examples/torchrun_train.py --steps 3

The c10d rendezvous works as well, the same command on every machine: `--rdzv_backend c10d
--rdzv_endpoint HOST0:29500 --rdzv_id JOB` instead of --node_rank, --master_addr and
--master_port. MIMIC_MODE=timing simulates without computing (the losses are then not printed:
they would be placeholders) with the same simulated times. Every rank must see the same MIMIC_*
settings: each one simulates the same system.
"""
import argparse
import os
import statistics
import sys
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

import torch_mimic  # registers the device and the c10d backend "mimic"

TIMEOUT = timedelta(minutes=5)
BATCH_SEED = 1000  # rank r's batch is drawn with seed BATCH_SEED + r
FEATURES = 8  # the target is the scaled sum of the first FEATURES inputs


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=3, help="training steps (default 3)")
    parser.add_argument("--width", type=int, default=512,
                        help="width of the MLP's hidden layers (default 512)")
    parser.add_argument("--layers", type=int, default=4, help="hidden layers (default 4)")
    parser.add_argument("--batch", type=int, default=64, help="samples per rank and step")
    args = parser.parse_args()
    if min(args.steps, args.width, args.layers, args.batch) < 1:
        parser.error("--steps, --width, --layers and --batch must be positive")
    return args


def make_model(width, layers):
    """The same initial weights on every rank (DDP also broadcasts rank 0's)."""
    torch.manual_seed(0)
    hidden = [module for _ in range(layers) for module in (torch.nn.Linear(width, width),
                                                           torch.nn.GELU())]
    return torch.nn.Sequential(*hidden, torch.nn.Linear(width, 1))


def make_batch(rank, args):
    """A regression task drawn on the CPU, every rank its own shard, the same at every step (so
    that a few steps show the loss fall)."""
    generator = torch.Generator().manual_seed(BATCH_SEED + rank)
    inputs = torch.randn(args.batch, args.width, generator=generator)
    return inputs, inputs[:, :FEATURES].sum(dim=1, keepdim=True) / FEATURES ** 0.5


def collective_ns(trace):
    """Simulated time of the c10d collectives (DDP's all_reduce) in a profiler trace."""
    return sum(a["end_ns"] - a["start_ns"] for a in trace["activities"]
               if a["kind"] == "range" and a["name"].startswith("c10d "))


def train(args, rank, device):
    model = DistributedDataParallel(make_model(args.width, args.layers).to(device))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    inputs, targets = make_batch(rank, args)
    steps, losses = [], []
    for step in range(args.steps):
        torch_mimic.synchronize()
        started = torch_mimic.sim_time()
        # Profiled for the simulated time of the step's collectives.
        with torch_mimic.profiler.profile() as prof:
            loss = F.mse_loss(model(inputs.to(device)), targets.to(device))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()  # DDP all-reduces (averages) the gradients here
            optimizer.step()
            torch_mimic.synchronize()
        ended = torch_mimic.sim_time()
        steps.append({"step": step + 1, "sim_ns": ended - started, "end_ns": ended,
                      "collective_ns": collective_ns(prof.trace)})
        losses.append(loss.detach())
    # Read after the last step, so that both modes run the same device work until then (a read
    # queues a copy to the host); timing-only mode has placeholders, not losses.
    computed = torch_mimic.simulation_mode() == "full"
    for record, loss in zip(steps, losses):
        record["loss"] = loss.item() if computed else None
    return steps


def print_rank(rank, steps):
    node, local = os.environ.get("GROUP_RANK", "?"), os.environ.get("LOCAL_RANK", "?")
    for s in steps:
        loss = f"loss {s['loss']:.4f}" if s["loss"] is not None else "loss not computed"
        print(f"rank {rank} (node {node}, local rank {local}): step {s['step']}/{len(steps)}  "
              f"sim {s['sim_ns'] / 1e3:.3f} us  all_reduce {s['collective_ns'] / 1e3:.3f} us  "
              f"ends at {s['end_ns']} ns  {loss}", flush=True)


def print_summary(every_rank, world):
    steps = every_rank[0]
    ends_agree = all([s["end_ns"] for s in r] == [s["end_ns"] for s in steps]
                     for r in every_rank)
    props = torch_mimic.get_device_properties(0)
    nodes = world // int(os.environ.get("LOCAL_WORLD_SIZE", world))
    mode = torch_mimic.simulation_mode()
    print(f"summary: {world} ranks on {nodes} node(s) of {props.preset} "
          f"({os.environ.get('LOCAL_WORLD_SIZE', world)} ranks to a node), {mode} mode, "
          f"{len(steps)} steps", flush=True)
    print(f"summary: median step {statistics.median(s['sim_ns'] for s in steps) / 1e3:.3f} us "
          f"simulated, of which all_reduce "
          f"{statistics.median(s['collective_ns'] for s in steps) / 1e3:.3f} us", flush=True)
    print("summary: every rank ends every step at the same simulated time: "
          + ("yes" if ends_agree else "NO"), flush=True)
    if steps[-1]["loss"] is not None:
        print(f"summary: loss {steps[0]['loss']:.4f} at step 1 -> {steps[-1]['loss']:.4f} at "
              f"step {len(steps)}", flush=True)
    else:
        print("summary: timing-only mode: no values were computed, so no loss is shown",
              flush=True)
    return ends_agree


def main():
    args = parse_args()
    dist.init_process_group("mimic", timeout=TIMEOUT)
    rank, world = dist.get_rank(), dist.get_world_size()
    # The step records travel to rank 0 on the host: in timing-only mode the device tensors
    # of the "mimic" group hold no values.
    host_group = dist.new_group(backend="gloo")
    steps = train(args, rank, torch.device(torch_mimic.DEVICE_TYPE, 0))
    print_rank(rank, steps)
    every_rank = [None] * world
    dist.all_gather_object(every_rank, steps, group=host_group)
    agreed = print_summary(every_rank, world) if rank == 0 else True
    dist.destroy_process_group()
    return 0 if agreed else 1


if __name__ == "__main__":
    sys.exit(main())
