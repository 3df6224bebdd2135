"""Capacity figure: T* (95% interval, every seed's capacity) vs H and vs d_h on log axes, beside both
papers' counts and the fitted power law; bits per parameter at capacity beside the published ones."""

from __future__ import annotations

import numpy as np
import pandas as pd

from memcap import results
from memcap.capacity.aggregate import ANCHORS
from memcap.scales import scale_note
from memcap.plotting import plt, sns

FIGURES = ("capacity",)


def _panel(ax, g: pd.DataFrame, x: str, xlabel: str, law: pd.Series | None) -> None:
    g = g.sort_values(x)
    seeds = g[[x, "seed_capacity"]].explode("seed_capacity").dropna().astype(float)
    ax.scatter(seeds[x], seeds.seed_capacity, s=10, color="tab:blue", alpha=0.45, label="one seed's capacity")
    yerr = np.vstack([g.capacity - g.capacity_ci_low, g.capacity_ci_high - g.capacity]).clip(min=0)
    ax.errorbar(g[x], g.capacity, yerr=np.nan_to_num(yerr), marker="o", color="tab:blue", capsize=3,
                label=f"T*: mean of {int(g.seeds.iloc[0])} seeds, 95% CI (acc ≥ {g.threshold.iloc[0]:.0%})")
    limited = g[g.budget_limited.fillna(False).astype(bool)]
    if len(limited):
        ax.scatter(limited[x], limited.capacity, s=90, facecolors="none", edgecolors="red",
                   label="budget-limited: a lower bound")
    sns.lineplot(data=g, x=x, y="mlt_bound", marker="s", ls="--", ax=ax, color="tab:orange",
                 label="MLT: H(min(n, d_h) − 1) + 1")
    sns.lineplot(data=g, x=x, y="dpc_bound", marker="^", ls=":", ax=ax, color="tab:green", label="DPC: H·d_h + d")
    if law is not None and not np.isnan(law.statistic):
        xs = np.geomspace(g[x].min(), g[x].max(), 50)
        ax.plot(xs, law.prefactor * xs ** law.statistic, color="grey", lw=1,
                label=f"fit T* ∝ {x[0].upper() if x == 'heads' else 'd_h'}^{law.statistic:.2f} "
                      f"[{law.ci_low:.2f}, {law.ci_high:.2f}]")
    ax.set(xscale="log", yscale="log", xlabel=xlabel, ylabel="dataset size T memorized")
    ax.set_xticks(g[x].tolist(), [str(v) for v in g[x]])     # the grid's own values, not 2×10^0
    ax.minorticks_off()
    ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.legend(fontsize=7)


def _bits_panel(ax, cap: pd.DataFrame) -> None:
    """Bits per parameter at capacity (T*·log2 C / params, 95% CI) and the most memorized bits of any
    probe per parameter, against params, beside the published capacities in bits per parameter."""
    g = cap.sort_values("param_count")
    yerr = np.vstack([g.bits_per_param - g.bits_ci_low, g.bits_ci_high - g.bits_per_param]).clip(min=0)
    ax.errorbar(g.param_count, g.bits_per_param, yerr=np.nan_to_num(yerr), fmt="o", color="tab:blue", capsize=3,
                label="T*·log2 C / params (95% CI)")
    ax.scatter(g.param_count, g.max_bits_per_param, marker="x", color="tab:purple",
               label="most memorized bits of a probe / params")
    for (name, bits), color in zip(ANCHORS.items(), ("grey", "silver", "tab:red", "tab:brown")):
        ax.axhline(bits, color=color, lw=0.8, ls="--", label=f"{name}: {bits:g}")
    ax.set(xscale="log", yscale="log", xlabel="parameters", ylabel="bits per parameter")
    ax.xaxis.set_minor_formatter(plt.NullFormatter())   # the 2-9 x 10^k labels overlap at these widths
    ax.legend(fontsize=6)


def capacity(cap: pd.DataFrame, laws: pd.DataFrame, p: dict, paths) -> None:
    """Three panels: the H grid at the preset's fixed d_h, the d_h grid at its fixed H (n marked), and
    bits per parameter at capacity beside the published capacities."""
    fig, axes = plt.subplots(1, 3, figsize=(15.5, 4.4))
    n, d = int(cap.context_size.iloc[0]), int(cap.input_dim.iloc[0])
    law = laws.set_index("law")
    _panel(axes[0], cap[cap.head_dim == p["head_dim"]], "heads", f"heads H (d_h = {p['head_dim']})",
           law.loc["alpha_heads"])
    _panel(axes[1], cap[cap.heads == p["heads"]], "head_dim", f"head size d_h (H = {p['heads']})",
           law.loc["beta_head_dim_below_n"])
    axes[1].axvline(n, color="grey", lw=0.8, ls="--")
    _bits_panel(axes[2], cap)
    scale = cap.scale.iloc[0]
    fig.suptitle(f"Capacity by search (n = {n}, d = {d}, C = {int(cap.num_classes.iloc[0])}, {cap.context.iloc[0]} "
                 f"context; scale: {scale}{', ' + scale_note(scale) if scale_note(scale) else ''})", fontsize=10)
    fig.tight_layout()
    results.save_figure(fig, paths, dpi=130)


def draw(cap: pd.DataFrame, laws: pd.DataFrame, p: dict, paths) -> None:
    """Draw every figure named by the paths' stems (capacity.png, capacity.pdf -> `capacity`)."""
    for name, files in results.by_stem(paths).items():
        if name not in FIGURES:
            raise ValueError(f"no capacity figure named {name!r}; figures: {FIGURES}")
        capacity(cap, laws, p, files)
