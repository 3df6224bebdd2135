"""Scorecard claims and bits per parameter on small hand-built tables."""

import math

import numpy as np
import pandas as pd
import pytest

from memcap.report import bits, claims


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


def test_bits_reference():
    assert math.isclose(bits.REFERENCES[next(iter(bits.REFERENCES))], 3.6)


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
