"""One architecture's row from its probes (torch-free): each seed's bracket and capacity, T* with its
t interval over seeds, T*_min (every seed passes), the budget check, and the budget curve (T* at each
budget, converged or still rising, passes per example at T*, T∞: memcap.capacity.curve)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from memcap.capacity import curve, grid, settings
from memcap.capacity.search import CLOSED, bracket, bracket_at, budget_probe, status


def t_interval(values, confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean and its t interval over seeds; NaN bounds with fewer than two values."""
    x = np.asarray(values, dtype=float)
    mean = float(x.mean()) if len(x) else math.nan
    if len(x) < 2:
        return mean, math.nan, math.nan
    if np.all(x == x[0]):   # no spread among the seeds: the interval is the point
        return mean, mean, mean
    low, high = stats.t.interval(confidence, len(x) - 1, loc=mean, scale=stats.sem(x))
    return mean, float(low), float(high)


def pack_seconds(probes: pd.DataFrame) -> float:
    """Training seconds of the probes' packs: each pack's longest member (its seconds until the last
    one was done), summed over packs."""
    return float(probes.groupby("pack").wall_time_s.max().sum()) if len(probes) else 0.0


def row(p: dict, heads: int, head_dim: int, probes: pd.DataFrame, scale: str, probes_per_round: int) -> dict:
    """The architecture's row (memcap.capacity.aggregate.COLUMNS, but for the bounds and fits)."""
    seeds = [int(s) for s in p["seeds"]]
    main = probes[probes.budget == 1]
    outcomes = {s: {int(r.dataset_size): bool(r.mem_acc >= p["threshold"]) for r in main[main.seed == s].itertuples()}
                for s in seeds}
    brackets = {s: bracket(o) for s, o in outcomes.items()}
    statuses = {s: status(b, p) for s, b in brackets.items()}
    every_closed = all(st == CLOSED for st in statuses.values())
    caps = [brackets[s].middle() if statuses[s] == CLOSED else math.nan for s in seeds]   # a closed bracket's middle
    mean, low, high = t_interval(caps) if every_closed else (math.nan, math.nan, math.nan)
    check = budget_probe(brackets)
    budget_row = (probes[(probes.budget == p["budget_factor"]) & (probes.seed == check[0])
                         & (probes.dataset_size == check[1])] if check else probes.iloc[:0])
    limited = bool(budget_row.mem_acc.iloc[0] >= p["threshold"]) if len(budget_row) else None
    lows = [brackets[s].low or 0 for s in seeds]
    return {
        "family": grid.FAMILY, "scale": scale, "setting": settings.label(p), "heads": heads, "head_dim": head_dim,
        "context_size": grid.context_size(p), "input_dim": p["input_dim"], "num_classes": grid.classes(p),
        "context": p.get("context", "pairs"), "threshold": p["threshold"], "seeds": len(seeds),
        "status": "closed" if every_closed else "; ".join(f"seed {s}: {st}" for s, st in statuses.items() if st != CLOSED),
        "capacity": mean, "capacity_ci_low": low, "capacity_ci_high": high, "capacity_min": min(lows),
        "seed_capacity": [round(c, 1) if not math.isnan(c) else None for c in caps],
        "seed_low": [brackets[s].low for s in seeds], "seed_high": [brackets[s].high for s in seeds],
        "max_width": max(b.width() for b in brackets.values()),
        "non_monotone": sum(b.non_monotone for b in brackets.values()),
        "budget_check_seed": check[0] if check else None, "budget_check_T": check[1] if check else None,
        "budget_check_acc": float(budget_row.mem_acc.iloc[0]) if len(budget_row) else math.nan,
        "budget_limited": limited,
        "probes": len(probes), "probes_per_round": probes_per_round,
        "param_count": grid.params_of(p, heads, head_dim),
        "train_seconds": pack_seconds(probes),
        "device": ", ".join(sorted(set(probes.device.astype(str)))) if len(probes) else "",
        "value_dim": grid.value_dim(p),
        **budget_curve(p, heads, head_dim, probes),
    }


NO_CURVE = curve.NO_CURVE


def budget_curve(p: dict, heads: int, head_dim: int, probes: pd.DataFrame) -> dict:
    """T* at each budget of the architecture's curve (each seed's bracket at that budget, its passes at
    smaller ones counted: memcap.capacity.search.bracket_at), its verdict, the exposures at each T* and
    T∞. A preset without a curve, or an architecture it leaves to another machine, says why not."""
    seeds = [int(s) for s in p["seeds"]]
    budgets = grid.curve_budgets(p, heads, head_dim)
    curves = {s: {int(b): {int(r.dataset_size): bool(r.mem_acc >= p["threshold"]) for r in g.itertuples()}
                  for b, g in probes[probes.seed == s].groupby("budget")} for s in seeds}
    means, lows, highs, seed_caps = [], [], [], []
    for b in budgets:
        brackets = {s: bracket_at(curves[s], b) for s in seeds}
        closed = all(status(br, p) == CLOSED for br in brackets.values())
        caps = [br.middle() if status(br, p) == CLOSED else math.nan for br in brackets.values()]
        mean, low, high = t_interval(caps) if closed else (math.nan, math.nan, math.nan)
        means.append(mean), lows.append(low), highs.append(high), seed_caps.append([round(c, 1) for c in caps])
    reason = grid.not_run(p, heads, head_dim)
    if len(grid.budgets(p)) == 1:
        verdict = NO_CURVE
    elif reason:
        verdict = f"not run ({reason})"
    else:
        verdict = curve.verdict((means[-2], lows[-2], highs[-2]), (means[-1], lows[-1], highs[-1]))
    fit = curve.limit([b for b, caps in zip(budgets, seed_caps) for _ in caps], [c for caps in seed_caps for c in caps])
    return {"budgets": budgets, "capacity_budget": means, "capacity_budget_low": lows, "capacity_budget_high": highs,
            "seed_capacity_budget": seed_caps, "budget_curve": verdict,
            "exposures": [grid.exposures(p, m, b) if not math.isnan(m) else math.nan for m, b in zip(means, budgets)],
            **fit}
