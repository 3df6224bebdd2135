"""DPC bounds, fits, experiment grids and the computable KL theory."""

import numpy as np
import pytest

from memcap import bounds
from memcap.dpc import fits, grid, kl


def test_bounds_formulas():
    N = 50
    assert bounds.our_bound(1, 10, 10, N) == pytest.approx(1 / N + (1 - 1 / N) * 20 / N ** 2)
    assert bounds.previous_bound(1, 10, N) == pytest.approx(1 / N + (1 - 1 / N) * 10 / N ** 2)
    assert bounds.our_bound(1000, 10, 10, N) == pytest.approx(1.0)              # clipped at 1
    assert bounds.previous_bound(5, 1, N) == pytest.approx(1 / N + (1 - 1 / N) / N ** 2)
    assert bounds.bound_slope_per_head(10, N) == pytest.approx(0.98 * 10 / 2500)
    assert bounds.min_heads(2500, 10, 10) == 249


def test_previous_bound_is_mlt_bound_with_n_equal_to_head_dim():
    from memcap.bounds import memorization_bound
    N, H, dh = 50, np.array([1, 6, 31]), 10
    assert np.allclose(bounds.previous_bound(H, dh, N), bounds.phi(memorization_bound(H, dh, dh), N))
    assert bounds.bound_slope_per_head(1, N) == pytest.approx((1 - 1 / N) / N ** 2)


def test_unknown_experiment_is_a_params_error():
    from memcap.errors import ParamsError
    with pytest.raises(ParamsError, match="nope"):
        grid.settings({"experiments": {"exp1": {}}}, "nope")


def test_power_fits_recover_known_coefficients():
    x = np.arange(1, 11, dtype=float)
    assert fits.power_fit(x, 0.3 * x + 0.1) == pytest.approx((0.3, 0.1))
    assert fits.power_fit(x, 0.02 * x ** 2 + 0.5, 2) == pytest.approx((0.02, 0.5))
    assert fits.power_fit(x, 1e-3 * x ** 3 - 0.2, 3) == pytest.approx((1e-3, -0.2))


def test_saturation_fit_includes_the_first_point_above_095_and_stops():
    x = np.array([1, 6, 11, 16, 21, 26])
    y = np.array([0.1, 0.4, 0.7, 0.96, 1.0, 1.0])
    assert fits.saturation_cut(x, y) == 4
    a, b, k = fits.linear_before_saturation(x, y)
    assert k == 4 and a == pytest.approx(np.polyfit(x[:4], y[:4], 1)[0])
    # unsorted input and no saturation: every point
    a, b, k = fits.linear_before_saturation(x[::-1], 0.01 * x[::-1] + 0.2)
    assert k == 6 and (a, b) == pytest.approx((0.01, 0.2))


def test_two_piece_fit_splits_at_head_dim():
    x = np.arange(5, 16, dtype=float)
    y = np.where(x <= 10, 0.05 * x, 0.5 + 0.0 * (x - 10))
    (a1, b1), (a2, b2) = fits.two_piece_fit(x, y, 10)
    assert (a1, b1) == pytest.approx((0.05, 0.0), abs=1e-12)
    assert a2 == pytest.approx(0.0, abs=1e-12) and b2 == pytest.approx(0.5)


def test_repetition_seeds_are_deterministic_and_distinct():
    seeds = [grid.repetition_seed(2222, r) for r in range(20)]
    assert seeds == [grid.repetition_seed(2222, r) for r in range(20)]
    assert len(set(seeds)) == 20 and grid.repetition_seed(1, 0) != seeds[0]


def test_exp5_mlp_arm_shape_and_paper_axis():
    s = {"layers": 1, "series": {"key": "dim", "values": [10]}, "x": {"key": "mlp_heads"}, "heads": 1}
    m = grid.shape(s, 10, 6)
    assert (m["heads"], m["width"], m["head_dim"]) == (1, 2 * 10 * 5, 10)
    # equal x-axis parameters for the AoT at H = 6 and the MLP at W = 2d(H-1) (EXP_5.py)
    assert grid.axis_params("exp5", 70, 10, 1, m["width"], 10) == \
        grid.axis_params("exp5", 70, 10, 6, 0, 10) == 4 * 100 * 6 + 10 * 141


def test_paper_preset_has_the_1285_runs():
    import yaml
    from memcap.params import REPO_ROOT
    preset = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())["dpc"]["paper"]
    runs = 0
    for exp, label in grid.jobs(preset):
        s = grid.settings(preset, exp)
        runs += len(s["x"]["values"]) * s["repetitions"]
    assert runs == 1285


def test_prop3_kl_goes_to_zero():
    table = np.random.default_rng(0).integers(10, size=(10, 10))
    kls = [kl.circle_construction_kl(table, 10, lam) for lam in (0, 5, 20, 100)]
    assert kls[0] == pytest.approx(np.log(10))
    assert all(a > b for a, b in zip(kls, kls[1:])) and kls[-1] < 1e-6
    assert kl.circle_kl(10, 20) == pytest.approx(kls[2])


def test_thm2_encoder_kl_is_below_its_bound_and_zero_for_lookup():
    t = kl.thm2_table(10, 600, [0.0, 0.05, 0.3], seed=0)
    assert (t.kl <= t.bound + 1e-9).all() and (t.kl <= t.bound_simplified + 1e-9).all()
    assert t[t.delta == 0].kl.max() < 1e-6 and t[t.delta == 0].bound.max() == 0


def test_lsq_fits_are_exact_at_full_rank_and_wls_wins_in_weighted_kl_more_often():
    t = kl.lsq_table(6, 30, 4, seed=0)
    full = t[t.dim == 5]
    assert full.kl.abs().max() < 1e-9                                           # rank N-1 = centred L
    assert (t.kl >= -1e-12).all() and np.isfinite(t.bound).all()
    pivot = t.pivot_table(index=["draw", "dim"], columns="method", values="kl")
    assert pivot.weighted_least_squares.mean() <= pivot.least_squares.mean()
