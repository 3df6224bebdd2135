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
from memcap.results import FIGURE_FORMATS, by_stem, save_figure

FORMATS = FIGURE_FORMATS   # memcap.results: one list for every family
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
             "title": "Exp 5 (Fig 3): attention only vs 1 head + MLP at equal parameters"},
    "exp6": {"experiments": ["exp6"], "x": "x", "title": "Exp 6 (Fig 4): N = 10, d = d_h = 2"},
    "dim_exp1": {"experiments": ["dim_exp1"], "x": "x", "title": "Exp 1-dim (Fig 5): accuracy vs H"},
    "dim_exp2": {"experiments": ["dim_exp2"], "x": "x", "title": "Exp 2-dim (Fig 6): accuracy vs d_h"},
    "dim_exp5": {"experiments": ["dim_exp1", "dim_exp5"], "x": "param_axis",
                 "title": "Exp 5-dim (Fig 7): attention only vs 1 head + MLP"},
    "depth_exp1": {"experiments": ["depth_exp1"], "x": "x", "title": "Exp 1-depth (Fig 8): accuracy vs H"},
    "depth_exp2": {"experiments": ["depth_exp2"], "x": "x", "title": "Exp 2-depth (Fig 9): accuracy vs d_h"},
    "depth_exp5": {"experiments": ["depth_exp1", "depth_exp5"], "x": "param_axis",
                   "title": "Exp 5-depth (Fig 10): attention only vs 1 head + MLP"},
}
METRIC_LABELS = {"acc_window": "train-batch window (original)", "acc_table": "full table (exact)"}
METRIC_STYLE = {"acc_window": "-", "acc_table": "--"}
ARMS = {"attention only": "tab:blue", "1 head + MLP": "tab:orange"}
X_LABELS = {"heads": "heads H", "head_dim": "head size d_h", "dim": "embedding dim d", "width_mult": "parameters (the paper's axis)",
            "mlp_heads": "parameters (the paper's axis)", "param_axis": "parameters (the paper's axis)"}


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


def _fit_curve(ax, fits: pd.DataFrame, exp: str, series, xs: np.ndarray) -> str:
    """The experiment's fit in the panel (dotted); returns its coefficients for the panel's title,
    rounded (the table holds them in full)."""
    f = fits[(fits.experiment == exp) & (fits.series == series) & (fits.metric == "acc_window")]
    grid = np.linspace(xs.min(), xs.max(), 100)
    said = []
    for r in f.itertuples():
        if pd.isna(r.a):
            continue
        if r.fit == "linear_before_saturation":
            ax.plot(grid, np.minimum(1, r.a * grid + r.b), ":", c="k")
            said.append(f"slope {r.a:.2g}")
        elif r.fit == "quadratic":
            ax.plot(grid, r.a * grid ** 2 + r.b, ":", c="k")
            said.append(f"{r.a:.2g}·x² + {r.b:.2g}")
        elif r.fit.startswith("piece_"):
            part = grid[grid <= r.split] if r.fit == "piece_low" else grid[grid >= r.split]
            ax.plot(part, r.a * part + r.b, ":", c="k" if r.fit == "piece_low" else "grey")
            said.append(f"slope {r.a:.2g} {'below' if r.fit == 'piece_low' else 'above'} d_h")
    return ", ".join(said)


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


def _authors_points(ax, authors: pd.DataFrame, experiments: list[str], series, xcol: str) -> bool:
    drawn = False
    for exp, marker in zip(experiments, AUTHORS_MARKERS):
        a = authors[(authors.experiment == exp) & (authors.series == series)]
        if len(a):
            ax.scatter(a[xcol], a.acc, marker=marker, s=30, c="k", zorder=5)
            drawn = True
    return drawn


def _count_axis(ax, xcol: str, x_key: str) -> None:
    """Integer ticks where the axis counts (heads, sizes), at most five, thousands as k."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(nbins=5, integer=True))
    if xcol == "param_axis":
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / 1000:g}k" if abs(v) >= 1000 else f"{v:g}"))


def _legend(fig, arms: list[str], authors: bool, fitted: bool) -> None:
    """One legend for every panel, outside the axes, in words."""
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=ARMS[a], marker="o", label=a) for a in arms]
    handles += [Line2D([], [], color="k", ls=METRIC_STYLE[m], label=f"accuracy: {label}") for m, label in METRIC_LABELS.items()]
    handles += [Line2D([], [], color="grey", lw=0.8, label="chance 1/N"),
                Line2D([], [], color="tab:red", lw=1, label="this paper's lower bound"),
                Line2D([], [], color="tab:purple", lw=1, label="the previous lower bound")]
    if fitted:
        handles.append(Line2D([], [], color="k", ls=":", label="the experiment's fit (in the panel title)"))
    if authors:
        handles.append(Line2D([], [], color="k", marker="X", ls="none", label=AUTHORS_LABEL))
    fig.legend(handles=handles, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False, fontsize=8)


def accuracy_figure(name: str, runs: pd.DataFrame, fits: pd.DataFrame, scale: str, paths,
                    authors: pd.DataFrame | None = None) -> None:
    """One panel a series value (d), a facet grid with one legend outside: each arm's mean ± sd over
    repetitions (solid: the original's train-batch window; dashed: exact full-table accuracy), chance,
    both bounds, the experiment's fit (its coefficients in the panel's title) and the authors' means."""
    spec = FIGURES[name]
    authors = authors_on_our_grid(authors, runs)
    sub = runs[runs.experiment.isin(spec["experiments"])].copy()
    sub["arm"] = np.where(sub.width > 0, "1 head + MLP", "attention only")
    if len(spec["experiments"]) > 1:      # Exp 5: the MLP experiment's W = 0 point belongs to its own arm
        sub.loc[sub.experiment == spec["experiments"][1], "arm"] = "1 head + MLP"
    series = sorted(sub.series.unique())
    cols = min(len(series), 4)
    rows = -(-len(series) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols, 2.9 * rows), squeeze=False, sharey=True)
    xcol = spec["x"]
    any_authors = any_fit = False
    for ax, sv in zip(axes.flat, series):
        s = sub[sub.series == sv]
        for arm in ARMS:
            for metric in METRIC_LABELS:
                g = s[s.arm == arm].groupby(xcol)[metric].agg(["mean", "std"]).reset_index()
                if g.empty:
                    continue
                ax.plot(g[xcol], g["mean"], METRIC_STYLE[metric], marker="o", ms=3, color=ARMS[arm])
                ax.fill_between(g[xcol], g["mean"] - g["std"].fillna(0), g["mean"] + g["std"].fillna(0),
                                color=ARMS[arm], alpha=0.15, lw=0)
        ref = s[s.experiment == spec["experiments"][0]].groupby(xcol)[["chance", "bound", "prev_bound"]].first()
        ax.axhline(float(s.chance.iloc[0]), c="grey", lw=0.8)
        ax.plot(ref.index, ref.bound, "-", c="tab:red", lw=1)
        ax.plot(ref.index, ref.prev_bound, "-", c="tab:purple", lw=1)
        fit = _fit_curve(ax, fits, spec["experiments"][0], sv, s.x.to_numpy(float)) if xcol == "x" else ""
        any_fit |= bool(fit)
        any_authors |= _authors_points(ax, authors, spec["experiments"], sv, xcol)
        x_key = X_LABELS.get(s.x_key.iloc[0] if xcol == "x" else xcol, s.x_key.iloc[0])
        title = f"d = {sv}" if sv != -1 else f"N = {int(s.N.iloc[0])}"
        ax.set(xlabel=x_key, ylabel="accuracy", ylim=(0, 1.05), title=f"{title}" + (f"\n{fit}" if fit else ""))
        ax.title.set_fontsize(8)
        _count_axis(ax, xcol, x_key)
    for ax in list(axes.flat)[len(series):]:
        ax.set_visible(False)
    _legend(fig, [a for a in ARMS if (sub.arm == a).any()], any_authors, any_fit)
    fig.suptitle(spec["title"] + scale_note(scale), fontsize=10)
    fig.tight_layout()
    save_figure(fig, paths, dpi=DPI)


def slopes_figure(fits: pd.DataFrame, scale: str, paths, authors: pd.DataFrame | None = None) -> None:
    """Exp 4: the Exp 1 linear-fit slopes vs d, with the a·d² + b and a·d³ + b fits, and the slopes
    the same fit gives on the authors' published Exp 1 means."""
    fig, ax = plt.subplots(figsize=(5, 3.6))
    s = fits[(fits.experiment == "exp1") & (fits.fit == "linear_before_saturation")]
    for metric, style in (("acc_window", "o"), ("acc_table", "s")):
        m = s[s.metric == metric]
        ax.scatter(m.series, m.a, marker=style, s=20, label=f"slope of accuracy: {METRIC_LABELS[metric]}")
    theirs = [] if authors is None else [
        (d, fit_lib.linear_before_saturation(g.x, g.acc)[0]) for d, g in authors[authors.experiment == "exp1"].groupby("series")]
    if theirs:
        ax.scatter(*zip(*theirs), marker="X", s=30, c="k", zorder=5, label="authors' CSV: the same fit on their means")
    grid = np.linspace(s.series.min(), s.series.max(), 100)
    for r in fits[(fits.experiment == "exp4") & (fits.metric == "acc_window")].itertuples():
        power = 2 if r.fit == "quadratic" else 3
        ax.plot(grid, r.a * grid ** power + r.b, "--" if power == 2 else ":",
                label=f"{'quadratic' if power == 2 else 'cubic'} fit {r.a:.2g}·d{'²' if power == 2 else '³'} + b")
    N = int(s.N.iloc[0])
    ax.plot(grid, bounds.bound_slope_per_head(grid, N), c="tab:red", lw=1, label="bound's slope d_h(1 − 1/N)/N²")
    ax.set(xlabel="embedding dim d (= head size d_h)", ylabel="slope (accuracy per head)")
    from matplotlib.ticker import MaxNLocator
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
    ax.set_title("Exp 4 (Fig 2b): slope of accuracy vs H" + scale_note(scale), fontsize=10)
    fig.tight_layout()
    save_figure(fig, paths, dpi=DPI)


def kl_figure(theory: pd.DataFrame, scale: str, paths) -> None:
    """Prop 3 KL vs λ; Theorem 2 encoder KL vs its bounds; LS vs WLS rank-d fits vs their bounds."""
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    p3 = theory[theory.part == "prop3"].copy()
    p3["kl"] = p3.kl.clip(lower=1e-16)
    p3 = p3[p3.lam >= 0]                            # λ < 0 only mirrors the construction
    palette = dict(zip(sorted(p3.N.unique()), sns.color_palette("viridis", p3.N.nunique())))
    for N, g in p3.groupby("N"):
        axes[0].plot(g.lam, g.kl, "o-", ms=3, color=palette[N], label=f"N = {N}")
    axes[0].set_xscale("symlog", linthresh=1, linscale=0.6)        # λ = 0 (no scaling) beside the decades
    axes[0].set(yscale="log", xlabel="scale λ of the construction", ylabel="KL divergence d_KL",
                title="Prop 3: circle construction, d = 2")
    axes[0].set_xticks([v for v in (0, 1, 10, 100, 1000, 10000) if v <= p3.lam.max() * 1.5])   # decades only
    axes[0].legend(fontsize=7, title="vocabulary", title_fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    t2 = theory[theory.part == "thm2"]
    ax = axes[1]
    first = t2[t2.method == t2.method.iloc[0]]
    ax.plot(first.delta, first.kl, "o-", c="k", label="KL of the Thm 2 encoder")
    for method, g in t2.groupby("method"):
        ax.plot(g.delta, g.bound, "--", label=f"bound ({method.replace('_', ' ')})")
        ax.plot(g.delta, g.bound_simplified, ":", label=f"simplified bound ({method.replace('_', ' ')})")
    ax.set(xlabel="δ (probability mass off g(t))", ylabel="KL divergence d_KL",
           title=f"Thm 2: N = {int(t2.N.iloc[0])}, d = {int(t2.dim.iloc[0])}")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    ls = theory[theory.part == "lsq"]
    words = {"least_squares": "least squares", "weighted_least_squares": "weighted least squares"}
    for (method, g), color in zip(ls.groupby("method"), ("tab:blue", "tab:orange")):
        g = g.groupby("dim")[["kl", "bound"]].mean().clip(lower=1e-12)
        axes[2].plot(g.index, g.kl, "o-", color=color, label=f"{words.get(method, method)}: KL")
        axes[2].plot(g.index, g.bound, "--", color=color, label=f"{words.get(method, method)}: its bound")
    axes[2].set(yscale="log", xlabel="rank d of the fit", ylabel="KL divergence (mean of draws)",
                title="Slides: LS vs weighted LS")
    axes[2].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    fig.suptitle("DPC theory in computable form" + scale_note(scale), fontsize=10)
    fig.tight_layout()
    save_figure(fig, paths, dpi=DPI)


EXPERIMENT_WORDS = {"exp1": "Exp 1", "exp2": "Exp 2", "exp3": "Exp 3", "exp5_aot": "Exp 5, attention only",
                    "exp5_mlp": "Exp 5, 1 head + MLP", "exp6": "Exp 6", "dim_exp1": "Exp 1-dim", "dim_exp2": "Exp 2-dim",
                    "dim_exp5": "Exp 5-dim", "depth_exp1": "Exp 1-depth", "depth_exp2": "Exp 2-depth",
                    "depth_exp5": "Exp 5-depth"}


def fidelity_figure(t: pd.DataFrame, scale: str, paths) -> None:
    """memcap's mean (train-batch window) minus the authors' published mean against theirs, one point per
    grid point with its 90% interval, inside the ±MARGIN band that counts as the same result."""
    from memcap.dpc.fidelity import MARGIN, UNDECIDED, DIFFERENT

    fig, ax = plt.subplots(figsize=(5.2, 4.2))
    shown = t.dropna(subset=["ours_window"])
    palette = dict(zip(sorted(shown.experiment.unique()), sns.color_palette("tab20", shown.experiment.nunique())))
    ax.axhspan(-MARGIN, MARGIN, color="#d4edda", lw=0, zorder=0, label=f"same result (±{MARGIN})")
    ax.errorbar(shown.theirs, shown["diff"], yerr=[shown["diff"] - shown.ci_low, shown.ci_high - shown["diff"]],
                fmt="none", ecolor="grey", lw=0.5, zorder=1)
    for exp, g in shown.groupby("experiment"):
        ax.scatter(g.theirs, g["diff"], s=14, color=palette[exp], zorder=2, label=EXPERIMENT_WORDS.get(exp, exp))
    odd = shown[shown.verdict.isin([UNDECIDED, DIFFERENT])]
    ax.scatter(odd.theirs, odd["diff"], s=40, facecolors="none", edgecolors="k", lw=0.8, zorder=3,
               label="cannot judge or different")
    ax.axhline(0, color="k", lw=0.6)
    top = max(0.1, float(np.nanmax(np.abs(shown[["ci_low", "ci_high"]].to_numpy()))) * 1.05) if len(shown) else 0.1
    ax.set(xlim=(0, 1.02), ylim=(-top, top), xlabel="authors' mean accuracy (their CSV)",
           ylabel="memcap − authors (accuracy), 90% interval",
           title=f"DPC: {int(t.within.sum())} of {len(t)} published means the same result" + scale_note(scale))
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
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
