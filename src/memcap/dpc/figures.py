"""DPC figures (seaborn), drawn only from the family's tables (figure code never trains).

Figures are named (figures/dpc/<name>.png|pdf): `names(preset)` lists those the preset's experiments
draw, plus "kl" (the KL theory). Every function takes the explicit output paths and saves through
memcap.results.save_figure.

Each accuracy figure has one panel per series value (d) and draws, as the original EXP_*.py plots do:
the measured mean ± sd over repetitions (solid: the original's train-batch window; dashed: exact
full-table accuracy), chance 1/N, this paper's bound, the previous bound, and the experiment's fit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from memcap.plotting import plt, sns
from memcap.scales import scale_tag
from memcap import bounds
from memcap.dpc import fits as fit_lib
from memcap.results import by_stem, save_figure

FORMATS = ("png", "pdf")
KL = "kl"         # the KL theory figure (memcap dpc kl), drawn from tables/kl.parquet
FIDELITY = "fidelity"   # ours vs the authors' published means (memcap dpc fidelity)
DPI = 120
# figure name -> experiments drawn (first = the attention-only arm) and the x column.
FIGURES = {
    "exp1": {"experiments": ["exp1"], "x": "x", "title": "Exp 1 (Fig 1a): accuracy vs heads H, d = d_h"},
    "exp2": {"experiments": ["exp2"], "x": "x", "title": "Exp 2 (Fig 1b): accuracy vs head dim d_h"},
    "exp3": {"experiments": ["exp3"], "x": "x", "title": "Exp 3 (Fig 2a): accuracy vs embedding dim d"},
    "exp4": {"experiments": ["exp1"], "x": "series", "title": "Exp 4 (Fig 2b): Exp 1 slopes vs d"},
    "exp5": {"experiments": ["exp5_aot", "exp5_mlp"], "x": "param_axis",
             "title": "Exp 5 (Fig 3): AoT vs 1 head + MLP at equal parameters"},
    "exp6": {"experiments": ["exp6"], "x": "x", "title": "Exp 6 (Fig 4): N = 10, d = d_h = 2"},
    "dim_exp1": {"experiments": ["dim_exp1"], "x": "x", "title": "Exp 1-dim (Fig 5): accuracy vs H"},
    "dim_exp2": {"experiments": ["dim_exp2"], "x": "x", "title": "Exp 2-dim (Fig 6): accuracy vs d_h"},
    "dim_exp5": {"experiments": ["dim_exp1", "dim_exp5"], "x": "param_axis",
                 "title": "Exp 5-dim (Fig 7): AoT vs 1 head + MLP"},
    "depth_exp1": {"experiments": ["depth_exp1"], "x": "x", "title": "Exp 1-depth (Fig 8): accuracy vs H"},
    "depth_exp2": {"experiments": ["depth_exp2"], "x": "x", "title": "Exp 2-depth (Fig 9): accuracy vs d_h"},
    "depth_exp5": {"experiments": ["depth_exp1", "depth_exp5"], "x": "param_axis",
                   "title": "Exp 5-depth (Fig 10): AoT vs 1 head + MLP"},
}
LEGEND_PREFIXES = ("random", "our", "previous", "linear", "quadratic", "piece", "authors")   # panels after the first
METRIC_LABELS = {"acc_window": "train-batch window (original)", "acc_table": "full table (exact)"}


def scale_note(scale: str) -> str:
    """Every title names its scale; a quick one says it is a stand-in."""
    return f" [{scale_tag(scale)}]"


def available(experiments) -> list[str]:
    """Accuracy figures whose experiments are all among `experiments`."""
    return [name for name, f in FIGURES.items() if all(e in experiments for e in f["experiments"])]


def names(preset: dict) -> list[str]:
    """Every figure of the preset: the accuracy figures its experiments draw, the KL figure and the
    comparison with the authors' published means."""
    return available(preset["experiments"]) + [KL, FIDELITY]


def _long(runs: pd.DataFrame) -> pd.DataFrame:
    long = runs.melt(id_vars=[c for c in runs.columns if c not in METRIC_LABELS], value_vars=list(METRIC_LABELS),
                     var_name="metric", value_name="accuracy")
    long["metric"] = long.metric.map(METRIC_LABELS)
    return long


def _fit_curve(ax, fits: pd.DataFrame, exp: str, series, xs: np.ndarray) -> None:
    f = fits[(fits.experiment == exp) & (fits.series == series) & (fits.metric == "acc_window")]
    grid = np.linspace(xs.min(), xs.max(), 100)
    for r in f.itertuples():
        if pd.isna(r.a):
            continue
        if r.fit == "linear_before_saturation":
            ax.plot(grid, np.minimum(1, r.a * grid + r.b), ":", c="k", label=f"linear fit ({r.a:.3g}/unit)")
        elif r.fit == "quadratic":
            ax.plot(grid, r.a * grid ** 2 + r.b, ":", c="k", label=f"quadratic fit {r.a:.3g}x²+{r.b:.2g}")
        elif r.fit.startswith("piece_"):
            part = grid[grid <= r.split] if r.fit == "piece_low" else grid[grid >= r.split]
            ax.plot(part, r.a * part + r.b, ":", c="k" if r.fit == "piece_low" else "grey",
                    label=f"{r.fit} ({r.a:.3g}/unit)")


AUTHORS_MARKERS = ("X", "P")   # the authors' mean of each arm (attention only, + MLP)
AUTHORS_LABEL = "authors' CSV (window mean)"


def authors_on_our_grid(authors: pd.DataFrame | None, runs: pd.DataFrame) -> pd.DataFrame:
    """The authors' published means at the grid points we trained with the same N, d and d_h (so a
    quick stand-in's panels get none), with our x columns (x, param_axis) beside them."""
    if authors is None or authors.empty:
        return pd.DataFrame(columns=["experiment", "series", "x", "acc", "param_axis"])
    ours = runs.groupby(["experiment", "series", "x"])[["N", "dim", "head_dim", "param_axis"]].first().reset_index()
    both = authors[authors.check == "ok"].merge(ours, on=["experiment", "series", "x"], suffixes=("", "_ours"))
    same = (both.N == both.N_ours) & (both.dim == both.dim_ours) & (both.head_dim == both.head_dim_ours)
    return both[same]


def _authors_points(ax, authors: pd.DataFrame, experiments: list[str], series, xcol: str) -> None:
    for exp, marker in zip(experiments, AUTHORS_MARKERS):
        a = authors[(authors.experiment == exp) & (authors.series == series)]
        if len(a):
            ax.scatter(a[xcol], a.acc, marker=marker, s=30, c="k", zorder=5,
                       label=AUTHORS_LABEL if exp == experiments[0] else f"{AUTHORS_LABEL}, MLP arm")


def accuracy_figure(name: str, runs: pd.DataFrame, fits: pd.DataFrame, scale: str, paths,
                    authors: pd.DataFrame | None = None) -> None:
    spec = FIGURES[name]
    authors = authors_on_our_grid(authors, runs)
    sub = runs[runs.experiment.isin(spec["experiments"])].copy()
    sub["arm"] = np.where(sub.width > 0, "1 head + MLP", "attention only")
    if len(spec["experiments"]) > 1:      # Exp 5: the MLP experiment's W = 0 point belongs to its own arm
        sub.loc[sub.experiment == spec["experiments"][1], "arm"] = "1 head + MLP"
    series = sorted(sub.series.unique())
    cols = min(len(series), 4)
    rows = -(-len(series) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False)
    xcol = spec["x"]
    for ax, sv in zip(axes.flat, series):
        s = sub[sub.series == sv]
        sns.lineplot(data=_long(s), x=xcol, y="accuracy", hue="arm", style="metric", errorbar="sd",
                     marker="o", ax=ax, legend=ax is axes.flat[0])
        ref = s[s.experiment == spec["experiments"][0]].groupby(xcol)[["chance", "bound", "prev_bound"]].first()
        ax.axhline(float(s.chance.iloc[0]), c="grey", lw=0.8, label="random 1/N")
        ax.plot(ref.index, ref.bound, "-", c="tab:red", lw=1, label="our lower bound")
        ax.plot(ref.index, ref.prev_bound, "-", c="tab:purple", lw=1, label="previous lower bound")
        if xcol == "x":
            _fit_curve(ax, fits, spec["experiments"][0], sv, s.x.to_numpy(float))
        _authors_points(ax, authors, spec["experiments"], sv, xcol)
        x_key = s.x_key.iloc[0] if xcol == "x" else "parameters (paper's axis)"
        ax.set(xlabel=x_key, ylabel="accuracy", ylim=(0, 1.05),
               title=f"d = {sv}" if sv != -1 else f"N = {int(s.N.iloc[0])}")
        if ax is axes.flat[0]:
            ax.legend(fontsize=6)
        else:
            handles = [h for h in [*ax.get_lines(), *ax.collections] if h.get_label().startswith(LEGEND_PREFIXES)]
            ax.legend(handles=handles, fontsize=6)
    for ax in list(axes.flat)[len(series):]:
        ax.set_visible(False)
    fig.suptitle(spec["title"] + scale_note(scale), fontsize=10)
    fig.tight_layout()
    save_figure(fig, paths, dpi=DPI)


def slopes_figure(fits: pd.DataFrame, scale: str, paths, authors: pd.DataFrame | None = None) -> None:
    """Exp 4: the Exp 1 linear-fit slopes vs d, with the a·d² + b and a·d³ + b fits, and the slopes
    the same fit gives on the authors' published Exp 1 means."""
    fig, ax = plt.subplots(figsize=(5, 3.6))
    s = fits[(fits.experiment == "exp1") & (fits.fit == "linear_before_saturation")]
    s = s.assign(metric=s.metric.map(METRIC_LABELS))
    sns.scatterplot(data=s, x="series", y="a", hue="metric", ax=ax)
    theirs = [] if authors is None else [
        (d, fit_lib.linear_before_saturation(g.x, g.acc)[0]) for d, g in authors[authors.experiment == "exp1"].groupby("series")]
    if theirs:
        ax.scatter(*zip(*theirs), marker="X", s=30, c="k", zorder=5, label="authors' CSV: the same fit on their means")
    grid = np.linspace(s.series.min(), s.series.max(), 100)
    for r in fits[(fits.experiment == "exp4") & (fits.metric == "acc_window")].itertuples():
        power = 2 if r.fit == "quadratic" else 3
        ax.plot(grid, r.a * grid ** power + r.b, "--" if power == 2 else ":", label=f"{r.fit} fit {r.a:.2g}d^{power}+b")
    N = int(s.N.iloc[0])
    ax.plot(grid, bounds.bound_slope_per_head(grid, N), c="tab:red", lw=1, label="bound slope d_h(1-1/N)/N²")
    ax.set(xlabel="d = d_h", ylabel="slope (accuracy per head)")
    ax.legend(fontsize=6)
    ax.set_title("Exp 4 (Fig 2b): slope of accuracy vs H" + scale_note(scale),
                 fontsize=10)
    fig.tight_layout()
    save_figure(fig, paths, dpi=DPI)


def kl_figure(theory: pd.DataFrame, scale: str, paths) -> None:
    """Prop 3 KL vs λ; Theorem 2 encoder KL vs its bounds; LS vs WLS rank-d fits vs their bounds."""
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    p3 = theory[theory.part == "prop3"].copy()
    p3["kl"] = p3.kl.clip(lower=1e-16)
    sns.lineplot(data=p3, x="lam", y="kl", hue="N", marker="o", ax=axes[0], palette="viridis")
    axes[0].set(yscale="log", xscale="symlog", xlabel="λ", ylabel="d_KL", title="Prop 3: circle construction, d = 2")
    t2 = theory[theory.part == "thm2"]
    ax = axes[1]
    first = t2[t2.method == t2.method.iloc[0]]
    ax.plot(first.delta, first.kl, "o-", c="k", label="KL of the Thm 2 encoder")
    for method, g in t2.groupby("method"):
        ax.plot(g.delta, g.bound, "--", label=f"bound ({method})")
        ax.plot(g.delta, g.bound_simplified, ":", label=f"simplified ({method})")
    ax.set(xlabel="δ (mass off g(t))", ylabel="d_KL",
           title=f"Thm 2: N = {int(t2.N.iloc[0])}, d = {int(t2.dim.iloc[0])}")
    ax.legend(fontsize=6)
    ls = theory[theory.part == "lsq"].melt(id_vars=["dim", "method", "draw"], value_vars=["kl", "bound"],
                                           var_name="quantity", value_name="value")
    ls["value"] = ls.value.clip(lower=1e-12)
    sns.lineplot(data=ls, x="dim", y="value", hue="method", style="quantity", marker="o", ax=axes[2])
    axes[2].set(yscale="log", xlabel="rank d", ylabel="d_KL / bound", title="Slides: LS vs weighted LS")
    axes[2].legend(fontsize=6)
    fig.suptitle("DPC theory in computable form" + scale_note(scale), fontsize=10)
    fig.tight_layout()
    save_figure(fig, paths, dpi=DPI)


def fidelity_figure(t: pd.DataFrame, scale: str, paths) -> None:
    """memcap's mean (train-batch window) against the authors' published mean, one point per grid point."""
    fig, ax = plt.subplots(figsize=(5.2, 5))
    shown = t.dropna(subset=["ours_window"])
    sns.scatterplot(data=shown, x="theirs", y="ours_window", hue="experiment", style="within",
                    style_order=[True, False], s=22, ax=ax)
    ax.errorbar(shown.theirs, shown.ours_window, yerr=shown.tolerance, fmt="none", ecolor="grey", lw=0.5, zorder=0)
    lim = [0, 1.02]
    ax.plot(lim, lim, "k--", lw=0.8, label="ours = theirs")
    ax.set(xlim=lim, ylim=lim, xlabel="authors' CSV (mean of their repetitions)",
           ylabel="memcap (mean of repetitions), bar = tolerance",
           title=f"DPC: {int(t.within.sum())} of {len(t)} published means within tolerance" + scale_note(scale))
    ax.legend(fontsize=6, ncol=2, loc="lower right")
    fig.tight_layout()
    save_figure(fig, paths, dpi=DPI)


def draw(paths, runs: pd.DataFrame, fits: pd.DataFrame, scale: str, authors: pd.DataFrame | None = None) -> list[str]:
    """Draw the accuracy figure named by each path's stem (figures/dpc/exp1.png -> exp1) into its paths;
    `authors` (memcap.dpc.published.read): their means are drawn where our grid point matches theirs."""
    sns.set_theme(style="whitegrid", context="paper")
    groups = by_stem(paths)
    unknown = sorted(set(groups) - set(FIGURES))
    if unknown:
        raise ValueError(f"no DPC accuracy figure named {unknown}; known: {sorted(FIGURES)}")
    for name, out in groups.items():
        if name == "exp4":
            slopes_figure(fits, scale, out, authors_on_our_grid(authors, runs))
        else:
            accuracy_figure(name, runs, fits, scale, out, authors)
    return list(groups)
