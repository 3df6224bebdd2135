"""Least-squares fits used by the figures and the scorecard (shared by both papers' families)."""

from __future__ import annotations

import numpy as np


def linear_fit(x, y) -> dict:
    """Ordinary least squares y = intercept + slope·x, with R² (NaN when fewer than 3 points)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) < 2:
        return {"slope": np.nan, "intercept": np.nan, "r2": np.nan, "n_points": len(x)}
    slope, intercept = np.polyfit(x, y, 1)
    resid = y - (intercept + slope * x)
    ss_tot = float(((y - y.mean()) ** 2).sum())
    r2 = 1 - float((resid ** 2).sum()) / ss_tot if len(x) >= 3 and ss_tot > 0 else np.nan
    return {"slope": float(slope), "intercept": float(intercept), "r2": r2, "n_points": len(x)}


def before_saturation(x, y, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """The points (sorted by x) whose y stays below `threshold` (MLT Fig 2a's non-saturated part)."""
    order = np.argsort(np.asarray(x, float))
    x, y = np.asarray(x, float)[order], np.asarray(y, float)[order]
    keep = y < threshold
    return x[keep], y[keep]
