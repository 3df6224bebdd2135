"""Capacity by search: the largest dataset size T that every seed of one MLT architecture memorizes.

For one architecture (H heads, head size d_h, context size n, width d) the trained capacity is
bracketed: T_low memorized by all seeds, T_high not. Starting at `start`, T doubles until a failure
(or halves until a success), then bisects until T_high − T_low <= max(1, rel_tol·T_low) or the
evaluation budget runs out. Each evaluation trains all seeds together through the MLT family's point
trainer (`memcap.mlt_synthetic.train.train_point`), so model, data and trainer are the family's.
Monotonicity in T is assumed (a larger random dataset is not easier), as every bracketing search does.
"""

from __future__ import annotations

import logging
from typing import Callable

import pandas as pd

from memcap.capacity.grid import FAMILY, mlt_settings
from memcap.mlt_synthetic.train import train_point

log = logging.getLogger(__name__)


def bracket(passes: Callable[[int], bool], start: int, t_min: int, t_max: int, rel_tol: float,
            max_evals: int) -> dict:
    """Bracketing search over T for a monotone pass/fail predicate; returns the bracket and the trace."""
    tried: dict[int, bool] = {}

    def test(T: int) -> bool:
        if T not in tried:
            tried[T] = passes(T)
        return tried[T]

    low, high, T = None, None, min(max(start, t_min), t_max)
    while len(tried) < max_evals:                                  # expand until one pass and one fail
        if test(T):
            low = T
            if high is not None or T >= t_max:
                break
            T = min(2 * T, t_max)
        else:
            high = T
            if low is not None or T <= t_min:
                break
            T = max(T // 2, t_min)
    while low is not None and high is not None and high - low > max(1, rel_tol * low) and len(tried) < max_evals:
        mid = (low + high) // 2                                     # bisect inside the bracket
        if test(mid):
            low = mid
        else:
            high = mid
    status = ("bracketed" if low is not None and high is not None
              else "above t_max" if low is not None else "below t_min")
    return {"capacity_low": low if low is not None else 0, "capacity_high": high, "status": status,
            "evaluations": len(tried), "trace": " ".join(f"{T}:{'pass' if ok else 'fail'}" for T, ok in tried.items())}


def first_miss(miss: pd.DataFrame) -> dict:
    """What the seeds that failed at T_high (the smallest T not memorized) say about why: their accuracy, and
    whether their loss was still falling when training stopped (the lowest loss at the last evaluation,
    best_step = steps_run): then a longer budget might memorize T_high, and a miss of a bound there says
    nothing against the theorem. Empty (NaN) when nothing failed (capacity above t_max)."""
    if miss.empty:
        return {"miss_min_acc": float("nan"), "miss_loss_falling": None, "miss_best_steps": ""}
    return {"miss_min_acc": float(miss.mem_acc.min()),
            "miss_loss_falling": bool((miss.best_step >= miss.steps_run).any()),
            "miss_best_steps": ", ".join(f"{int(b)}/{int(s)}" for b, s in zip(miss.best_step, miss.steps_run))}


def search_architecture(p: dict, heads: int, head_dim: int, scale: str, device="auto",
                        progress: bool = False) -> pd.DataFrame:
    """One row: the capacity bracket of (H, d_h) at the preset's n, d, C, seeds and threshold (the
    bounds are added by memcap.capacity.aggregate)."""
    settings = mlt_settings(p, heads, head_dim)
    runs = []

    def passes(T: int) -> bool:
        df, _ = train_point(settings, heads, T, device=device, progress=progress,
                               desc=f"capacity H={heads} d_h={head_dim} T={T}")
        runs.append(df)
        ok = bool((df.mem_acc >= p["threshold"]).all())           # every seed must pass
        log.info("H=%d d_h=%d T=%d: accuracies %s -> %s", heads, head_dim, T, df.mem_acc.round(4).tolist(),
                 "pass" if ok else "fail")
        return ok

    b = bracket(passes, p["start"], p["t_min"], p["t_max"], p["rel_tol"], p["max_evals"])
    all_runs = pd.concat(runs, ignore_index=True)
    miss = all_runs[(all_runs.dataset_size == b["capacity_high"]) & (all_runs.mem_acc < p["threshold"])]
    return pd.DataFrame([{
        "family": FAMILY, "scale": scale, "heads": heads, "head_dim": head_dim, "context_size": p["context_size"],
        "input_dim": p["input_dim"], "num_classes": p["num_classes"], "context": p["context"],
        "threshold": p["threshold"], "seeds": len(p["seeds"]), **b,
        **first_miss(miss),
        "param_count": int(all_runs.param_count.iloc[0]),
        "train_seconds": float(all_runs.groupby("dataset_size").wall_time_s.first().sum()),
    }])
