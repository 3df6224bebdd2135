"""Fits and tests on scipy, shared by every family's figures and by the scorecard."""

from __future__ import annotations

import numpy as np

from memcap.lazy_import import OnFirstUse

stats = OnFirstUse("scipy.stats")   # imported at the first fit (memcap.lazy_import)


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


# ------------------------------------------------------------------ resampling and row-wise (vectorised) fits
def bootstrap_cells(cells, statistic, n_resamples: int = 2000, confidence: float = 0.95,
                    seed: int = 0) -> tuple[float, float, float]:
    """Stratified percentile bootstrap: (point, low, high) of `statistic` over independent cells.

    `cells` is a list of 1-D arrays, the replicate values (seeds, repetitions) of each grid point. Each
    resample draws, within every cell, as many values as it holds, with replacement (cells are never
    mixed). `statistic(list of (B, k_i) arrays) -> (B,)` is called once on all resamples at once, and once
    on the data (B = 1) for the point estimate. The interval takes the lower/higher order statistic at
    each tail (no interpolation, so ±inf statistics stay usable); NaN resamples are ignored. A cell with
    one value contributes no spread. Deterministic for a given seed.
    """
    cells = [np.asarray(c, float).ravel() for c in cells]
    point = float(np.asarray(statistic([c[None, :] for c in cells]))[0])
    rng = np.random.default_rng(seed)
    draws = np.asarray(statistic([c[rng.integers(0, len(c), (n_resamples, len(c)))] for c in cells]), float)
    draws = draws[~np.isnan(draws)]
    if not len(draws):
        return point, float("nan"), float("nan")
    alpha = (1 - confidence) / 2
    return (point, float(np.quantile(draws, alpha, method="lower")),
            float(np.quantile(draws, 1 - alpha, method="higher")))


def slope_rows(x, Y) -> np.ndarray:
    """OLS slope of each row of Y (B, n) on x (n,)."""
    x = np.asarray(x, float)
    xc = x - x.mean()
    Y = np.atleast_2d(np.asarray(Y, float))
    return (Y - Y.mean(axis=1, keepdims=True)) @ xc / (xc @ xc)


def polyfit_rows(x, Y, degree: int) -> np.ndarray:
    """Least-squares polynomial coefficients (B, degree + 1), lowest power first, of each row of Y on x."""
    x = np.asarray(x, float)
    X = np.vander(x, degree + 1, increasing=True)
    return np.atleast_2d(np.asarray(Y, float)) @ np.linalg.pinv(X).T


def spearman_rows(x, Y) -> np.ndarray:
    """Spearman's ρ(x, row) for each row of Y (B, n) (average ranks for ties; NaN for a constant row)."""
    rx = stats.rankdata(np.asarray(x, float))
    ry = stats.rankdata(np.atleast_2d(np.asarray(Y, float)), axis=1)
    rx, ry = rx - rx.mean(), ry - ry.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return ry @ rx / np.sqrt((ry ** 2).sum(axis=1) * (rx @ rx))


def power_exponent(x, y, offset: float = 0.0) -> dict:
    """Exponent p of (y − offset) ∝ x^p by least squares on log-log axes (points with y > offset), with
    R² and the exponent's standard error; NaN below 2 usable points."""
    x, y = np.asarray(x, float), np.asarray(y, float) - offset
    keep = (x > 0) & (y > 0)
    fit = linear_fit(np.log(x[keep]), np.log(y[keep]))
    return {"exponent": fit["slope"], "r2": fit["r2"], "stderr": fit["stderr"], "n_points": int(keep.sum())}


def power_with_offset(x, y) -> float:
    """Exponent p of the least-squares fit y = a·x^p + b (scipy's curve_fit); NaN when it does not converge."""
    from scipy.optimize import curve_fit

    x, y = np.asarray(x, float), np.asarray(y, float)
    try:
        (a, p, b), _ = curve_fit(lambda x, a, p, b: a * x ** p + b, x, y,
                                 p0=(max(np.ptp(y), 1e-6) / max(x.max() ** 1.5, 1e-6), 1.5, y.min()), maxfev=20000)
    except (RuntimeError, ValueError):
        return float("nan")
    return float(p)
