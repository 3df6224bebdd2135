"""A sweep job's shape and the host memory of a pack's data (torch-free: Snakemake sizes jobs and plans
packs with it).

A job's settings are a sweep's as its family resolves them (task, context, input_dim, num_classes,
heads, context_size, head_dim, the training settings, and `vary`: which of VARIED the sweep's values
replace).
"""

from __future__ import annotations

from memcap.tasks import mlt_sizes
from memcap.training.config import EVAL_BATCH, EVAL_BYTES

VARIED = ("heads", "context_size", "head_dim")


def shape(settings: dict, value: int) -> dict:
    """Heads, context size and head size of one grid point: the sweep's value replaces the varied one."""
    out = {k: settings[k] for k in VARIED}
    out[settings["vary"]] = value
    return out


def pack_data_bytes(settings: dict, models: list[tuple[int, int, int]], top: int) -> int:
    """Host memory of the data of these models ((value, T, seed) each) with contexts padded to the shape
    of value `top` (a pack's largest): the datasets (memcap.tasks.mlt_sizes) and, for random contexts,
    the contexts an evaluation gathers with the keys and values computed from them, at most EVAL_BYTES
    at a time (a large pack evaluates its models in slices)."""
    d, n = settings["input_dim"], shape(settings, top)["context_size"]
    draws = [(seed, T, shape(settings, value)["context_size"]) for value, T, seed in models]
    data = mlt_sizes.data_bytes(draws, n, d, settings["context"], settings["task"], settings["num_classes"])
    one = 3 * 4 * min(EVAL_BATCH, max(T for _, T, _ in models)) * n * d   # a model's gathered contexts
    gathered = 0 if settings["context"] == "shared" else min(len(models) * one, max(EVAL_BYTES, one))
    return data + gathered
