"""Softmax saturation of trained heads, MLT Fig 3 (spec mahdavi.md §3).

Input: the spine's attention Parquets (results/mlt_synthetic/attention/<sweep>/<H>/T<T>.parquet, one
row per (seed, example, head) with max_j α_{h,j}). A head is saturated on an example when its largest
attention weight exceeds `threshold` (0.99 in the paper). One figure row per run (largest H on top):
  (a) saturation map, head × first `examples_shown` examples (first seed);
  (b) histogram over examples of the number of saturated heads;
  (c) histogram of max attention over all (example, head) pairs.
The summary's key number: the fraction of examples with at least one non-saturated head (the paper's
point: memorization does not need every head to saturate, unlike the proof's limit c → ∞).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from memcap.theory.mlt_figures import save_figure  # noqa: E402

RUN_KEYS = ["sweep", "heads", "dataset_size"]


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


def draw_fig3(att: pd.DataFrame, threshold: float, examples_shown: int, path_stem: str | Path,
              label: str = "") -> list[Path]:
    """Fig 3 as PNG and PDF; one row of three panels per run, largest H on top."""
    runs = att[RUN_KEYS].drop_duplicates().sort_values("heads", ascending=False).to_numpy().tolist()
    fig, axes = plt.subplots(len(runs), 3, figsize=(13, 3.2 * len(runs)), squeeze=False,
                             gridspec_kw={"width_ratios": [1.6, 1, 1]})
    ex_all = per_example(att, threshold)
    for row, (sweep, H, T) in zip(axes, runs):
        run = att[(att["sweep"] == sweep) & (att["heads"] == H) & (att["dataset_size"] == T)]
        first = run[run["seed"] == run["seed"].min()]
        grid = (first[first["example"] < examples_shown]
                .pivot(index="head", columns="example", values="max_attention") > threshold)
        sns.heatmap(grid.astype(int), ax=row[0], cmap=["#f0f0f0", "#c0392b"], vmin=0, vmax=1, cbar=False,
                    linewidths=0.5, linecolor="white")
        row[0].set(title=f"H={H}, T={T}: saturated (max α > {threshold}) red", xlabel="example", ylabel="head")
        ex = ex_all[(ex_all["sweep"] == sweep) & (ex_all["heads"] == H) & (ex_all["dataset_size"] == T)]
        sns.histplot(ex["saturated_heads"], discrete=True, ax=row[1], color="#34495e")
        row[1].set(title="saturated heads per example", xlabel="# saturated heads", xlim=(-0.5, H + 0.5))
        sns.histplot(run["max_attention"], bins=np.linspace(0, 1, 41), ax=row[2], color="#2980b9")
        row[2].axvline(threshold, color="#c0392b", ls="--", lw=1)
        row[2].set(title="max attention, all (example, head)", xlabel="max_j α_{h,j}")
    fig.suptitle("MLT Fig 3: softmax saturation of trained heads" + (f" ({label})" if label else ""))
    fig.tight_layout()
    return save_figure(fig, path_stem)
