"""The DPC authors' published tables: every row placed on the paper grid and checked against it, and
memcap's published means equivalent to theirs (two one-sided tests at ±0.05: memcap.dpc.fidelity)."""

from __future__ import annotations

import io
import shutil

import numpy as np
import pandas as pd
import pytest

from conftest import REPO
from memcap import params as memcap_params
from memcap.dpc import fidelity, published

PAPER = memcap_params.read_yaml(REPO / "params.yaml")["dpc"]["paper"]


def test_every_published_row_is_a_paper_grid_point_with_the_same_shape():
    t = published.read(PAPER)
    assert len(list(published.FOLDER.glob("*.csv"))) == 34 and len(t) == 239
    assert set(t.check) == {"ok"}, t[t.check != "ok"]
    # every grid point of the paper preset has exactly one published mean
    assert not t.duplicated(fidelity.KEYS).any()
    assert set(t.experiment) == set(PAPER["experiments"])


def test_a_row_that_disagrees_with_the_grid_is_reported_not_guessed(tmp_path):
    folder = tmp_path / "csv"
    shutil.copytree(published.FOLDER, folder)
    exp2 = pd.read_csv(folder / "Data_exp_2.csv")
    exp2.loc[0, "N"] = 51                                            # another vocabulary
    exp2.to_csv(folder / "Data_exp_2.csv", index=False)
    (folder / "Data_experiment_9.csv").write_text("acc,para,N,d,d_head\n0.5,1,10,2,2\n")
    t = published.read(PAPER, folder)
    assert t.loc[(t.file == "Data_exp_2.csv") & (t.row == 0), "check"].item() == "N 51 (grid 50)"
    assert "file name not understood" in t.loc[t.file == "Data_experiment_9.csv", "check"].item()


def _summary(mean: float, std: float, N: int = 50) -> pd.DataFrame:
    return pd.DataFrame({"experiment": ["exp2"], "series": [-1], "x": [10], "N": [N], "dim": [10], "head_dim": [10],
                         "repetitions": [5], "acc_window_mean": [mean], "acc_window_std": [std],
                         "acc_table_mean": [mean]})


@pytest.mark.parametrize("ours, std, verdict", [(0.81, 0.005, "equivalent"),     # 0.006 apart, ±0.007
                                                (0.90, 0.005, "different"),      # 0.096 apart, ±0.007
                                                (0.84, 0.03, "cannot judge"),    # 0.036 ± 0.040 crosses 0.05
                                                (0.806, 0.0, "equivalent"),      # saturated: no spread
                                                (0.86, 0.0, "different")])
def test_equivalence_passes_fails_and_says_when_it_cannot_judge(ours, std, verdict):
    """Two one-sided tests at the ±0.05 margin: the 90% interval of the difference inside the margin,
    wholly outside it, or across it (the repetitions spread too widely to tell)."""
    authors = published.read(PAPER)
    t = fidelity.table(_summary(ours, std), authors[(authors.experiment == "exp2") & (authors.x == 10)])
    assert t.verdict.item() == verdict and bool(t.within.item()) is (verdict == "equivalent"), t.T
    half = 2.132 * np.sqrt(2) * std / np.sqrt(5)                   # t(0.95, 4) = 2.132
    assert t.ci_high.item() - t.ci_low.item() == pytest.approx(2 * half, rel=1e-3, abs=1e-12)


def test_a_point_of_other_settings_is_not_compared():
    authors = published.read(PAPER)
    t = fidelity.table(_summary(0.80, 0.005, N=30), authors[(authors.experiment == "exp2") & (authors.x == 10)])
    assert t.ours_window.isna().all() and not t.within.any()


def test_none_of_memcaps_published_dpc_means_differs_from_the_authors():
    """The published results (the in-repo DVC remote, read without a pull) against the authors' CSVs."""
    import dvc.api

    blob = dvc.api.read("results/dpc/tables/summary.parquet", repo=str(REPO), mode="rb")
    summary = pd.read_parquet(io.BytesIO(blob))
    t = fidelity.table(summary, published.read(PAPER))
    different = t[t.verdict == fidelity.DIFFERENT]
    assert len(t) == 239 and different.empty, different[["experiment", "series", "x", "ours_window", "theirs"]]
    assert t.within.mean() > 0.85 and not (t.verdict == fidelity.NOT_COMPARED).any()   # the rest: cannot judge


def test_the_authors_points_are_drawn_only_where_our_grid_point_is_theirs():
    from memcap.dpc import figures

    authors = published.read(PAPER)
    ours = pd.DataFrame({"experiment": ["exp2", "exp2"], "series": [-1, -1], "x": [10, 3], "N": [50, 50],
                         "dim": [10, 10], "head_dim": [10, 99], "param_axis": [1000, 300]})
    drawn = figures.authors_on_our_grid(authors, ours)
    assert drawn[["experiment", "x"]].values.tolist() == [["exp2", 10]]     # x=3: another d_h, not drawn
    quick = ours.assign(N=30)                                                # a stand-in's vocabulary
    assert figures.authors_on_our_grid(authors, quick).empty


def test_what_our_verdict_and_the_authors_verdict_say_together():
    from memcap.report.claims import authors

    assert authors.reading("reproduced", "reproduced") == "reproduced, and holds in the paper's data"
    assert "memcap difference" in authors.reading("not reproduced", "reproduced")
    assert "inconclusive here" in authors.reading("inconclusive", "reproduced")
    assert "stronger than its data" in authors.reading("not reproduced", "not reproduced")
    assert authors.reading("reproduced", "") == ""


def test_every_dpc_claim_judged_on_the_authors_means():
    """The same tests on the authors' published means (a point statistic: they publish no spread): Exp 2's
    quadratic beats a line there as here; Exp 1 fails its linearity part there too (d = 3, 4 bend early)."""
    import dvc.api

    from memcap.report import claims

    def table(path):
        return pd.read_parquet(io.BytesIO(dvc.api.read(path, repo=str(REPO), mode="rb")))

    summary = table("results/dpc/tables/summary.parquet")
    t = {"dpc_summary": summary, "dpc_fidelity": fidelity.table(summary, published.read(PAPER))}
    card = claims.scorecard(t, "paper").set_index("claim_id")
    dpc = card[(card.paper == "DPC") & (card.kind == claims.PAPER_CLAIM)]
    assert (dpc.verdict_authors != "").all() and dpc.statistic_authors.notna().all()
    assert card.loc["dpc_exp2_quadratic_dh", "verdict_authors"] == "reproduced"
    assert card.loc["dpc_exp2_quadratic_dh", "statistic_authors"] > 5          # RSS(line) / RSS(quadratic)
    assert card.loc["dpc_exp1_linear_H_above_bound", "verdict_authors"] == "not reproduced"
    assert card.loc["capacity_vs_dpc_bound", "verdict_authors"] == ""           # not a DPC experiment claim
