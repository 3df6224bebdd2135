"""DPC tables: every run, the per-grid-point summary, the fitted slopes, and the DVC metrics.

Accuracies: `acc_window` is the original's number (train-batch window); `acc_table` the exact
full-table accuracy. Every fit is done on the mean over repetitions, for both metrics.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from memcap.scales import scale_note
from memcap import bounds
from memcap.dpc import fits

# The family's tables (results/dpc/tables/<file>); kl.parquet is made by memcap.dpc.kl.
TABLES = {"runs": "runs.parquet", "summary": "summary.parquet", "fits": "fits.parquet", "fits_md": "fits.md",
          "kl": "kl.parquet", "fidelity": "fidelity.parquet", "fidelity_md": "fidelity.md"}
METRICS = ("acc_window", "acc_table")
POINT_KEYS = ["experiment", "series", "x", "N", "dim", "head_dim", "heads", "width", "layers", "x_key",
              "series_key", "param_axis", "param_count", "chance", "bound", "prev_bound", "scale", "fit"]
SLOPE_SOURCE = "exp1"     # Exp 4 fits the Exp 1 slopes against d


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per grid point: mean, std, min, max over repetitions of both accuracies."""
    keys = [k for k in POINT_KEYS if k in runs.columns]
    agg = runs.groupby(keys, dropna=False).agg(
        repetitions=("seed", "size"), wall_time_s=("wall_time_s", "first"),
        **{f"{m}_{f}": (m, f) for m in METRICS for f in ("mean", "std", "min", "max")},
        kl_table_mean=("kl_table", "mean"))
    return agg.reset_index()


def metrics(runs: pd.DataFrame) -> dict:
    return {"runs": int(len(runs)), "grid_points": int(runs.groupby(["experiment", "series", "x"]).ngroups),
            "mean_acc_window": float(runs.acc_window.mean()), "mean_acc_table": float(runs.acc_table.mean()),
            "train_seconds": float(runs.groupby(["experiment", "series", "x"]).wall_time_s.first().sum())}


def _fit_rows(exp: str, series, g: pd.DataFrame, kind: str, metric: str) -> list[dict]:
    x, y = g["x"].to_numpy(float), g[f"{metric}_mean"].to_numpy(float)
    N, d_h = int(g.N.iloc[0]), float(g.head_dim.iloc[0])
    base = {"experiment": exp, "series": series, "metric": metric, "x_key": g.x_key.iloc[0], "N": N}
    if kind == "saturation":
        a, b, k = fits.linear_before_saturation(x, y)
        per_head = g.x_key.iloc[0] == "heads"
        slope = bounds.bound_slope_per_head(d_h, N) if per_head else np.nan
        prev = bounds.bound_slope_per_head(d_h - 1, N) if per_head else np.nan   # H(d_h − 1) + 1
        return [{**base, "fit": "linear_before_saturation", "a": a, "b": b, "points": k, "bound_slope": slope,
                 "ratio_to_bound": a / slope if slope else np.nan, "prev_bound_slope": prev,
                 "assoc_per_unit": bounds.contexts_per_unit(a, N)}]
    if kind == "quadratic":
        a, b = fits.power_fit(x, y, 2)
        return [{**base, "fit": "quadratic", "a": a, "b": b, "points": len(x), "bound_slope": np.nan,
                 "ratio_to_bound": np.nan, "prev_bound_slope": np.nan, "assoc_per_unit": np.nan}]
    if kind == "two_piece":
        split = d_h
        (a1, b1), (a2, b2) = fits.two_piece_fit(x, y, split)
        slope = bounds.bound_slope_per_head(1, N)    # the bound grows by (1 − 1/N)/N² per unit of d
        return [{**base, "fit": f"piece_{side}", "a": a, "b": b, "points": int(((x <= split) if side == "low"
                 else (x >= split)).sum()), "bound_slope": slope, "ratio_to_bound": a / slope,
                 "prev_bound_slope": 0.0, "assoc_per_unit": bounds.contexts_per_unit(a, N), "split": split}
                for side, a, b in (("low", a1, b1), ("high", a2, b2))]
    return []


def fit_table(points: pd.DataFrame) -> pd.DataFrame:
    """Fitted coefficients per (experiment, series, metric), plus Exp 4's fits of the Exp 1 slopes vs d."""
    rows = []
    for (exp, series), g in points.groupby(["experiment", "series"], sort=True):
        g = g.sort_values("x")
        for metric in METRICS:
            rows += _fit_rows(exp, series, g, g.fit.iloc[0], metric)
    table = pd.DataFrame(rows)
    if len(table) and SLOPE_SOURCE in set(table.experiment):
        for metric in METRICS:
            s = table[(table.experiment == SLOPE_SOURCE) & (table.metric == metric)].dropna(subset=["a"])
            for power, name in ((2, "quadratic"), (3, "cubic")):
                if len(s) >= 2:
                    a, b = fits.power_fit(s.series, s.a, power)
                    rows.append({"experiment": "exp4", "series": -1, "metric": metric, "x_key": "dim",
                                 "N": int(s.N.iloc[0]), "fit": name, "a": a, "b": b, "points": len(s)})
        table = pd.DataFrame(rows)
    return table


def _fmt(v, spec: str) -> str:
    return "" if pd.isna(v) else format(v, spec)


def fits_markdown(table: pd.DataFrame, scale: str) -> str:
    """The fitted slopes as a markdown table, with a header that names the scale."""
    stand_in = f", {scale_note(scale)}" if scale_note(scale) else ""
    t = table.reindex(columns=["experiment", "series", "metric", "fit", "a", "b", "points", "bound_slope",
                               "ratio_to_bound"])      # Exp 4's rows have no bound slope
    shown = pd.DataFrame({
        "experiment": t.experiment, "series": t.series, "metric": t.metric, "fit": t.fit,
        "a": t.a.map(lambda v: f"{v:.4g}"), "b": t.b.map(lambda v: f"{v:.4g}"), "points": t.points,
        "bound slope": t.bound_slope.map(lambda v: _fmt(v, ".3g")),
        "ratio": t.ratio_to_bound.map(lambda v: _fmt(v, ".2f"))})
    return "\n".join([
        f"# DPC fitted slopes (scale = {scale}{stand_in})", "",
        "Slopes of the original's fits on the mean accuracy over repetitions; `ratio_to_bound` = fitted",
        "slope / the slope of this paper's bound (d_h(1-1/N)/N^2 per head; (1-1/N)/N^2 per unit of d).", "",
        shown.to_markdown(index=False, disable_numparse=True), ""])
