"""Fig 1 of Mahdavi et al.: the fraction of full-rank random k-subsets of the [CLS] queries vs k,
one panel per track that draws it (params `fig1`), dashed lines at n and d; with `fig1.stand_in`, one more
panel per track for the trained DINOv2-S/14 stand-in's first block.

FIGURES names the family's figures; each is saved by memcap.results.save_figure to
figures/assumptions/<name>.png|.pdf.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from memcap.assumptions.grid import VIT_STAND_IN
from memcap.plotting import plt, sns

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FIGURES = ("fig1",)
FORMATS = ("png", "pdf")
# MLT Fig 1 itself (the notebook: Random Attention on 1973 ImageNet training images, 5000 subsets per
# k): the satisfied fraction leaves 1 at k ≈ 240-250, read off the published figure. Drawn as a band on
# the ImageNet panel, beside our curve.
PAPER_FIG1_FALL = (240, 250)
TRACK_LABELS = {"photos": "ViT-B/16 geometry, package photos (code-path check)", "digits": "small ViT, sklearn digits",
                "imagenet": "ViT-B/16, ImageNet val sample (real images)"}

# the trained stand-in's panel names its model and training, not the track's ViT-B/16 geometry
STAND_IN_LABEL = "first block; DINOv2 self-supervised on LVD-142M, width 384, patch 14"
DATA_LABELS = {"photos": "package photos (code-path check)", "imagenet": "ImageNet val sample (real images)"}


def _panel_label(track: str, model: str) -> str:
    if model == VIT_STAND_IN:
        return f"{STAND_IN_LABEL}\n{DATA_LABELS.get(track, track)}"
    return TRACK_LABELS.get(track, track)


def draw_fig1(curves: pd.DataFrame) -> Figure:
    """Fraction of full-rank k-subsets vs k with its Wilson band; dashed lines at n (green) and d (red)."""
    sns.set_theme(style="whitegrid", context="paper")
    panels = list(dict.fromkeys(zip(curves["track"], curves["model"]))) if len(curves) else []
    fig, axes = plt.subplots(1, max(1, len(panels)), figsize=(5 * max(1, len(panels)), 3.8), squeeze=False)
    for ax, (track, model) in zip(axes[0], panels):
        c = curves[(curves["track"] == track) & (curves["model"] == model)].sort_values("k")
        sns.lineplot(data=c, x="k", y="fraction", marker="o", markersize=3, ax=ax)
        ax.fill_between(c["k"], c["ci_low"], c["ci_high"], alpha=0.25)
        n, d = int(c["n"].iloc[0]), int(c["d"].iloc[0])
        ax.axvline(n, color="green", ls="--", label=f"n = {n}")
        ax.axvline(d, color="red", ls="--", label=f"d = {d}")
        if track == "imagenet" and c["model"].iloc[0] == "Random Attention":
            ax.axvspan(*PAPER_FIG1_FALL, color="orange", alpha=0.35,
                       label=f"paper's Fig 1 (authors): falls from 1 at k ≈ {PAPER_FIG1_FALL[0]}–{PAPER_FIG1_FALL[1]}")
        ax.set(xlabel="Kruskal rank candidate k", ylabel="satisfied fraction", ylim=(-0.03, 1.03),
               title=f"{model}: {_panel_label(track, model)}\nT = {int(c['T'].iloc[0])}, "
                     f"{int(c['trials'].iloc[0])} subsets per k")
        ax.legend(loc="lower left")
    if not panels:
        axes[0][0].text(0.5, 0.5, "no Fig 1 curves in this preset", ha="center")
    fig.suptitle("Fig 1: fraction of full-rank random k-subsets of the [CLS] queries", fontsize=10)
    fig.tight_layout()
    return fig


def draw(name: str, curves: pd.DataFrame) -> Figure:
    if name == "fig1":
        return draw_fig1(curves)
    raise ValueError(f"unknown assumptions figure {name!r}; the family draws {FIGURES}")
