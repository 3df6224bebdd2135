"""memcap's DPC means beside the authors' published ones (memcap.dpc.published), point by point.

Per grid point: ours in the authors' measure (the train-batch window, mean over repetitions) and the
exact full-table accuracy, theirs, the difference and its standard error. Both sides are means of the
same number of independent repetitions of the same protocol, so with the repetition spread s estimated
from ours, SE(diff) = sqrt(2)·s/sqrt(n). A point is within tolerance when
    |diff| <= t(0.995, n − 1)·SE(diff) + FLOOR,
a two-sided 99% interval for the difference (Student's t: s comes from n repetitions), plus FLOOR for
what s cannot show: the window's own batch noise (100 batches of 256: sd <= 0.003) and float rounding
of another machine at saturated points where our repetitions agree exactly.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from memcap.lazy_import import OnFirstUse

stats = OnFirstUse("scipy.stats")   # imported at the first fit (memcap.lazy_import)

FLOOR = 0.005
LEVEL = 0.99
KEYS = ["experiment", "series", "x"]
COLUMNS = [*KEYS, "N", "dim", "head_dim", "repetitions", "ours_window", "ours_table", "theirs", "diff", "se_diff",
           "tolerance", "within", "check", "file"]


def table(summary: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """One row per published mean; ours NaN (and `within` False) where this scale has no such point
    with the authors' N, d and d_h."""
    # a point is compared only where we trained the authors' settings (a stand-in's N or d differs)
    same = [*KEYS, "N", "dim", "head_dim"]
    ours = summary[[*same, "repetitions", "acc_window_mean", "acc_window_std", "acc_table_mean"]]
    t = published.merge(ours, on=same, how="left")
    n = t.repetitions.astype(float)
    t["ours_window"], t["ours_table"], t["theirs"] = t.acc_window_mean, t.acc_table_mean, t.acc
    t["diff"] = t.ours_window - t.theirs
    t["se_diff"] = np.sqrt(2) * t.acc_window_std / np.sqrt(n)
    t["tolerance"] = stats.t.ppf(0.5 + LEVEL / 2, n - 1) * t.se_diff + FLOOR
    t["within"] = (t["diff"].abs() <= t.tolerance) & (t.check == "ok")
    return t[COLUMNS].sort_values(KEYS, ignore_index=True)


def by_experiment(t: pd.DataFrame) -> pd.DataFrame:
    """Per experiment: points, points compared, within tolerance, mean and max |diff|."""
    return t.groupby("experiment").agg(points=("theirs", "size"), compared=("ours_window", "count"),
                                       within=("within", "sum"), mean_diff=("diff", "mean"),
                                       max_abs_diff=("diff", lambda d: d.abs().max())).reset_index()


def markdown(t: pd.DataFrame, scale_note: str = "") -> str:
    per = by_experiment(t)
    none = ("" if t.ours_window.notna().any() else
            "This scale trains none of the authors' grid points (they published the paper scale's): nothing "
            "is compared; run `dpc` at `scale: paper` (or pull the published results) to compare.")
    shown = t.assign(**{c: t[c].map(lambda v: "" if pd.isna(v) else f"{v:.4f}")
                        for c in ("ours_window", "ours_table", "theirs", "diff", "se_diff", "tolerance")})
    return "\n".join([
        f"# DPC: memcap vs the authors' published means{f' ({scale_note})' if scale_note else ''}", "",
        *([none, ""] if none else []),
        f"{int(t.within.sum())} of {len(t)} published means within tolerance "
        f"(|ours − theirs| <= t(0.995, n−1)·SE + {FLOOR}, the train-batch window on both sides; "
        "memcap.dpc.fidelity says why). Per experiment:", "",
        per.to_markdown(index=False, floatfmt=".4f"), "",
        shown[[*KEYS, "ours_window", "ours_table", "theirs", "diff", "se_diff", "tolerance", "within", "check"]]
        .to_markdown(index=False), ""])
