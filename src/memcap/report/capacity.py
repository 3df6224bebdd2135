"""Capacity by search: the largest dataset size T that every seed memorizes to a threshold.

For one MLT architecture (H heads, head size d_h, context size n, width d) the trained capacity is
bracketed: T_low memorized by all seeds, T_high not. Starting at `start`, T doubles until a failure
(or halves until a success), then bisects until T_high − T_low <= max(1, rel_tol·T_low) or the
evaluation budget runs out. Each evaluation trains all seeds together through the MLT family's own
grid-point runner (`memcap.mlt_sweeps.run_grid_point`), so model, data and trainer are the family's.
Monotonicity in T is assumed (a larger random dataset is not easier), as every bracketing search does.
"""

from __future__ import annotations

import copy
import logging
from typing import Callable

import pandas as pd

from memcap import config, mlt_sweeps

log = logging.getLogger(__name__)
SWEEP = "capacity_search"      # the one sweep injected into a copy of params for the runner


def mlt_bound(heads: int, context_size: int, head_dim: int) -> int:
    """MLT Theorem 1: H(min(n, d_h) − 1) + 1 examples."""
    return heads * (min(context_size, head_dim) - 1) + 1


def dpc_bound(heads: int, head_dim: int, input_dim: int) -> int:
    """DPC Corollary 1: H·d_h + d associations."""
    return heads * head_dim + input_dim


def search_params(params: dict, search: dict, heads: int, head_dim: int) -> dict:
    """A copy of params whose MLT preset holds one sweep: this architecture with the search's training."""
    p = copy.deepcopy(params)
    mlt = config.preset(p, mlt_sweeps.FAMILY)
    mlt["seeds"] = list(search["seeds"])
    mlt["defaults"] = {**mlt["defaults"], **search["training"], "input_dim": search["input_dim"],
                       "context_size": search["context_size"], "heads": heads, "head_dim": head_dim,
                       "num_classes": search["num_classes"], "analysis": False}
    mlt["sweeps"] = {SWEEP: {"task": "classification", "context": search["context"], "vary": "heads",
                             "values": [heads], "dataset_sizes": [1]}}
    return p


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


def search_architecture(params: dict, heads: int, head_dim: int, progress: bool = False) -> pd.DataFrame:
    """One row: the capacity bracket of (H, d_h) at the report preset's n, d, C, seeds and threshold."""
    s = config.preset(params, "report")["capacity"]
    p = search_params(params, s, heads, head_dim)
    runs = []

    def passes(T: int) -> bool:
        df, _, _ = mlt_sweeps.run_grid_point(p, SWEEP, heads, T, progress=progress)
        runs.append(df)
        ok = bool((df.mem_acc >= s["threshold"]).all())           # every seed must pass
        log.info("H=%d d_h=%d T=%d: accuracies %s -> %s", heads, head_dim, T, df.mem_acc.round(4).tolist(),
                 "pass" if ok else "fail")
        return ok

    b = bracket(passes, s["start"], s["t_min"], s["t_max"], s["rel_tol"], s["max_evals"])
    all_runs = pd.concat(runs, ignore_index=True)
    n, d = s["context_size"], s["input_dim"]
    return pd.DataFrame([{
        "family": "report", "scale": params["scale"], "heads": heads, "head_dim": head_dim, "context_size": n,
        "input_dim": d, "num_classes": s["num_classes"], "context": s["context"], "threshold": s["threshold"],
        "seeds": len(s["seeds"]), **b, "mlt_bound": mlt_bound(heads, n, head_dim),
        "dpc_bound": dpc_bound(heads, head_dim, d), "param_count": int(all_runs.param_count.iloc[0]),
        "train_seconds": float(all_runs.groupby("dataset_size").wall_time_s.first().sum()),
    }])


def architectures(params: dict) -> list[tuple[int, int]]:
    """(H, d_h) points: the H grid at the fixed d_h, and the d_h grid at the fixed H (deduplicated)."""
    s = config.preset(params, "report")["capacity"]
    points = [(H, s["head_dim"]) for H in s["heads_grid"]] + [(s["heads"], dh) for dh in s["head_dim_grid"]]
    return list(dict.fromkeys(points))
