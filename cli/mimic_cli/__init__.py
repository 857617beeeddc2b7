"""mimic_cli: the `mimic` command-line tool (run it as `mimic ...` or `python3 -m mimic_cli ...`).

Scripts run by `mimic run` and `mimic what-if` may mark training steps:

    import mimic_cli
    for batch in data:
        train_step(batch)
        mimic_cli.step()       # the simulated time since the previous mark is one step

Then the reports give the median step time beside the total. Outside mimic, step() only
records the times, so the script still runs with plain python.
"""

_step_marks_ns = []  # simulated time of each step() call, read by the runner


def step():
    """Marks the end of a step, at the current simulated time (all devices synchronised)."""
    import torch_mimic  # here, not at import: the CLI itself must start without torch

    for device in range(torch_mimic.device_count()):
        torch_mimic.synchronize(device)
    _step_marks_ns.append(torch_mimic.sim_time())
