"""Capacity-search claims: the papers' counts and scaling claims judged on capacity itself (T*, the
largest T each seed memorizes) instead of on accuracy at fixed T. A row whose budget check passed (T*
is then a lower bound) is not judged; the laws also need every seed's bracket closed
(memcap.capacity.aggregate.judged); the detail names what was left out."""

from __future__ import annotations

import pandas as pd

from memcap.capacity.aggregate import budget_limited, judged
from memcap.report.claims.common import _rows
from memcap.report.claims.registry import claim
from memcap.report.verdicts import PAPER_CLAIM, PROPERTY, Outcome, Region, Skip, outcome

# α of T* ∝ H^α: a line (α = 1) or faster is accepted; the concave alternative (H^0.75 or slower, √H
# at 0.5) is rejected once α's interval lies below 0.9.
LINEAR_IN_H = Region(0.9, float("inf"))
# T*(d_h = 2n) / T*(d_h = n): no gain past n accepted up to +10%; the monotone alternative (capacity
# growing with d_h as below n, H(d_h − 1) + 1) gives ~2.
NO_GAIN = Region(0.0, 1.1)


def _not_judged(c: pd.DataFrame, ok: pd.DataFrame | None = None) -> str:
    left = c[~c.index.isin((judged(c) if ok is None else ok).index)]
    return "".join(f"; H={r.heads} d_h={r.head_dim} not judged ("
                   + ("budget-limited: passes at 2x the steps" if r.budget_limited else r.status) + ")"
                   for r in left.itertuples())


def _above(t, bound: str) -> Outcome:
    """Each seed brackets its capacity in [T_pass, T_fail) (a bracket the search left open, or one below
    t_min, still bounds it): an architecture meets the bound for sure when every seed's T_pass >= bound,
    misses it for sure when every seed's T_fail <= bound. Budget-limited rows are not judged.
    statistic = fraction sure, interval = [sure, possible] fraction."""
    c = _rows(t["capacity"], "capacity")
    ok = c[~budget_limited(c)]
    if ok.empty:
        raise Skip("no architecture to judge" + _not_judged(c, ok))
    sure = ok.capacity_min >= ok[bound]
    missed = ok.seed_high.map(lambda hs: max(hs) if all(h is not None and not pd.isna(h) for h in hs)
                              else float("inf")) <= ok[bound]
    n = len(ok)
    text = f"{int(sure.sum())}/{n} architectures at or above the bound (every seed's T_pass)"
    text += "".join(f"; H={r.heads} d_h={r.head_dim}: T*_min {r.capacity_min:,} vs {getattr(r, bound):,}"
                    for r in ok[~sure].itertuples())
    if bound == "mlt_bound" and "num_classes" in ok and (ok.num_classes > 1).any():
        # MLT Theorem 1 needs d_v >= d_out; a head's value is one number (d_v = 1)
        text += (f"; C = {int(ok.num_classes.max())} classes: d_out > d_v = 1, outside Theorem 1's setting "
                 "(few heads span too few logit directions)")
    return outcome(sure.mean(), sure.sum() / n, 1 - missed.sum() / n, Region(1, 1), text + _not_judged(c, ok))


def _law(t, name: str) -> pd.Series:
    laws = _rows(t["capacity_laws"], "capacity laws").set_index("law")
    if name not in laws.index or pd.isna(laws.loc[name, "statistic"]):
        c = _rows(t["capacity"], "capacity")
        raise Skip(f"{name}: too few judged architectures ({laws.loc[name, 'rows'] if name in laws.index else 'none'})"
                   + _not_judged(c))
    return laws.loc[name]


@claim("capacity_above_mlt_bound", PROPERTY, "MLT", "Theorem 1 (capacity by search)",
       "Trained capacity is at least H(min(n, d_h) − 1) + 1",
       "every architecture's seeds all memorize the MLT bound (T_pass >= bound); one whose seeds all fail at or "
       "below it is a miss; otherwise inconclusive; a budget-limited row is not judged", Region(1, 1), ["capacity"],
       "T = H(min(n, d_h) − 1) + 1", "MLT Theorem 1")
def capacity_mlt(t):
    return _above(t, "mlt_bound")


@claim("capacity_vs_dpc_bound", PROPERTY, "DPC", "Corollary 1 (capacity by search)",
       "Trained capacity is at least H·d_h + d (DPC's count of memorized associations)",
       "every architecture's seeds all memorize H·d_h + d (T_pass >= count); one whose seeds all fail at or "
       "below it is a miss; otherwise inconclusive; a budget-limited row is not judged", Region(1, 1), ["capacity"], "H·d_h + d associations",
       "DPC Corollary 1")
def capacity_dpc(t):
    return _above(t, "dpc_bound")


@claim("capacity_linear_in_heads", PAPER_CLAIM, "MLT", "Theorem 1, Fig 2a (on capacity)",
       "Capacity grows linearly in H (T* ∝ H·min(n, d_h))",
       "α of T* ∝ H^α on the H grid (least squares of log T* on log H over every seed's capacity, t interval): "
       "linear or faster accepted (α >= 0.9); the concave alternative (α <= 0.75, e.g. √H) rejected",
       LINEAR_IN_H, ["capacity", "capacity_laws"], "Ω(H·min(n, d_h)); Fig 2a: linear in H", "MLT Theorem 1, §5.1")
def capacity_linear_heads(t):
    law = _law(t, "alpha_heads")
    return outcome(law.statistic, law.ci_low, law.ci_high, LINEAR_IN_H,
                   f"α = {law.statistic:.3f} over {int(law.points)} seed capacities ({law.rows})")


@claim("capacity_no_gain_past_n", PAPER_CLAIM, "MLT", "§5.2, Fig 2c (on capacity)",
       "Head size past the context size n adds no capacity",
       "T*(d_h = 2n) / T*(d_h = n) at the d_h grid's H (bootstrap over seeds): no gain accepted (ratio <= 1.1); "
       "the monotone alternative (capacity growing with d_h as below n: ~2) rejected",
       NO_GAIN, ["capacity", "capacity_laws"], "no benefit beyond d_h = n", "MLT §5.2")
def capacity_past_n(t):
    law = _law(t, "past_n_ratio")
    return outcome(law.statistic, law.ci_low, law.ci_high, NO_GAIN, f"{law.meaning}: {law.statistic:.3f}")
