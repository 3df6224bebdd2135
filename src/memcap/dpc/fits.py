"""The original's regressions (`utils.reg_lin` and the EXP_*.py plots; docs/method.md, "DPC: Experiments 1-6").

All are ordinary least squares of y on one transformed regressor plus an intercept
(memcap.stats.linear_fit): linear y = a·x + b, "quadratic" y = a·x² + b and "cubic" y = a·x³ + b
(no lower-order terms). "Linear before saturation" walks the points in increasing x and stops at the
FIRST point with y > 0.95, which is included; if none passes 0.95 all points are used. The drawn line
is min(1, ax+b).
"""

from __future__ import annotations

import numpy as np

from memcap import stats


def power_fit(x, y, power: int = 1) -> tuple[float, float]:
    """OLS of y = a·x^power + b -> (a, b)."""
    fit = stats.linear_fit(np.asarray(x, dtype=float) ** power, y)
    return fit["slope"], fit["intercept"]


SATURATION = 0.95   # the original's threshold: fits stop at the first point above it


def saturation_cut(x, y, threshold: float = SATURATION) -> int:
    """Number of points (in increasing x) up to and including the first with y > threshold."""
    order = np.argsort(np.asarray(x), kind="stable")
    above = np.nonzero(np.asarray(y, dtype=float)[order] > threshold)[0]
    return int(above[0]) + 1 if len(above) else len(order)


def linear_before_saturation(x, y, threshold: float = SATURATION) -> tuple[float, float, int]:
    """(a, b, points used) of the line fitted up to the first point above the threshold."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    order = np.argsort(x, kind="stable")
    k = saturation_cut(x, y, threshold)
    if k < 2:                 # one point cannot fix a line; the original would fail here too
        return float("nan"), float("nan"), k
    a, b = power_fit(x[order][:k], y[order][:k])
    return a, b, k


def two_piece_fit(x, y, split: float) -> tuple[tuple[float, float], tuple[float, float]]:
    """Exp 3: one line on x <= split, one on x >= split (the split point belongs to both)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    lo, hi = x <= split, x >= split
    nan = (float("nan"), float("nan"))
    return (power_fit(x[lo], y[lo]) if lo.sum() >= 2 else nan,
            power_fit(x[hi], y[hi]) if hi.sum() >= 2 else nan)
