"""The budget curve of an architecture (torch-free): T*(B) at each budget, whether it has converged,
and with enough budgets a fitted limit T∞.

Converged: T* at the largest budget lies inside the t interval of T* at the budget before, or within
5% of it; else it is *still rising* (T* at the largest budget is then a lower bound). It cannot fall:
a seed's passes carry over to larger budgets (memcap.capacity.search).
The limit: T*(B) = T∞ − a·B^(−c) (a saturating power law, a, c > 0) fitted by least squares (scipy's
curve_fit) to every seed's capacity at every budget; T∞'s t interval from the fit's covariance
(points − 3 degrees of freedom). With fewer than 4 budgets it is not fitted: three parameters would
pass through three points.
"""

from __future__ import annotations

import math

import numpy as np

CONVERGED, RISING, OPEN = "converged", "still rising", "open"
TOLERANCE = 0.05      # T*(last) within 5% of T*(before) counts as converged
MIN_FIT = 4           # budgets needed for T∞
FORM = "T*(B) = T∞ − a·B^−c"
NO_CURVE = "not run (no budget curve in this preset)"


def verdict(before: tuple[float, float, float], last: tuple[float, float, float]) -> str:
    """(mean, low, high) of T* at the budget before the largest and at the largest."""
    (m0, lo0, hi0), (m1, _, _) = before, last
    if math.isnan(m0) or math.isnan(m1):
        return OPEN
    inside = not (math.isnan(lo0) or math.isnan(hi0)) and lo0 <= m1 <= hi0
    if inside or abs(m1 - m0) <= TOLERANCE * m0:
        return CONVERGED
    return RISING


def saturating(B, t_inf, a, c):
    return t_inf - a * np.power(B, -c)


def limit(budgets: list[float], capacities: list[float], confidence: float = 0.95) -> dict:
    """T∞ with its t interval from (budget, one seed's capacity) points; NaN with fewer than MIN_FIT
    budgets or a fit that does not converge."""
    from scipy import optimize, stats   # here, not at import: Snakemake imports the capacity modules

    nan = {"capacity_limit": math.nan, "capacity_limit_low": math.nan, "capacity_limit_high": math.nan}
    B, T = np.asarray(budgets, float), np.asarray(capacities, float)
    ok = np.isfinite(T)
    B, T = B[ok], T[ok]
    if len(set(B)) < MIN_FIT or len(T) <= 3:
        return nan
    try:
        top = T.max()
        (t_inf, _, _), cov, *_ = optimize.curve_fit(saturating, B, T, p0=(1.2 * top, top - T.min() + 1, 1.0),
                                                    bounds=([0, 0, 0.01], [np.inf, np.inf, 10]),
                                                    maxfev=20000, full_output=True)
    except (RuntimeError, ValueError):
        return nan
    half = stats.t.ppf(0.5 + confidence / 2, len(T) - 3) * math.sqrt(max(cov[0, 0], 0.0))
    if not math.isfinite(half):
        return nan
    return {"capacity_limit": float(t_inf), "capacity_limit_low": float(t_inf - half),
            "capacity_limit_high": float(t_inf + half)}
