"""Memorized bits without a threshold (Morris et al. 2025), per architecture (torch-free).

A model's memorized bits: Σ over its T training examples of max(0, log2 C − its loss in bits), which
the trainer records as `memorized_bits`. Against T (the mean over the seeds probed at each T) they rise
while the model holds every example and level off at its capacity in bits: the measure is the curve's
maximum. It has *plateaued* when both the largest T's bits and the most of any smaller T lie within
5% of that maximum (the curve's top is flat, not its last point); else it is *still rising*. Points:
an architecture's probes at the paper's budget, and the MLT family's runs of the same shape and trainer
(the published Fig 2a runs reach far past the capacity, where the plateau shows).
"""

from __future__ import annotations

import math

import pandas as pd

TOLERANCE = 0.05
PLATEAU, RISING = "plateaued", "still rising"
# What a run of the MLT family must share with a capacity probe to be a point of its curve.
SAME = ("heads", "head_dim", "input_dim", "context_size", "num_classes", "context")
TRAINER = ("lr", "batch_size", "min_steps")


def curve(points: pd.DataFrame) -> pd.Series:
    """Mean memorized bits over seeds at each T (points: dataset_size, memorized_bits)."""
    return points.groupby("dataset_size").memorized_bits.mean().sort_index()


def measure(points: pd.DataFrame) -> dict:
    """The curve's maximum, the T where it lies, the largest T, and plateaued / still rising."""
    c = curve(points.dropna(subset=["memorized_bits"])) if len(points) else pd.Series(dtype=float)
    if c.empty:
        return {"morris_bits": math.nan, "morris_T": math.nan, "morris_largest_T": math.nan, "morris_plateau": None}
    top = float(c.max())
    before = c.iloc[:-1]
    flat = len(before) > 0 and c.iloc[-1] >= (1 - TOLERANCE) * top and before.max() >= (1 - TOLERANCE) * top
    return {"morris_bits": top, "morris_T": int(c.idxmax()), "morris_largest_T": int(c.index[-1]),
            "morris_plateau": PLATEAU if flat else RISING}


def runs_like(runs: pd.DataFrame | None, p: dict, heads: int, head_dim: int) -> pd.DataFrame:
    """The MLT family's classification runs of this architecture, data shape and trainer (value_dim 1:
    the family trains the paper's model only)."""
    if runs is None or not len(runs) or p.get("value_dim", 1) != 1 or p.get("family", "mlt") != "mlt":
        return pd.DataFrame(columns=["dataset_size", "seed", "memorized_bits"])
    want = {"heads": heads, "head_dim": head_dim, **{k: p[k] for k in SAME[2:]},
            **{k: p["training"][k] for k in TRAINER}}
    keep = runs.task.eq("classification")
    for k, v in want.items():
        keep &= runs[k].eq(v) if k in runs else False
    return runs.loc[keep, ["dataset_size", "seed", "memorized_bits"]]
