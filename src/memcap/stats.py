"""Fits and tests on scipy, shared by every family's figures and by the scorecard."""

from __future__ import annotations

import numpy as np
from scipy import stats


def linear_fit(x, y) -> dict:
    """Ordinary least squares y = intercept + slope·x (scipy.stats.linregress), with R² (NaN below 3
    points, where a line always fits) and the slope's p-value and standard error."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) < 2 or np.ptp(x) == 0:
        return {"slope": np.nan, "intercept": np.nan, "r2": np.nan, "n_points": len(x), "p_value": np.nan,
                "stderr": np.nan}
    fit = stats.linregress(x, y)
    r2 = float(fit.rvalue ** 2) if len(x) >= 3 and np.ptp(y) > 0 else np.nan
    return {"slope": float(fit.slope), "intercept": float(fit.intercept), "r2": r2, "n_points": len(x),
            "p_value": float(fit.pvalue), "stderr": float(fit.stderr)}


def before_saturation(x, y, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """The points (sorted by x) whose y stays below `threshold` (MLT Fig 2a's non-saturated part)."""
    order = np.argsort(np.asarray(x, float))
    x, y = np.asarray(x, float)[order], np.asarray(y, float)[order]
    keep = y < threshold
    return x[keep], y[keep]


def wilson_interval(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (scipy's binomtest); (nan, nan) with no trials."""
    if trials <= 0:
        return float("nan"), float("nan")
    ci = stats.binomtest(int(successes), int(trials)).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def spearman(x, y) -> tuple[float, float]:
    """Spearman's rank correlation and its two-sided p-value (NaN below 3 points)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan"), float("nan")
    res = stats.spearmanr(x, y)
    return float(res.statistic), float(res.pvalue)
