"""Capacity in four figures, drawn only from the capacity table (figure code never trains):

  capacity      T₅₀ (95% interval; dots: each seed's threshold; open: a lower bound) against H, one panel
                a setting, and against d_h; the bound that applies as a line (none where neither applies)
                and the fitted power law
  bits          bits per parameter against parameters: at T₅₀ (a threshold) and without one (Morris et
                al.), beside the published capacities as labelled lines
  sensitivity   T₅₀ against the training budget and the learning rate, as ratios to the paper's protocol
  transition    the memorization transition: each seed's threshold and the fitted P(memorized | T)

Each figure has one legend, outside its panels, and at most four panels.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from memcap import results
from memcap.capacity import settings
from memcap.capacity.aggregate import ANCHORS, is_plain, paper_task_first, setting_groups
from memcap.plotting import plt, sns
from memcap.scales import STAND_IN_MARK

FIGURES = ("capacity", "bits", "sensitivity", "transition")
SHORT_WORDS = {"mlt/classification C=100": "100 classes", "mlt/scalar": "one logit", "dpc/associations N=50": "DPC",
               "dpc/associations N=50, MLP arm": "DPC's MLP arm (W = 2d(H − 1))",
               "torch block C=100": "torch MultiheadAttention block", "torch block + MLP 32 C=100": "the block + an MLP of width 32"}
SETTING_WORDS = {"mlt/classification C=100": "MLT's layer, 100 classes", "mlt/scalar": "MLT's layer, one logit (±1)",
                 "dpc/associations N=50": "DPC's transformer, N = 50 associations",
                 "dpc/associations N=50, MLP arm": "DPC's one head + MLP arm (W = 2d(H − 1)), N = 50"}


def _words(setting: str, table: dict = SETTING_WORDS) -> str:
    """A setting in the figure's words; a stand-in's label keeps its mark (memcap.scales)."""
    base = setting.removesuffix(STAND_IN_MARK)
    mark = setting[len(base):]
    return table.get(base, SHORT_WORDS.get(base, base)) + mark


def _plain(cap: pd.DataFrame) -> pd.DataFrame:
    """The settings' own rows (no d_v, lr or tuned variant)."""
    return cap[is_plain(cap)]


def _log_errors(g: pd.DataFrame, y: str, low: str, high: str) -> np.ndarray:
    top = np.where(np.isfinite(g[high]), g[high], g[y])
    return np.vstack([g[y] - g[low], top - g[y]]).clip(min=0)


def _estimates(ax, g: pd.DataFrame, x: str, color) -> None:
    """Each seed's threshold (dots), T₅₀ with its interval, a lower bound as an open marker."""
    seeds = g[[x, "seed_capacity"]].explode("seed_capacity").dropna().astype(float)
    ax.scatter(seeds[x], seeds.seed_capacity, s=8, color=color, alpha=0.35, lw=0)
    g = g[g.capacity.notna()].sort_values(x)
    ax.errorbar(g[x], g.capacity, yerr=_log_errors(g, "capacity", "capacity_ci_low", "capacity_ci_high"), fmt="none",
                ecolor=color, capsize=2, lw=1)
    bound = g.lower_bound.fillna(False).astype(bool)
    ax.plot(g[x], g.capacity, "-", color=color, lw=0.8, alpha=0.6)
    ax.scatter(g[x][~bound], g.capacity[~bound], s=30, color=color, zorder=3)
    ax.scatter(g[x][bound], g.capacity[bound], s=30, facecolors="white", edgecolors=color, zorder=3)


def _law_line(ax, law: pd.Series | None, xs, color) -> None:
    """The fitted law over the rows' range; none where its interval is unbounded (mostly lower bounds)."""
    if law is None or pd.isna(law.statistic) or pd.isna(law.prefactor) or not np.isfinite([law.ci_low, law.ci_high]).all():
        return
    grid = np.geomspace(min(xs), max(xs), 50)
    ax.plot(grid, law.prefactor * grid ** law.statistic, ":", color=color, lw=1)


def _log_axes(ax, xs, xlabel: str) -> None:
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

    ax.set(xscale="log", yscale="log", xlabel=xlabel, ylabel="T₅₀ (dataset size memorized by half the models)")
    ticks = sorted({int(v) for v in xs})
    ax.set_xticks(ticks if len(ticks) <= 7 else ticks[::2], [str(t) for t in (ticks if len(ticks) <= 7 else ticks[::2])])
    ax.xaxis.set_minor_locator(NullLocator())
    low, high = ax.get_ylim()
    if high / low < 20:   # less than about a decade: 1-2-5 ticks, so every panel has numbers to read
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))


def capacity(cap: pd.DataFrame, laws: pd.DataFrame, section: dict, paths) -> None:
    """T₅₀ against H, one panel a task (readout and labels: models of the same task side by side, e.g.
    DPC's attention and its MLP arm, a preset and d each a colour), and against d_h for MLT's layer."""
    from matplotlib.lines import Line2D

    plain = _plain(cap)
    order = {s: i for i, s in enumerate(SETTING_WORDS)}
    tasks = sorted(dict.fromkeys(zip(plain.readout, plain.d_out)), key=lambda task: min(
        order.get(s, len(order)) for s in plain.setting[plain.readout.eq(task[0]) & plain.d_out.eq(task[1])]))
    sets = tasks[:3]   # three panels of tasks and the d_h panel
    fig, grid = plt.subplots(2, 2, figsize=(9.5, 7.6), squeeze=False)
    axes = list(grid.flat)[:len(sets)] + [grid.flat[3]]
    for ax in list(grid.flat)[len(sets):3]:
        ax.set_visible(False)
    first = {m: name for name, names in setting_groups(section, plain.scale).items() for m in names}
    plain = plain.assign(group=plain.scale.map(first))   # one setting's presets: one colour, one line
    law_at = laws.set_index(["scale", "law", "at"]) if len(laws) and "at" in laws else None
    get = lambda scale, name, at: (law_at.loc[(scale, name, at)]  # noqa: E731
                                   if law_at is not None and (scale, name, at) in law_at.index else None)
    palette = iter(sns.color_palette("tab10") + sns.color_palette("Dark2"))   # one colour one model and d, in every panel
    colours = []   # what each colour is: one legend for the figure, outside the panels
    for ax, task in zip(axes, sets):
        g = plain[plain.readout.eq(task[0]) & plain.d_out.eq(task[1])]
        g = g.iloc[np.argsort([order.get(s, len(order)) for s in g.setting], kind="stable")]
        setting = g.setting.iloc[0]   # the panel's first model names it
        for scale, part in g.groupby("group", sort=False):
            p = section[scale]
            color = next(palette) if g.group.nunique() > 1 else "0.25"   # a panel of one model: no colour of its own
            on_h = part[part.head_dim == p["head_dim"]]
            _estimates(ax, on_h, "heads", color)
            _law_line(ax, get(scale, "alpha_heads", p["head_dim"]), on_h.heads, color)
            if part.bounded.iloc[0]:
                ax.plot(on_h.heads, on_h.bound, "--", color=color, lw=1)
            if g.group.nunique() > 1:   # several models or d in the panel: a colour each
                colours.append(Line2D([], [], color=color, marker="o", ls="none",
                                      label=f"{_words(part.setting.iloc[0], SHORT_WORDS)}, "
                                            f"embedding dim d = {p['input_dim']}"
                                            + (f", context n = {p['context_size']}" if "context_size" in p else "")))
        ax.set_title(_words(setting), fontsize=9)
        _log_axes(ax, g.heads, "heads H")
    ax = axes[-1]
    # MLT's layer, a query and a context of n tokens: d_h against n (the paper's task where it is in the table)
    in_context = paper_task_first(plain[plain.model.eq(settings.MLT)])
    for (setting, g), color in zip(in_context.groupby("setting"), palette):   # colours not used above
        p = section[g.scale.iloc[0]]
        H = g.groupby("heads").head_dim.nunique().idxmax()   # the H whose d_h grid the setting searched
        on_dh = g[g.heads == H]
        _estimates(ax, on_dh, "head_dim", color)
        colours.append(Line2D([], [], color=color, marker="o", ls="none", label=f"{_words(setting)}, H = {H}"))
        ax.axvline(p["context_size"], color="grey", lw=0.8, ls="--")
    if len(in_context):
        _log_axes(ax, in_context.head_dim, "head size d_h (dashed: n)")
    ax.set_title("against the head size", fontsize=9)
    handles = [*colours,Line2D([], [], color="k", marker="o", ls="none", label="T₅₀ with its 95% interval"),
               Line2D([], [], color="k", marker="o", mfc="white", ls="none", label="a lower bound (more steps memorize more)"),
               Line2D([], [], color="k", marker="o", ms=3, alpha=0.35, ls="none", label="one seed's threshold"),
               Line2D([], [], color="k", ls="--", label="the bound that applies (MLT Thm 1, DPC Cor 1)"),
               Line2D([], [], color="k", ls=":", label="fitted power law T₅₀ ∝ H^α")]
    fig.legend(handles=handles, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False, fontsize=8)
    fig.suptitle(f"Capacity: T₅₀, where half the trained models memorize (accuracy ≥ {cap.threshold.max():g})", fontsize=10)
    fig.tight_layout()
    results.save_figure(fig, paths, dpi=130)


def bits(cap: pd.DataFrame, paths) -> None:
    """Bits per parameter at T₅₀ (T₅₀·log2 C / params) and without a threshold (Morris et al.: the most
    Σ max(0, log2 C − loss in bits) of any probe), against parameters, beside the published capacities."""
    from matplotlib.lines import Line2D

    plain = _plain(cap)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    palette = dict(zip(sorted(set(plain.setting)), sns.color_palette("tab10")))
    for setting, g in plain.groupby("setting"):
        g = g.sort_values("param_count")
        color = palette[setting]
        ok = g[g.bits_per_param.notna()]
        ax.errorbar(ok.param_count, ok.bits_per_param, yerr=_log_errors(ok, "bits_per_param", "bits_ci_low", "bits_ci_high"),
                    fmt="o", ms=4, color=color, capsize=2, lw=0.8)
        ax.scatter(g.param_count, g.morris_bits_per_param, marker="^", s=22, facecolors="white", edgecolors=color)
    top = []
    # greys and line styles: no colour of a model's; two anchors at 2 bits stay apart by their dashes
    for (label, value), (color, ls) in zip(ANCHORS.items(), (("0.25", "--"), ("0.55", "-."), ("0.25", ":"), ("0.55", (0, (6, 2))))):
        ax.axhline(value, color=color, lw=0.9, ls=ls)
        top.append(Line2D([], [], color=color, ls=ls, label=label))
    ax.set(xscale="log", yscale="log", xlabel="parameters of one model", ylabel="bits per parameter")
    handles = [Line2D([], [], color=c, marker="o", ls="none", label=_words(s)) for s, c in palette.items()]
    handles += [Line2D([], [], color="k", marker="o", ls="none", label="at T₅₀: T₅₀·log2 C / params (95% interval)"),
                Line2D([], [], color="k", marker="^", mfc="white", ls="none",
                       label="without a threshold: most memorized bits / params (Morris et al.)"), *top]
    fig.legend(handles=handles, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False, fontsize=8)
    ax.set_title("Bits per parameter: each model against published capacities", fontsize=10)
    fig.tight_layout()
    results.save_figure(fig, paths, dpi=130)


def _ratio(a: tuple, b: tuple) -> tuple[float, float, float]:
    """a/b of two (T₅₀, low, high) with a 95% interval on the log scale (independent fits)."""
    se = lambda t: (math.log(t[2]) - math.log(t[1])) / (2 * 1.96) if t[1] > 0 and math.isfinite(t[2]) else math.nan  # noqa: E731
    d, s = math.log(a[0]) - math.log(b[0]), math.hypot(se(a), se(b))
    return math.exp(d), math.exp(d - 1.96 * s), math.exp(d + 1.96 * s)


def _plain_log(axis) -> None:
    """A log axis labelled at its decades only, as plain numbers (no 2×10² beside 3×10²)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def _ratio_ticks(ax, axis: str) -> None:
    """A ratio axis on the log scale with plain ticks: 0.5, 1, 2, ..."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    a = ax.xaxis if axis == "x" else ax.yaxis
    a.set_major_locator(FixedLocator([0.25, 0.5, 1, 2, 4, 8]))
    a.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    a.set_minor_locator(NullLocator())


def sensitivity(cap: pd.DataFrame, paths) -> None:
    """Left: T₅₀ at 2x and 4x the paper's steps over T₅₀ at 1x, per architecture with a curve. Right: T₅₀
    at another learning rate (and tuned over three) over the paper's lr, at the paper's steps."""
    from matplotlib.lines import Line2D

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.9))
    curved = cap[cap.budgets.map(len) > 1]
    palette = sns.color_palette("viridis", max(len(curved), 1))
    handles = []
    for (_, r), color in zip(curved.iterrows(), palette):
        q, lo, hi = (np.asarray(v, float) for v in (r.rise, r.rise_low, r.rise_high))
        if not len(q) or not np.isfinite(q).any():
            continue
        x = np.arange(len(q)) + 0.06 * (len(handles) - len(curved) / 2)
        left.errorbar(x, q, yerr=np.vstack([q - lo, hi - q]).clip(min=0), fmt="o-", ms=3, color=color, capsize=2, lw=1)
        d_v = f" d_v={int(r.value_dim)}" if r.value_dim != 1 else ""
        handles.append(Line2D([], [], color=color, marker="o", label=f"H={r.heads} d_h={r.head_dim}{d_v}: {r.budget_curve}"))
    left.axhline(1, color="grey", lw=0.8)
    left.axhspan(1 / 1.1, 1.1, color="tab:green", alpha=0.12)
    doublings = max((len(r) for r in curved.rise), default=0)
    budgets = sorted({b for bs in curved.budgets for b in bs})
    left.set_xticks(range(doublings), [f"{a}x → {b}x" for a, b in zip(budgets, budgets[1:])][:doublings])
    left.set(yscale="log", xlabel="doubling of the training steps", ylabel="rise of T₅₀ (paired seeds, 90% interval)",
             title="more steps (band: within ±10%, converged)")
    _ratio_ticks(left, "y")
    rows = []
    for _, r in cap[cap.variant.notna()].iterrows():
        base = cap[(cap.heads == r.heads) & (cap.head_dim == r.head_dim) & (cap.value_dim == r.value_dim)
                   & (cap.setting == r.setting_base) & (cap.input_dim == r.input_dim)]
        if base.empty or pd.isna(r.capacity) or pd.isna(base.capacity.iloc[0]):
            continue
        b = base.iloc[0]
        q = _ratio((r.capacity, r.capacity_ci_low, r.capacity_ci_high), (b.capacity, b.capacity_ci_low, b.capacity_ci_high))
        dpc = f"d={r.input_dim} " if r.readout == settings.ASSOCIATIONS else ""
        short = _words(r.setting_base, SHORT_WORDS)
        rows.append((f"{short}: {dpc}H={r.heads} d_h={r.head_dim}, {r.variant}", *q))
    for i, (label, q, lo, hi) in enumerate(rows):
        right.errorbar([q], [i], xerr=[[max(q - lo, 0)], [max(hi - q, 0)]], fmt="o", color="tab:blue", capsize=2)
    right.axvline(1, color="grey", lw=0.8)
    right.set_yticks(range(len(rows)), [r[0] for r in rows], fontsize=7)
    right.set(xscale="log", xlabel="T₅₀ / T₅₀ at the paper's lr (95% interval)", ylabel="architecture and learning rate",
              title="another learning rate, or the best of three")
    _ratio_ticks(right, "x")
    if not rows:
        right.text(0.5, 0.5, "no lr variant in this table", ha="center", va="center", transform=right.transAxes)
    fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.0, 0.0), frameon=False, fontsize=7, ncol=2)
    fig.suptitle("How much the paper's protocol limits the capacity", fontsize=10)
    fig.tight_layout()
    results.save_figure(fig, paths, dpi=130)


def transition(cap: pd.DataFrame, paths) -> None:
    """The memorization transition, one panel a setting (at most four): for each architecture of its H
    grid at budget 1, the fraction of seeds whose threshold lies above T (each seed's bracket middle, an
    empirical curve) and the fitted P(memorized | T); T₅₀ is where it crosses one half."""
    from matplotlib.lines import Line2D

    from memcap.capacity.transition import LOGIT_90

    plain = _plain(cap)
    plain = plain[plain.capacity.notna()]
    sets = [s for s in SETTING_WORDS if s in set(plain.setting)][:3]
    fig, axes = plt.subplots(1, max(len(sets), 1), figsize=(3.6 * max(len(sets), 1), 3.6), squeeze=False, sharey=True)
    if not sets:
        axes[0, 0].text(0.5, 0.5, "no architecture with a fitted transition", ha="center", va="center",
                        transform=axes[0, 0].transAxes)
    heads = sorted({int(h) for h in plain.heads})
    colors = dict(zip(heads, sns.color_palette("viridis", len(heads))))
    for ax, setting in zip(axes[0], sets):
        g = plain[plain.setting == setting]
        g = g[(g.head_dim == g.head_dim.mode().iloc[0]) & (g.input_dim == g.input_dim.mode().iloc[0])].sort_values("heads")
        for r in g.itertuples():
            mids = sorted(m for m in r.seed_capacity if m is not None and not pd.isna(m))
            if not mids:
                continue
            n, color = len(mids), colors[int(r.heads)]
            ax.plot(mids, [(n - i - 0.5) / n for i in range(n)], "o", ms=3, color=color, alpha=0.7)
            s = max(np.log(r.width) / (2 * LOGIT_90), 1e-3)
            xs = np.geomspace(r.capacity / 3, r.capacity * 3, 200)
            ax.plot(xs, 1 / (1 + np.exp(np.clip((np.log(xs) - np.log(r.capacity)) / s, -50, 50))), color=color, lw=1.2)
        ax.axhline(0.5, color="grey", lw=0.6, ls=":")
        ax.set(xscale="log", xlabel="dataset size T", ylim=(-0.03, 1.03), ylabel="fraction of seeds that memorize T")
        _plain_log(ax.xaxis)
        ax.set_title(_words(setting) + (f", d = {g.input_dim.iloc[0]}" if g.readout.iloc[0] == settings.ASSOCIATIONS else ""), fontsize=9)
    handles = [Line2D([], [], color=c, marker="o", ms=3, label=f"H = {h}") for h, c in colors.items()]
    handles += [Line2D([], [], color="black", lw=1.2, label="fitted P(memorized | T)"),
                Line2D([], [], color="black", marker="o", ls="none", ms=3, label="one seed's threshold")]
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
        elif name == "bits":
            bits(cap, files)
        elif name == "sensitivity":
            sensitivity(cap, files)
        else:
            transition(cap, files)
