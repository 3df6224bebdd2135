"""The report's own figure: bits per parameter of every trained model, beside published capacities."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from memcap import results  # noqa: E402
from memcap.params import scale_note  # noqa: E402
from memcap.report.bits import REFERENCES  # noqa: E402

FIGURES = ("bits",)


def bits(table: pd.DataFrame, paths) -> None:
    """bits/param vs parameter count, one colour per family, with the published reference lines."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    if len(table):
        sns.scatterplot(data=table, x="param_count", y="bits_per_param", hue="family", style="family",
                        alpha=0.6, ax=ax)
    for (label, v), color in zip(REFERENCES.items(), ("tab:red", "tab:purple")):
        ax.axhline(v, ls="--", color=color, label=label)
    ax.set_xscale("log")
    ax.set_xlabel("parameters of one model")
    ax.set_ylabel("memorized bits / parameter")
    top = max(4.0, float(np.nanmax(table.bits_per_param)) * 1.1 if len(table) else 4.0)
    ax.set_ylim(0, top)
    scales = sorted(set(table.scale)) if len(table) else ["none"]
    notes = [f"{s}: {scale_note(s)}" for s in scales if s != "none" and scale_note(s)]
    ax.set_title(f"Bits per parameter, both families (scale: {', '.join(scales)}"
                 f"{'; ' + '; '.join(notes) if notes else ''})", fontsize=10)
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    results.save_figure(fig, paths, dpi=130)


def draw(table: pd.DataFrame, paths) -> None:
    """Draw every figure named by the paths' stems (bits.png, bits.pdf -> `bits`)."""
    for name, files in results.by_stem(paths).items():
        if name not in FIGURES:
            raise ValueError(f"no report figure named {name!r}; figures: {FIGURES}")
        bits(table, files)
