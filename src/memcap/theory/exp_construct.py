"""Experiment (a): CONSTRUCT over the grid of (d, n, d_h, H, context, seed).

At each grid point T = H(r−1)+1 examples are drawn with the MLT spine's generator; the construction
must reach rank(Z) = T and fit every label exactly through MLTAttention's own forward pass: "exactly"
up to the error float64 rounding explains for that case (construct.rounding_bound). A point
where it cannot gives a 'failed' row that says why, never a missing row.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from tqdm import tqdm

from memcap.tasks.mlt_data import draw_one
from memcap.theory.construct import AssumptionError, ConstructionError, capacity, exact, rounding_bound
from memcap.theory.grid import construct_cases
from memcap.theory.mlt_weights import construct_mlt


def one_case(case: dict, c_rule: str, rtol: float) -> dict:
    """One grid point -> one row (rank, cond, c per head, residuals, time)."""
    d, n, dh, H = case["input_dim"], case["context_size"], case["head_dim"], case["heads"]
    T = capacity(H, n, dh)
    row = {**case, "r": min(n, dh), "bound": T, "dataset_size": T, "c_rule": c_rule}
    q, c, y = draw_one(case["seed"], T, n, d, case["context"], "regression")
    start = time.perf_counter()
    try:
        con, _, model_err = construct_mlt(q, c, y, H, dh, seed=case["seed"], c_rule=c_rule, rtol=rtol)
    except (AssumptionError, ConstructionError) as err:
        return {**row, "status": "failed", "reason": f"{type(err).__name__}: {err}", "rank": -1,
                "cond": np.nan, "residual": np.nan, "model_residual": np.nan, "error_bound": np.nan, "c_max": np.nan,
                "c_per_head": "", "alpha_draws": 0, "time_s": time.perf_counter() - start}
    scales = con.scales[1:con.heads_used]
    bound = rounding_bound(T, con.cond, y)
    ok = exact(con.rank, T, max(con.residual, model_err), bound)
    return {**row, "status": "ok" if ok else "failed",
            "reason": "" if ok else (f"rank {con.rank}/{T}, residual {con.residual:.1e}, model {model_err:.1e} "
                                     f"(float64 bound {bound:.1e})"),
            "rank": con.rank, "cond": con.cond, "residual": con.residual, "model_residual": model_err,
            "error_bound": bound,
            "c_max": float(scales.max()) if scales.size else np.nan,
            "c_per_head": " ".join(f"{c:g}" for c in scales), "alpha_draws": con.alpha_draws,
            "time_s": time.perf_counter() - start}


def run(preset: dict, progress: bool = True) -> pd.DataFrame:
    """The construct table: one row per grid point of the preset."""
    cases = construct_cases(preset)
    rows = [one_case(case, preset["construct"]["c_rule"], preset["rank_rtol"])
            for case in tqdm(cases, desc="construct", disable=not progress, mininterval=10)]
    return pd.DataFrame(rows)
