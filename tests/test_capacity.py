"""The capacity family: the bracketing search on monotone predicates, the grid, the table's bounds."""

import pandas as pd
import pytest

from memcap import params as memcap_params
from memcap.capacity import aggregate, grid, search


@pytest.mark.parametrize("true_capacity", [1, 5, 37, 64, 200, 1000])
def test_bracket_finds_the_threshold_of_a_monotone_predicate(true_capacity):
    b = search.bracket(lambda T: T <= true_capacity, start=32, t_min=1, t_max=4096, rel_tol=0.0, max_evals=30)
    assert b["status"] == "bracketed"
    assert b["capacity_low"] == true_capacity and b["capacity_high"] == true_capacity + 1


def test_bracket_reports_budget_and_ends():
    b = search.bracket(lambda T: T <= 700, start=32, t_min=1, t_max=4096, rel_tol=0.2, max_evals=30)
    assert b["capacity_low"] <= 700 < b["capacity_high"] and b["capacity_high"] - b["capacity_low"] <= 0.2 * 700
    assert search.bracket(lambda T: True, 32, 1, 256, 0.1, 10)["status"] == "above t_max"
    assert search.bracket(lambda T: False, 32, 4, 256, 0.1, 10)["status"] == "below t_min"
    assert search.bracket(lambda T: T <= 1000, 1, 1, 10 ** 6, 0.0, 4)["evaluations"] == 4


def test_bracket_trace_doubles_then_bisects():
    b = search.bracket(lambda T: T <= 20, start=8, t_min=2, t_max=64, rel_tol=0.0, max_evals=10)
    assert b["trace"] == "8:pass 16:pass 32:fail 24:fail 20:pass 22:fail 21:fail"
    assert (b["capacity_low"], b["capacity_high"], b["evaluations"]) == (20, 21, 7)


def quick_preset():
    return memcap_params.preset(memcap_params.load("params.yaml", {"scale": "quick"}), grid.FAMILY)


def test_architectures_and_step_settings():
    p = {**quick_preset(), "heads": 2, "head_dim": 4, "heads_grid": [1, 2, 4], "head_dim_grid": [2, 4, 8]}
    assert grid.architectures(p) == [(1, 4), (2, 4), (4, 4), (2, 2), (2, 8)]      # (2, 4) once
    s = grid.mlt_settings(p, heads=4, head_dim=8)
    assert (s["task"], s["vary"], s["heads"], s["head_dim"], s["seeds"]) == ("classification", "heads", 4, 8,
                                                                              p["seeds"])
    assert all(s[k] == p["training"][k] for k in grid.TRAINING_KEYS)
    assert grid.search_settings(p, 4, 8)["max_evals"] == p["max_evals"] and "heads_grid" not in s


def test_every_seed_must_pass(monkeypatch):
    """One seed below the threshold fails the step, however good the others are."""
    p = quick_preset()
    calls = []

    def fake_train_point(settings, value, T, **kwargs):
        assert settings["heads"] == value == 2 and settings["context"] == "shared"
        calls.append(T)
        acc = [1.0, 1.0 if T <= 20 else 0.5]                       # the second seed fails above T = 20
        return pd.DataFrame({"mem_acc": acc, "dataset_size": T, "wall_time_s": 0.0, "param_count": 99,
                             "best_step": [100, 90], "steps_run": 100}), None

    monkeypatch.setattr(search, "train_point", fake_train_point)
    row = search.search_architecture(p, heads=2, head_dim=4, scale="quick").iloc[0]
    assert row.capacity_low <= 20 < row.capacity_high and row.evaluations == len(calls)
    assert row.param_count == 99 and row.family == "capacity"
    # the failing seed at capacity_high: its accuracy, and its loss had stopped falling (best step 90 of 100)
    assert row.miss_min_acc == 0.5 and not row.miss_loss_falling and row.miss_best_steps == "90/100"


def test_table_adds_both_bounds_sorted():
    runs = pd.DataFrame([{c: 0 for c in aggregate.COLUMNS if c not in ("mlt_bound", "dpc_bound")}
                         | {"heads": h, "head_dim": dh, "context_size": n, "input_dim": 8}
                         for h, dh, n in ((3, 2, 8), (3, 8, 4))])
    cap = aggregate.table(runs)
    assert list(cap.columns) == aggregate.COLUMNS
    assert list(cap.head_dim) == [2, 8]
    assert list(cap.mlt_bound) == [3 * 1 + 1, 3 * 3 + 1]            # H(min(n, d_h) − 1) + 1
    assert list(cap.dpc_bound) == [3 * 2 + 8, 3 * 8 + 8]            # H·d_h + d
