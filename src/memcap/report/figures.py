"""The report's own figure: bits per parameter of every trained model beside published capacities (each
claim's statistic and interval is a row of the report's claims table)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from memcap.plotting import plt, sns
from memcap import results
from memcap.scales import scale_note
from memcap.report.bits import REFERENCES

FIGURES = ("bits",)
FAMILY_WORDS = {"mlt_synthetic": "MLT's layer (its sweeps' runs)", "dpc": "DPC's transformer (its runs)"}


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


def draw(table: pd.DataFrame, paths) -> None:
    """Draw every figure named by the paths' stems (bits.png, bits.pdf -> `bits`)."""
    for name, files in results.by_stem(paths).items():
        if name not in FIGURES:
            raise ValueError(f"no report figure named {name!r}; figures: {FIGURES}")
        bits(table, files)
