"""params.yaml validation: every bad value stops the run with a message naming key, value, allowed."""

import copy
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from memcap import params as memcap_params

REPO = Path(__file__).resolve().parents[1]
PARAMS = yaml.safe_load((REPO / "params.yaml").read_text())


def _with(path: str, value):
    p = copy.deepcopy(PARAMS)
    *parents, last = path.split(".")
    node = p
    for key in parents:
        node = node[key]
    if value is _DELETE:
        del node[last]
    else:
        node[last] = value
    return p


_DELETE = object()
Q = "mlt_synthetic.quick"

BAD = [
    # (where, value, words the message must contain)
    ("scale", "huge", ["scale", "'huge'", "quick", "paper"]),
    ("device", "tpu", ["device", "'tpu'", "auto"]),
    (f"{Q}.defaults.heads", -1, [f"{Q}.defaults.heads", "-1", ">= 1"]),
    (f"{Q}.defaults.heads", "four", [f"{Q}.defaults.heads", "'four'", "integer"]),
    (f"{Q}.defaults.lr", 0, [f"{Q}.defaults.lr", "> 0"]),
    (f"{Q}.defaults.unknown_knob", 3, [f"{Q}.defaults", "unknown_knob", "allowed keys"]),
    (f"{Q}.sweeps.scale_head_shared.values", [], [f"{Q}.sweeps.scale_head_shared.values", "[]", "at least 1"]),
    (f"{Q}.sweeps.scale_head_shared.dataset_sizes", [100, 100], ["dataset_sizes", "repeated"]),
    (f"{Q}.sweeps.scale_head_shared.task", "ranking", ["task", "'ranking'", "classification"]),
    (f"{Q}.sweeps.scale_head_shared.vary", "depth", ["vary", "'depth'", "head_dim"]),
    (f"{Q}.seeds", [], [f"{Q}.seeds", "at least 1"]),
    (f"{Q}.sweeps.scale_dh_shared.values", [4, 99], ["scale_dh_shared", "head_dim 99", "input_dim"]),
    (f"{Q}.defaults.input_dim", _DELETE, [f"{Q}.defaults", "'input_dim' is a required property"]),
    ("resources.quick.train.gpu", -1, ["resources.quick.train.gpu", ">= 0"]),
    ("resources.paper.families.dcp", {"train": {"runtime": 60}}, ["resources.paper.families", "dcp", "allowed keys"]),
    ("resources.paper.families.dpc.train.runtime", 0, ["resources.paper.families.dpc.train.runtime", ">= 1"]),
]


@pytest.mark.parametrize("where,value,words", BAD, ids=[b[0] + "=" + repr(b[1])[:12] for b in BAD])
def test_bad_params_are_rejected_with_a_message_naming_the_key(where, value, words):
    with pytest.raises(memcap_params.ParamsError) as err:
        memcap_params.validate(_with(where, value))
    for word in words:
        assert word in str(err.value), f"{word!r} missing from: {err.value}"


def test_the_shipped_params_are_valid_at_both_scales():
    memcap_params.validate(copy.deepcopy(PARAMS))
    memcap_params.validate({**copy.deepcopy(PARAMS), "scale": "paper"})


def test_paper_preset_has_the_342_runs_per_seed_of_the_original():
    from memcap.mlt_synthetic import grid
    paper = grid.resolve(PARAMS["mlt_synthetic"], "paper")
    assert len(grid.grid_points(paper)) == 342 and len(grid.jobs(paper)) == 3 * 342   # 2 seeds a job
    assert PARAMS["mlt_synthetic"]["paper"]["seeds"] == list(range(6))
    # the published preset: every figure at the paper's settings (Fig 4 left seeds 0, 1; Figs 2a, 4 right and 5 left
    # 0-3; Figs 2b, 2c, 3 and 5 right all six: their label is the paper's without a seed count)
    published = grid.resolve(PARAMS["mlt_synthetic"], "published")
    at_paper = sorted(k for k, s in published.items() if s["preset"] == "paper")
    assert at_paper == ["head_saturation_h4", "head_saturation_h8", "regress_scale_ctx_size_shared",
                        "regress_scale_head_shared", "scale_ctx_size", "scale_ctx_size_shared", "scale_dh_shared",
                        "scale_head", "scale_head_shared"]
    seeds = {"scale_ctx_size_shared": 6, "head_saturation_h4": 6, "head_saturation_h8": 6, "scale_dh_shared": 6,
             "regress_scale_ctx_size_shared": 6, "regress_scale_head_shared": 4, "scale_head_shared": 4,
             "scale_ctx_size": 4}
    assert all(s["label"] == ("paper settings" if seeds.get(k, 2) == 6 else
                              f"paper settings, {seeds.get(k, 2)} of the paper's 6 seeds")
               for k, s in published.items() if k in at_paper)
    assert sorted(published) == at_paper                        # no stand-in left


def test_snakemake_stops_before_any_job_on_bad_params(project):
    project.edit_params(lambda p: p["mlt_synthetic"]["quick"]["defaults"].update(heads=0))
    proc = project.snakemake("-n", check=False)
    assert proc.returncode != 0
    assert "mlt_synthetic.quick.defaults.heads: got 0" in proc.stderr + proc.stdout
    assert not [f for f in (project.root / "results").rglob("*") if f.is_file() and f.name != ".gitignore"]


def test_cli_exits_2_with_the_message(tmp_path):
    # in tmp_path, not the repository: a file there is copied by every other worker's copy_project
    bad = tmp_path / "bad_params.yaml"
    bad.write_text(yaml.safe_dump(_with("scale", "big")))
    proc = subprocess.run([sys.executable, "-m", "memcap", "params", "check", "--params", str(bad)],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "scale: got 'big'" in proc.stderr


def test_schema_defaults_are_filled_in():
    p = copy.deepcopy(PARAMS)
    del p["device"]
    assert memcap_params.validate(p)["device"] == "auto"


def test_capacity_checks_name_the_key():
    with pytest.raises(memcap_params.ParamsError) as err:
        memcap_params.validate(_with("capacity.quick.t_min", 99999))
    assert "capacity.quick.t_min: 99999 above pool 2048" in str(err.value)


def test_resolved_params_file_is_named_by_its_content(tmp_path):
    def resolved(**top):   # as the Snakefile writes it: validated config, defaults filled in
        return memcap_params.write_resolved(memcap_params.validate({**copy.deepcopy(PARAMS), **top}), tmp_path)

    a, b, c = resolved(), resolved(), resolved(scale="paper")
    assert a == b != c
    assert memcap_params.load(a) == memcap_params.load(b)
    assert memcap_params.load(c)["scale"] == "paper"
    # A job reads its resolved file as written (validated when the Snakefile wrote it), the same
    # params validation gives; edited by hand, its name no longer matches its text, and it is validated.
    assert memcap_params.load(a) == memcap_params.validate(memcap_params.read_yaml(a))
    a.write_text(a.read_text().replace("device: auto", "device: gpu"))
    with pytest.raises(memcap_params.ParamsError, match="device: got 'gpu'"):
        memcap_params.load(a)


def test_a_config_that_passed_is_filled_in_from_memory_until_what_judges_it_changes(tmp_path, monkeypatch):
    """The Snakefile's resolve (every Snakemake start): the second start with the same config reads
    what validation gave (defaults filled in, in the same order) without validating; a schema edit, or
    a config that failed, is validated again."""
    calls = []
    real = memcap_params.validate
    monkeypatch.setattr(memcap_params, "validate", lambda p: calls.append(1) or real(p))
    given = copy.deepcopy(PARAMS)
    del given["device"]                                   # a default to fill in
    first, second = copy.deepcopy(given), copy.deepcopy(given)
    path = memcap_params.resolve(first, tmp_path)
    assert calls == [1] and len(list(tmp_path.glob("validated-*.json"))) == 1
    assert memcap_params.resolve(second, tmp_path) == path and calls == [1]      # remembered
    assert second == first and list(second) == list(first) and second["device"] == "auto"
    assert list(second["mlt_synthetic"]["quick"]) == list(first["mlt_synthetic"]["quick"])
    # what judges it changed: a schema's text (here a copy of the schemas with a comment added)
    schemas = tmp_path / "schemas"
    schemas.mkdir()
    for f in (REPO / "workflow/schemas").glob("*.schema.yaml"):
        (schemas / f.name).write_text(f.read_text() + "\n# edited\n")
    monkeypatch.setenv("MEMCAP_SCHEMA_DIR", str(schemas))
    assert memcap_params.resolve(copy.deepcopy(given), tmp_path) == path and calls == [1, 1]
    # a config that fails is validated (and refused) every time, never remembered
    for _ in range(2):
        with pytest.raises(memcap_params.ParamsError, match="device: got 'gpu'"):
            memcap_params.resolve({**copy.deepcopy(given), "device": "gpu"}, tmp_path)
    assert calls == [1, 1, 1, 1] and len(list(tmp_path.glob("validated-*.json"))) == 2


def test_scale_per_family_and_a_bad_entry_named():
    from memcap import params as mp

    base = mp.load("params.yaml")
    mixed = mp.validate({**base, "scale": {"default": "quick", "dpc": "paper", "theory": "paper"}})
    assert mp.scale_of(mixed, "dpc") == "paper" and mp.scale_of(mixed, "mlt_synthetic") == "quick"
    assert mp.preset(mixed, "dpc") is mixed["dpc"]["paper"]
    assert mp.scale_label(mixed) == "theory=paper, dpc=paper, others quick"
    assert mp.scale_label({**base, "scale": "quick"}) == "quick"
    # the shipped params are the published scales: DPC, theory and the assumption checks at paper, the
    # capacity search in its three settings with the budget curves, MLT's published sweeps
    published = {"default": "quick", "dpc": "paper", "theory": "paper", "assumptions": "paper",
                 "capacity": "paper_all", "mlt_synthetic": "published"}
    assert mp.scales(base) == mp.scales(mp.validate({**base, "scale": published}))
    for bad, words in [({"dcp": "paper"}, ["scale.dcp", "not an allowed key", "mlt_synthetic"]),
                       (4, ["scale: got 4", "a value of type string"]), ({"dpc": 1}, ["scale.dpc: got 1"]),
                       ({"dpc": "huge"}, ["scale.dpc", "'huge'", "quick"]), ("papr", ["scale", "'papr'"])]:
        with pytest.raises(mp.ParamsError) as err:
            mp.validate({**base, "scale": bad})
        assert all(w in str(err.value) for w in words), str(err.value)


def test_the_schema_names_every_family_scale_may_map():
    """scale's keys in the schema are exactly memcap.params.FAMILIES (and default)."""

    mp = memcap_params
    schema = yaml.safe_load((mp.schema_dir() / "params.schema.yaml").read_text())
    mapping = schema["properties"]["scale"]["anyOf"][1]
    assert mapping["propertyNames"]["enum"] == ["default", *mp.FAMILIES]


def test_a_family_sizes_its_own_jobs_the_others_keep_their_class(project):
    """resources.paper.families: DPC and theory training jobs ask for their own measured walltime;
    a light job of the same family keeps the class's."""
    paper = PARAMS["resources"]["paper"]
    dry = project.snakemake("-n", "--config", "scale=paper", "--", project.run_path("dpc", "exp1", "13", scale="paper"),
                            "results/theory/tables/gd.parquet", "results/theory/tables/rank_bounds.parquet").stdout
    asked = dict(re.findall(r"rule (\w+):.*?runtime=(\d+)", dry, flags=re.S))
    assert asked == {"dpc_train": str(paper["families"]["dpc"]["train"]["runtime"]),
                     "theory_gd": str(paper["families"]["theory"]["train"]["runtime"]),
                     "theory_bounds": str(paper["light"]["runtime"])}, dry
    assert paper["families"]["dpc"]["train"]["runtime"] != paper["train"]["runtime"]


def test_one_scale_note_for_every_title_and_table():
    """quick says it is a stand-in, a preset of your own that it is not the papers' settings, paper
    says nothing more; every family's titles use this one helper."""
    from memcap import scales

    assert scales.scale_note("quick") == "QUICK STAND-IN: reduced grid"
    assert scales.scale_note("mine") == "OWN PRESET 'mine': not the papers' settings"
    assert scales.scale_note("paper") == "" and scales.scale_tag("paper") == "paper scale"
    # a shipped variant is labeled as its scale; a name that only contains one is your own
    assert scales.scale_note("paper_scalar") == "" and scales.scale_note("quick_dpc") == scales.scale_note("quick")
    assert scales.scale_note("mypaper_x") == "OWN PRESET 'mypaper_x': not the papers' settings"
    assert scales.scale_rank("paper_budget") == scales.scale_rank("paper") > scales.scale_rank("mine") == 0
    src = Path(scales.__file__).parent
    hand_made = [str(f.relative_to(src)) for f in src.rglob("*.py")
                 if f.name != "scales.py" and re.search(r"STAND-IN|OWN PRESET", f.read_text())]
    assert hand_made == [], f"write the scale label with memcap.scales.scale_note, not by hand: {hand_made}"


# ---- memory before a job starts (memcap.training.memory) ---------------------------------------------

def _active(p: dict, family: str, preset: str) -> dict:
    p["scale"] = {**p["scale"], family: preset}
    return p


@pytest.mark.parametrize("where, family", [(f"{Q}.defaults.input_dim", "mlt_synthetic"),
                                            (f"{Q}.defaults.context_size", "mlt_synthetic"),
                                            ("capacity.quick.input_dim", "capacity"),
                                            ("theory.quick.gradient_descent.input_dim", "theory")])
def test_a_preset_too_big_for_the_machine_is_named_by_params_check(where, family):
    """A million-wide input or context: `memcap params check` names the sweep or architecture, the estimate
    and the memory it is above, before any job is planned; the shipped quick preset passes."""
    fine = _active(copy.deepcopy(PARAMS), family, "quick")
    memcap_params.validate(fine)
    big = _active(_with(where, 1_000_000), family, "quick")
    with pytest.raises(memcap_params.ParamsError) as err:
        memcap_params.validate(big)
    said = str(err.value)
    assert f"{family}.quick" in said and "needs about" in said and "above this machine's available memory" in said


def test_a_slurm_allocation_is_the_limit_a_job_is_checked_against(monkeypatch):
    """Under SLURM the job's --mem is the limit: 100 MB cannot hold torch; 64 GB holds the quick preset."""
    from memcap.training import memory

    parts = {"data": 10 * 2 ** 20, "models": 2 ** 20, "activations": 2 ** 20, "torch": memory.TORCH_BYTES}
    monkeypatch.setenv("SLURM_MEM_PER_NODE", "100")
    said = memory.problem("mlt_synthetic.quick.sweeps.scale_head_shared", parts)
    assert said and "its SLURM allocation (--mem), 100 MB" in said and "needs about 412 MB" in said
    monkeypatch.setenv("SLURM_MEM_PER_NODE", "65536")
    assert memory.problem("mlt_synthetic.quick.sweeps.scale_head_shared", parts) is None


def test_a_job_too_big_stops_before_it_allocates():
    """The job itself checks too (a preset edited after the plan, another machine): TooBig, a ParamsError the
    CLI prints without a traceback, before a tensor exists; a quick job's estimate fits."""
    import time

    from memcap.mlt_synthetic import grid
    from memcap.mlt_synthetic.train import check_memory, train_jobs
    from memcap.training import memory
    from memcap.training.pack import Job

    family = _with(f"{Q}.defaults.input_dim", 1_000_000)["mlt_synthetic"]
    s = grid.resolve(family, "quick")["scale_head_shared"]
    start = time.perf_counter()
    with pytest.raises(memory.TooBig, match=r"heads=\d+ T=\d+: needs about [\d,.]+ GB .* nothing was allocated"):
        train_jobs([Job(s, s["values"][0], max(s["dataset_sizes"]))], device="cpu", progress=False)
    assert time.perf_counter() - start < 30    # before any tensor: the pack would take terabytes
    fine = grid.resolve(PARAMS["mlt_synthetic"], "quick")["scale_head_shared"]
    check_memory([Job(fine, fine["values"][-1], max(fine["dataset_sizes"]))])


def test_a_theory_gd_case_too_big_stops_before_it_allocates():
    """Theory's gradient descent trains every seed of a case at once through MLT's trainer: the same
    estimate stops it before a tensor exists."""
    import torch

    from memcap.theory import exp_gd
    from memcap.theory.grid import gd_cases
    from memcap.training import memory

    p = _with("theory.quick.gradient_descent.input_dim", 1_000_000)["theory"]["quick"]
    case = gd_cases(p)[0]
    with pytest.raises(memory.TooBig, match=r"theory GD H=1 T=\d+ \(\d+ seeds\): needs about .* nothing was allocated"):
        exp_gd.run_case(case, p["gradient_descent"], p["seeds"], p["rank_rtol"], torch.device("cpu"), progress=False)


def test_a_dpc_point_too_big_is_named_by_params_check_and_stops_its_job():
    """A DPC curve point (every repetition's AoT at once) too big for the machine: params check names the
    experiment, its series and x; the job stops before the model exists; the shipped presets fit."""
    from memcap.dpc import grid
    from memcap.dpc.train import run_job
    from memcap.training import memory

    for preset in ("quick", "paper"):
        memcap_params.validate(_active(copy.deepcopy(PARAMS), "dpc", preset))
    big = _active(copy.deepcopy(PARAMS), "dpc", "quick")
    big["dpc"]["quick"]["experiments"]["exp1"]["series"]["values"] = [4, 200_000]
    with pytest.raises(memcap_params.ParamsError, match=r"dpc\.quick\.experiments\.exp1 \(200000, x=\d+\): needs "
                                                        r"about [\d,.]+ GB .* make it smaller \(dim, heads"):
        memcap_params.validate(big)
    s = grid.settings(big["dpc"]["quick"], "exp1")
    with pytest.raises(memory.TooBig, match=r"dpc exp1 200000 x=1: needs about .* nothing was allocated"):
        run_job(s, "exp1", "200000", "quick", device="cpu", progress=False)


def test_a_capacity_round_too_big_stops_before_it_allocates():
    import torch

    from memcap.capacity import probes
    from memcap.training import memory

    # a preset the active one does not read (params check would name it first)
    p = memcap_params.validate(_active(_with("capacity.quick.input_dim", 1_000_000), "capacity", "paper"))["capacity"]["quick"]
    with pytest.raises(memory.TooBig, match=r"capacity H=1 d_h=4 \(2 probes, T up to 64\): needs about"):
        probes.train_probes([probes.Probe(1, 4, 0, 64), probes.Probe(1, 4, 1, 64)], p, torch.device("cpu"),
                            lambda probe, row: None, progress=False)


def test_an_assumptions_track_too_big_is_named_by_params_check_and_stops_its_job(tmp_path):
    """A track's job (its models, one batch through the largest, the rank checks, torch): params check names
    the preset and track when a million-example batch cannot fit; under a SLURM allocation too small the job
    stops before any model is loaded, with the estimate and the limit; the shipped presets fit."""
    import subprocess

    for preset in ("quick", "paper"):
        memcap_params.validate(_active(copy.deepcopy(PARAMS), "assumptions", preset))
    big = _active(_with("assumptions.quick.batch_size", 1_000_000), "assumptions", "quick")
    big["assumptions"]["quick"]["text"]["gpt2"]["count"] = 1_000_000      # a batch is at most the track's examples
    with pytest.raises(memcap_params.ParamsError, match=r"assumptions\.quick \(track gpt2\): needs about [\d,.]+ GB of "
                                                        r"memory \(models .* activations .*\), above .* make it smaller \(batch_size"):
        memcap_params.validate(big)
    env = {**os.environ, "SLURM_MEM_PER_NODE": "300", "PATH": f"{REPO / '.venv' / 'bin'}:{os.environ['PATH']}"}
    out = tmp_path / "checks.parquet"
    job = subprocess.run(["memcap", "assumptions", "track", "--params", str(REPO / "params.yaml"), "--scale", "quick",
                          "--track", "bert", "--out", str(out), "--curves", str(tmp_path / "curves.parquet")],
                         capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert job.returncode != 0 and "(track bert): needs about" in job.stderr, job.stderr
    assert "its SLURM allocation (--mem), 300 MB" in job.stderr, job.stderr
    assert "Traceback" not in job.stderr and not out.exists()


# ---- time before a job is submitted (memcap.training.duration) -----------------------------------------

def test_a_job_that_cannot_finish_within_its_runtime_is_named_before_it_is_submitted(tmp_path):
    """The paper's MLT grid as a preset of your own gets quick's resources (1 thread, 30 min): its largest
    jobs' arithmetic alone, at more than a CPU thread computes, is above 30 min, and `memcap params check`
    names each such sweep, its floor and the limit (a note, not an error); the shipped presets fit."""
    assert memcap_params.slow_jobs(memcap_params.validate(copy.deepcopy(PARAMS))) == []
    own = copy.deepcopy(PARAMS)
    own["mlt_synthetic"]["mine"] = copy.deepcopy(own["mlt_synthetic"]["paper"])
    own = memcap_params.validate(_active(own, "mlt_synthetic", "mine"))
    said = memcap_params.slow_jobs(own)
    assert said and all(re.search(r"^mlt_synthetic\.mine\.sweeps\.\w+ \(.*\): at least [\d.,]+ (h|min) of "
                                  r"arithmetic .* above its runtime limit of 30\.0 min", line) for line in said)
    assert any("scale_head " in line and "heads=60" in line for line in said)
    path = tmp_path / "own.yaml"
    path.write_text(yaml.safe_dump(own))
    check = subprocess.run([sys.executable, "-m", "memcap", "params", "check", "--params", str(path)],
                           capture_output=True, text=True)
    assert check.returncode == 0 and f"note: {said[0]}" in check.stdout, check.stdout + check.stderr
    # the same preset with a runtime that holds its floor: nothing said
    own["resources"]["quick"]["train"]["runtime"] = 100_000
    assert memcap_params.slow_jobs(own) == []


def test_the_time_floor_is_below_what_a_trainer_measured():
    """The floor is below the published runs' measured wall time (H = 60 at T = 40,000 took ~2 h on one
    thread, docs/speed.md): a floor above a measurement would stop jobs that finish."""
    from memcap.mlt_synthetic import grid
    from memcap.training import duration
    from memcap.training.sizes import shape

    s = grid.resolve(PARAMS["mlt_synthetic"], "published")["scale_head"]
    p = {**s, **shape(s, 60)}
    floor = duration.least_seconds(duration.mlt_model_flops(p, 60, 64, p["context_size"], 40_000), {"threads": 1})
    assert 60 < floor < 2 * 3600


def test_a_dpc_curve_that_cannot_finish_is_named_and_its_floor_is_below_a_measured_job():
    """DPC's curve jobs get a floor too (the readout's arithmetic, or its steps at 20 µs each, whichever is
    more): a million epochs a point at quick's resources are named with the floor and the limit; a quick job
    trained here takes longer than its floor (a floor above a measurement would flag jobs that finish)."""
    import time

    from memcap.dpc import checks, grid
    from memcap.dpc.train import run_job
    from memcap.training import duration

    own = copy.deepcopy(PARAMS)
    own["dpc"]["mine"] = copy.deepcopy(own["dpc"]["quick"])
    for g in own["dpc"]["mine"]["groups"].values():
        g["epochs"] = 1_000_000
    said = memcap_params.slow_jobs(memcap_params.validate(_active(own, "dpc", "mine")))
    assert said and all(re.search(r"^dpc\.mine\.experiments\.\w+ \(\w+\): at least [\d.,]+ (h|min) of training steps .* "
                                  r"above its runtime limit of 30\.0 min", line) for line in said), said
    quick = grid.settings(PARAMS["dpc"]["quick"], "exp2")
    start = time.perf_counter()
    run_job(quick, "exp2", "all", "quick", device="cpu", progress=False)
    measured = time.perf_counter() - start
    floor = max(duration.least_seconds(checks.job_flops(quick, "all"), {"threads": 1}),
                checks.job_steps(quick) * duration.EAGER_STEP_S)
    assert floor < measured, (floor, measured)


# ---- variant presets (`from:`) -----------------------------------------------------------------------

def test_a_variant_preset_is_its_base_with_the_keys_it_gives():
    """`from: paper_dpc` plus three keys resolves to paper_dpc with those three changed; a nested mapping
    (training) is merged key by key; a variant of a variant resolves in order; no `from` is left."""
    c = memcap_params.validate(copy.deepcopy(PARAMS))["capacity"]
    assert PARAMS["capacity"]["paper_dpc_d4"]["from"] == "paper_dpc"
    assert {k: v for k, v in c["paper_dpc_d4"].items() if c["paper_dpc"][k] != v} == {
        "input_dim": 4, "head_dim": 4, "head_dim_grid": [4]}
    assert c["paper_lr_triple"]["training"] == {**c["paper"]["training"], "lr": 3.0e-3}
    assert c["paper_lr_triple"]["heads_grid"] == [5] and c["paper_lr_triple"]["variant"] == "lr x 3"
    assert not any("from" in p for p in c.values())


@pytest.mark.parametrize("base, said", [("paper_dcp", "not a preset of the section"),
                                        ("paper_dpc_d4", "a circular chain")])
def test_a_variant_of_an_unknown_or_circular_preset_is_named(base, said):
    p = copy.deepcopy(PARAMS)
    p["capacity"]["paper_dpc"] = {**p["capacity"]["paper_dpc"], "from": base}
    with pytest.raises(memcap_params.ParamsError, match=rf"capacity\.paper_dpc\.from: got {base!r} \({said}\); "
                                                        r"allowed: one of \["):
        memcap_params.validate(p)


@pytest.mark.parametrize("edit", [None, ("paper_dpc", "threshold", 0.9)])
def test_the_published_capacity_presets_resolve_to_the_published_rows_and_probes(edit):
    """Every architecture of every member of the published composite names a row file and probe folders
    (memcap.capacity.grid: keys of its resolved settings) that the published capacity runs hold: written
    as variants, the presets stand for the same settings, so no row is rerun and no probe retrained.
    An edit of a base preset reaches its variants: their rows are then not the published ones."""
    import json

    from memcap.capacity import grid, settings

    lock = yaml.safe_load((REPO / "dvc.lock").read_text())["stages"]["capacity"]["outs"]
    md5 = next(o["md5"] for o in lock if o["path"] == "results/capacity/runs")
    listing = REPO / "published" / "dvc-remote" / "files" / "md5" / md5[:2] / md5[2:]
    files = {f["relpath"] for f in json.loads(listing.read_text())}
    folders = {f.rsplit("/", 1)[0] for f in files if f.startswith("probes/")}
    p = copy.deepcopy(PARAMS)
    if edit:
        p["capacity"][edit[0]][edit[1]] = edit[2]
    section = memcap_params.validate(p)["capacity"]
    missing = []
    for member in settings.members(section, memcap_params.scale_of(p, "capacity")):
        for H, dh in grid.architectures(section[member]):
            missing += [f for f in [grid.run_name(member, section[member], H, dh)] if f not in files]
            missing += [f for f in (grid.probe_folder(v, H, dh) for v in grid.lr_variants(section[member]))
                        if f not in folders]
    if edit is None:
        assert not missing, missing
    else:   # the base's rows and its variants' (d = 4, 12, tuned), not their probes (a threshold is the search's)
        assert {f.split("/")[0] for f in missing} == {"paper_dpc", "paper_dpc_d4", "paper_dpc_d12", "paper_dpc_tuned",
                                                      "paper_dpc_mlp"}


# ---- what DVC tracks: every key a family's results read ---------------------------------------------------

def _presets_read(raw: dict, family: str) -> set[str]:
    """The presets of params.yaml (as written) the family's active preset reads: a composite's members
    (capacity `settings`, MLT sweeps `from`), and each variant's base (`from:`), transitively."""
    section, todo, seen = raw[family], [memcap_params.scales(raw)[family]], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        p = section[name]
        todo += list(p.get("settings", [])) + ([p["from"]] if "from" in p else [])
        todo += [sw["from"] for sw in p.get("sweeps", {}).values() if "from" in sw]
    return seen


def _leaves(value, path: str) -> list[str]:
    if isinstance(value, dict) and value:
        return [leaf for k, v in value.items() for leaf in _leaves(v, f"{path}.{k}")]
    return [path]


def untracked_keys(dvc_yaml: dict, raw: dict) -> list[str]:
    """Every key of every preset a family's stage reads that the stage's DVC `params` leave out."""
    out = []
    for family in memcap_params.FAMILIES:
        tracked = [re.sub(r"\$\{scale\.(\w+)\}", lambda m: memcap_params.scales(raw)[m.group(1)], t)
                   for t in dvc_yaml["stages"][family]["params"]]
        for name in _presets_read(raw, family):
            out += [k for k in _leaves(raw[family][name], f"{family}.{name}")
                    if not any(k == t or k.startswith(t + ".") for t in tracked)]
    return out


def test_dvc_tracks_every_key_each_familys_results_read():
    """One key at a time, any key of any preset a family's published results read (a composite's
    members, a variant's base) is among its stage's DVC params, so `dvc status` names the stage after
    the edit (tests/test_infra_dvc.py edits one for real); a dvc.yaml that tracks only the composite's
    own entry (`capacity.${scale.capacity}`) misses its members' keys."""
    dvc_yaml = yaml.safe_load((REPO / "dvc.yaml").read_text())
    assert untracked_keys(dvc_yaml, PARAMS) == []
    narrow = copy.deepcopy(dvc_yaml)
    narrow["stages"]["capacity"]["params"] = ["scale.capacity", "capacity.${scale.capacity}"]
    missed = untracked_keys(narrow, PARAMS)
    assert "capacity.paper_dpc.threshold" in missed and "capacity.paper_dpc_mlp.family" in missed
