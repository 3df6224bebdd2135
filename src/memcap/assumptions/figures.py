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
from memcap.results import FIGURE_FORMATS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FIGURES = ("fig1",)
FORMATS = FIGURE_FORMATS   # memcap.results: one list for every family
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
    """Fraction of full-rank k-subsets vs k with its Wilson band, one panel a (track, model), at most three
    a row; dashed lines at the context size n (green) and the width d (red); one legend for all."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    sns.set_theme(style="whitegrid", context="paper")
    panels = list(dict.fromkeys(zip(curves["track"], curves["model"]))) if len(curves) else []
    cols = min(3, max(1, len(panels)))
    rows = -(-max(1, len(panels)) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.3 * cols, 3.4 * rows), squeeze=False, sharey=True)
    paper_band = False
    for ax, (track, model) in zip(axes.flat, panels):
        c = curves[(curves["track"] == track) & (curves["model"] == model)].sort_values("k")
        ax.plot(c["k"], c["fraction"], "o-", ms=2.5, color="tab:blue")
        ax.fill_between(c["k"], c["ci_low"], c["ci_high"], alpha=0.25, color="tab:blue")
        n, d = int(c["n"].iloc[0]), int(c["d"].iloc[0])
        ax.axvline(n, color="green", ls="--")
        ax.axvline(d, color="red", ls="--")
        if track == "imagenet" and c["model"].iloc[0] == "Random Attention":
            ax.axvspan(*PAPER_FIG1_FALL, color="orange", alpha=0.35)
            paper_band = True
        ax.set(xlabel="Kruskal rank candidate k", ylabel="satisfied fraction", ylim=(-0.03, 1.03))
        ax.set_title(f"{model}: {_panel_label(track, model)}\nT = {int(c['T'].iloc[0])}, {int(c['trials'].iloc[0])} "
                     f"subsets per k; n = {n}, d = {d}", fontsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    if not panels:
        axes[0][0].set_visible(True)
        axes[0][0].text(0.5, 0.5, "no Fig 1 curves in this preset", ha="center")
    handles = [Line2D([], [], color="tab:blue", marker="o", ms=3, label="satisfied fraction (95% Wilson band)"),
               Line2D([], [], color="green", ls="--", label="context size n"),
               Line2D([], [], color="red", ls="--", label="width d")]
    if paper_band:
        handles.append(Patch(color="orange", alpha=0.35, label=f"paper's Fig 1 (authors): falls from 1 at k ≈ "
                                                               f"{PAPER_FIG1_FALL[0]}–{PAPER_FIG1_FALL[1]}"))
    fig.legend(handles=handles, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False, fontsize=8)
    fig.suptitle("Fig 1: fraction of full-rank random k-subsets of the [CLS] queries", fontsize=10)
    fig.tight_layout()
    return fig


def draw(name: str, curves: pd.DataFrame) -> Figure:
    if name == "fig1":
        return draw_fig1(curves)
    raise ValueError(f"unknown assumptions figure {name!r}; the family draws {FIGURES}")
