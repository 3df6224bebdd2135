"""A training job's peak host memory, estimated before anything is allocated, and the check that stops a
job (or `memcap params check`) whose estimate is above what the machine has (torch-free).

The estimate is an upper bound of the order of magnitude, not a profile: the data (memcap.tasks.mlt_sizes),
each model's weights, gradients and Adam's two moments (4 float32 copies of its parameters), the
activations of one batch kept for the backward pass (three float32 copies of the attention's
intermediates) or of one evaluation chunk (at most EVAL_BYTES a slice of models), whichever is larger,
and torch itself. It exists so that a
preset with `input_dim: 1000000` stops with the key and both numbers instead of torch's allocator
traceback, or the kernel killing a swapping job.
"""

from __future__ import annotations

from memcap import memory_limit
from memcap.memory_limit import TORCH_BYTES, TooBig, available_bytes, gib  # noqa: F401 (the trainers' names)
from memcap.models.mlt_work import param_count
from memcap.tasks import mlt_sizes
from memcap.training.config import EVAL_BATCH, EVAL_BYTES
from memcap.training.sizes import shape

ADAM_COPIES = 4               # weights, gradients, Adam's first and second moments
SAVED_COPIES = 3              # a batch's intermediates: forward values kept for backward, their gradients


def mlt_example_bytes(input_dim: int, heads: int, head_dim: int, context_size: int, value_dim: int,
                      shared: bool) -> int:
    """float32 intermediates of one example through MLT attention: with a context of its own, the
    embedded context and its keys and scores (n·d + n·H·(d_h + 3)); with a shared context, the
    example's queries, scores and values (the context's keys are computed once a model)."""
    n, d, H = context_size, input_dim, heads
    if shared:
        return 4 * (H * (head_dim + value_dim) + 3 * n * H)
    return 4 * (2 * n * d + n * H * (head_dim + 3))


def mlt_model_bytes(s: dict, heads: int, head_dim: int, context_size: int, T: int) -> tuple[int, int, int]:
    """One MLT model's training memory on T examples: (its Adam state and shared keys, a training batch's
    saved intermediates, an evaluation chunk's)."""
    out = s["num_classes"] if s.get("task", "classification") == "classification" else 1
    value_dim = s.get("value_dim", 1)
    params = param_count(s["input_dim"], heads, head_dim, out, value_dim)
    shared = s["context"] == "shared"
    one = mlt_example_bytes(s["input_dim"], heads, head_dim, context_size, value_dim, shared)
    keys = 4 * context_size * heads * (head_dim + value_dim) if shared else 0
    batch = min(s.get("batch_size", 256), T)
    return 4 * ADAM_COPIES * params + keys, SAVED_COPIES * batch * one, min(EVAL_BATCH, T) * one


def mlt_job_bytes(s: dict, models: list[tuple[int, int, int, int]]) -> dict[str, int]:
    """The estimate of a pack of MLT models ((seed, T, heads, head_dim) each, every one at s's context
    size and width), in parts: data, models, torch."""
    n, d = s["context_size"], s["input_dim"]
    task = s.get("task", "classification")
    data = mlt_sizes.data_bytes([(seed, T, n) for seed, T, _, _ in models], n, d, s["context"], task,
                                s["num_classes"])
    state, batches, chunks = zip(*(mlt_model_bytes(s, H, dh, n, T) for _, T, H, dh in models))
    # training steps every model's batch at once; an evaluation takes at most EVAL_BYTES a slice of models
    work = max(sum(batches), min(sum(chunks), max(EVAL_BYTES, *chunks)))
    return {"data": data, "models": sum(state), "activations": work, "torch": TORCH_BYTES}


def mlt_point_bytes(s: dict, value: int, T: int, seeds: list[int]) -> dict[str, int]:
    """The estimate of one MLT grid point's job: a sweep's settings at its value (memcap.training.sizes)."""
    p = {**s, **shape(s, value)}
    return mlt_job_bytes(p, [(seed, T, p["heads"], p.get("head_dim") or p["input_dim"]) for seed in seeds])


def aot_job_bytes(N: int, m: dict, models: int, sample: int, batch_size: int, per_head_proj: bool,
                  eval_batch: int = 8192) -> dict[str, int]:
    """The estimate of a DPC curve's point: `models` AoTs of shape m (dim, head_dim, heads, width, layers)
    on N tokens, a training sample of `sample` trigrams; a batch's saved activations or an evaluation
    chunk's logits (eval_batch pairs x N), whichever is larger."""
    from memcap.models.aot_count import param_count as aot_params

    d, dh, H, W, L = (m[k] for k in ("dim", "head_dim", "heads", "width", "layers"))
    params = aot_params(N, d, dh, H, W, L, per_head_proj)
    data = 8 * (N * N + 3 * sample) * models                          # the target table and the sample (int64)
    batch = 4 * SAVED_COPIES * batch_size * 3 * L * (2 * d + 4 * H * dh + W) * models
    chunk = 4 * 2 * min(eval_batch, N * N) * N * models
    return {"data": data, "models": 4 * ADAM_COPIES * params * models, "activations": max(batch, chunk),
            "torch": TORCH_BYTES}


MLT_KNOBS = "input_dim, context_size, heads, head_dim or the dataset size"
AOT_KNOBS = "dim, heads, head_dim, the MLP width, N or the repetitions"


def problem(key: str, parts: dict[str, int], limit: tuple[int, str] | None = None, knobs: str = MLT_KNOBS) -> str | None:
    return memory_limit.problem(key, parts, knobs, limit)


def check(key: str, parts: dict[str, int], knobs: str = MLT_KNOBS) -> None:
    memory_limit.check(key, parts, knobs)
