"""pyplot (headless) and seaborn for the figure modules, imported when the first figure is drawn
(memcap.lazy_import: Snakemake imports the figure modules only to name their files)."""

from __future__ import annotations

from memcap.lazy_import import OnFirstUse


def _headless() -> None:
    import matplotlib

    matplotlib.use("Agg")   # no display on the cluster or in CI


plt = OnFirstUse("matplotlib.pyplot", _headless)
sns = OnFirstUse("seaborn", _headless)
