"""Scorecard claims, bits per parameter and the bracketing search on small hand-built tables."""

import math

import numpy as np
import pandas as pd
import pytest

from memcap.report import bits, capacity, claims


def mlt_runs(acc_of_h, sweep="scale_head_shared", xs=(1, 2, 4, 6), T=400, vary="heads", **extra):
    rows = []
    for x in xs:
        for seed in (0, 1):
            rows.append({"sweep": sweep, "scale": "quick", "vary": vary, "x": x, "dataset_size": T, "seed": seed,
                         "task": "classification", "mem_acc": acc_of_h(x), "mem_loss": 1.0 / x,
                         "context_size": 8, "heads": x, "head_dim": 16, "rank_bound": x * 7 + 1,
                         "memorized_bits": 100.0 * x, "param_count": 1000, "num_classes": 100, **extra})
    return pd.DataFrame(rows)


def verdict(card, cid):
    return card.set_index("claim_id").loc[cid]


def test_linear_in_h_reproduced_and_curved_not():
    linear = claims.scorecard({"mlt_runs": mlt_runs(lambda h: 0.1 * h)}, "quick")
    assert verdict(linear, "mlt_fig2a_linear_H").verdict == claims.REPRODUCED
    assert verdict(linear, "mlt_fig2a_linear_H").statistic == pytest.approx(1.0)
    curved = claims.scorecard({"mlt_runs": mlt_runs(lambda h: 0.9 * (h > 1) + 0.05, xs=(1, 2, 3, 4, 5))}, "quick")
    # flat after the first step: three non-saturated points, R² far below 0.9
    row = verdict(curved, "mlt_fig2a_linear_H")
    assert row.verdict == claims.NOT_REPRODUCED and row.statistic < 0.9


def test_missing_sweep_is_not_run_and_saturated_curve_is_skipped():
    card = claims.scorecard({"mlt_runs": mlt_runs(lambda h: 0.1 * h)}, "quick")
    assert verdict(card, "mlt_fig2b_grows_with_n").verdict == claims.NOT_RUN
    assert verdict(card, "dpc_exp1_linear_H_above_bound").verdict == claims.NOT_RUN   # no DPC table given
    saturated = claims.scorecard({"mlt_runs": mlt_runs(lambda h: 1.0)}, "quick")
    assert verdict(saturated, "mlt_fig2a_linear_H").verdict.startswith("skipped: ")
    assert set(card.scale) == {"quick"} and len(card) == len(claims.CLAIMS)


def test_dh_gain_past_n():
    flat = mlt_runs(lambda d: min(d, 8) / 10, sweep="scale_dh_shared", xs=(2, 4, 8, 16), vary="head_dim")
    assert verdict(claims.scorecard({"mlt_runs": flat}, "quick"), "mlt_fig2c_no_gain_past_n").verdict == claims.REPRODUCED
    rising = mlt_runs(lambda d: d / 20, sweep="scale_dh_shared", xs=(2, 4, 8, 16), vary="head_dim")
    row = verdict(claims.scorecard({"mlt_runs": rising}, "quick"), "mlt_fig2c_no_gain_past_n")
    assert row.verdict == claims.NOT_REPRODUCED and row.statistic == pytest.approx(0.4)


def test_asm1_pattern_and_all_skipped():
    base = {"track": "gpt2", "check": "asm1", "status": "ok", "reason": "", "model": "GPT-2 random"}
    good = pd.DataFrame([{**base, "layer": "L0", "holds": False}, {**base, "layer": "L1", "holds": True}])
    assert verdict(claims.scorecard({"assumption_checks": good}, "quick"), "mlt_table1_asm1_layers").verdict \
        == claims.REPRODUCED
    bad = good.assign(holds=True)
    assert verdict(claims.scorecard({"assumption_checks": bad}, "quick"), "mlt_table1_asm1_layers").statistic == 0.5
    skipped = good.assign(status="SKIPPED", reason="no offline weights")
    assert verdict(claims.scorecard({"assumption_checks": skipped}, "quick"),
                   "mlt_table1_asm1_layers").verdict == "skipped: no Asm 1 check ran: no offline weights"


def test_dpc_exp1_slope_ratio_against_bound():
    N, rows = 20, []
    for d in (4, 6, 8):
        slope = 2.0 * (1 - 1 / N) * d / N ** 2                    # twice the bound's slope per head
        for h in (1, 4, 8, 12):
            rows.append({"experiment": "exp1", "series": d, "x": h, "N": N, "head_dim": d, "dim": d,
                         "acc_table_mean": 1 / N + slope * h, "scale": "quick"})
    card = claims.scorecard({"dpc_summary": pd.DataFrame(rows)}, "quick")
    row = verdict(card, "dpc_exp1_linear_H_above_bound")
    assert row.verdict == claims.REPRODUCED and row.statistic == pytest.approx(2.0)
    # slopes ∝ d: power 1, outside [2, 3]
    assert verdict(card, "dpc_exp4_slope_power").statistic == pytest.approx(1.0)
    assert verdict(card, "dpc_exp4_slope_power").verdict == claims.NOT_REPRODUCED


def test_bits_per_param_and_skip_without_column():
    runs = mlt_runs(lambda h: 0.5)
    table = bits.bits_table(runs, None)
    assert np.allclose(table.bits_per_param, runs.memorized_bits / runs.param_count)
    assert bits.skipped(runs.drop(columns="memorized_bits"), None) == [
        "mlt_synthetic: SKIPPED (its runs table has no memorized_bits column)", "dpc: SKIPPED (runs table not given)"]


@pytest.mark.parametrize("true_capacity", [1, 5, 37, 64, 200, 1000])
def test_bracket_finds_the_threshold_of_a_monotone_predicate(true_capacity):
    b = capacity.bracket(lambda T: T <= true_capacity, start=32, t_min=1, t_max=4096, rel_tol=0.0, max_evals=30)
    assert b["status"] == "bracketed"
    assert b["capacity_low"] == true_capacity and b["capacity_high"] == true_capacity + 1


def test_bracket_reports_budget_and_ends():
    b = capacity.bracket(lambda T: T <= 700, start=32, t_min=1, t_max=4096, rel_tol=0.2, max_evals=30)
    assert b["capacity_low"] <= 700 < b["capacity_high"] and b["capacity_high"] - b["capacity_low"] <= 0.2 * 700
    assert capacity.bracket(lambda T: True, 32, 1, 256, 0.1, 10)["status"] == "above t_max"
    assert capacity.bracket(lambda T: False, 32, 4, 256, 0.1, 10)["status"] == "below t_min"
    assert capacity.bracket(lambda T: T <= 1000, 1, 1, 10 ** 6, 0.0, 4)["evaluations"] == 4


def test_bounds():
    assert capacity.mlt_bound(heads=3, context_size=4, head_dim=8) == 3 * 3 + 1
    assert capacity.mlt_bound(heads=3, context_size=8, head_dim=2) == 3 * 1 + 1
    assert capacity.dpc_bound(heads=3, head_dim=2, input_dim=8) == 14
    assert math.isclose(bits.REFERENCES[next(iter(bits.REFERENCES))], 3.6)


def test_every_seed_must_pass(monkeypatch):
    """One seed below the threshold fails the step, however good the others are."""
    from memcap import config

    params = config.load("params.yaml", {"scale": "quick"})
    calls = []

    def fake_grid_point(p, sweep, heads, T, progress=False):
        s = config.preset(p, "mlt_synthetic")
        assert s["defaults"]["heads"] == heads and s["sweeps"][sweep]["context"] == "shared"
        calls.append(T)
        acc = [1.0, 1.0 if T <= 20 else 0.5]                       # the second seed fails above T = 20
        return pd.DataFrame({"mem_acc": acc, "dataset_size": T, "wall_time_s": 0.0, "param_count": 99}), None, None

    monkeypatch.setattr(capacity.mlt_sweeps, "run_grid_point", fake_grid_point)
    row = capacity.search_architecture(params, heads=2, head_dim=4).iloc[0]
    assert row.capacity_low <= 20 < row.capacity_high and row.evaluations == len(calls)
    assert row.mlt_bound == capacity.mlt_bound(2, row.context_size, 4) and row.param_count == 99


def test_too_few_points_is_skipped_not_failed():
    one_h = mlt_runs(lambda h: 0.5, sweep="regress_scale_head_shared", xs=(4,))
    assert verdict(claims.scorecard({"mlt_runs": one_h}, "quick"), "mlt_fig5_regression_H").verdict.startswith("skipped")
    falling = mlt_runs(lambda h: 0.5, sweep="regress_scale_head_shared", xs=(1, 2, 4, 8))   # mem_loss = 1/H
    assert verdict(claims.scorecard({"mlt_runs": falling}, "quick"), "mlt_fig5_regression_H").verdict == claims.REPRODUCED


def test_growth_in_n_threshold_is_inclusive_despite_rounding():
    """One swapped pair of 4 points gives Spearman ρ = 0.8 (0.7999… in floating point): it passes >= 0.8;
    two swaps (ρ = 0.4) do not."""
    acc = {2: 0.1, 4: 0.3, 8: 0.2, 12: 0.4}
    one_swap = mlt_runs(acc.get, sweep="scale_ctx_size_shared", xs=(2, 4, 8, 12), vary="context_size")
    assert verdict(claims.scorecard({"mlt_runs": one_swap}, "quick"), "mlt_fig2b_grows_with_n").verdict == \
        claims.REPRODUCED
    acc = {2: 0.3, 4: 0.1, 8: 0.4, 12: 0.2}
    two_swaps = mlt_runs(acc.get, sweep="scale_ctx_size_shared", xs=(2, 4, 8, 12), vary="context_size")
    assert verdict(claims.scorecard({"mlt_runs": two_swaps}, "quick"), "mlt_fig2b_grows_with_n").verdict == \
        claims.NOT_REPRODUCED
