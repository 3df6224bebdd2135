"""The capacity family: the search against known oracles, the budget check, rounds that resume without
retraining, packs equal to probes alone, nested data, the row's T₅₀ and the table's laws (the estimator's
own math: tests/test_capacity_transition.py)."""

import math

import numpy as np
import pandas as pd
import pytest
import torch

from memcap import params as memcap_params
from memcap.capacity import aggregate, grid, probes, rounds, search, subjects, summary, words
from memcap.capacity import transition
from memcap.capacity.store import ProbeStore
from memcap.tasks.mlt_data import make_data


def quick_preset(**changes):
    return {**memcap_params.preset(memcap_params.load("params.yaml", {"scale": "quick"}), grid.FAMILY), **changes}


def tiny_preset(**changes):
    """d = 8 models trained for a few hundred steps: a whole search in seconds."""
    training = {"lr": 1.0e-2, "batch_size": 32, "epochs": 1, "min_steps": 120, "eval_every": 40, "early_stop": True}
    return quick_preset(seeds=[0, 1], heads=1, head_dim=2, heads_grid=[1], head_dim_grid=[2], start_bits=0.05,
                        pool=256, rel_tol=0.3, max_probes=6, training=training, checkpoint_every_s=0, **changes)


# ---- the search on oracles -------------------------------------------------------------------------

def oracle_rows(p, rounds_, passes):
    """The probes table a search's rounds would leave, from an oracle of accuracy."""
    rows = [{"heads": H, "head_dim": dh, "seed": s, "dataset_size": T, "budget": b,
             "mem_acc": 1.0 if passes(H, dh, s, T, b) else 0.5, "memorized_bits": 1.0, "wall_time_s": 1.0,
             "pack": str(i), "device": "cpu"} for i, r in enumerate(rounds_) for H, dh, s, T, b in r]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("truth", [5, 37, 64, 700, 5000])
def test_the_search_finds_a_sharp_transition_to_its_width(truth):
    p = quick_preset(seeds=[0, 1, 2, 3, 4, 5], pool=65536, t_min=2, rel_tol=0.05, max_probes=20)
    passes = lambda H, dh, s, T, b: T <= truth                                    # noqa: E731
    rounds_ = search.simulate(p, {(2, 4): 100}, passes)
    r = summary.row(p, 2, 4, oracle_rows(p, rounds_, passes), "quick")
    assert r["search_end"] == search.REACHED and r["seeds"] == 5 and r["sharp"]   # every seed alike: no spread
    assert r["capacity_ci_low"] <= truth + 1 and truth <= r["capacity_ci_high"]
    assert r["capacity_ci_high"] / r["capacity_ci_low"] <= 1.5
    for low, high in zip(r["seed_low"], r["seed_high"]):
        assert low <= truth < high
    assert len(rounds_[-1]) == 1 and rounds_[-1][0][4] == 2                      # then the budget check


def test_noisy_seeds_give_a_transition_whose_interval_holds_their_median():
    """Each seed has its own threshold and a pass flips near it (training noise)."""
    p = quick_preset(seeds=list(range(10)), pool=65536, t_min=2, rel_tol=0.05, max_probes=20)
    own = {0: 900, 1: 1000, 2: 1100, 3: 950, 4: 1050, 5: 980, 6: 1020, 7: 870, 8: 1130, 9: 1000}
    rng = np.random.default_rng(0)
    flips = {}

    def passes(H, dh, s, T, b):
        if (s, T) not in flips:
            flips[s, T] = rng.random() < 0.3 and abs(T - own[s]) < 0.04 * own[s]
        return (T <= own[s]) != flips[s, T]
    rounds_ = search.simulate(p, {(2, 4): 400}, passes)
    r = summary.row(p, 2, 4, oracle_rows(p, rounds_, passes), "quick")
    assert r["search_end"] in (search.REACHED, search.OUT_OF_SEEDS) and r["seeds"] >= 5
    assert r["capacity_ci_low"] < 1000 < r["capacity_ci_high"] and r["t90"] < r["capacity"]
    assert 800 <= r["seed_range_low"] <= r["seed_range_high"] <= 1250


def test_a_search_without_a_failure_says_so_and_has_no_t50():
    p = quick_preset(seeds=[0, 1], pool=65536, t_min=2, rel_tol=0.01, max_probes=4)
    passes = lambda H, dh, s, T, b: T <= 5000                                     # noqa: E731
    rounds_ = search.simulate(p, {(2, 4): 10}, passes)
    r = summary.row(p, 2, 4, oracle_rows(p, rounds_, passes), "quick")
    assert r["search_end"] == search.NO_TRANSITION and math.isnan(r["capacity"])
    assert r["no_fit"].startswith("every probe passed") and r["seed_status"] == [search.EXHAUSTED] * 2
    above = search.status(search.bracket({2048: True}), {**p, "pool": 2048})
    assert above == search.ABOVE and search.status(search.bracket({2: False}), p) == search.BELOW


def test_next_sizes_grow_then_split_the_bracket_geometrically():
    p = quick_preset(pool=10 ** 6, t_min=2, rel_tol=0.05, max_probes=20, grow=2)
    assert search.next_sizes({}, p, 100) == [100]
    assert search.next_sizes({}, p, 100, k=3) == [50, 100, 200]
    assert search.next_sizes({100: True}, p, 100) == [200]
    assert search.next_sizes({100: False}, p, 100, k=2) == [50, 25]
    assert search.next_sizes({100: True, 400: False}, p, 100) == [200]             # the geometric middle
    assert search.next_sizes({100: True, 800: False}, p, 100, k=2) == [200, 400]   # three equal ratios
    assert search.next_sizes({100: True, 104: False}, p, 100) == []                # closed: 4% wide
    fitted = transition.Transition(400.0, 350.0, 450.0, 300.0, 1.5, 2.0, False, 5, 0.95)
    assert search.next_sizes({}, p, 100, k=3, around=fitted) == [283, 400, 566]   # a new seed: around T₅₀, a factor grow wide


def test_a_pass_above_the_first_failure_is_counted_not_used():
    b = search.bracket({100: True, 200: False, 300: True, 150: True})
    assert (b.low, b.high, b.non_monotone) == (150, 200, 1)


# ---- the budget check ------------------------------------------------------------------------------

@pytest.mark.parametrize("passes_at_2x, limited", [(True, True), (False, False)])
def test_the_budget_rule_flags_a_miss_that_passes_at_twice_the_steps(passes_at_2x, limited):
    p = quick_preset(seeds=[0, 1], pool=65536, t_min=2, rel_tol=0.05, max_probes=20, budget_factor=2)
    own = {0: 300, 1: 320}

    def passes(H, dh, s, T, b):
        return T <= own[s] or (b == 2 and passes_at_2x)
    rounds_ = search.simulate(p, {(2, 4): 100}, passes)
    check = rounds_[-1]
    assert len(check) == 1 and check[0][2] == 0 and check[0][4] == 2               # seed 0: the first failure
    r = summary.row(p, 2, 4, oracle_rows(p, rounds_, passes), "quick", 1)
    assert r["budget_limited"] is limited and r["budget_check_T"] == min(r["seed_high"])
    cap = aggregate.table(pd.DataFrame([r]), oracle_rows(p, rounds_, passes), {"quick": p})
    assert cap.lower_bound.tolist() == [limited]                               # the laws read it as a lower bound


# ---- nested data, packs, resuming ------------------------------------------------------------------

def test_a_seeds_datasets_are_nested_and_start_as_make_data_draws_them():
    p = tiny_preset()
    small, large = probes.nested_data([probes.Probe(1, 2, 0, 20)], p), probes.nested_data([probes.Probe(1, 2, 0, 90)], p)
    assert torch.equal(small.query_rows, large.query_rows[:20]) and torch.equal(small.label_rows, large.label_rows[:20])
    alone = make_data([0], 20, p["context_size"], p["input_dim"], "shared", "classification", p["num_classes"])
    assert torch.equal(small.query_rows, alone.query_rows) and torch.equal(small.context_rows, alone.context_rows)
    assert not torch.equal(small.label_rows, alone.label_rows)     # labels come after the pool's queries
    rand = {**p, "context": "random"}
    both = probes.nested_data([probes.Probe(1, 2, 0, 20), probes.Probe(1, 2, 1, 30), probes.Probe(1, 2, 0, 50)], rand)
    q, c, _ = both.batch(torch.arange(20).expand(3, -1))
    assert torch.equal(c[0], c[2]) and not torch.equal(c[0], c[1])    # one seed's contexts, stored once


def train_alone_and_packed(p, group):
    rows_alone, rows_pack = {}, {}
    for pr in group:
        subjects.of(p).train_probes([pr], p, torch.device("cpu"), lambda q, r: rows_alone.__setitem__(q, r), progress=False)
    subjects.of(p).train_probes(group, p, torch.device("cpu"), lambda q, r: rows_pack.__setitem__(q, r), progress=False)
    return rows_alone, rows_pack


def test_cuda_graphs_are_refused_off_a_gpu_and_for_dpc_probes():
    """A search asked to replay CUDA graphs where it cannot stops before training (no silent eager run)."""
    with pytest.raises(ValueError, match="CUDA device"):
        probes.train_probes([probes.Probe(1, 2, 0, 20)], tiny_preset(), torch.device("cpu"), lambda q, r: None,
                            progress=False, cuda_graphs=True)
    with pytest.raises(ValueError, match="DPC preset steps eagerly"):
        subjects.of(dpc_preset()).train_probes([probes.Probe(1, 2, 0, 20)], dpc_preset(), torch.device("cpu"), lambda q, r: None,
                            progress=False, cuda_graphs=True)


def test_a_pack_rounds_probes_equal_the_same_probes_trained_alone():
    p = tiny_preset()
    group = [probes.Probe(1, 2, 0, 40), probes.Probe(1, 2, 1, 70), probes.Probe(2, 4, 0, 55), probes.Probe(1, 2, 0, 90)]
    alone, packed = train_alone_and_packed(p, group)
    assert set(alone) == set(packed) == set(group)
    for pr in group:
        a, b = alone[pr], packed[pr]
        assert (a["best_step"], a["steps_run"], a["early_stopped"]) == (b["best_step"], b["steps_run"], b["early_stopped"])
        assert a["mem_acc"] == pytest.approx(b["mem_acc"], abs=1e-9)
        assert a["mem_loss"] == pytest.approx(b["mem_loss"], rel=1e-4)
        assert b["models_in_round"] == 4 and a["models_in_round"] == 1


def test_a_round_of_probes_with_different_step_counts_trains_as_one_pack():
    """A GPU round mixes architectures and budgets' T: a probe past the step floor between two at it."""
    p = tiny_preset()
    p["training"] = {**p["training"], "epochs": 20}   # T = 250: 156 steps, T <= 192: the floor of 120
    group = [probes.Probe(1, 2, 0, 40), probes.Probe(1, 2, 1, 250), probes.Probe(1, 2, 0, 60)]
    alone, packed = train_alone_and_packed(p, group)
    assert set(packed) == set(group) and alone[group[1]]["steps_planned"] == 156
    for pr in group:
        assert (alone[pr]["steps_run"], alone[pr]["best_step"]) == (packed[pr]["steps_run"], packed[pr]["best_step"])
        assert alone[pr]["mem_acc"] == pytest.approx(packed[pr]["mem_acc"], abs=1e-9)


def search_once(p, runs, ckpt, calls, kill_at=None):
    """rounds.run with train_probes recorded (and a KeyboardInterrupt, a kill, after kill_at probes)."""
    real, written = rounds.train_probes, []

    def recorded(group, p_, device, on_probe, skip=frozenset(), **kw):
        calls.append([pr for pr in group if pr not in skip])

        def on(pr, row):
            on_probe(pr, row)
            written.append(pr)
            if kill_at is not None and len(written) == kill_at:
                raise KeyboardInterrupt
        return real(group, p_, device, on, skip=skip, **kw)
    rounds.train_probes = recorded
    try:
        return rounds.run([(1, 2)], p, runs, torch.device("cpu"), ckpt, progress=False)
    finally:
        rounds.train_probes = real


def test_a_killed_search_resumes_without_retraining_and_ends_as_one_run(tmp_path):
    p = tiny_preset()
    whole, calls = tmp_path / "whole", []
    search_once(p, whole, tmp_path / "whole.ck", calls)
    expected = ProbeStore(whole, p, 1, 2).table().drop(columns=["wall_time_s", "pack", "models_in_round", "segments"])

    killed, first, second = tmp_path / "killed", [], []
    with pytest.raises(KeyboardInterrupt):
        search_once(p, killed, tmp_path / "killed.ck", first, kill_at=3)   # mid-round: one probe of round 2 done
    t = ProbeStore(killed, p, 1, 2).table()
    done = {probes.Probe(1, 2, int(r.seed), int(r.dataset_size), int(r.budget)) for r in t.itertuples()}
    assert len(done) == 3 and (tmp_path / "killed.ck.plan.json").exists()
    search_once(p, killed, tmp_path / "killed.ck", second)
    trained = [pr for group in second for pr in group]
    assert not set(trained) & done and len(trained) == len(set(trained))   # nothing finished is trained again
    unfinished = [pr for pr in first[-1] if pr not in done]
    assert second[0] == unfinished                                         # the killed round, resumed first
    got = ProbeStore(killed, p, 1, 2).table().drop(columns=["wall_time_s", "pack", "models_in_round", "segments"])
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expected.reset_index(drop=True))
    assert not (tmp_path / "killed.ck.plan.json").exists()
    assert search_once(p, killed, tmp_path / "killed.ck", []) == 0                 # nothing left to train


def test_a_tuned_search_trains_an_lr_only_where_the_ones_before_it_failed(tmp_path):
    """tuned_lr: a size is memorized when any lr memorizes it; a probe an earlier lr memorized is not
    trained at a later one, and the row reads each decided probe at its best lr."""
    from memcap.capacity.store import TunedStore

    p = tiny_preset(tuned_lr=[1.0e-2, 3.0e-3, 3.0e-2], variant="tuned lr")
    search_once(p, tmp_path / "runs", tmp_path / "t.ck", [])
    tuned = TunedStore(tmp_path / "runs", p, 1, 2)
    first, *later = [part.table().set_index(["seed", "dataset_size", "budget"]) for part in tuned.parts]
    for key, r in first.iterrows():
        passed = r.mem_acc >= p["threshold"]
        if passed:
            assert all(key not in t.index for t in later), key           # later lrs only where lr 1 failed
        else:
            assert key in later[0].index, key
            second = later[0].loc[key, "mem_acc"] >= p["threshold"]
            assert (key in later[1].index) != second, key
    table = tuned.table()
    assert len(table) and table.lr.isin(p["tuned_lr"]).all()
    for r in table.itertuples():
        best = max(t.loc[(r.seed, r.dataset_size, r.budget), "mem_acc"] for t in (first, *later)
                   if (r.seed, r.dataset_size, r.budget) in t.index)
        assert r.mem_acc == best
    assert grid.probe_folder(grid.lr_variants(p)[0], 1, 2) == grid.probe_folder(tiny_preset(), 1, 2)   # shared with lr 1


# ---- the grid, the row, the laws -------------------------------------------------------------------

def test_architectures_probe_files_and_row_names():
    p = quick_preset(heads=2, head_dim=4, heads_grid=[1, 2, 4], head_dim_grid=[2, 4, 8])
    assert grid.architectures(p) == [(1, 4), (2, 4), (4, 4), (2, 2), (2, 8)]       # (2, 4) once
    name = grid.run_name("quick", p, 4, 8)
    assert grid.parse_run_name(f"results/capacity/runs/{name}") == (4, 8)
    # a search knob changes the row's name but not its probes: a new threshold reuses every probe
    other = {**p, "threshold": 0.9}
    assert grid.run_name("quick", other, 4, 8) != name
    assert grid.probe_folder(other, 4, 8) == grid.probe_folder(p, 4, 8)
    assert grid.probe_folder({**p, "training": {**p["training"], "lr": 0.5}}, 4, 8) != grid.probe_folder(p, 4, 8)
    assert grid.start_size(p, 4, 8) == round(p["start_bits"] * grid.params_of(p, 4, 8) / math.log2(100))


def test_marking_one_architecture_not_run_renames_only_its_own_row():
    p = curve_preset()
    cut = {**p, "budget_not_run": {"cut": [[4, 4]]}}
    assert grid.run_name("quick_curve", cut, 4, 4) != grid.run_name("quick_curve", p, 4, 4)
    assert grid.run_name("quick_curve", cut, 2, 4) == grid.run_name("quick_curve", p, 2, 4)
    both = {**p, "budget_not_run": {"cut": [[4, 4]], "GPU work": [[1, 4]]}}
    assert grid.run_name("quick_curve", both, 4, 4) == grid.run_name("quick_curve", cut, 4, 4)
    assert grid.run_name("quick_curve", {**p, "budget_not_run": {"other reason": [[4, 4]]}}, 4, 4) != \
        grid.run_name("quick_curve", cut, 4, 4)                        # the reason is the row's to show


def test_pack_seconds():
    probes_ = pd.DataFrame({"pack": ["a", "a", "b"], "wall_time_s": [3.0, 5.0, 2.0]})
    assert summary.pack_seconds(probes_) == 7.0                                      # each pack's longest


def law_rows(fn, xs, lower=(), on="heads", excluded=None):
    """A table's rows as the laws read them: T₅₀ (±10%) at each x, some lower bounds, some left out."""
    return pd.DataFrame([{"heads": x if on == "heads" else 10, "head_dim": x if on == "head_dim" else 64,
                          "law_T": fn(x), "law_low": fn(x) / 1.1, "law_high": fn(x) * 1.1, "lower_bound": x in lower,
                          "law_excluded": (excluded or {}).get(x, "")} for x in xs])


def test_the_laws_keep_every_row_a_lower_bound_censored_and_name_what_they_leave_out():
    """A lower bound far above the law does not pull α up (it is only a bound), and a row left out says why."""
    p = {"head_dim": 64, "heads": 10, "context_size": 32, "num_classes": 100, "input_dim": 64}
    cap = law_rows(lambda h: 50 * h ** 1.5, [1, 2, 5, 10, 20, 40], lower={40},
                   excluded={1: "H·d_v = 1 < log2 C = 6.6: the readout is narrower than a label"})
    cap.loc[cap.heads == 40, ["law_T", "law_low", "law_high"]] = 50 * 40 ** 1.5 / 4   # a bound well below the law
    law = pd.DataFrame(aggregate._laws_on(cap, [p])).set_index("law")
    a = law.loc["alpha_heads"]
    assert a.ci_low < 1.5 < a.ci_high and a.ci_high - a.ci_low < 0.5
    assert "H=40 (≥)" in a.rows and a.censored == 1 and a.points == 5
    assert a.excluded.startswith("H=1: H·d_v = 1 < log2 C")
    assert law.loc["past_n_ratio", "rows"] == "missing"                     # no d_h grid here



def test_a_law_without_an_estimate_says_why():
    p = {"head_dim": 64, "heads": 10, "context_size": 32, "num_classes": 100, "input_dim": 64}
    three = pd.DataFrame(aggregate._laws_on(law_rows(lambda h: 50 * h, [1, 2, 5]), [p])).set_index("law")
    assert three.loc["alpha_heads", "no_fit"] == "3 rows: a fit needs 4"
    assert words.laws_shown(three.reset_index()).iloc[0]["estimate [95% CI]"] == "none: 3 rows: a fit needs 4"
    bounds = pd.DataFrame(aggregate._laws_on(law_rows(lambda h: 50 * h, [1, 2, 5, 10], lower={1, 2, 5, 10}), [p]))
    assert bounds.set_index("law").loc["alpha_heads", "no_fit"] == "every row a lower bound"
    four = pd.DataFrame(aggregate._laws_on(law_rows(lambda h: 50 * h, [1, 2, 5, 10]), [p])).set_index("law")
    assert four.loc["alpha_heads", "no_fit"] == "" and not math.isnan(four.loc["alpha_heads", "statistic"])


def test_presets_of_one_setting_share_its_laws_and_another_task_keeps_its_own():
    """The 8x budget of H = 1, 2 (paper_curve_8x) and the 4x of H = 5, 10 (paper_curve) are one setting:
    one α over all their rows, β at the H whose d_h grid was searched; DPC's d = 4 and d = 8 are two."""
    sec = memcap_params.load("params.yaml", {"scale": {"default": "quick", "capacity": "paper_all"}})["capacity"]
    groups = aggregate.setting_groups(sec, ["paper_curve_8x", "paper_curve", "paper_dpc", "paper_dpc_d4", "paper_scalar"])
    assert groups["paper_curve"] == ["paper_curve", "paper_curve_8x"]
    assert groups["paper_dpc"] == ["paper_dpc"] and groups["paper_dpc_d4"] == ["paper_dpc_d4"]
    rows = pd.concat([law_rows(lambda h: 20 * h ** 2, [1, 2]).assign(scale="paper_curve_8x"),
                      law_rows(lambda h: 20 * h ** 2, [5, 10]).assign(scale="paper_curve"),
                      law_rows(lambda d: 300 + d, [8, 16, 32, 64], on="head_dim").assign(scale="paper_curve")])
    rows = rows.assign(model="mlt", readout="classification", variant=None, value_dim=1)
    law = aggregate.laws(rows.drop_duplicates(["heads", "head_dim"]).reset_index(drop=True), sec)
    assert list(law.law) == ["alpha_heads", "beta_head_dim_below_n", "past_n_ratio"]
    a = law.iloc[0]
    assert a.scale == "paper_curve" and a.presets == "paper_curve + paper_curve_8x" and a.points == 4
    assert abs(a.statistic - 2) < 0.1 and law.iloc[1]["at"] == 10


# ---- end to end: one job an architecture (a CPU) and one pack job for all (a GPU preset) -----------

@pytest.mark.e2e
def test_a_pack_preset_searches_every_architecture_in_one_job_to_the_rows_of_one_job_each(pipeline, tmp_path):
    """resources pack_models > 1: Snakemake plans one capacity_search_pack job for every missing row,
    each round one pack of all open architectures' probes; with one probe a seed a round it trains the
    probes the per-architecture jobs train, to the same numbers, so the rows are the same. The jobs
    alone are the shared tiny pipeline's (conftest.pipeline: the same `tiny_capacity` preset, one
    capacity_search job an architecture)."""
    from conftest import copy_project, log_of, tiny_capacity

    packed = copy_project(tmp_path / "packed")
    packed.edit_params(lambda p: (tiny_capacity(p), p["resources"]["quick"]["train"].update(pack_models=8)))
    alone = pipeline.root
    row_files = sorted(str(f.relative_to(alone)) for f in (alone / "results/capacity/runs/quick").glob("*.parquet"))
    assert row_files == sorted(packed.run_path("capacity", h, dh) for h, dh in ((1, 2), (2, 2)))   # the same settings
    assert all((alone / log_of(r)).read_text() for r in row_files)   # each searched by a job of its own
    dry = packed.snakemake("-n", "capacity").stdout
    assert "capacity_search_pack" in dry and "rule capacity_search:" not in dry, dry[-2000:]
    packed.snakemake("capacity")
    timing = ["wall_time_s", "pack", "models_in_round", "git_commit", "segments"]
    a = pd.read_parquet(alone / "results/capacity/tables/probes.parquet").drop(columns=timing)
    b = pd.read_parquet(packed.root / "results/capacity/tables/probes.parquet")
    assert (b.models_in_round > 3).any()                       # architectures trained together
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.drop(columns=timing).reset_index(drop=True),
                                  check_exact=False, rtol=1e-4)
    rows = ["capacity", "capacity_ci_low", "capacity_ci_high", "seed_low", "seed_high", "search_end", "budget_limited"]
    ta = pd.read_parquet(alone / "results/capacity/tables/capacity.parquet")[rows]
    tb = pd.read_parquet(packed.root / "results/capacity/tables/capacity.parquet")[rows]
    pd.testing.assert_frame_equal(ta, tb)
    assert "Nothing to be done" in packed.snakemake("-n", "capacity").stdout


# ---- the settings: MLT's scalar output and DPC's associations --------------------------------------

def dpc_preset(**changes):
    p = memcap_params.load("params.yaml", {"scale": {"default": "quick", "capacity": "quick_dpc"}})
    return {**memcap_params.preset(p, grid.FAMILY), **changes}


def test_dpc_associations_are_nested_and_deterministic_per_seed():
    from memcap.capacity import associations

    p = dpc_preset()
    small, large = associations.associations(p, 0, 20), associations.associations(p, 0, 90)
    assert torch.equal(small[0], large[0][:20]) and torch.equal(small[1], large[1][:20])     # nested
    again = associations.associations(p, 0, 90)
    assert torch.equal(again[0], large[0]) and torch.equal(again[1], large[1])               # deterministic
    other = associations.associations(p, 1, 90)
    assert not torch.equal(other[0], large[0])                                               # a seed's own
    pairs = large[0][:, 0] * p["vocab"] + large[0][:, 1]
    assert len(set(pairs.tolist())) == 90                                                    # distinct pairs
    s = associations.sample(p, 0, 20)
    assert s.shape == (p["training"]["batch_size"] * p["training"]["batches"], 3)
    assert set(map(tuple, s.tolist())) == set(map(tuple, torch.cat([small[0], small[1][:, None]], 1).tolist()))


def test_a_dpc_pack_equals_its_probes_trained_alone():
    p = dpc_preset(training={"batch_size": 32, "batches": 4, "epochs": 6, "lr": 0.1, "lr_low": 5.0e-3})
    group = [probes.Probe(2, 4, 0, 40), probes.Probe(2, 4, 1, 70), probes.Probe(1, 2, 0, 55), probes.Probe(2, 4, 0, 90)]
    alone, packed = train_alone_and_packed(p, group)
    assert set(alone) == set(packed) == set(group)
    for pr in group:
        for k in ("mem_acc", "mem_loss", "memorized_bits", "steps_run"):
            assert alone[pr][k] == pytest.approx(packed[pr][k], rel=1e-5, abs=1e-9), (pr, k)
    assert packed[group[0]]["models_in_round"] == 3 and alone[group[0]]["models_in_round"] == 1


def test_the_scalar_output_model_is_one_logit_and_matches_a_plain_reference():
    """Two classes read from MLT's layer: its forward and gradients equal a plain loop over heads on the
    same weights, and its cross-entropy is the logistic loss of one logit, the difference of the two."""
    from memcap.models.mlt_attention import MLTAttention

    d, n, H, dh, B = 8, 4, 3, 5, 7
    model = MLTAttention([3], input_dim=d, heads=H, context_size=n, head_dim=dh, out_dim=2).double()
    g = torch.Generator().manual_seed(0)
    q, ctx = torch.rand(1, B, d, generator=g, dtype=torch.float64), torch.rand(1, n, d, generator=g, dtype=torch.float64)
    y = torch.randint(2, (B,), generator=g)
    out = model(q, ctx)[0]
    loss = torch.nn.functional.cross_entropy(out, y, reduction="sum")
    loss.backward()

    w = {k: v.detach()[0].clone().requires_grad_() for k, v in model.named_parameters()}
    pe = model.pe.double()
    ref = []
    for b in range(B):
        e = q[0, b] @ w["emb_w"] + w["emb_b"] + pe[0]
        E = ctx[0] @ w["emb_w"] + w["emb_b"] + pe[1:n + 1]
        heads = []
        for h in range(H):
            s = (E @ w["w_k"][h]) @ (w["w_q"][h].T @ e) / d ** 0.5
            heads.append(torch.softmax(s, 0) @ (E @ w["w_v"][h]))
        ref.append((torch.stack(heads) @ w["w_o"]) @ w["dec_w"] + w["dec_b"])
    ref = torch.stack(ref)
    torch.testing.assert_close(out, ref)
    ref_loss = torch.nn.functional.cross_entropy(ref, y, reduction="sum")
    ref_loss.backward()
    for k, v in model.named_parameters():
        torch.testing.assert_close(v.grad[0], w[k].grad, msg=k)
    logit = ref[:, 1] - ref[:, 0]                                         # one logit: W_D = w_1 − w_0
    bce = torch.nn.functional.binary_cross_entropy_with_logits(logit, y.double(), reduction="sum")
    torch.testing.assert_close(ref_loss, bce)


def test_each_row_names_its_setting_and_the_bound_that_applies():
    from memcap.capacity import settings

    sec = memcap_params.load("params.yaml", {"scale": {"default": "quick", "capacity": "paper_settings"}})["capacity"]
    assert settings.members(sec, "paper_settings")[0] == "paper"
    assert [settings.label(sec[m]) for m in ("paper", "paper_scalar", "paper_dpc")] == [
        "mlt/classification C=100", "mlt/scalar", "dpc/associations N=50"]
    rows = []
    for name, cap_, extra in (("paper_scalar", 100.0, {}), ("paper_dpc", 90.0, {})):
        p = sec[name]
        passes = lambda H, dh, s, T, b, c=cap_: T <= c                           # noqa: E731
        rounds_ = search.simulate(p, {(2, 8): 60}, passes)
        rows.append(summary.row(p, 2, 8, oracle_rows(p, rounds_, passes), name, 1))
    cap = aggregate.table(pd.DataFrame(rows), pd.DataFrame(
        {"scale": ["paper_scalar", "paper_dpc"], "heads": 2, "head_dim": 8, "seed": 0, "budget": 1, "memorized_bits": 1.0}), sec)
    assert list(cap.model) == ["dpc", "mlt"] and list(cap.readout) == ["associations", "scalar"] and cap.bounded.all()
    assert list(cap.setting) == ["dpc/associations N=50", "mlt/scalar"]
    assert list(cap.bound) == [2 * 8 + 8, 2 * (8 - 1) + 1]                  # DPC's count; MLT's bound
    shown = words.shown(cap)
    assert shown["bound that applies"].iloc[1].startswith("MLT Theorem 1") and "x 15" in shown["bound that applies"].iloc[1]
    assert cap.bits_per_param.iloc[1] == pytest.approx(cap.capacity.iloc[1] * 1.0 / cap.param_count.iloc[1])
    text = words.sentences(cap)
    assert len(text) == 2 and text[1].startswith("mlt/scalar (1 architectures, 5 seeds; 1 reached T₅₀ within a factor 1.5): T₅₀ from")


# ---- the budget curve ------------------------------------------------------------------------------

def curve_preset(**changes):
    return quick_preset(seeds=[0, 1, 2, 3, 4], pool=65536, t_min=2, rel_tol=0.05, max_probes=20, budget_factor=2,
                        budgets=[1, 2, 4], **changes)


def grows(truth: dict[int, float]):
    """An oracle whose capacity grows with the budget: seed s memorizes T <= truth[b]·(1 + 0.02 s)."""
    return lambda H, dh, s, T, b: T <= truth[b] * (1 + 0.02 * s)


@pytest.mark.parametrize("truth, verdict", [({1: 300, 2: 450, 4: 455}, "converged"),
                                            ({1: 300, 2: 450, 4: 700}, "still rising"),
                                            ({1: 300, 2: 450, 4: 300}, "converged")])   # passes carry over
def test_the_budget_curve_tells_converged_from_still_rising(truth, verdict):
    p = curve_preset()
    passes = grows(truth)
    curve_rounds = search.simulate(p, {(2, 4): 100}, passes, budgets=lambda a: grid.curve_budgets(p, *a))
    r = summary.row(p, 2, 4, oracle_rows(p, curve_rounds, passes), "quick")
    assert r["budgets"] == [1, 2, 4] and r["budget_curve"] == verdict, r["rise"]
    for b, low, high in zip(r["budgets"], r["capacity_budget_low"], r["capacity_budget_high"]):
        median = max(t for c, t in truth.items() if c <= b) * 1.04               # a pass at fewer steps counts
        assert low <= median + 1 and median <= high + 1
    assert r["capacity_budget"][0] == r["capacity"]                 # budget 1 is the search's own T₅₀
    assert all(s == search.CLOSED for s in r["seed_status"])        # on a curve every bracket goes to rel_tol
    at2 = [pr for r_ in curve_rounds for pr in r_ if pr[4] == 2]
    assert len(at2) == len(set(at2))                                 # the budget check is the curve's own probe
    for s in p["seeds"]:                                             # a seed's first probe at 2x: its T_fail at 1x
        first2 = next(pr for r_ in curve_rounds for pr in r_ if pr[2] == s and pr[4] == 2)
        assert first2[3] == r["seed_high"][s]
    exposures = r["exposures"][0]
    assert exposures == pytest.approx(grid.steps(p, round(r["capacity"]), 1) * p["training"]["batch_size"] / r["capacity"])


def test_an_architecture_left_to_another_machine_has_no_curve_and_says_why():
    from memcap.capacity import convergence

    p = curve_preset(budget_not_run={"GPU work": [[4, 4]]})
    passes = grows({1: 300, 2: 450, 4: 700})
    rounds_ = search.simulate(p, {(4, 4): 100}, passes, budgets=lambda a: grid.curve_budgets(p, *a))
    assert {pr[4] for r_ in rounds_ for pr in r_} == {1, 2} and len(rounds_[-1]) == 1    # the budget check only
    r = summary.row(p, 4, 4, oracle_rows(p, rounds_, passes), "quick")
    assert r["budget_curve"] == "not run (GPU work)" and r["budgets"] == [1]
    assert summary.row(quick_preset(), 4, 4, oracle_rows(p, rounds_, passes), "quick")["budget_curve"] == convergence.NO_CURVE


def test_the_curve_s_limit_with_four_budgets_or_no_plateau():
    from memcap.capacity import curve

    B = [1, 2, 4, 8]
    T = [1000.0 - 600.0 / b for b in B]
    fit = curve.limit(B, T, [t / 1.05 for t in T], [t * 1.05 for t in T])
    assert 0 < fit["capacity_limit_low"] < 1000 < fit["capacity_limit_high"] < 1300
    assert math.isnan(curve.limit(B[:3], T[:3], T[:3], T[:3])["capacity_limit"])          # 3 budgets: no fit
    rising = [100.0 * b for b in B]
    assert curve.limit(B, rising, [t / 1.05 for t in rising], [t * 1.05 for t in rising])["capacity_limit_note"] == curve.NO_PLATEAU


def test_the_budget_sentence_names_each_row_s_own_budgets():
    """Rows of one setting searched to other budgets (paper_curve to 4x, paper_curve_8x to 8x) are said
    apart, each with its budgets, and a row with four budgets says its T∞."""
    nan = float("nan")

    def row(H, budgets, limit):
        k = len(budgets)
        return {"setting": "mlt/classification C=100", "readout": "classification", "input_dim": 64, "heads": H, "head_dim": 64, "value_dim": 1,
                "budgets": budgets, "capacity_budget": [100.0 * b ** 0.2 for b in budgets], "rise": [1.15] * (k - 1),
                "rise_low": [1.1] * (k - 1), "rise_high": [1.2] * (k - 1), "budget_curve": "still rising",
                "capacity_limit": limit, "capacity_limit_low": limit / 1.2, "capacity_limit_high": limit * 1.2,
                "capacity_limit_note": ""}
    said = words.budget_sentences(pd.DataFrame([row(5, [1, 2, 4], nan), row(2, [1, 2, 4, 8], 180.0)]))
    assert len(said) == 2, said
    assert said[0].startswith("mlt/classification C=100: T₅₀ at 1, 2, 4 x") and "H=5" in said[0] and "H=2" not in said[0], said
    assert said[1].startswith("mlt/classification C=100: T₅₀ at 1, 2, 4, 8 x") and "T∞ = 180 [" in said[1], said


def test_a_killed_budget_round_resumes_without_retraining(tmp_path):
    p = tiny_preset(budgets=[1, 2])
    whole, calls = tmp_path / "whole", []
    search_once(p, whole, tmp_path / "whole.ck", calls)
    table = ProbeStore(whole, p, 1, 2).table()
    assert (table.budget == 2).sum() >= 2                                  # every seed's curve at 2x
    expected = table.drop(columns=["wall_time_s", "pack", "models_in_round", "segments"])
    first_x2 = int((table.budget == 1).sum()) + 1                          # the first probe at 2x written

    killed, first, second = tmp_path / "killed", [], []
    with pytest.raises(KeyboardInterrupt):
        search_once(p, killed, tmp_path / "killed.ck", first, kill_at=first_x2)
    t = ProbeStore(killed, p, 1, 2).table()
    done = {probes.Probe(1, 2, int(r.seed), int(r.dataset_size), int(r.budget)) for r in t.itertuples()}
    assert (t.budget == 2).sum() == 1 and (tmp_path / "killed.ck.plan.json").exists()
    search_once(p, killed, tmp_path / "killed.ck", second)
    trained = [pr for group in second for pr in group]
    assert not set(trained) & done and len(trained) == len(set(trained))
    assert second[0] == [pr for pr in first[-1] if pr not in done]        # the killed round's rest first
    got = ProbeStore(killed, p, 1, 2).table().drop(columns=["wall_time_s", "pack", "models_in_round", "segments"])
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expected.reset_index(drop=True))
    assert search_once(p, killed, tmp_path / "killed.ck", []) == 0


def test_a_row_marked_not_run_takes_the_curve_another_preset_searched_once_unmarked(tmp_path):
    """A preset marks a row `budget_not_run` while another (a GPU preset) searches its curve; unmarked, the
    row's search finds every probe in the shared folder and trains nothing."""
    runs, first, elsewhere, after = tmp_path / "runs", [], [], []
    marked = tiny_preset(budgets=[1, 2], budget_not_run={"GPU work": [[1, 2]]})
    search_once(marked, runs, tmp_path / "a.ck", first)
    here = {pr for group in first for pr in group}
    assert sum(pr.budget == 2 for pr in here) <= 1                          # the budget check's probe
    gpu = {**marked, "heads_grid": [1, 4], "budget_not_run": {}}           # another grid, the same probes
    assert grid.probe_folder(gpu, 1, 2) == grid.probe_folder(marked, 1, 2)
    search_once(gpu, runs, tmp_path / "b.ck", elsewhere)
    there = {pr for group in elsewhere for pr in group}
    assert there and {pr.budget for pr in there} == {2} and not there & here   # the curve, nothing twice
    unmarked = {k: v for k, v in marked.items() if k != "budget_not_run"}
    assert search_once(unmarked, runs, tmp_path / "c.ck", after) == 0 and after == []


# ---- bits without a threshold, the readout's rank, the lr check ------------------------------------

def bits_points(bits_at: dict[int, float], seeds=(0, 1, 2)):
    return pd.DataFrame([{"dataset_size": T, "seed": s, "memorized_bits": b + (s - 1) * 0.01 * b}
                         for T, b in bits_at.items() for s in seeds])


@pytest.mark.parametrize("bits_at, plateau, top_T", [
    ({100: 600.0, 200: 1100.0, 400: 1500.0, 800: 1520.0, 1600: 1490.0}, "plateaued", 800),
    ({100: 600.0, 200: 1100.0, 400: 1500.0, 800: 2200.0}, "still rising", 800),
    ({100: 600.0, 200: 1100.0, 400: 1500.0, 800: 1200.0}, "still rising", 400)])    # the top is not the end
def test_morris_bits_are_the_curve_s_maximum_and_say_whether_it_plateaued(bits_at, plateau, top_T):
    from memcap.capacity import morris

    m = morris.measure(bits_points(bits_at))
    assert m["morris_bits"] == pytest.approx(max(bits_at.values())) and m["morris_T"] == top_T
    assert m["morris_plateau"] == plateau and m["morris_largest_T"] == max(bits_at)


def test_morris_bits_of_trained_runs_are_the_recorded_sums_and_the_runs_of_a_row_s_shape_join_it():
    """Runs whose bits are known (each a sum of max(0, log2 C − loss in bits) over its examples) and
    the MLT runs of the row's shape and trainer only."""
    from memcap.capacity import morris

    C, T = 100, 50
    losses = np.r_[np.full(30, 0.1), np.full(20, 9.0)]                 # nats: 30 held, 20 worse than chance
    known = float(np.maximum(0.0, math.log2(C) - losses / math.log(2)).sum())
    p = quick_preset(input_dim=64, context_size=32, num_classes=C,
                     training={"lr": 1e-3, "batch_size": 256, "epochs": 500, "min_steps": 50000, "eval_every": 500,
                               "early_stop": True})
    base = {"task": "classification", "heads": 10, "head_dim": 64, "input_dim": 64, "context_size": 32,
            "num_classes": C, "context": "shared", "lr": 1e-3, "batch_size": 256, "min_steps": 50000}
    runs = pd.DataFrame([{**base, "dataset_size": 10 * T, "seed": 0, "memorized_bits": known},
                         {**base, "dataset_size": 10 * T, "seed": 1, "memorized_bits": known},
                         {**base, "lr": 3e-3, "dataset_size": 20 * T, "seed": 0, "memorized_bits": 9e9},   # another lr
                         {**base, "heads": 20, "dataset_size": 20 * T, "seed": 0, "memorized_bits": 9e9}])
    like = morris.runs_like(runs, p, 10, 64)
    assert len(like) == 2 and like.memorized_bits.eq(known).all()
    assert morris.runs_like(runs, {**p, "value_dim": 4}, 10, 64).empty      # the family trains d_v = 1 only
    m = morris.measure(pd.concat([bits_points({T: known / 2}), like], ignore_index=True))
    assert m["morris_bits"] == pytest.approx(known) and m["morris_T"] == 10 * T


def readout_cap(law, heads=(2, 5, 10), dvs=(1, 4), noise=0.03, budgets=(1,)):
    """Rows at each budget: T₅₀ = law(H, d_v) times 1.2 a doubling (±5% intervals)."""
    rng = np.random.default_rng(3)
    rows = []
    for h in heads:
        for v in dvs:
            Ts = [law(h, v) * 1.2 ** math.log2(b) * (1 + noise * rng.standard_normal()) for b in budgets]
            rows.append({"setting": "mlt/classification C=100" + (f" d_v={v}" if v > 1 else ""), "model": "mlt",
                         "readout": "classification", "variant": None, "heads": h,
                         "head_dim": 64, "value_dim": v, "budgets": list(budgets), "capacity_budget": Ts,
                         "capacity_budget_low": [T / 1.05 for T in Ts], "capacity_budget_high": [T * 1.05 for T in Ts],
                         "budget_limited": False, "rise_verdict": ["converged"] * (len(budgets) - 1)})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("law, verdict", [(lambda h, v: 8.0 * (h * v) ** 2.2, aggregate.H_DV),
                                          (lambda h, v: 8.0 * h ** 2.2, aggregate.H_ONLY),
                                          (lambda h, v: 8.0 * h ** 2.2 * v ** 1.0, aggregate.BETWEEN)])
def test_the_readout_law_tells_h_dv_from_h(law, verdict):
    fit = aggregate.readout_law(readout_cap(law))
    assert fit["verdict"] == verdict and fit["alpha"][1] < 2.2 < fit["alpha"][2]
    assert fit["heads"] == [2, 5, 10] and fit["value_dims"] == [1, 4]
    assert aggregate.readout_law(readout_cap(law, dvs=(1,))) is None                     # one d_v: no law
    assert aggregate.readout_law(readout_cap(law, heads=(2, 10))) is None                # 4 rows, 3 coefficients
    pooled = aggregate.readout_law(readout_cap(law, heads=(2, 10), budgets=(1, 2)))      # each row at 1x and 2x
    assert pooled["verdict"] == verdict and pooled["points"] == 8 and pooled["budgets"] == [1, 2]
    assert words.readout_sentence(None)[0].startswith("Values per head (d_v): SKIPPED")


@pytest.mark.parametrize("at2, variants, says", [((500, 480, 520), [(370, 360, 380), (380, 370, 390)], "the step count limits"),
                                                 ((500, 480, 520), [(300, 290, 310), (495, 480, 510)], "the lr limits"),
                                                 ((375, 365, 385), [(370, 360, 380), (380, 370, 390)], "neither limits"),
                                                 ((500, 480, 520), [(300, 290, 310), (430, 420, 440)], "both")])
def test_the_lr_check_says_what_limits(at2, variants, says):
    assert words.lr_verdict((372, 365, 379), at2, variants).startswith(says)


def test_budget_not_run_names_architectures_of_the_preset():
    from memcap.capacity import checks

    sec = memcap_params.load("params.yaml", {"scale": {"default": "quick", "capacity": "paper_budget"}})["capacity"]
    scale = {"capacity": "paper_budget"}
    assert checks.problems({"capacity": sec, "scale": scale}) == []
    bad = {**sec, "paper_curve": {**sec["paper_curve"], "budget_not_run": {"GPU work": [[60, 64]]}}}
    assert checks.problems({"capacity": bad, "scale": scale}) == [
        "capacity.paper_curve.budget_not_run: [60, 64] is not an architecture of the preset; allowed: its (H, d_h) grid"]
    # a preset the active one does not read is checked when selected: trimming a base's grid for a test
    # (quick's, of which quick_curve is a variant) must not stop the run
    assert checks.problems({"capacity": bad, "scale": {"capacity": "quick"}}) == []


def test_the_table_and_its_sentences_show_the_curve_or_say_why_not():
    p = curve_preset(budget_not_run={"GPU work": [[4, 4]]})
    rows, probe_rows = [], []
    for arch, truth in (((2, 4), {1: 300, 2: 450, 4: 455}), ((1, 4), {1: 100, 2: 150, 4: 230}), ((4, 4), {1: 900, 2: 990, 4: 999})):
        passes = grows(truth)
        rounds_ = search.simulate(p, {arch: 100}, passes, budgets=lambda a: grid.curve_budgets(p, *a))
        probes_ = oracle_rows(p, rounds_, passes).assign(scale="quick_curve")
        rows.append(summary.row(p, *arch, probes_, "quick_curve"))
        probe_rows.append(probes_)
    cap = aggregate.table(pd.DataFrame(rows), pd.concat(probe_rows), {"quick_curve": p})
    by = cap.set_index("heads")
    assert by.loc[2, "budget_curve"] == "converged" and by.loc[1, "budget_curve"] == "still rising"
    assert by.loc[4, "budget_curve"] == "not run (GPU work)"
    assert by.loc[1, "lower_bound"] and not by.loc[2, "lower_bound"]                  # still rising: a lower bound
    shown = words.shown(cap).set_index("H")
    assert "still rising" in shown.loc[1, "rise per doubling [90% CI]"]
    assert shown.loc[1, "in the laws"].startswith("left out: H·d_v = 1 < log2 C")      # C = 100 from one readout number
    assert shown.loc[4, "T₅₀ at each budget (x the paper's steps)"] == "not run (GPU work)"
    text = " ".join(words.findings(cap))
    assert "H=2 d_h=4 converged" in text and "H=1 d_h=4 still rising" in text
    assert "Budget curve not run (GPU work): H=4 d_h=4." in text and "SKIPPED" in text   # no d_v rows: skipped


def test_capacity_rows_lists_each_member_s_rows_and_the_missing_ones(tmp_path, monkeypatch, capsys):
    """`memcap capacity rows` names what `search --runs` takes where Snakemake is not installed: the rows
    the rule would write, each member's for a composite; --missing leaves out those written."""
    import yaml

    from memcap.cli import build_parser

    params = yaml.safe_load(open("params.yaml"))
    params["scale"]["capacity"] = "quick_budget"
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    monkeypatch.chdir(tmp_path)
    section = memcap_params.load("params.yaml")[grid.FAMILY]
    expected = [f"results/capacity/runs/{grid.run_name(m, section[m], H, dh)}"
                for m in section["quick_budget"]["settings"] for H, dh in grid.architectures(section[m])]

    def rows(*extra):
        args = build_parser().parse_args(["capacity", "rows", *extra])
        args.func(args)
        return capsys.readouterr().out.split()

    assert rows() == expected and len({r.split("/")[3] for r in expected}) == 2
    (tmp_path / expected[0]).parent.mkdir(parents=True)
    (tmp_path / expected[0]).write_bytes(b"")
    assert rows("--missing") == expected[1:]


def test_sentences_name_a_dpc_architecture_with_its_d():
    """DPC's rows of one setting span d = 4, 8, 12: H=4 d_h=4 alone would name two rows."""
    from types import SimpleNamespace as Row

    dpc = [Row(setting="dpc/associations N=50", readout="associations", input_dim=d, heads=4, head_dim=4, value_dim=1) for d in (4, 8)]
    assert [words._arch(r) for r in dpc] == ["d=4 H=4 d_h=4", "d=8 H=4 d_h=4"]
    mlt = Row(setting="mlt/classification C=100 d_v=4", readout="classification", input_dim=64, heads=2, head_dim=64, value_dim=4)
    assert words._arch(mlt) == "H=2 d_h=64 d_v=4"


def test_models_of_one_task_are_set_side_by_side_at_about_equal_parameters():
    """Two models on one task (same readout, labels, d and n): each architecture of the second beside the
    first's at the nearest parameter count within 1.5x, T₅₀'s ratio with its interval; a model on another
    task (other d) is not compared, and a quick preset's label says it is a stand-in."""
    from memcap.capacity import settings

    sec = memcap_params.load("params.yaml", {"scale": {"default": "quick", "capacity": "paper_all"}})["capacity"]
    assert settings.label(sec["quick"], "quick").endswith("(QUICK STAND-IN)")
    assert settings.label(sec["paper"], "paper") == "mlt/classification C=100"

    def row(setting, d, params, t50):
        return {"setting": setting, "setting_base": setting, "variant": None, "readout": "classification", "d_out": 100,
                "input_dim": d, "context_size": 4, "heads": 2, "head_dim": 4, "value_dim": 1, "param_count": params,
                "bits_per_param": t50 * 6.64 / params, "law_T": t50, "law_low": t50 / 1.2, "law_high": t50 * 1.2,
                "lower_bound": False}
    cap = pd.DataFrame([row("layer", 8, 1000, 50), row("block", 8, 1100, 200), row("block", 8, 5000, 900),
                        row("block", 16, 1000, 300)])
    said = words.side_by_side_sentences(cap)
    assert len(said) == 1 and said[0].startswith("Models on one task, beside layer"), said
    assert "(1,100 params) vs H=2 d_h=4 (1,000): 4.00 [" in said[0] and "5,000" not in said[0], said
    assert words.side_by_side_sentences(cap[cap.input_dim == 8].iloc[:1]) == []   # one model: nothing to compare
