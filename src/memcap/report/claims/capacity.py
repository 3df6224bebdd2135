"""Capacity-search claims: the papers' counts and scaling claims judged on capacity itself (T₅₀, the
dataset size half the trained models memorize, with its 95% interval: memcap.capacity.transition)
instead of on accuracy at fixed T, each on the rows of the setting its theorem speaks for
(memcap.capacity.settings): MLT's bound and laws on the scalar-output rows, DPC's count on the
association rows; the classification rows' laws are reported as measured findings. A row where more
steps memorize more (its budget curve still rising, or its budget check passing) has a lower bound: it
passes a bound it is above and never misses one; the laws take it as a censored observation
(memcap.capacity.laws); the detail names every row a law leaves out and why."""

from __future__ import annotations

import math

import pandas as pd

from memcap.capacity.aggregate import is_plain, paper_task_first
from memcap.report.claims.common import _rows
from memcap.report.claims.registry import claim
from memcap.report.verdicts import PAPER_CLAIM, PROPERTY, Outcome, Region, Skip, outcome

# α of T₅₀ ∝ H^α on the H grid: MLT's Ω(H·min(n, d_h)) as stated, at least linear (α's interval >= 1).
LINEAR_IN_H = Region(1.0, float("inf"))
# T₅₀(d_h = 2n) / T₅₀(d_h = n): no gain past n accepted up to +10%; the monotone alternative (capacity
# growing with d_h as below n, H(d_h − 1) + 1) gives ~2.
NO_GAIN = Region(0.0, 1.1)


SCALAR = "mlt/scalar"
# The rows each theorem speaks for, by their setting columns (memcap.capacity.settings.columns)
THEOREM_ROWS = {SCALAR: {"model": "mlt", "readout": "scalar"}, "dpc/": {"model": "dpc"}}
RUN = "run `snakemake --cores 2 --configfile <a file with scale: {capacity: paper_settings}> capacity`"


def _setting_rows(t, setting: str) -> pd.DataFrame:
    """The capacity rows a theorem speaks for (THEOREM_ROWS: 'dpc/' is every DPC row); Skip when there are none."""
    c = _rows(t["capacity"], "capacity")
    for column, value in THEOREM_ROWS[setting].items():
        c = c[c[column].eq(value)]
    if c.empty:
        raise Skip(f"no {setting} rows yet: {RUN}")
    return c


def _finding(t, name: str) -> str:
    """The classification rows' law, stated as what it is: a measurement where neither theorem applies."""
    laws = t.get("capacity_laws")
    if laws is None or "setting" not in laws:
        return ""
    r = laws[laws.model.eq("mlt") & laws.readout.eq("classification") & is_plain(laws) & (laws.law == name)
             & laws.statistic.notna()]
    r = paper_task_first(r)
    if r.empty:
        return ""
    r = r.iloc[0]
    if name == "alpha_heads":
        shape = "superlinear" if r.ci_low > 1 else "sublinear" if r.ci_high < 1 else "linear within its interval"
        what = f"{shape} in H: α = {r.statistic:.2f} [{r.ci_low:.2f}, {r.ci_high:.2f}] ({r.rows})"
    else:
        what = f"T₅₀(d_h = 2n) / T₅₀(d_h = n) = {r.statistic:.2f} [{r.ci_low:.2f}, {r.ci_high:.2f}]"
    return f"; {r.setting} (neither theorem applies; a measured finding): {what}"


def _above(t, bound: str) -> Outcome:
    """An architecture meets the bound when T₅₀'s 95% interval lies at or above it, misses it when the
    interval lies below (a lower-bound row never misses: more steps memorize more), else undecided.
    statistic = fraction met, interval = [met, met or undecided] fraction."""
    c = _setting_rows(t, SCALAR if bound == "mlt_bound" else "dpc/")
    limited = c.lower_bound.fillna(False).astype(bool)
    # no T₅₀: every probe passed (every seed above its largest pass) or every probe failed (below its smallest fail)
    passed = c.no_fit.fillna("").str.startswith("every probe passed")
    failed = c.no_fit.fillna("").str.startswith("every probe failed")
    ends = lambda col, pick: c[col].map(lambda v: pick([x for x in v if x is not None and not pd.isna(x)] or [math.nan]))  # noqa: E731
    met = (c.capacity_ci_low >= c[bound]) | (passed & (ends("seed_low", min) >= c[bound]))
    missed = ~limited & ((c.capacity_ci_high < c[bound]) | (failed & (ends("seed_high", max) <= c[bound])))
    n = len(c)
    text = (f"{c.setting.iloc[0]}: {int(met.sum())}/{n} architectures with T₅₀'s 95% interval at or above "
            f"the bound, {int(missed.sum())} below it")
    text += "".join(f"; H={r.heads} d_h={r.head_dim}: T₅₀ {r.capacity:,.0f} [{r.capacity_ci_low:,.0f}, "
                    f"{r.capacity_ci_high:,.0f}] vs {getattr(r, bound):,}" + (" (a lower bound)" if lim else "")
                    for r, lim in zip(c[~met].itertuples(), limited[~met]) if not pd.isna(r.capacity))
    text += "".join(f"; H={r.heads} d_h={r.head_dim}: no T₅₀ ({r.no_fit or r.search_end})"
                    for r in c[c.capacity.isna()].itertuples())
    if bound == "dpc_bound":   # Corollary 1's count against T₅₀: the ratio and its trend
        text += "; T₅₀/(H·d_h + d) (≥: a lower bound): " + ", ".join(
            f"d={r.input_dim} H={r.heads} d_h={r.head_dim}: {'≥' if lim else ''}{r.capacity / getattr(r, bound):.1f}"
            for r, lim in zip(c.itertuples(), limited) if not pd.isna(r.capacity))
    return outcome(met.mean(), met.sum() / n, 1 - missed.sum() / n, Region(1, 1), text)


def _law(t, name: str) -> tuple[pd.Series, str]:
    """A law of the scalar rows (Theorem 1's setting); the classification rows' law follows as a finding."""
    finding = _finding(t, name)
    try:
        _setting_rows(t, SCALAR)
    except Skip as why:
        raise Skip(f"{why}{finding}") from None
    laws = _rows(t["capacity_laws"], "capacity laws")
    laws = laws[laws.model.eq("mlt") & laws.readout.eq("scalar") & is_plain(laws)].set_index("law")
    if name not in laws.index or pd.isna(laws.loc[name, "statistic"]):
        left = laws.loc[name, "excluded"] if name in laws.index else ""
        raise Skip(f"{name}: too few {SCALAR} architectures for a fit ({laws.loc[name, 'rows'] if name in laws.index else 'none'})"
                   + (f"; left out: {left}" if left else "") + finding)
    return laws.loc[name], finding


def _left_out(law: pd.Series) -> str:
    return f"; left out: {law.excluded}" if isinstance(law.get("excluded"), str) and law.excluded else ""


@claim("capacity_above_mlt_bound", PROPERTY, "MLT", "Theorem 1 (capacity by search)",
       "Trained capacity is at least H(min(n, d_h) − 1) + 1",
       "every architecture's T₅₀ (95% interval) at or above the MLT bound; one whose interval lies below it is "
       "a miss; otherwise inconclusive; a lower-bound row (more steps memorize more) is never a miss",
       Region(1, 1), ["capacity"],
       "T = H(min(n, d_h) − 1) + 1", "MLT Theorem 1")
def capacity_mlt(t):
    return _above(t, "mlt_bound")


@claim("capacity_vs_dpc_bound", PROPERTY, "DPC", "Corollary 1 (capacity by search)",
       "Trained capacity is at least H·d_h + d (DPC's count of memorized associations)",
       "every architecture's T₅₀ (95% interval) at or above H·d_h + d; one whose interval lies below it is a miss; "
       "otherwise inconclusive; a lower-bound row (more steps memorize more) is never a miss", Region(1, 1),
       ["capacity"], "H·d_h + d associations",
       "DPC Corollary 1")
def capacity_dpc(t):
    return _above(t, "dpc_bound")


@claim("capacity_linear_in_heads", PAPER_CLAIM, "MLT", "Theorem 1, Fig 2a (on capacity)",
       "Capacity grows at least linearly in H (T₅₀ ∝ H·min(n, d_h))",
       "α of T₅₀ ∝ H^α on the H grid (every row, lower bounds censored; profile-likelihood interval): at least "
       "linear accepted (α's interval >= 1); sublinear (α's interval below 1) rejected",
       LINEAR_IN_H, ["capacity", "capacity_laws"], "Ω(H·min(n, d_h)); Fig 2a: linear in H", "MLT Theorem 1, §5.1")
def capacity_linear_heads(t):
    law, finding = _law(t, "alpha_heads")
    return outcome(law.statistic, law.ci_low, law.ci_high, LINEAR_IN_H,
                   f"{SCALAR}: α = {law.statistic:.3f} [{law.ci_low:.3f}, {law.ci_high:.3f}] over {int(law.points)} "
                   f"architectures ({law.rows}){_left_out(law)}{finding}")


@claim("capacity_no_gain_past_n", PAPER_CLAIM, "MLT", "§5.2, Fig 2c (on capacity)",
       "Head size past the context size n adds no capacity",
       "T₅₀(d_h = 2n) / T₅₀(d_h = n) at the d_h grid's H (each T₅₀'s interval, log scale): no gain accepted (ratio <= 1.1); "
       "the monotone alternative (capacity growing with d_h as below n: ~2) rejected",
       NO_GAIN, ["capacity", "capacity_laws"], "no benefit beyond d_h = n", "MLT §5.2")
def capacity_past_n(t):
    law, finding = _law(t, "past_n_ratio")
    if law.censored:
        raise Skip(f"{law.meaning}: {law.statistic:.3f}, a lower bound among the two rows: not judged{finding}")
    return outcome(law.statistic, law.ci_low, law.ci_high, NO_GAIN,
                   f"{law.meaning}: {law.statistic:.3f}{_left_out(law)}{finding}")
