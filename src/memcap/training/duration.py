"""A training job's least possible time, counted before it is submitted (torch-free).

The count is a floor, not a forecast: the job's multiply-adds (memcap.models.mlt_work, every training
step forward and backward, every evaluation over the training set) at the most float32 arithmetic the
job's hardware can do (FLOOR_RATE). memcap's trainers reach a fraction of that (docs/speed.md), so a job
whose floor is above its `resources` runtime cannot finish in its first attempt, whatever the machine;
`memcap params check` and every Snakemake start say so before anything is submitted.
"""

from __future__ import annotations

from memcap.models.mlt_work import example_work
from memcap.training.config import EVAL_BATCH
from memcap.training.schedule import mlt_num_steps

# float32 FLOP/s above what one CPU thread or one GPU computes: two 512-bit FMA units at 6 GHz
# (2·2·16·6e9 = 384e9; today's cores run at most ~200e9) and twice an H100's 67e12 (memcap keeps
# matmuls at full float32, no TF32: memcap.runtime.enable_determinism).
FLOOR_RATE = {"cpu_thread": 384e9, "gpu": 134e12}
# An eager training step's least time on any device: its forward, backward and optimizer are dozens of
# operator calls, each at least ~1 µs of Python and dispatch (measured: a packed DPC step 130 µs on a CPU).
EAGER_STEP_S = 20e-6


def mlt_model_flops(s: dict, heads: int, head_dim: int, context_size: int, T: int) -> float:
    """FLOPs of training one MLT model on T examples: S steps of a batch forward and backward (3 passes'
    work) and an evaluation of all T examples every eval_every steps."""
    out = s["num_classes"] if s.get("task", "classification") == "classification" else 1
    d, B = s["input_dim"], min(s["batch_size"], T)
    one = lambda batch: example_work(d, heads, context_size, head_dim, out, s["context"] != "shared", batch,
                                     s.get("value_dim", 1))
    steps = mlt_num_steps(T, s["min_steps"], s["epochs"], s["batch_size"])
    evals = steps // max(s.get("eval_every", steps), 1) + 1
    return 2 * (3 * steps * B * one(B) + evals * T * one(min(EVAL_BATCH, T)))


def least_rate(sizes: dict) -> float:
    return FLOOR_RATE["gpu"] if sizes.get("gpu", 0) > 0 else FLOOR_RATE["cpu_thread"] * sizes.get("threads", 1)


def least_seconds(flops: float, sizes: dict) -> float:
    """The floor of a job's time on the hardware its `resources` ask for (gpu > 0: one GPU)."""
    return flops / least_rate(sizes)


def clock(seconds: float) -> str:
    return f"{seconds / 3600:,.1f} h" if seconds >= 3600 else f"{seconds / 60:,.1f} min"


def problem(key: str, flops: float, sizes: dict, where: str, eager_steps: int = 0) -> str | None:
    """None when the floor fits the job's runtime limit; else one line with the key, the floor, the limit
    and what to change. `where` names the limit's params key; eager_steps, a job's training steps run
    one by one (each at least EAGER_STEP_S), where that floor is above its arithmetic's."""
    arithmetic, launches = least_seconds(flops, sizes), eager_steps * EAGER_STEP_S
    floor, limit = max(arithmetic, launches), 60 * sizes["runtime"]
    if floor <= limit:
        return None
    hardware = "one GPU" if sizes.get("gpu", 0) > 0 else f"{sizes.get('threads', 1)} CPU thread(s)"
    what = (f"of arithmetic ({flops:.3g} FLOPs at {least_rate(sizes):.3g} FLOP/s, more than {hardware} compute)"
            if arithmetic >= launches else f"of training steps ({eager_steps:,} steps at {EAGER_STEP_S * 1e6:g} µs each at least)")
    return (f"{key}: at least {clock(floor)} {what}, above its runtime limit of {clock(limit)} ({where}); it cannot "
            f"finish in its first attempt: raise the runtime or make the job smaller")
