"""The report's own figures: bits per parameter of every trained model beside published capacities, and
the forest plot of every claim's statistic against its accepted region."""

from __future__ import annotations

import numpy as np
import pandas as pd

from memcap.plotting import plt, sns
from memcap import results
from memcap.scales import scale_note
from memcap.report.bits import REFERENCES

FIGURES = ("bits",)
FOREST = "forest"   # drawn by `memcap report scorecard` from the scorecard itself
FAMILY_WORDS = {"mlt_synthetic": "MLT's layer (its sweeps' runs)", "dpc": "DPC's transformer (its runs)"}
VERDICT_COLORS = {"reproduced": "tab:green", "not reproduced": "tab:red", "inconclusive": "tab:blue"}


def bits(table: pd.DataFrame, paths) -> None:
    """bits/param vs parameter count, one colour per family, with the published reference lines."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    if len(table):
        shown = table.assign(model=table.family.map(FAMILY_WORDS).fillna(table.family))
        sns.scatterplot(data=shown, x="param_count", y="bits_per_param", hue="model", style="model",
                        alpha=0.6, ax=ax)
    for (label, v), color in zip(REFERENCES.items(), ("grey", "tab:olive", "tab:red", "tab:brown")):
        ax.axhline(v, ls="--", lw=0.8, color=color, label=label)
    ax.set_xscale("log")
    ax.set_xlabel("parameters of one model")
    ax.set_ylabel("memorized bits / parameter")
    top = max(4.0, float(np.nanmax(table.bits_per_param)) * 1.1 if len(table) else 4.0)
    ax.set_ylim(0, top)
    scales = sorted(set(table.scale)) if len(table) else ["none"]
    notes = [f"{s}: {scale_note(s)}" for s in scales if s != "none" and scale_note(s)]
    ax.set_title(f"Bits per parameter, both families (scale: {', '.join(scales)}"
                 f"{'; ' + '; '.join(notes) if notes else ''})", fontsize=10)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
    fig.tight_layout()
    results.save_figure(fig, paths, dpi=130)


def forest(card: pd.DataFrame, regions: dict, paths, cap: float = 1e6) -> None:
    """One row per claim with a statistic: its 95% interval (colour = verdict) over the accepted region
    (green band), and the statistic on the authors' means (black X) where there is one. Each row has its
    own x-axis: the statistics are ratios, exponents and fractions."""
    rows = card[np.isfinite(card.statistic)].reset_index(drop=True)
    fig, axes = plt.subplots(len(rows), 1, figsize=(8, 0.45 * len(rows) + 0.9), squeeze=False)
    for ax, r in zip(axes[:, 0], rows.itertuples()):
        region = regions[r.claim_id]
        shown = [v for v in (r.statistic, r.ci_low, r.ci_high, r.statistic_authors, region.low, region.high)
                 if np.isfinite(v) and abs(v) < cap]
        lo, hi = min(shown), max(shown)
        pad = 0.12 * (hi - lo) if hi > lo else 0.1 * max(abs(hi), 1)
        ax.set_xlim(lo - pad, hi + pad)
        if region.low == region.high:   # an exact property: the accepted value
            ax.axvline(region.low, color="#8fd19e", lw=3)
        else:
            ax.axvspan(max(region.low, lo - pad), min(region.high, hi + pad), color="#d4edda", lw=0)
        color = VERDICT_COLORS.get(r.verdict, "grey")
        ax.errorbar([r.statistic], [0], xerr=[[max(r.statistic - max(r.ci_low, lo - pad), 0)],
                                               [max(min(r.ci_high, hi + pad) - r.statistic, 0)]],
                    fmt="o", color=color, ms=4, capsize=2)
        if np.isfinite(r.statistic_authors):
            ax.plot([r.statistic_authors], [0], "kX", ms=6)
        ax.set_yticks([])
        ax.set_ylabel(f"{r.claim_id}  ", rotation=0, ha="right", va="center", fontsize=7)
        ax.tick_params(axis="x", labelsize=6, pad=1)
    axes[0, 0].set_title("Every claim: statistic and 95% interval (green = reproduced, red = not, blue = "
                         "inconclusive) over its accepted region (band); X = on the authors' means", fontsize=8)
    fig.tight_layout(h_pad=0.3)
    results.save_figure(fig, paths, dpi=110)


def draw(table: pd.DataFrame, paths) -> None:
    """Draw every figure named by the paths' stems (bits.png, bits.pdf -> `bits`)."""
    for name, files in results.by_stem(paths).items():
        if name not in FIGURES:
            raise ValueError(f"no report figure named {name!r}; figures: {FIGURES}")
        bits(table, files)
