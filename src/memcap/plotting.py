"""pyplot (headless) and seaborn for the figure modules, imported when the first figure is drawn
(memcap.lazy_import: Snakemake imports the figure modules only to name their files)."""

from __future__ import annotations

from memcap.lazy_import import OnFirstUse


def _headless() -> None:
    import matplotlib

    matplotlib.use("Agg")   # no display on the cluster or in CI


plt = OnFirstUse("matplotlib.pyplot", _headless)
sns = OnFirstUse("seaborn", _headless)


def whole_ticks(ax, axis: str = "x", most: int = 6) -> None:
    """Integer ticks (at most `most`) on an axis that counts: heads, sizes, dimensions."""
    from matplotlib.ticker import MaxNLocator

    (ax.xaxis if axis == "x" else ax.yaxis).set_major_locator(MaxNLocator(nbins=most, integer=True))
