"""Capacity-search claims: trained capacity against both papers' counts."""

from __future__ import annotations

import numpy as np
import pandas as pd

from memcap.report.claims.common import _rows
from memcap.report.claims.registry import claim
from memcap.report.verdicts import PROPERTY, Outcome, Region, outcome


def _capacity(c: pd.DataFrame, bound: str) -> Outcome:
    """The search brackets each capacity in [low, high): it meets the bound for sure when low >= bound,
    misses it for sure when high <= bound, unless the seeds that failed at high were still lowering their
    loss when training stopped (the budget, not the architecture, may be why: the search says nothing
    then). statistic = fraction with low >= bound, interval = [sure, possible] fraction."""
    sure = c.capacity_low >= c[bound]
    high = c.capacity_high.astype(float).fillna(np.inf)
    falling = (c["miss_loss_falling"].fillna(False).astype(bool) if "miss_loss_falling" in c
               else pd.Series(False, index=c.index))
    possible = (high > c[bound]) | falling
    n = len(c)
    return outcome(sure.mean(), sure.sum() / n, possible.sum() / n, Region(1, 1),
                   f"{int(sure.sum())}/{n} architectures at or above the bound" +
                   "".join(f"; {_miss(r, bound)}" for r in c[~sure].itertuples()))


def _miss(r, bound: str) -> str:
    """One architecture below the bound (or bracketing it), and whether the theorem or the budget is why."""
    text = f"H={r.heads} d_h={r.head_dim}: [{r.capacity_low}, {r.capacity_high}) vs {getattr(r, bound)}"
    if pd.isna(getattr(r, "miss_loss_falling", None)):
        return text
    why = ("loss still falling at the last step: the budget, not the theorem" if r.miss_loss_falling else
           "loss had stopped falling: not the step budget")
    return (f"{text} (at T={r.capacity_high} min accuracy {r.miss_min_acc:.2f}, best/last step "
            f"{r.miss_best_steps}: {why})")


@claim("capacity_above_mlt_bound", PROPERTY, "MLT", "Theorem 1 (capacity by search)",
       "Trained capacity (largest T memorized by every seed) is at least H(min(n, d_h) − 1) + 1",
       "every searched architecture's capacity bracket [low, high) lies at or above the MLT bound; a bracket "
       "containing the bound is inconclusive (a finer search would decide)", Region(1, 1), ["capacity"],
       "T = H(min(n, d_h) − 1) + 1", "MLT Theorem 1")
def capacity_mlt(t):
    return _capacity(_rows(t["capacity"], "capacity"), "mlt_bound")


@claim("capacity_vs_dpc_bound", PROPERTY, "DPC", "Corollary 1 (capacity by search)",
       "Trained capacity is at least H·d_h + d (DPC's count of memorized associations)",
       "every searched architecture's capacity bracket [low, high) lies at or above H·d_h + d; a bracket "
       "containing it is inconclusive", Region(1, 1), ["capacity"], "H·d_h + d associations", "DPC Corollary 1")
def capacity_dpc(t):
    return _capacity(_rows(t["capacity"], "capacity"), "dpc_bound")


