"""Capacity figures: T₅₀ (95% interval, every seed's threshold) vs H and vs d_h on log axes, beside both
papers' counts and the fitted power law, and bits per parameter at T₅₀ beside the published ones
(capacity); T₅₀ against the training budget per architecture (capacity_budget); memorized bits without a
threshold against T per architecture (memorized_bits)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from memcap import results
from memcap.capacity import morris, settings
from memcap.capacity.aggregate import ANCHORS
from memcap.scales import scale_note
from memcap.plotting import plt, sns

FIGURES = ("capacity", "capacity_budget", "memorized_bits", "transition")
MAX_PANELS = 4        # a figure answers one question: at most four panels


def _panel(ax, g: pd.DataFrame, x: str, xlabel: str, law: pd.Series | None) -> None:
    if g.empty:
        ax.set_axis_off()
        return
    g = g.sort_values(x)
    seeds = g[[x, "seed_capacity"]].explode("seed_capacity").dropna().astype(float)
    ax.scatter(seeds[x], seeds.seed_capacity, s=10, color="tab:blue", alpha=0.45, label="one seed's threshold")
    top = np.where(np.isfinite(g.capacity_ci_high), g.capacity_ci_high, g.capacity)
    yerr = np.vstack([g.capacity - g.capacity_ci_low, top - g.capacity]).clip(min=0)
    ax.errorbar(g[x], g.capacity, yerr=np.nan_to_num(yerr), marker="o", color="tab:blue", capsize=3, ls="none",
                label=f"T₅₀ (half the seeds memorize at acc ≥ {g.threshold.iloc[0]:.0%}), 95% CI")
    limited = g[g.lower_bound.fillna(False).astype(bool)]
    if len(limited):
        ax.scatter(limited[x], limited.capacity, s=90, facecolors="none", edgecolors="red",
                   label="more steps memorize more: a lower bound")
    which = settings.applies(str(g.setting.iloc[0]))
    mlt_applies, dpc_applies = which.startswith("MLT"), which.startswith("DPC")
    sns.lineplot(data=g, x=x, y="mlt_bound", marker="s", ls="--", ax=ax, color="tab:orange",
                 label="MLT: H(min(n, d_h) − 1) + 1" + (" (applies)" if mlt_applies else " (for comparison)"))
    sns.lineplot(data=g, x=x, y="dpc_bound", marker="^", ls=":", ax=ax, color="tab:green",
                 label="DPC: H·d_h + d" + (" (applies)" if dpc_applies else " (for comparison)"))
    if law is not None and not np.isnan(law.statistic):
        xs = np.geomspace(g[x].min(), g[x].max(), 50)
        ax.plot(xs, law.prefactor * xs ** law.statistic, color="grey", lw=1,
                label=f"fit T₅₀ ∝ {x[0].upper() if x == 'heads' else 'd_h'}^{law.statistic:.2f} "
                      f"[{law.ci_low:.2f}, {law.ci_high:.2f}]")
    ax.set(xscale="log", yscale="log", xlabel=xlabel, ylabel="dataset size T memorized", title=str(g.setting.iloc[0]))
    ax.set_xticks(g[x].tolist(), [str(v) for v in g[x]])     # the grid's own values, not 2×10^0
    ax.minorticks_off()
    ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.legend(fontsize=7)


def _bits_panel(ax, cap: pd.DataFrame) -> None:
    """Bits per parameter at T₅₀ (T₅₀·log2 C / params, 95% CI) and the most memorized bits of any
    probe per parameter, against params, beside the published capacities in bits per parameter."""
    g = cap.sort_values("param_count")
    bits = "log2 N" if str(g.setting.iloc[0]).startswith("dpc") else f"log2 {int(g.num_classes.iloc[0])}"
    top = np.where(np.isfinite(g.bits_ci_high), g.bits_ci_high, g.bits_per_param)
    yerr = np.vstack([g.bits_per_param - g.bits_ci_low, top - g.bits_per_param]).clip(min=0)
    ax.errorbar(g.param_count, g.bits_per_param, yerr=np.nan_to_num(yerr), fmt="o", color="tab:blue", capsize=3,
                label=f"{g.setting.iloc[0]}: T₅₀·{bits} / params (95% CI)")
    ax.scatter(g.param_count, g.max_bits_per_param, marker="x", color="tab:purple",
               label="most memorized bits of a probe / params")
    curved = g[g.budgets.map(len) > 1] if "budgets" in g else g.iloc[:0]
    if len(curved):   # the largest budget's T₅₀: a value where converged, else a lower bound (open marker)
        done = curved.budget_curve == "converged"
        ax.scatter(curved.param_count[done], curved.curve_bits_per_param[done], marker="D", color="tab:green",
                   label=f"T₅₀ at {max(curved.budgets.iloc[0])}x the steps / params (converged)")
        ax.scatter(curved.param_count[~done], curved.curve_bits_per_param[~done], marker="^", facecolors="none",
                   edgecolors="tab:green", label=f"T₅₀ at {max(curved.budgets.iloc[0])}x the steps / params: not converged")
    for (name, bits), color in zip(ANCHORS.items(), ("grey", "silver", "tab:red", "tab:brown")):
        ax.axhline(bits, color=color, lw=0.8, ls="--", label=f"{name}: {bits:g}")
    ax.set(xscale="log", yscale="log", xlabel="parameters", ylabel="bits per parameter")
    ax.xaxis.set_minor_formatter(plt.NullFormatter())   # the 2-9 x 10^k labels overlap at these widths
    ax.legend(fontsize=6)


def capacity(cap: pd.DataFrame, laws: pd.DataFrame, section: dict, paths) -> None:
    """A row of three panels a preset (one setting, or one d of DPC's): the H grid at its fixed d_h,
    the d_h grid at its fixed H (n, or d for DPC, marked), and bits per parameter at capacity beside
    the published capacities."""
    names = list(dict.fromkeys(cap.scale))
    fig, axes = plt.subplots(len(names), 3, figsize=(15.5, 4.4 * len(names)), squeeze=False)
    for row, name in zip(axes, names):
        p, g = section[name], cap[cap.scale == name]
        law = (laws[laws.scale == name] if "scale" in laws else laws).set_index("law")
        get = lambda k: law.loc[k] if k in law.index else None                                 # noqa: E731
        dpc = settings.family(p) == settings.DPC
        d = f", d = {p['input_dim']}" if dpc else ""
        _panel(row[0], g[g.head_dim == p["head_dim"]], "heads", f"heads H (d_h = {p['head_dim']}{d})", get("alpha_heads"))
        _panel(row[1], g[g.heads == p["heads"]], "head_dim", f"head size d_h (H = {p['heads']}{d})",
               get("beta_head_dim_below_n"))
        row[1].axvline(p["input_dim"] if dpc else p["context_size"], color="grey", lw=0.8, ls="--")
        _bits_panel(row[2], g)
    scale = ", ".join(names)
    fig.suptitle(f"Capacity by search, one row a setting ({', '.join(dict.fromkeys(cap.setting))}; "
                 f"presets: {scale}{''.join(f'; {scale_note(n)}' for n in names if scale_note(n))})",
                 fontsize=10)
    fig.tight_layout()
    results.save_figure(fig, paths, dpi=130)


def _label(r) -> str:
    return f"{r.setting}: H={r.heads} d_h={r.head_dim}"


def budget(cap: pd.DataFrame, paths) -> None:
    """T₅₀ (95% CI) against the budget, log-log, one line an architecture with a budget curve; says so
    when none has one."""
    g = cap[cap.budgets.map(len) > 1] if "budgets" in cap else cap.iloc[:0]
    fig, ax = plt.subplots(figsize=(7.5, 5))
    if g.empty:
        ax.text(0.5, 0.5, "no budget curve in this table (scale {capacity: paper_budget} searches them)",
                ha="center", va="center", transform=ax.transAxes, fontsize=9)
        ax.set_axis_off()
    for r in g.itertuples():
        B, T = np.asarray(r.budgets, float), np.asarray(r.capacity_budget, float)
        high = np.asarray(r.capacity_budget_high, float)
        err = np.vstack([T - np.asarray(r.capacity_budget_low, float), np.where(np.isfinite(high), high, T) - T])
        ax.errorbar(B, T, yerr=np.nan_to_num(err).clip(min=0), marker="o" if r.budget_curve == "converged" else "^",
                    capsize=3, label=f"{_label(r)} ({r.budget_curve})")
    if len(g):
        ax.set(xscale="log", yscale="log", xlabel="training budget (x the paper's steps)", ylabel="T₅₀ (95% CI)",
               title="T₅₀ against the training budget (circles: converged within ±10% a doubling)")
        ax.set_xticks(sorted({b for bs in g.budgets for b in bs}), [f"{b}x" for b in sorted({b for bs in g.budgets for b in bs})])
        ax.minorticks_off()
        ax.legend(fontsize=6)
    fig.tight_layout()
    results.save_figure(fig, paths, dpi=130)


def bits(cap: pd.DataFrame, probes: pd.DataFrame | None, section: dict, mlt_runs: pd.DataFrame | None, paths) -> None:
    """Memorized bits (Σ max(0, log2 C − loss in bits)), mean over the seeds at each T, against T, one line
    an architecture (its probes at the paper's budget and the MLT runs of its shape), log-log."""
    fig, ax = plt.subplots(figsize=(7.5, 5))
    drawn = 0
    for r in cap.itertuples():
        if probes is None or r.scale not in section:
            continue
        mine = probes[(probes.budget == 1) & (probes.heads == r.heads) & (probes.head_dim == r.head_dim)
                      & (probes.scale == r.scale)].reindex(columns=["dataset_size", "seed", "memorized_bits"])
        points = pd.concat([mine, morris.runs_like(mlt_runs, section[r.scale], r.heads, r.head_dim)], ignore_index=True)
        c = morris.curve(points.dropna())
        if c.empty:
            continue
        ax.plot(c.index, c.values, marker=".", label=f"{_label(r)} ({r.morris_plateau})")
        drawn += 1
    if not drawn:
        ax.text(0.5, 0.5, "no probes with memorized bits", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
    else:
        ax.set(xscale="log", yscale="log", xlabel="dataset size T", ylabel="memorized bits (mean over seeds)",
               title="Memorized bits without a threshold (Morris et al.) against T")
        ax.legend(fontsize=5, ncol=2)
    fig.tight_layout()
    results.save_figure(fig, paths, dpi=130)


def transition(cap: pd.DataFrame, paths) -> None:
    """The memorization transition, one panel a setting (the plain settings, at most four): for each
    architecture of its H grid at budget 1, the fraction of seeds whose threshold lies above T (each
    seed's bracket middle, an empirical curve) and the fitted P(memorized | T) with T₅₀ marked."""
    from memcap.capacity.transition import LOGIT_90

    plain = cap[cap.setting.map(settings.base) == cap.setting]
    plain = plain[plain.capacity.notna()]
    sets = list(dict.fromkeys(plain.setting))[:MAX_PANELS]
    fig, axes = plt.subplots(1, max(len(sets), 1), figsize=(3.6 * max(len(sets), 1) + 1.8, 3.6), squeeze=False)
    if not sets:
        axes[0, 0].text(0.5, 0.5, "no architecture with a fitted transition", ha="center", va="center",
                        transform=axes[0, 0].transAxes)
        axes[0, 0].set_axis_off()
    heads = sorted({int(h) for h in plain.heads})
    colors = dict(zip(heads, sns.color_palette("viridis", len(heads))))
    for ax, setting in zip(axes[0], sets):
        g = plain[plain.setting == setting]
        g = g[g.head_dim == g.head_dim.mode().iloc[0]].sort_values(["input_dim", "heads"])   # the H grid
        for r in g.itertuples():
            mids = sorted(m for m in r.seed_capacity if m is not None and not pd.isna(m))
            if not mids:
                continue
            n = len(mids)
            color = colors[int(r.heads)]
            ax.plot(mids, [(n - i - 0.5) / n for i in range(n)], "o", ms=3, color=color, alpha=0.7)
            s = np.log(r.width) / (2 * LOGIT_90)
            xs = np.geomspace(r.capacity / 4, r.capacity * 4, 200)
            z = np.clip((np.log(xs) - np.log(r.capacity)) / max(s, 1e-3), -50, 50)
            ax.plot(xs, 1 / (1 + np.exp(z)), color=color, lw=1.2)
        ax.axhline(0.5, color="grey", lw=0.6, ls=":")
        ax.set(xscale="log", xlabel="dataset size T", ylim=(-0.03, 1.03), title=setting)
        ax.set_ylabel("fraction of seeds that memorize T")
    handles = [plt.Line2D([], [], color=c, marker="o", ms=3, label=f"H = {h}") for h, c in colors.items()]
    handles += [plt.Line2D([], [], color="black", lw=1.2, label="fitted P(memorized | T)"),
                plt.Line2D([], [], color="black", marker="o", ls="none", ms=3, label="one seed's threshold")]
    fig.legend(handles=handles, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False, fontsize=8)
    fig.suptitle("Where memorization switches off: T₅₀ is where the fitted curve crosses one half", fontsize=10)
    fig.tight_layout()
    results.save_figure(fig, paths, dpi=130)


def draw(cap: pd.DataFrame, laws: pd.DataFrame, section: dict, paths, probes: pd.DataFrame | None = None,
         mlt_runs: pd.DataFrame | None = None) -> None:
    """Draw every figure named by the paths' stems (capacity.png, capacity.pdf -> `capacity`)."""
    for name, files in results.by_stem(paths).items():
        if name not in FIGURES:
            raise ValueError(f"no capacity figure named {name!r}; figures: {FIGURES}")
        if name == "capacity":
            capacity(cap, laws, section, files)
        elif name == "capacity_budget":
            budget(cap, files)
        elif name == "transition":
            transition(cap, files)
        else:
            bits(cap, probes, section, mlt_runs, files)
