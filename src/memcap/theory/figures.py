"""Figures of the MLT theory family, drawn only from its tables (and, for Fig 3, the MLT attention rows).

  construct     rank(Z) of CONSTRUCT against H(r−1)+1, and cond(Z) against T
  capacity      construction vs gradient descent vs the bound (examples fit, MSE)
  rank_bounds   rank(Z) under random / trained / constructed weights vs Props 2 and 5
  fig3          MLT Fig 3: softmax saturation of trained heads

FIGURES names them; each is saved by memcap.results.save_figure to figures/theory/<name>.png|.pdf.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from memcap.plotting import plt, sns, whole_ticks
from memcap.results import FIGURE_FORMATS
from memcap.theory import saturation

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FIGURES = ("construct", "capacity", "rank_bounds", "fig3")
METHOD_WORDS = {"construction": "the construction", "gradient_descent": "gradient descent"}
FORMATS = FIGURE_FORMATS   # memcap.results: one list for every family


def _title(fig, text: str, label: str) -> None:
    fig.suptitle(text + (f"\n{label}" if label else ""), fontsize=10)


def draw_construct(con: pd.DataFrame, label: str = "") -> Figure:
    """rank(Z) of CONSTRUCT against H(r−1)+1, and cond(Z) against T."""
    ok = con[con["status"] == "ok"]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    top = max(int(con["bound"].max()), 1)
    a.plot([0, top], [0, top], color="grey", ls="--", lw=1, label="rank = H(r−1)+1")
    sns.scatterplot(data=ok, x="bound", y="rank", hue="context", style="context", ax=a, s=40)
    failed = con[con["status"] != "ok"]
    if len(failed):
        a.scatter(failed["bound"], np.zeros(len(failed)), marker="x", color="red", label=f"failed ({len(failed)})")
    a.set(xlabel="H(min(n, d_h) − 1) + 1", ylabel="rank(Z) of the construction", title="CONSTRUCT: rank(Z)")
    a.legend(fontsize=8)
    sns.scatterplot(data=ok, x="bound", y="cond", hue="context", style="context", ax=b, s=40, legend=False)
    b.set(xscale="log", yscale="log", xlabel="dataset size T = H(r−1)+1", ylabel="condition number cond(Z)",
          title=f"conditioning (max residual {ok['model_residual'].max():.1e} via MLTAttention)")
    _title(fig, "MLT Theorem 1 made executable: constructed capacity equals the bound", label)
    fig.tight_layout()
    return fig


def draw_capacity(gd: pd.DataFrame, label: str = "") -> Figure:
    """Examples fit within tolerance vs H: bound (line), construction, gradient descent per T/bound."""
    ok = gd[gd["status"] == "ok"].copy()
    ok["dataset size / bound"] = ok["dataset_size_factor"].map(lambda f: f"{f:g}")
    ok["weights from"] = ok["method"].map(METHOD_WORDS).fillna(ok["method"])
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    bound = ok.groupby("heads")["bound"].first()
    a.plot(bound.index, bound.values, color="black", ls="--", lw=1.2, label="bound H(r−1)+1")
    sns.lineplot(data=ok, x="heads", y="memorized", hue="dataset size / bound", style="weights from", markers=True,
                 ax=a, errorbar=("pi", 100))
    handles, labels = a.get_legend_handles_labels()
    a.get_legend().remove()
    fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False, fontsize=8)
    for ax in (a, b):
        whole_ticks(ax)
    tol = ok["tolerance"].iloc[0] if len(ok) else np.nan
    a.set(xlabel="heads H", ylabel=f"examples fit (|ŷ − y| ≤ {tol:g})", title="construction vs gradient descent vs bound")
    sns.lineplot(data=ok, x="heads", y="mse", hue="dataset size / bound", style="weights from", markers=True, ax=b,
                 errorbar=("pi", 100), legend=False)
    b.set(yscale="log", xlabel="heads H", ylabel="train MSE (all T examples)", title="train MSE")
    _title(fig, f"Regression, {ok['context'].iloc[0] if len(ok) else ''} context, d={ok['input_dim'].max()}, "
                f"n={ok['context_size'].max()}: gradient descent with the sweeps' trainer", label)
    fig.tight_layout()
    return fig


def draw_rank_bounds(bounds: pd.DataFrame, label: str = "") -> Figure:
    """rank(Z) under random / trained / constructed weights vs Props 2 and 5."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, prop, name in zip(axes, ("prop2", "prop5"), ("Prop 2: shared context, H(n−1)+1",
                                                        "Prop 5: constant token sum, H(d−1)+1")):
        g = bounds[bounds["proposition"] == prop].copy()
        if g.empty:
            ax.text(0.5, 0.5, f"SKIPPED: no {prop} rows in this preset", ha="center", transform=ax.transAxes)
            continue
        g["weights"] = np.where(g["weight_scale"].notna(), g["weights"] + " ×" + g["weight_scale"].map("{:g}".format),
                                g["weights"])
        lines = g.groupby("heads")[["bound", "input_dim"]].first()
        ax.plot(lines.index, lines["bound"], color="black", ls="--", label="bound")
        ax.plot(lines.index, lines.index * lines["input_dim"], color="grey", ls=":", label="H·d (no bound)")
        # no jitter and no dodge: each point at its own H, where the bound line is its bound
        for (weights, w), marker in zip(g.groupby("weights"), "osD^vP*X"):
            ax.scatter(w["heads"], w["rank"], marker=marker, s=22, alpha=0.7, label=f"weights: {weights}")
        ax.set(title=name, xlabel="heads H", ylabel="rank(Z)")
        whole_ticks(ax)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    _title(fig, "Upper bounds on rank(Z): every point must lie on or below the dashed line", label)
    fig.tight_layout()
    return fig


def draw_fig3(att: pd.DataFrame, threshold: float, examples_shown: int, label: str = "",
              accuracy: pd.DataFrame | None = None) -> Figure:
    """MLT Fig 3 from the attention rows; one row of three panels per run, largest H on top:
    (a) saturation map, head × first `examples_shown` examples (first seed); (b) histogram over
    examples of the number of saturated heads; (c) histogram of max attention over (example, head).
    accuracy (saturation.train_accuracy): each run's train accuracy beside App. H's number."""
    runs = att[saturation.RUN_KEYS].drop_duplicates().sort_values("heads", ascending=False).to_numpy().tolist()
    fig, axes = plt.subplots(len(runs), 3, figsize=(13, 3.2 * len(runs)), squeeze=False,
                             gridspec_kw={"width_ratios": [1.6, 1, 1]})
    ex_all = saturation.per_example(att, threshold)
    for row, (sweep, H, T) in zip(axes, runs):
        run = att[(att["sweep"] == sweep) & (att["heads"] == H) & (att["dataset_size"] == T)]
        first = run[run["seed"] == run["seed"].min()]
        grid = (first[first["example"] < examples_shown]
                .pivot(index="head", columns="example", values="max_attention") > threshold)
        sns.heatmap(grid.astype(int), ax=row[0], cmap=["#f0f0f0", "#c0392b"], vmin=0, vmax=1, cbar=False,
                    linewidths=0.5, linecolor="white")
        row[0].set(title=f"H={H}, T={T}: saturated (max α > {threshold}) red" + _accuracy_note(accuracy, sweep, H, T),
                   xlabel="example", ylabel="head")
        ex = ex_all[(ex_all["sweep"] == sweep) & (ex_all["heads"] == H) & (ex_all["dataset_size"] == T)]
        sns.histplot(ex["saturated_heads"], discrete=True, ax=row[1], color="#34495e")
        row[1].set(title="saturated heads per example", xlabel="# saturated heads", xlim=(-0.5, H + 0.5))
        sns.histplot(run["max_attention"], bins=np.linspace(0, 1, 41), ax=row[2], color="#2980b9")
        row[2].axvline(threshold, color="#c0392b", ls="--", lw=1)
        row[2].set(title="max attention, all (example, head)", xlabel="max attention weight max_j α_{h,j}")
        row[1].set_ylabel("examples")
        row[2].set_ylabel("(example, head) pairs")
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    fig.legend(handles=[Patch(color="#c0392b", label=f"saturated head (max α > {threshold})"),
                        Patch(color="#f0f0f0", label="not saturated"),
                        Line2D([], [], color="#c0392b", ls="--", label="the saturation threshold")],
               loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False, fontsize=8)
    fig.suptitle("MLT Fig 3: softmax saturation of trained heads" + (f" ({label})" if label else ""))
    fig.tight_layout()
    return fig


def _accuracy_note(accuracy: pd.DataFrame | None, sweep: str, H: int, T: int) -> str:
    """'\ntrain acc 0.998 (2 seeds); App. H: H=4 memorizes ≈550 perfectly' for a run at App. H's setting."""
    if accuracy is None:
        return ""
    r = accuracy[(accuracy.sweep == sweep) & (accuracy.heads == H) & (accuracy.dataset_size == T)]
    if r.empty:
        return ""
    r = r.iloc[0]
    paper = f"; App. H (authors): H={H} memorizes ≈{int(r.paper_perfect_T)} perfectly" if pd.notna(r.paper_perfect_T) else ""
    return f"\ntrain acc {r.train_acc:.3f} ({int(r.seeds)} seeds){paper}"


def draw(name: str, tables: dict, sat_settings: dict, label: str = "") -> Figure:
    """Figure `name` from `tables` (construct, gd, rank_bounds, trained_ranks, attention DataFrames)."""
    if name == "construct":
        return draw_construct(tables["construct"], label)
    if name == "capacity":
        return draw_capacity(tables["gd"], label)
    if name == "rank_bounds":
        bounds = pd.concat([tables["rank_bounds"], tables["trained_ranks"]], ignore_index=True)
        return draw_rank_bounds(bounds, label)
    if name == "fig3":
        return draw_fig3(tables["attention"], sat_settings["threshold"], sat_settings["examples_shown"], label,
                         tables.get("attention_accuracy"))
    raise ValueError(f"unknown theory figure {name!r}; the family draws {FIGURES}")
