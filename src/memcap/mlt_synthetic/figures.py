"""MLT synthetic figures (Figs 2a/2b/2c/4/5), the Fig 2a linear fits and the markdown run summary.

Drawn only from the family table (figure code never trains). Each point is the mean over seeds with
a 95% CI band (seaborn); one curve per dataset size T.
"""

from __future__ import annotations

import os
import textwrap

import numpy as np
import pandas as pd

from memcap.plotting import plt, sns
from memcap import results
from memcap.results import FIGURE_FORMATS
from memcap.bounds import SATURATION_ACC
from memcap.stats import before_saturation, linear_fit

# Which sweep feeds which figure, and its title (MLT §5.2, App. H and I). The keys are the figure names:
# figures/mlt_synthetic/<name>.png|.pdf.
FIGURES = {
    "fig2a": {"sweeps": ["scale_head_shared"], "title": "Fig 2a: classification, shared context, vs heads H"},
    "fig2b": {"sweeps": ["scale_ctx_size_shared"], "title": "Fig 2b: classification, shared context, vs context size n"},
    "fig2c": {"sweeps": ["scale_dh_shared"], "title": "Fig 2c: classification, shared context, vs head size d_h"},
    "fig4": {"sweeps": ["scale_head", "scale_ctx_size"], "title": "Fig 4: classification, random contexts"},
    "fig5": {"sweeps": ["regress_scale_head_shared", "regress_scale_ctx_size_shared"],
             "title": "Fig 5: regression (train MSE), shared context"},
}
NAMES = tuple(FIGURES)
FORMATS = FIGURE_FORMATS   # memcap.results: one list for every family

FIT_COLUMNS = ["sweep", "dataset_size", "saturation_acc", "points_total", "slope", "intercept", "r2", "n_points"]


def fig2a_fits(df: pd.DataFrame) -> pd.DataFrame:
    """Per T: least-squares line acc ~ a + b·H on the non-saturated part of the seed-mean curve
    (Fig 2a's shared contexts, and Fig 4's random contexts vs H)."""
    rows = []
    for sweep in FIGURES["fig2a"]["sweeps"] + FIGURES["fig4"]["sweeps"][:1]:
        g = df[df["sweep"] == sweep]
        for T, gt in g.groupby("dataset_size"):
            mean = gt.groupby("x")["mem_acc"].mean()
            x, y = before_saturation(mean.index, mean.values, SATURATION_ACC)
            rows.append({"sweep": sweep, "dataset_size": T, "saturation_acc": SATURATION_ACC,
                         "points_total": len(mean), **linear_fit(x, y)})
    return pd.DataFrame(rows, columns=FIT_COLUMNS)


def _panel(ax, df: pd.DataFrame, sweep: str, fits: pd.DataFrame) -> None:
    g = df[df["sweep"] == sweep]
    if g.empty:
        ax.text(0.5, 0.5, f"SKIPPED: sweep '{sweep}'\nis not in this preset", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_title(sweep)
        return
    regression = g["task"].iloc[0] == "regression"
    y = "mem_loss" if regression else "mem_acc"
    sns.lineplot(data=g, x="x", y=y, hue="dataset_size", marker="o", errorbar=("ci", 95),
                 palette="viridis", ax=ax, legend="full")
    vary = g["vary"].iloc[0]
    ax.set_xlabel({"heads": "heads H", "context_size": "context size n", "head_dim": "head size d_h"}[vary])
    ax.set_ylabel("train MSE (log)" if regression else "memorization (train accuracy)")
    if regression:
        ax.set_yscale("log")
    if vary == "head_dim":  # Fig 2c: no gain expected past d_h = n
        ax.axvline(g["context_size"].iloc[0], ls="--", c="grey", label="d_h = n")
    f = fits[fits["sweep"] == sweep]
    for r in f.itertuples():
        if np.isfinite(r.slope):
            xs = np.array([g["x"].min(), g["x"].max()], float)
            ax.plot(xs, np.minimum(1, r.intercept + r.slope * xs), ls=":", c="k", lw=0.8)
    if not f.empty:
        text = "\n".join(f"T={int(r.dataset_size)}: R²={r.r2:.3f} ({int(r.n_points)} pts)"
                         for r in f.itertuples() if np.isfinite(r.r2))
        ax.text(0.98, 0.02, text or "R²: < 3 unsaturated points", transform=ax.transAxes, ha="right",
                va="bottom", fontsize=7)
    ax.set_title(f"{sweep} ({g['context'].iloc[0]} context, d = {g['input_dim'].iloc[0]}, "
                 f"{g['seed'].nunique()} seeds)\n" + textwrap.fill(f"[{g['scale_label'].iloc[0]}]", 80), fontsize=8)
    ax.legend(title="T", fontsize=7)


def draw(runs: pd.DataFrame, fits: pd.DataFrame, paths: list[str | os.PathLike]) -> None:
    """Draw each figure named by the paths' stems (fig2a.png, fig2a.pdf, ...) once, to all its paths."""
    sns.set_theme(style="whitegrid", context="paper")
    for name, outs in results.by_stem(paths).items():
        if name not in FIGURES:
            raise ValueError(f"no MLT figure named {name!r}; figures: {list(NAMES)}")
        sweeps = FIGURES[name]["sweeps"]
        fig, axes = plt.subplots(1, len(sweeps), figsize=(5.2 * len(sweeps), 4), squeeze=False)
        for ax, sweep in zip(axes[0], sweeps):
            _panel(ax, runs, sweep, fits)
        fig.suptitle(FIGURES[name]["title"], fontsize=10)
        fig.tight_layout()
        results.save_figure(fig, outs)


def _markdown(table: pd.DataFrame) -> str:
    # Cells are already formatted: keep them verbatim (no number parsing, no float format).
    return table.astype(str).to_markdown(index=False, disable_numparse=True)


def summary_markdown(runs: pd.DataFrame, fits: pd.DataFrame) -> str:
    """Run summary: one line per (sweep, x, T), mean ± std over seeds; then the linear fits."""
    s = runs.groupby(["sweep", "vary", "x", "dataset_size"], sort=True).agg(
        seeds=("seed", "nunique"), acc_mean=("mem_acc", "mean"), acc_std=("mem_acc", "std"),
        loss_mean=("mem_loss", "mean"), loss_std=("mem_loss", "std"), steps=("steps_run", "mean"),
        early=("early_stopped", "sum"), params=("param_count", "first"), rank_bound=("rank_bound", "first"),
        wall=("wall_time_s", "first")).reset_index()
    table = pd.DataFrame({
        "sweep": s.sweep, "varied": s.vary, "x": s.x, "T": s.dataset_size, "seeds": s.seeds,
        "accuracy": [("–" if np.isnan(m) else f"{m:.3f} ± {np.nan_to_num(sd):.3f}")
                     for m, sd in zip(s.acc_mean, s.acc_std)],
        "loss": [f"{m:.4g} ± {np.nan_to_num(sd):.2g}" for m, sd in zip(s.loss_mean, s.loss_std)],
        "steps": s.steps.map("{:.0f}".format), "early-stopped": s.early, "params": s.params,
        "H(r−1)+1": s.rank_bound, "job wall s": s.wall.map("{:.1f}".format)})
    fit_table = pd.DataFrame({
        "sweep": fits.sweep, "T": fits.dataset_size, "slope (acc/head)": fits.slope.map("{:.4g}".format),
        "intercept": fits.intercept.map("{:.4g}".format), "R²": fits.r2.map("{:.4f}".format),
        "points used / total": [f"{u} / {t}" for u, t in zip(fits.n_points, fits.points_total)]})
    return "\n".join([
        "# MLT synthetic memorization: run summary", "",
        "Settings: " + "; ".join(f"{sw}: {lab}" for sw, lab in runs.groupby("sweep")["scale_label"].first().items())
        + ". Memorization = train accuracy of the "
        "lowest-loss checkpoint (classification) or its train MSE (regression); mean ± std over seeds.", "",
        _markdown(table), "", "## Fig 2a / Fig 4 linear fits on the non-saturated part",
        f"Points with seed-mean accuracy ≥ {SATURATION_ACC} are left out.", "", _markdown(fit_table), ""])
