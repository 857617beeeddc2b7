"""What both sides of `mimic demo` agree on, without torch (the CLI starts without it): model
sizes and the names of the output files."""
from dataclasses import dataclass


@dataclass(frozen=True)
class ModelSize:
    vocab: int
    d_model: int
    heads: int
    layers: int
    seq_len: int
    batch: int  # sequences per rank and step

    def describe(self):
        return (f"{self.layers}-layer transformer (d_model {self.d_model}, {self.heads} heads, "
                f"vocab {self.vocab}, sequence {self.seq_len}, batch {self.batch} per rank)")


SIZES = {
    "default": ModelSize(vocab=256, d_model=128, heads=4, layers=3, seq_len=64, batch=8),
    # For tests: the same program, a fraction of the work.
    "tiny": ModelSize(vocab=64, d_model=32, heads=2, layers=1, seq_len=16, batch=4),
}

RESULT_NAME = "demo-result.json"
TRACE_NAME = "trace.json"        # chrome://tracing / Perfetto; torch_mimic.profiler loads it too
TIMELINE_NAME = "timeline.html"  # the profiler's SVG timeline, in a self-contained page
