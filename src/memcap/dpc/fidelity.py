"""memcap's DPC means beside the authors' published ones (memcap.dpc.published), point by point.

Per grid point: ours in the authors' measure (the train-batch window, mean over repetitions) and the
exact full-table accuracy, theirs, the difference and its standard error. Both sides are means of the
same number of independent repetitions of the same protocol, so with the repetition spread s estimated
from ours, SE(diff) = sqrt(2)·s/sqrt(n). "The same" is an equivalence question (two one-sided tests,
Schuirmann 1987): with the margin MARGIN = 0.05 (five accuracy points, a difference no reader of the
paper's curves would call a different result), a point is
    equivalent    when the 90% interval diff ± t(0.95, n − 1)·SE lies inside [−MARGIN, MARGIN],
    different     when it lies wholly outside it,
    cannot judge  otherwise: its repetitions spread too widely to tell (the table counts these).
Saturated points whose repetitions agree exactly have SE = 0: their interval is the difference itself.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from memcap.lazy_import import OnFirstUse

stats = OnFirstUse("scipy.stats")   # imported at the first fit (memcap.lazy_import)

MARGIN = 0.05          # accuracy: the largest difference that still counts as the same result
LEVEL = 0.90           # two one-sided tests at 5% each
EQUIVALENT, DIFFERENT, UNDECIDED, NOT_COMPARED = "equivalent", "different", "cannot judge", "not compared"
KEYS = ["experiment", "series", "x"]
COLUMNS = [*KEYS, "N", "dim", "head_dim", "repetitions", "ours_window", "ours_table", "theirs", "diff", "se_diff",
           "ci_low", "ci_high", "verdict", "within", "check", "file"]


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
    half = stats.t.ppf(0.5 + LEVEL / 2, n - 1) * t.se_diff
    t["ci_low"], t["ci_high"] = t["diff"] - half, t["diff"] + half
    compared = t["diff"].notna() & (t.check == "ok")
    t["verdict"] = np.select([~compared, (t.ci_low >= -MARGIN) & (t.ci_high <= MARGIN),
                              (t.ci_low > MARGIN) | (t.ci_high < -MARGIN)],
                             [NOT_COMPARED, EQUIVALENT, DIFFERENT], UNDECIDED)
    t["within"] = t.verdict == EQUIVALENT
    return t[COLUMNS].sort_values(KEYS, ignore_index=True)


def by_experiment(t: pd.DataFrame) -> pd.DataFrame:
    """Per experiment: points, points compared, equivalent, different, cannot judge, mean and max |diff|."""
    return t.groupby("experiment").agg(
        points=("theirs", "size"), compared=("ours_window", "count"),
        equivalent=("verdict", lambda v: (v == EQUIVALENT).sum()), different=("verdict", lambda v: (v == DIFFERENT).sum()),
        cannot_judge=("verdict", lambda v: (v == UNDECIDED).sum()), mean_diff=("diff", "mean"),
        max_abs_diff=("diff", lambda d: d.abs().max())).reset_index()


def counts(t: pd.DataFrame) -> str:
    """One sentence: how many published means are equivalent, different, or cannot be judged."""
    n = t.verdict.value_counts()
    return (f"{n.get(EQUIVALENT, 0)} of {len(t)} published means equivalent to ours within ±{MARGIN} accuracy "
            f"(90% interval of the difference), {n.get(DIFFERENT, 0)} different, {n.get(UNDECIDED, 0)} cannot be "
            f"judged (repetitions too spread)" + (f", {n.get(NOT_COMPARED)} not compared" if n.get(NOT_COMPARED) else ""))


def markdown(t: pd.DataFrame, scale_note: str = "") -> str:
    per = by_experiment(t)
    none = ("" if t.ours_window.notna().any() else
            "This scale trains none of the authors' grid points (they published the paper scale's): nothing "
            "is compared; run `dpc` at `scale: paper` (or pull the published results) to compare.")
    shown = t.assign(**{c: t[c].map(lambda v: "" if pd.isna(v) else f"{v:.4f}")
                        for c in ("ours_window", "ours_table", "theirs", "diff", "se_diff", "ci_low", "ci_high")})
    return "\n".join([
        f"# DPC: memcap vs the authors' published means{f' ({scale_note})' if scale_note else ''}", "",
        *([none, ""] if none else []),
        f"{counts(t)}; the train-batch window on both sides (memcap.dpc.fidelity says why). Per experiment:", "",
        per.to_markdown(index=False, floatfmt=".4f"), "",
        shown[[*KEYS, "ours_window", "ours_table", "theirs", "diff", "se_diff", "ci_low", "ci_high", "verdict",
               "check"]].to_markdown(index=False), ""])
