"""The benchmark's projection: 'as the runs stopped' (each model's steps from its published run), and
what an evaluation pass of a pack costs."""

import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from train_throughput import early_stopped_steps, eval_pass_seconds, measured_steps  # noqa: E402


def _runs(tmp_path: Path, rows: list[dict]) -> str:
    (tmp_path / "scale_head" / "60").mkdir(parents=True)
    pd.DataFrame(rows).to_parquet(tmp_path / "scale_head" / "60" / "T30000-x.parquet")
    return str(tmp_path)


def test_a_run_that_stopped_early_counts_its_own_steps_and_lends_its_share_to_unrun_seeds(tmp_path):
    rows = [dict(sweep="scale_head", x=60, dataset_size=30000, seed=s, steps_run=run, steps_planned=60000)
            for s, run in ((0, 15000), (1, 45000))]
    ran = measured_steps(_runs(tmp_path, rows))
    job = ("scale_head", 60, 30000, (0, 1))
    assert early_stopped_steps(ran, job, 0, 60000) == 15000
    assert early_stopped_steps(ran, job, 1, 60000) == 45000
    assert early_stopped_steps(ran, job, 4, 60000) == 30000          # the mean share, 0.5
    assert early_stopped_steps(ran, ("scale_head", 60, 50000, (0, 1)), 0, 97656) == 97656   # not run


def test_no_published_runs_means_every_model_trains_all_its_steps(tmp_path):
    ran = measured_steps(str(tmp_path / "none"))
    assert ran == {}
    assert early_stopped_steps(ran, ("scale_head", 60, 30000, (0, 1)), 0, 60000) == 60000


def test_an_evaluation_pass_costs_each_model_its_own_rows():
    """Models of T = 20, 70, 150 at a row cost proportional to the models in the chunk: 240 model-rows
    (20 + 70 + 150), not the 450 of every model over the longest T (the pass before 2026-11-30)."""
    cost = eval_pass_seconds([150, 20, 70], lambda live: live)
    assert cost == 240 and cost != 3 * 150
    assert eval_pass_seconds([70, 70], lambda live: live) == 140
