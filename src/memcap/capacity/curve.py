"""The limit of the budget curve (torch-free): T₅₀(B) = T∞ − c·B^(−β) fitted to T₅₀ at four budgets or
more, each weighted by its interval; T∞ with a 95% interval, or "no plateau in range".

The fit is weighted least squares on log T₅₀ (scipy's curve_fit, each point's standard error from its
profile interval, absolute_sigma), with T∞ = exp(θ) so that its interval, θ ± 1.96·se, is positive.
With fewer than MIN_FIT budgets it is not fitted: three parameters would pass through three points.
A limit more than PLATEAU_REACH times the largest T₅₀ measured, or a fit that does not converge, is
"no plateau in range": the curve has not bent enough to say where it ends.
"""

from __future__ import annotations

import math

import numpy as np

MIN_FIT = 4
PLATEAU_REACH = 4.0
FORM = "T₅₀(B) = T∞ − c·B^−β"
NO_PLATEAU = "no plateau in range"


def _model(B, theta, log_c, beta):
    return np.log(np.maximum(np.exp(theta) - np.exp(log_c) * np.power(B, -beta), 1e-12))


def limit(budgets: list[float], t50: list[float], lows: list[float], highs: list[float]) -> dict:
    """T∞ with its 95% interval from T₅₀ [low, high] at each budget; NaN with fewer than MIN_FIT
    budgets measured, and a note where the fit finds no plateau."""
    from scipy import optimize   # here, not at import: Snakemake imports the capacity modules

    nan = {"capacity_limit": math.nan, "capacity_limit_low": math.nan, "capacity_limit_high": math.nan,
           "capacity_limit_note": ""}
    B, T, lo, hi = (np.asarray(v, float) for v in (budgets, t50, lows, highs))
    ok = np.isfinite(T) & np.isfinite(lo) & np.isfinite(hi) & (lo > 0)
    if ok.sum() < MIN_FIT:
        return nan
    B, T, lo, hi = B[ok], T[ok], lo[ok], hi[ok]
    se = np.maximum((np.log(hi) - np.log(lo)) / (2 * 1.96), 1e-3)
    top = T.max()
    try:
        (theta, _, _), cov = optimize.curve_fit(_model, B, np.log(T), p0=(math.log(1.2 * top), math.log(top - T.min() + 1), 1.0),
                                                sigma=se, absolute_sigma=True, bounds=([-np.inf, -np.inf, 0.01], [np.inf, np.inf, 10]),
                                                maxfev=20000)
    except (RuntimeError, ValueError):
        return {**nan, "capacity_limit_note": NO_PLATEAU}
    half = 1.96 * math.sqrt(max(cov[0, 0], 0.0))
    if not math.isfinite(half) or math.exp(theta) > PLATEAU_REACH * top:
        return {**nan, "capacity_limit_note": NO_PLATEAU}
    return {"capacity_limit": math.exp(theta), "capacity_limit_low": math.exp(theta - half),
            "capacity_limit_high": math.exp(theta + half), "capacity_limit_note": ""}
