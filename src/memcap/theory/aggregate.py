"""The theory family's tables: Fig 3's saturation table from the MLT attention Parquets, and the
markdown summary of every experiment, each number computed from the family's Parquets.

TABLES names the family's tables -> their files in results/theory/tables/ (the rules list them from here).
"""

from __future__ import annotations

import pandas as pd

from memcap.scales import scale_note
from memcap.theory import saturation

TABLES = {**{name: f"{name}.parquet" for name in ("construct", "gd", "trained_ranks", "rank_bounds", "saturation")},
          "summary": "summary.md"}


def scale_label(scale: str) -> str:
    """What the numbers are, printed on every table and figure so a stand-in never passes for the paper."""
    return scale_note(scale) or f"{scale} preset"


def saturation_table(att: pd.DataFrame, threshold: float, scale: str, label: str | None = None) -> pd.DataFrame:
    """Fig 3's table: one row per (run, seed) of the attention Parquets. `label` says what the MLT
    sweeps' settings are ("paper settings, 2 of the paper's 6 seeds"): the scorecard's Fig 3 row shows it."""
    table = saturation.summary(att, threshold)
    table.insert(0, "scale", scale)
    table["stand_in"] = scale != "paper"
    if label:
        table["scale_label"] = label
    return table


def _md(df: pd.DataFrame) -> str:
    return df.to_markdown(index=False, floatfmt=".3g")


def summary_markdown(con: pd.DataFrame, gd: pd.DataFrame, bounds: pd.DataFrame, sat: pd.DataFrame,
                     label: str = "") -> str:
    """One block per experiment; `bounds` holds the rank_bounds and trained_ranks rows."""
    ok = con["status"] == "ok"
    largest = con[ok].sort_values("bound").tail(1)
    construct = con.groupby(["context"], as_index=False).agg(
        cases=("status", "size"), ok=("status", lambda s: int((s == "ok").sum())),
        rank_equals_bound=("rank", lambda r: int((r == con.loc[r.index, "bound"]).sum())),
        max_model_residual=("model_residual", "max"), max_cond=("cond", "max"),
        max_c=("c_max", "max"), max_time_s=("time_s", "max"))
    cap = gd.groupby(["method", "heads", "dataset_size_factor", "dataset_size", "bound"], as_index=False).agg(
        memorized_mean=("memorized", "mean"), mse_mean=("mse", "mean"))
    rb = bounds.groupby(["proposition", "weights"], as_index=False).agg(
        checks=("rank", "size"), violations=("holds", lambda h: int((~h).sum())),
        attains_bound=("attains", "sum"), max_rank=("rank", "max"))
    parts = [f"# MLT theory family{f' ({label})' if label else ''}", "",
             "## (a) CONSTRUCT: rank(Z) = H(min(n, d_h)−1)+1, residual through MLTAttention's forward pass", "",
             _md(construct), ""]
    if len(largest):
        r = largest.iloc[0]
        parts += [f"Largest case: d={r.input_dim}, n={r.context_size}, d_h={r.head_dim}, H={r.heads}, "
                  f"{r.context} context: T={r.bound}, rank {r['rank']}, cond {r.cond:.3g}, "
                  f"max|ŷ−y| {r.model_residual:.2g}, {r.time_s:.2f} s.", ""]
    failed = con[~ok]
    if len(failed):
        parts += ["Failures:", "", _md(failed[["input_dim", "context_size", "head_dim", "heads", "context",
                                               "seed", "reason"]]), ""]
    parts += ["## (b) construction vs gradient descent vs bound (examples fit within tolerance)", "", _md(cap), "",
              "## (c) rank(Z) upper bounds (Props 2, 5)", "", _md(rb), "",
              "## Fig 3: softmax saturation" + (f" ({scale_label(sat['scale'].iloc[0])}: the MLT sweeps' scale)"
                                                  if len(sat) else ""), ""]
    parts += [_md(sat) if len(sat) else "SKIPPED: no saturation runs in this preset", ""]
    return "\n".join(parts)
