"""rank(Z) upper bounds (MLT Props 2, 5), trained-model features, Fig 3 summary, params checks."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest
import torch
import yaml

from memcap import params as memcap_params
from memcap.models.mlt_attention import MLTAttention
from memcap.theory import features as F
from memcap.theory import rank_bounds as RB
from memcap.theory import saturation
from conftest import preempted_on_call


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("scale", [0.1, 1.0, 30.0])
def test_prop2_shared_context_rank_never_exceeds_bound(seed, scale):
    rng = np.random.default_rng(seed)
    d, n, T = 12, 5, 120
    ctx, q = rng.uniform(size=(n, d)), rng.uniform(size=(T, d))
    for H in (1, 2, 4):
        assert RB.random_weight_rank(ctx, q, H, scale, rng) <= RB.prop2_bound(H, n)
    # and the bound is reached by generic weights (it is tight), far below min(T, H·d)
    assert RB.random_weight_rank(ctx, q, 4, 1.0, rng) == RB.prop2_bound(4, n) < 4 * d


@pytest.mark.parametrize("seed", [0, 1])
def test_prop5_constant_token_sum_caps_rank_below_hd(seed):
    rng = np.random.default_rng(seed)
    d, n, T = 8, 12, 200
    ctx = RB.constant_sum_tokens((T, n, d), 2.0, rng)
    q = RB.constant_sum_tokens((T, d), 2.0, rng)
    np.testing.assert_allclose(ctx.sum(-1), 2.0)
    for H in (1, 2, 3):
        assert RB.random_weight_rank(ctx, q, H, 1.0, rng) == RB.prop5_bound(H, d)
    # without the constant sum the same data reach H·d: the bound is about the data, not the weights
    free = rng.uniform(size=(T, n, d))
    assert RB.random_weight_rank(free, q, 3, 1.0, rng) == 3 * d


def test_trained_model_features_match_its_forward_and_respect_prop2():
    torch.manual_seed(0)
    model = MLTAttention([0, 1], input_dim=10, heads=3, context_size=4, out_dim=1).double()
    q, c = torch.rand(2, 60, 10, dtype=torch.float64), torch.rand(2, 4, 10, dtype=torch.float64)
    z = RB.model_features(model, q, c)                                   # (M, T, H, d)
    # eq (8): the model's output is linear in Z: ŷ = Σ_h (w_o[h]·dec_w) (z_h·w_v[h]) + dec_b
    with torch.no_grad():
        coef = torch.einsum("mhd,mdo->mh", model.w_o, model.dec_w)      # (M, H)
        y_from_z = np.einsum("mthd,mhd,mh->mt", z, model.w_v.numpy(), coef.numpy()) + model.dec_b[:, :1].numpy()
        np.testing.assert_allclose(y_from_z, model(q, c)[..., 0].numpy(), atol=1e-12)
    assert all(F.numerical_rank(zm) == RB.prop2_bound(3, 4) for zm in z)


def test_saturation_summary_counts():
    att = pd.DataFrame({
        "sweep": "s", "heads": 2, "dataset_size": 3, "seed": 0,
        "example": [0, 0, 1, 1, 2, 2], "head": [0, 1, 0, 1, 0, 1],
        "max_attention": [0.995, 0.999, 0.5, 0.999, 0.2, 0.3],
    })
    s = saturation.summary(att, 0.99).iloc[0]
    assert s["frac_examples_any_unsaturated"] == pytest.approx(2 / 3)
    assert s["frac_examples_no_saturated_head"] == pytest.approx(1 / 3)
    assert s["mean_saturated_heads"] == pytest.approx(1.0)
    assert s["frac_pairs_saturated"] == pytest.approx(0.5)


def test_fig3_is_labelled_with_the_scale_its_mlt_runs_were_trained_at(tmp_path):
    """the published scales run theory at paper scale but the MLT sweeps behind Fig 3 at quick: the
    saturation table must say quick (a stand-in), from the attention Parquets' provenance."""
    from memcap import results
    from memcap.cli.theory import _attention_scale
    from memcap.theory import aggregate

    att = pd.DataFrame({"sweep": "s", "heads": 2, "dataset_size": 1, "seed": 0, "example": [0, 0],
                        "head": [0, 1], "max_attention": [0.5, 0.999]})
    paths = {scale: results.write_parquet(att, tmp_path / f"{scale}.parquet", {"scale": scale})
             for scale in ("quick", "paper")}
    assert _attention_scale([paths["quick"]]) == "quick"
    table = aggregate.saturation_table(att, 0.99, _attention_scale([paths["quick"]]))
    assert table.scale.tolist() == ["quick"] and table.stand_in.all()
    labeled = aggregate.saturation_table(att, 0.99, "paper", "paper settings, 2 of the paper's 6 seeds")
    assert labeled.scale_label.tolist() == ["paper settings, 2 of the paper's 6 seeds"] and not labeled.stand_in.any()
    assert _attention_scale([paths["paper"]]) == "paper"
    with pytest.raises(SystemExit, match="no single scale"):       # mixed scales
        _attention_scale([paths["quick"], paths["paper"]])
    unlabelled = results.write_parquet(att, tmp_path / "none.parquet", {})
    with pytest.raises(SystemExit, match="no single scale"):
        _attention_scale([unlabelled])
    md = aggregate.summary_markdown(pd.DataFrame({"status": [], "rank": [], "bound": [], "context": [],
                                                  "model_residual": [], "cond": [], "c_max": [], "time_s": []}),
                                    pd.DataFrame({"method": [], "heads": [], "dataset_size_factor": [],
                                                  "dataset_size": [], "bound": [], "memorized": [], "mse": []}),
                                    pd.DataFrame({"proposition": [], "weights": [], "rank": [], "holds": [],
                                                  "attains": []}), table, aggregate.scale_label("paper"))
    assert "## Fig 3: softmax saturation (QUICK STAND-IN: reduced grid" in md


def _params():
    return yaml.safe_load(open(memcap_params.REPO_ROOT / "params.yaml"))


def test_params_reject_gd_context_not_below_width():
    p = copy.deepcopy(_params())
    memcap_params.validate(p)
    p["theory"]["quick"]["gradient_descent"]["context_size"] = 16
    with pytest.raises(memcap_params.ParamsError, match=r"theory.quick.gradient_descent.context_size: 16 >= input_dim 16"):
        memcap_params.validate(p)


def test_params_reject_unknown_c_rule():
    p = copy.deepcopy(_params())
    p["theory"]["paper"]["construct"]["c_rule"] = "infinite"
    with pytest.raises(memcap_params.ParamsError, match=r"theory.paper.construct.c_rule: got 'infinite'"):
        memcap_params.validate(p)


def test_every_bound_is_memorization_bound():
    """One source: CONSTRUCT's capacity and Props 2/5 are H(min(n, d_h)−1)+1 with r = min(n, d_h), n, d."""
    from memcap.bounds import memorization_bound
    from memcap.theory.construct import capacity

    for H, n, dh in [(1, 4, 2), (3, 5, 8), (4, 8, 8), (16, 32, 64)]:
        assert capacity(H, n, dh) == H * (min(n, dh) - 1) + 1 == memorization_bound(H, n, dh)
        assert RB.prop2_bound(H, n) == H * (n - 1) + 1 and RB.prop5_bound(H, dh) == H * (dh - 1) + 1
    assert isinstance(capacity(2, 4, 4), int)


def test_gd_cases_follow_the_preset():
    from memcap.theory.grid import gd_cases

    p = copy.deepcopy(_params()["theory"]["quick"])
    p["gradient_descent"].update(input_dim=8, context_size=3, head_dim=None, heads=[1, 2],
                                 dataset_size_factors=[1, 2.5])
    cases = gd_cases(p)
    assert [(c["heads"], c["bound"], c["dataset_size"]) for c in cases] == [(1, 3, 3), (1, 3, 8), (2, 5, 5),
                                                                          (2, 5, 12)]
    assert {c["head_dim"] for c in cases} == {8}                         # null = d


def test_a_killed_gd_job_keeps_its_finished_cases(tmp_path, monkeypatch):
    """Killed while training its second (H, T) case, a rerun reuses the first case's rows (no
    retraining) and ends with the same tables as an uninterrupted job."""
    from memcap.theory import exp_gd

    p = copy.deepcopy(_params()["theory"]["quick"])
    p["seeds"] = [0]
    p["gradient_descent"].update(input_dim=8, context_size=3, heads=[1, 2], dataset_size_factors=[1],
                                 min_steps=20, eval_every=10, epochs=1)
    cpu = torch.device("cpu")
    whole, whole_ranks = exp_gd.run(p, cpu, progress=False)

    calls, real = [], exp_gd.run_case
    monkeypatch.setattr(exp_gd, "run_case", preempted_on_call(2, real, calls, lambda common, *a: common["heads"]))
    prefix = str(tmp_path / "gd")
    with pytest.raises(KeyboardInterrupt):
        exp_gd.run(p, cpu, progress=False, checkpoint_prefix=prefix)
    assert (tmp_path / "gd_case0.done.pt").exists()

    calls.clear()
    monkeypatch.setattr(exp_gd, "run_case", lambda common, *a, **k: calls.append(common["heads"]) or real(common, *a, **k))
    again, again_ranks = exp_gd.run(p, cpu, progress=False, checkpoint_prefix=prefix)
    assert calls == [2]                                              # H = 1 was not retrained
    cols = ["heads", "dataset_size", "seed", "method", "memorized", "mse"]
    pd.testing.assert_frame_equal(again[cols], whole[cols])
    pd.testing.assert_frame_equal(again_ranks, whole_ranks)
    exp_gd.clear_checkpoints(prefix, p)
    assert not list(tmp_path.iterdir())


def test_summary_markdown_and_figure_names():
    from memcap.theory import aggregate, figures

    con = pd.DataFrame({"context": ["shared", "shared", "random"], "status": ["ok", "ok", "failed"],
                        "rank": [3, 5, -1], "bound": [3, 5, 7], "model_residual": [1e-12, 2e-12, np.nan],
                        "cond": [10.0, 20.0, np.nan], "c_max": [np.nan, 2.0, np.nan], "time_s": [0.1, 0.2, 0.3],
                        "input_dim": 8, "context_size": [3, 3, 4], "head_dim": 8, "heads": [1, 2, 2],
                        "seed": 0, "reason": ["", "", "AssumptionError: x"]})
    gd = pd.DataFrame({"method": ["construction"], "heads": [1], "dataset_size_factor": [1], "dataset_size": [3],
                       "bound": [3], "memorized": [3], "mse": [0.0]})
    bounds = pd.DataFrame({"proposition": ["prop2"], "weights": ["random"], "rank": [3], "holds": [True],
                           "attains": [True]})
    md = aggregate.summary_markdown(con, gd, bounds, pd.DataFrame(), aggregate.scale_label("quick"))
    assert "STAND-IN" in md and "Failures:" in md and "SKIPPED: no saturation runs" in md
    row = next(line for line in md.splitlines() if line.startswith("| shared"))
    assert [c.strip() for c in row.strip("|").split("|")][:4] == ["shared", "2", "2", "2"]
    assert figures.FIGURES == ("construct", "capacity", "rank_bounds", "fig3")
    assert set(aggregate.TABLES) == {"construct", "gd", "trained_ranks", "rank_bounds", "saturation", "summary"}


def test_fig3_shows_each_runs_train_accuracy_beside_app_h_only_at_its_setting():
    """App. H: at d = 64, n = 32 gradient descent memorizes ≈550 (H = 4) and ≈1300 (H = 8) examples
    perfectly. Fig 3 states each run's train accuracy and, for a run at that setting, the paper's count;
    a run at other d or n (a quick stand-in) gets no paper number."""
    from memcap.theory.figures import _accuracy_note

    runs = pd.DataFrame({"sweep": ["a", "a", "b", "b"], "heads": [4, 4, 4, 4], "dataset_size": [550, 550, 350, 350],
                         "seed": [0, 1, 0, 1], "mem_acc": [1.0, 0.99, 0.8, 0.9],
                         "input_dim": [64, 64, 16, 16], "context_size": [32, 32, 8, 8]})
    acc = saturation.train_accuracy(runs).set_index("sweep")
    assert acc.loc["a", "train_acc"] == pytest.approx(0.995) and acc.loc["a", "paper_perfect_T"] == 550
    assert np.isnan(acc.loc["b", "paper_perfect_T"])
    note = _accuracy_note(acc.reset_index(), "a", 4, 550)
    assert "train acc 0.995 (2 seeds)" in note and "memorizes ≈550 perfectly" in note
    assert "App. H" not in _accuracy_note(acc.reset_index(), "b", 4, 350)
