"""Softmax saturation of trained heads, MLT Fig 3 (MLT App. H): the numbers behind the figure.

Input: the MLT family's attention Parquets (results/mlt_synthetic/attention/<sweep>/<H>/T<T>.parquet,
one row per (seed, example, head) with max_j α_{h,j}). A head is saturated on an example when its
largest attention weight exceeds `threshold` (0.99 in the paper). The key number: the fraction of
examples with at least one non-saturated head (the paper's point: memorization does not need every
head to saturate, unlike the proof's limit c → ∞). figures.py draws Fig 3 from the same rows.
"""

from __future__ import annotations

import pandas as pd

RUN_KEYS = ["sweep", "heads", "dataset_size"]

# MLT App. H, the paper's own numbers beside Fig 3: gradient descent at d = 64, n = 32 (shared context)
# memorizes "around" this many examples perfectly, per H; Fig 3's runs train at exactly these T.
APP_H_PERFECT = {4: 550, 8: 1300}
APP_H_SETTING = {"input_dim": 64, "context_size": 32}


def train_accuracy(runs: pd.DataFrame) -> pd.DataFrame:
    """Per saturation run (sweep, H, T): the seeds' mean train accuracy and, where the run is at App. H's
    setting, the paper's perfectly-memorized count for that H (NaN elsewhere)."""
    acc = runs.groupby(RUN_KEYS, as_index=False).agg(
        train_acc=("mem_acc", "mean"), seeds=("seed", "nunique"), input_dim=("input_dim", "first"),
        context_size=("context_size", "first"))
    at_setting = (acc.input_dim == APP_H_SETTING["input_dim"]) & (acc.context_size == APP_H_SETTING["context_size"])
    acc["paper_perfect_T"] = acc.heads.map(APP_H_PERFECT).where(at_setting)
    return acc


def per_example(att: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """Saturated heads per (run, seed, example)."""
    sat = att.assign(saturated=att["max_attention"] > threshold)
    return (sat.groupby(RUN_KEYS + ["seed", "example"], as_index=False)
               .agg(saturated_heads=("saturated", "sum"), heads_total=("head", "size")))


def summary(att: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """One row per (run, seed): saturation fractions and the mean max attention."""
    ex = per_example(att, threshold)
    ex["any_unsaturated"] = ex["saturated_heads"] < ex["heads_total"]
    ex["all_unsaturated"] = ex["saturated_heads"] == 0
    per_ex = ex.groupby(RUN_KEYS + ["seed"], as_index=False).agg(
        examples=("example", "size"), frac_examples_any_unsaturated=("any_unsaturated", "mean"),
        frac_examples_no_saturated_head=("all_unsaturated", "mean"),
        mean_saturated_heads=("saturated_heads", "mean"))
    pairs = att.groupby(RUN_KEYS + ["seed"], as_index=False).agg(
        frac_pairs_saturated=("max_attention", lambda x: float((x > threshold).mean())),
        mean_max_attention=("max_attention", "mean"), median_max_attention=("max_attention", "median"))
    out = per_ex.merge(pairs, on=RUN_KEYS + ["seed"])
    out["threshold"] = threshold
    return out.sort_values(["heads", "seed"], ascending=[False, True]).reset_index(drop=True)
