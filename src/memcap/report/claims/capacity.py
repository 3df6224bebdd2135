"""Capacity-search claims: the papers' counts and scaling claims judged on capacity itself (T*, the
largest T each seed memorizes) instead of on accuracy at fixed T, each on the rows of the setting its
theorem speaks for (memcap.capacity.settings): MLT's bound and laws on the scalar-output rows, DPC's
count on the association rows; the classification rows' laws are reported as measured findings. A row
whose budget check passed has a lower bound for T*: it passes a bound it is above and never misses one;
the laws leave it out and need every seed's bracket closed (memcap.capacity.aggregate.judged); the
detail names what was left out."""

from __future__ import annotations

import pandas as pd

from memcap.capacity.aggregate import budget_limited, is_plain, judged, setting_of
from memcap.report.claims.common import _rows
from memcap.report.claims.registry import claim
from memcap.report.verdicts import PAPER_CLAIM, PROPERTY, Outcome, Region, Skip, outcome

# α of T* ∝ H^α: a line (α = 1) or faster is accepted; the concave alternative (H^0.75 or slower, √H
# at 0.5) is rejected once α's interval lies below 0.9.
LINEAR_IN_H = Region(0.9, float("inf"))
# T*(d_h = 2n) / T*(d_h = n): no gain past n accepted up to +10%; the monotone alternative (capacity
# growing with d_h as below n, H(d_h − 1) + 1) gives ~2.
NO_GAIN = Region(0.0, 1.1)


SCALAR = "mlt/scalar"
RUN = "run `snakemake --cores 2 --configfile <a file with scale: {capacity: paper_settings}> capacity`"


def _setting_rows(t, setting: str) -> pd.DataFrame:
    """The capacity rows of one setting (a prefix: 'dpc/' is every DPC row); Skip when there are none."""
    c = _rows(t["capacity"], "capacity")
    c = c[setting_of(c).str.startswith(setting)]
    if c.empty:
        raise Skip(f"no {setting} rows yet: {RUN}")
    return c


def _finding(t, name: str) -> str:
    """The classification rows' law, stated as what it is: a measurement beyond both theorems."""
    laws = t.get("capacity_laws")
    if laws is None or "setting" not in laws:
        laws = None if laws is None else laws.assign(setting="mlt/classification C=100")
    if laws is None:
        return ""
    r = laws[laws.setting.str.startswith("mlt/classification") & laws.setting.map(is_plain) & (laws.law == name)
             & laws.statistic.notna()]
    if r.empty:
        return ""
    r = r.iloc[0]
    if name == "alpha_heads":
        shape = "superlinear" if r.ci_low > 1 else "sublinear" if r.ci_high < 1 else "linear within its interval"
        what = f"{shape} in H: α = {r.statistic:.2f} [{r.ci_low:.2f}, {r.ci_high:.2f}], against MLT's linear lower bound"
    else:
        what = f"T*(d_h = 2n) / T*(d_h = n) = {r.statistic:.2f} [{r.ci_low:.2f}, {r.ci_high:.2f}]"
    return f"; {r.setting} (beyond both theorems, a measured finding): {what}"


def _not_judged(c: pd.DataFrame) -> str:
    """What a law leaves out: the rows not closed or budget-limited, and why."""
    left = c[~c.index.isin(judged(c).index)]
    return "".join(f"; H={r.heads} d_h={r.head_dim} not judged ("
                   + ("budget-limited: passes at 2x the steps" if r.budget_limited else r.status) + ")"
                   for r in left.itertuples())


def _above(t, bound: str) -> Outcome:
    """Each seed brackets its capacity in [T_pass, T_fail) (a bracket the search left open, or one below
    t_min, still bounds it): an architecture meets the bound for sure when every seed's T_pass >= bound,
    misses it for sure when every seed's T_fail <= bound. A budget-limited row's T_pass is a lower bound
    of what more steps memorize: above the bound it is a sure pass, below it never a sure miss.
    statistic = fraction sure, interval = [sure, possible] fraction."""
    c = _setting_rows(t, SCALAR if bound == "mlt_bound" else "dpc/")
    limited = budget_limited(c)
    sure = c.capacity_min >= c[bound]
    missed = ~limited & (c.seed_high.map(lambda hs: max(hs) if all(h is not None and not pd.isna(h) for h in hs)
                                         else float("inf")) <= c[bound])
    n = len(c)
    text = f"{int(sure.sum())}/{n} architectures at or above the bound (every seed's T_pass)"
    if limited.any():
        text += f", {int((sure & limited).sum())} of them budget-limited (T_pass a lower bound)"
    text += "".join(f"; H={r.heads} d_h={r.head_dim}: T*_min {r.capacity_min:,} vs {getattr(r, bound):,}"
                    + (" (budget-limited: more steps may pass)" if lim else "")
                    for r, lim in zip(c[~sure].itertuples(), limited[~sure]))
    text = f"{setting_of(c).iloc[0]}: " + text
    if bound == "dpc_bound":   # Corollary 1's count against T*: the ratio and its trend
        ratio = c.capacity / c[bound]
        text += "; T*/(H·d_h + d) (≥: budget-limited): " + ", ".join(
            f"d={r.input_dim} H={r.heads} d_h={r.head_dim}: {'≥' if lim else ''}{q:.1f}"
            for r, q, lim in zip(c.itertuples(), ratio, limited) if not pd.isna(q))
    return outcome(sure.mean(), sure.sum() / n, 1 - missed.sum() / n, Region(1, 1), text)


def _law(t, name: str) -> pd.Series:
    """A law of the scalar rows (Theorem 1's setting); the classification rows' law follows as a finding."""
    finding = _finding(t, name)
    try:
        c = _setting_rows(t, SCALAR)
    except Skip as why:
        raise Skip(f"{why}{finding}") from None
    laws = _rows(t["capacity_laws"], "capacity laws")
    laws = laws[laws.setting == SCALAR].set_index("law") if "setting" in laws else laws.iloc[:0].set_index("law")
    if name not in laws.index or pd.isna(laws.loc[name, "statistic"]):
        raise Skip(f"{name}: too few judged {SCALAR} architectures ({laws.loc[name, 'rows'] if name in laws.index else 'none'})"
                   + _not_judged(c) + finding)
    return laws.loc[name], finding


@claim("capacity_above_mlt_bound", PROPERTY, "MLT", "Theorem 1 (capacity by search)",
       "Trained capacity is at least H(min(n, d_h) − 1) + 1",
       "every architecture's seeds all memorize the MLT bound (T_pass >= bound); one whose seeds all fail at or "
       "below it is a miss; otherwise inconclusive; a budget-limited row (T* a lower bound) passes only "
       "above the bound and is never a miss", Region(1, 1), ["capacity"],
       "T = H(min(n, d_h) − 1) + 1", "MLT Theorem 1")
def capacity_mlt(t):
    return _above(t, "mlt_bound")


@claim("capacity_vs_dpc_bound", PROPERTY, "DPC", "Corollary 1 (capacity by search)",
       "Trained capacity is at least H·d_h + d (DPC's count of memorized associations)",
       "every architecture's seeds all memorize H·d_h + d (T_pass >= count); one whose seeds all fail at or "
       "below it is a miss; otherwise inconclusive; a budget-limited row (T* a lower bound) passes only above the "
       "count and is never a miss", Region(1, 1), ["capacity"], "H·d_h + d associations",
       "DPC Corollary 1")
def capacity_dpc(t):
    return _above(t, "dpc_bound")


@claim("capacity_linear_in_heads", PAPER_CLAIM, "MLT", "Theorem 1, Fig 2a (on capacity)",
       "Capacity grows linearly in H (T* ∝ H·min(n, d_h))",
       "α of T* ∝ H^α on the H grid (least squares of log T* on log H over every seed's capacity, t interval): "
       "linear or faster accepted (α >= 0.9); the concave alternative (α <= 0.75, e.g. √H) rejected",
       LINEAR_IN_H, ["capacity", "capacity_laws"], "Ω(H·min(n, d_h)); Fig 2a: linear in H", "MLT Theorem 1, §5.1")
def capacity_linear_heads(t):
    law, finding = _law(t, "alpha_heads")
    return outcome(law.statistic, law.ci_low, law.ci_high, LINEAR_IN_H,
                   f"{SCALAR}: α = {law.statistic:.3f} over {int(law.points)} seed capacities ({law.rows}){finding}")


@claim("capacity_no_gain_past_n", PAPER_CLAIM, "MLT", "§5.2, Fig 2c (on capacity)",
       "Head size past the context size n adds no capacity",
       "T*(d_h = 2n) / T*(d_h = n) at the d_h grid's H (bootstrap over seeds): no gain accepted (ratio <= 1.1); "
       "the monotone alternative (capacity growing with d_h as below n: ~2) rejected",
       NO_GAIN, ["capacity", "capacity_laws"], "no benefit beyond d_h = n", "MLT §5.2")
def capacity_past_n(t):
    law, finding = _law(t, "past_n_ratio")
    return outcome(law.statistic, law.ci_low, law.ci_high, NO_GAIN, f"{law.meaning}: {law.statistic:.3f}{finding}")
