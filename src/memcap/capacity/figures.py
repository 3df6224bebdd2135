"""Capacity figure: trained capacity (with its bracket) vs H and vs d_h, beside both papers' bounds."""

from __future__ import annotations

import pandas as pd

from memcap.plotting import plt, sns
from memcap.params import scale_note
from memcap import results

FIGURES = ("capacity",)


def _panel(ax, g: pd.DataFrame, x: str, xlabel: str) -> None:
    g = g.sort_values(x)
    high = g.capacity_high.fillna(g.capacity_low).astype(float)
    ax.fill_between(g[x], g.capacity_low, high, alpha=0.25, color="tab:blue", label="bracket [T_low, T_high)")
    sns.lineplot(data=g, x=x, y="capacity_low", marker="o", ax=ax, color="tab:blue",
                 label=f"trained capacity (all {int(g.seeds.iloc[0])} seeds ≥ {g.threshold.iloc[0]:.0%})")
    sns.lineplot(data=g, x=x, y="mlt_bound", marker="s", ls="--", ax=ax, color="tab:orange",
                 label="MLT: H(min(n, d_h) − 1) + 1")
    sns.lineplot(data=g, x=x, y="dpc_bound", marker="^", ls=":", ax=ax, color="tab:green", label="DPC: H·d_h + d")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("dataset size T memorized")
    ax.set_yscale("log")
    ax.legend(fontsize=7)


def capacity(cap: pd.DataFrame, p: dict, paths) -> None:
    """Two panels: the H grid at the preset's fixed d_h, the d_h grid at its fixed H (n marked)."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    n, d = int(cap.context_size.iloc[0]), int(cap.input_dim.iloc[0])
    _panel(axes[0], cap[cap.head_dim == p["head_dim"]], "heads", f"heads H (d_h = {p['head_dim']})")
    _panel(axes[1], cap[cap.heads == p["heads"]], "head_dim", f"head size d_h (H = {p['heads']})")
    axes[1].axvline(n, color="grey", lw=0.8)
    scale = cap.scale.iloc[0]
    fig.suptitle(f"Capacity by bracketing search (n = {n}, d = {d}, C = {int(cap.num_classes.iloc[0])}; "
                 f"scale: {scale}{', ' + scale_note(scale) if scale_note(scale) else ''})", fontsize=10)
    fig.tight_layout()
    results.save_figure(fig, paths, dpi=130)


def draw(cap: pd.DataFrame, p: dict, paths) -> None:
    """Draw every figure named by the paths' stems (capacity.png, capacity.pdf -> `capacity`)."""
    for name, files in results.by_stem(paths).items():
        if name not in FIGURES:
            raise ValueError(f"no capacity figure named {name!r}; figures: {FIGURES}")
        capacity(cap, p, files)
