"""Shape statistics of measured curves, with a bootstrap over seeds/repetitions (memcap.stats).

A `Curve` is one line of a figure (one T, one d, ...): its grid x and, at each x, the replicate values
(seeds or repetitions). Every statistic is computed on the replicate means; its 95% interval comes
from resampling the replicates within each grid point (memcap.stats.bootstrap_cells, fixed seed).
A claim over several curves takes the worst curve (min or max), resample by resample.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from memcap import stats

N_RESAMPLES = 2000
SEED = 20240613
INF_CAP = 1e6      # a ratio whose denominator is <= 0 is reported as ±INF_CAP (see end_slope_ratio)


@dataclass
class Curve:
    label: str                       # "T=200", "d=4"
    x: np.ndarray                    # increasing grid
    cells: list[np.ndarray]          # replicate values at each x
    dropped: list[str] = field(default_factory=list)   # points left out, named, with why
    meta: dict = field(default_factory=dict)           # the curve's constants (N, d_h, ...)

    @property
    def means(self) -> np.ndarray:
        return np.array([c.mean() for c in self.cells])

    @property
    def replicates(self) -> str:
        k = sorted({len(c) for c in self.cells})
        return f"{k[0]}" if len(k) == 1 else f"{k[0]}–{k[-1]}"

    def keep(self, mask, why: str, xname: str = "x") -> "Curve":
        """The curve restricted to the points where mask holds; the others are named in `dropped`."""
        mask = np.asarray(mask, bool)
        gone = [f"{self.label}: {xname}={_num(x)} ({why}, mean {m:.3g})"
                for x, m, k in zip(self.x, self.means, mask) if not k]
        return Curve(self.label, self.x[mask], [c for c, k in zip(self.cells, mask) if k], self.dropped + gone,
                     self.meta)


def _num(x) -> str:
    return f"{x:g}" if isinstance(x, (float, np.floating)) else str(x)


def curves(df: pd.DataFrame, by: str | None, x: str, value: str, label: str = "{}") -> list[Curve]:
    """One Curve per value of `by` (None: one curve), replicates = the rows at each (by, x)."""
    groups = df.groupby(by) if by else [(None, df)]
    out = []
    for key, g in groups:
        cells = g.groupby(x)[value].apply(lambda s: s.dropna().to_numpy(float))
        cells = cells[cells.map(len) > 0]
        out.append(Curve(label.format(key), cells.index.to_numpy(float), list(cells.values),
                         meta=g.iloc[0].to_dict()))
    return out


def dropped(cs: list[Curve]) -> str:
    names = [d for c in cs for d in c.dropped]
    return ("; dropped: " + "; ".join(names)) if names else ""


def observed(c: Curve) -> list[np.ndarray]:
    """A curve's cells as one 'resample' (the data itself), the shape per-curve statistics take."""
    return [cell[None, :] for cell in c.cells]


def bootstrap_across(cs: list[Curve], combine: Callable, n_resamples: int = N_RESAMPLES,
                     seed: int = SEED) -> tuple[float, float, float]:
    """(point, low, high) of combine([resampled cells of each curve]): every cell of every curve is
    resampled on its own, and the statistic sees them split back into their curves."""
    bounds = np.cumsum([0] + [len(c.cells) for c in cs])

    def statistic(resampled):
        return combine([resampled[bounds[i]:bounds[i + 1]] for i in range(len(cs))])

    return stats.bootstrap_cells([cell for c in cs for cell in c.cells], statistic, n_resamples=n_resamples, seed=seed)


def bootstrap(cs: list[Curve], per_curve: Callable, worst: Callable = np.min,
              n_resamples: int = N_RESAMPLES, seed: int = SEED) -> tuple[float, float, float, list[float]]:
    """(point, low, high, per-curve points) of worst over curves c of per_curve(c, resampled cells of c)."""
    point, low, high = bootstrap_across(
        cs, lambda parts: worst(np.vstack([per_curve(c, r) for c, r in zip(cs, parts)]), axis=0), n_resamples, seed)
    each = [float(per_curve(c, observed(c))[0]) for c in cs]
    return point, low, high, each


def means(resampled) -> np.ndarray:
    """(B, points) replicate means of resampled cells."""
    return np.stack([r.mean(axis=1) for r in resampled], axis=1)


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num/den where den > 0; where den <= 0: +INF_CAP if num > 0 (growth only late), −INF_CAP otherwise
    (no growth at all)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / den, np.where(num > 0, INF_CAP, -INF_CAP))


# ----------------------------------------------------------------------------------- per-curve statistics
def end_slope_ratio(c: Curve, resampled) -> np.ndarray:
    """Curvature against linear growth: fit a parabola to the curve and divide its slope at the largest x
    by its slope at the smallest x. A line gives 1, diminishing returns (√x, log x) well below 1,
    faster-than-linear growth above 1. A curve that never rises gives −INF_CAP."""
    x = c.x / c.x.max()                                   # scaled for conditioning; the ratio is unchanged
    k = stats.polyfit_rows(x, means(resampled), 2)
    first, last = k[:, 1] + 2 * k[:, 2] * x.min(), k[:, 1] + 2 * k[:, 2] * x.max()
    return ratio(last, first)


def slope(c: Curve, resampled) -> np.ndarray:
    """OLS slope of the replicate means on x."""
    return stats.slope_rows(c.x, means(resampled))


def pooled_spearman(c: Curve, resampled) -> np.ndarray:
    """Spearman ρ between x and every replicate value (runs pooled, not their means)."""
    xs = np.concatenate([np.full(r.shape[1], xi) for xi, r in zip(c.x, resampled)])
    return stats.spearman_rows(xs, np.concatenate(resampled, axis=1))


def spearman_p(c: Curve, direction: int) -> float:
    """One-sided p-value of Spearman's test for a trend in `direction` (+1 grows, −1 falls), runs pooled."""
    xs = np.concatenate([np.full(len(v), xi) for xi, v in zip(c.x, c.cells)])
    rho, p = stats.spearman(xs, np.concatenate(c.cells))
    if np.isnan(rho):
        return float("nan")
    return p / 2 if np.sign(rho) == direction else 1 - p / 2


def quadratic_over_line(c: Curve, resampled) -> np.ndarray:
    """RSS of the best line a·x + b over the RSS of the best a·x² + b (least squares on the replicate
    means), per resample: above 1 the quadratic fits better, below 1 the line does (capped at INF_CAP)."""
    y = means(resampled).T                                                # (points, B)

    def rss(design: np.ndarray) -> np.ndarray:
        coef = np.linalg.lstsq(design, y, rcond=None)[0]
        return ((design @ coef - y) ** 2).sum(0)

    ones = np.ones_like(c.x)
    return np.minimum(ratio(rss(np.stack([c.x, ones], 1)), rss(np.stack([c.x ** 2, ones], 1))), INF_CAP)


def log_exponent(offset: float) -> Callable:
    """Exponent p of (mean − offset) ∝ x^p (log-log least squares); a resample at or below the offset is
    clipped to 1e-4 above it."""
    def per_curve(c: Curve, resampled):
        y = np.log(np.maximum(means(resampled) - offset, 1e-4))
        return stats.slope_rows(np.log(c.x), y)
    return per_curve
