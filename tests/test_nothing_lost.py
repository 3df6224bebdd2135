"""Nothing lost, whatever the input: every bad params file stops before any job (and before DVC deletes
an output) with the key, the value and what is allowed; a grid of your own never overwrites a published
result; a corrupt file, a diverged run, a second run, a bad remote end in a message, not in a loss.

The fast tests call the library; the end-to-end ones run DVC and Snakemake on a fresh clone restored
from the repository's published remote and check every pre-existing output byte for byte."""

from __future__ import annotations

import copy
import hashlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest
import torch
import yaml

import infra_helpers as ih
from conftest import BIN, REPO, tiny_capacity
from memcap import checkpoint, results
from memcap import params as mp
from memcap.errors import TrainingFailed
from memcap.models.mlt_attention import MLTAttention
from memcap.tasks.mlt_data import make_data
from memcap.training.config import TrainConfig
from memcap.training.loop import train

PARAMS = mp.read_yaml(REPO / "params.yaml")


def _problem(mutate) -> str:
    p = copy.deepcopy(PARAMS)
    mutate(p)
    with pytest.raises(mp.ParamsError) as err:
        mp.validate(p)
    return str(err.value)


def _mlt_defaults(**kw):
    return lambda p: p["mlt_synthetic"]["quick"]["defaults"].update(**kw)


# ---- values that passed validation and then failed or lied: each now stops, naming the key ----------

@pytest.mark.parametrize("mutate, words", [
    (_mlt_defaults(heads=4.0), ["mlt_synthetic.quick.defaults.heads", "4.0", "whole number"]),
    (_mlt_defaults(lr=float("inf")), ["mlt_synthetic.quick.defaults.lr", "inf", "finite number"]),
    (_mlt_defaults(lr=float("nan")), ["mlt_synthetic.quick.defaults.lr", "nan", "finite number"]),
    (_mlt_defaults(min_steps=10 ** 15), ["mlt_synthetic.quick.defaults.min_steps", "<= 10000000"]),
    (_mlt_defaults(heads=10 ** 9), ["mlt_synthetic.quick.defaults.heads", "<= 10000000"]),
    (lambda p: p["mlt_synthetic"]["quick"]["sweeps"]["scale_head_shared"].update(dataset_sizes=[10 ** 12]),
     ["mlt_synthetic.quick.sweeps.scale_head_shared.dataset_sizes[0]", "<= 10000000"]),
    (lambda p: p["mlt_synthetic"]["quick"].update(seeds=[2 ** 32]), ["mlt_synthetic.quick.seeds[0]", "4294967296"]),
    (lambda p: p["dpc"]["quick"].update(group_seed=2 ** 32), ["dpc.quick.group_seed"]),
    (lambda p: p.update(scale={"mlt_synthetic": "quick", "theory": "paper", "assumptions": "quick",
                               "capacity": "quick"}), ["scale.dpc: missing", "scale.default"]),
    (lambda p: p.update(scale="mine"), ["scale", "'mine'", "presets are ['paper', 'quick']"]),
    (lambda p: p.update(scale={"default": "quick", "dpc": "mine"}), ["scale.dpc", "'mine'", "['paper', 'quick']"]),
    (lambda p: p["mlt_synthetic"]["quick"]["sweeps"].update(
        scale_haed_shared=p["mlt_synthetic"]["quick"]["sweeps"]["scale_head_shared"]),
     ["mlt_synthetic.quick.sweeps.scale_haed_shared", "no figure or table reads"]),
])
def test_a_value_that_would_fail_or_lie_in_a_job_stops_validation(mutate, words):
    message = _problem(mutate)
    assert all(w in message for w in words), message


def test_every_sweep_a_figure_reads_is_a_known_sweep_name():
    """params validation refuses sweep names no figure reads (memcap.mlt_synthetic.checks.KNOWN_SWEEPS): the list
    must cover every sweep memcap.mlt_synthetic.figures draws, or a valid sweep would be refused."""
    from memcap.mlt_synthetic import checks, figures

    drawn = {s for fig in figures.FIGURES.values() for s in fig["sweeps"]}
    assert drawn <= set(checks.KNOWN_SWEEPS)


def test_the_shipped_params_and_a_preset_of_your_own_pass():
    mp.validate(copy.deepcopy(PARAMS))
    own = copy.deepcopy(PARAMS)
    for family in mp.FAMILIES:
        own[family]["mine"] = copy.deepcopy(own[family]["quick"])
    own["scale"] = {"default": "quick", "mlt_synthetic": "mine"}
    assert mp.scales(mp.validate(own))["mlt_synthetic"] == "mine"
    ok = copy.deepcopy(PARAMS)
    ok["mlt_synthetic"]["quick"]["defaults"]["lr"] = 1     # an integer is a number; 1.0 stays allowed too
    mp.validate(ok)


def test_yaml_errors_name_the_file_and_the_line(tmp_path):
    dup = tmp_path / "dup.yaml"
    dup.write_text("scale: quick\ndevice: cpu\nscale: paper\n")
    with pytest.raises(mp.ParamsError, match=r"dup.yaml, line 3: the key 'scale' is written twice.*line 1"):
        mp.read_yaml(dup)
    bad = tmp_path / "bad.yaml"
    bad.write_text("scale: quick\ndevice: [cpu\nresources: {}\n")
    with pytest.raises(mp.ParamsError, match=r"bad.yaml, line \d+, column \d+: not valid YAML"):
        mp.read_yaml(bad)
    with pytest.raises(mp.ParamsError, match=r"nope.yaml: cannot read the file"):
        mp.read_yaml(tmp_path / "nope.yaml")
    nested = tmp_path / "nested.yaml"
    nested.write_text("mlt_synthetic:\n  quick:\n    seeds: [0]\n    seeds: [1]\n")
    with pytest.raises(mp.ParamsError, match=r"line 4: the key 'seeds'"):
        mp.read_yaml(nested)


# ---- a run no better than its initialisation is an error, not a result -------------------------------

def _tiny_train(lr: float):
    seeds = [0, 1]
    data = make_data(seeds, dataset_size=32, context_size=3, input_dim=6, context="shared",
                     task="regression", num_classes=5)
    model = MLTAttention(seeds, input_dim=6, heads=2, context_size=3, out_dim=1)
    cfg = TrainConfig(lr=lr, batch_size=16, epochs=1, min_steps=40, eval_every=10, early_stop=False)
    return train(model, data, seeds, cfg, classification=False, progress=False)


def test_a_diverged_or_untrained_run_raises_and_a_trained_one_does_not():
    runs, _ = _tiny_train(1e-2)
    assert all(r.best_step > 0 for r in runs)
    with pytest.raises(TrainingFailed, match=r"seeds \[0, 1\]: training ended no better than the initialisation"):
        _tiny_train(1e12)          # diverges: never below the step-0 loss


def test_the_cli_says_why_a_diverged_job_failed_and_writes_nothing(project):
    project.edit_params(lambda p: p["mlt_synthetic"]["quick"]["defaults"].update(
        lr=1.0e12, min_steps=40, eval_every=10))
    proc = project.run("memcap", "mlt_synthetic", "train", "--sweep", "regress_scale_head_shared", "--value", "2",
                       "--dataset-size", "32", "--out", "x.parquet", check=False)
    assert proc.returncode == 2 and "no better than the initialisation" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and not (project.root / "x.parquet").exists()


# ---- files: readable by the lab; a corrupt one is named; a checkpoint never runs code --------------

@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o027, 0o640)])
def test_written_files_follow_the_umask_like_pulled_ones(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        results.write_parquet(pd.DataFrame({"a": [1]}), tmp_path / "r.parquet", {})
        results.write_text("x", tmp_path / "t.md")
    finally:
        os.umask(old)
    assert {(tmp_path / f).stat().st_mode & 0o777 for f in ("r.parquet", "t.md")} == {mode}


def test_a_truncated_result_is_named_with_what_to_run(tmp_path):
    good, bad = tmp_path / "good.parquet", tmp_path / "bad.parquet"
    results.write_parquet(pd.DataFrame({"a": range(100)}), good, {})
    bad.write_bytes(good.read_bytes()[:-40])
    assert results.unreadable([good, tmp_path / "absent.parquet"]) == []
    [message] = results.unreadable([good, bad])
    assert str(bad) in message and "dvc checkout" in message
    with pytest.raises(results.UnreadableResult, match="bad.parquet is not a readable Parquet"):
        results.read_parquet([good, bad])


class _Planted:
    def __reduce__(self):
        return (os.system, ("touch planted",))


def test_a_checkpoint_with_code_in_it_is_not_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = {"a": 1}
    checkpoint.save("ok.pt", {"w": torch.ones(2)}, config)
    assert torch.equal(checkpoint.load("ok.pt", config)["w"], torch.ones(2))
    torch.save({"fingerprint": checkpoint.fingerprint(config), "state": _Planted()}, "evil.pt")
    assert checkpoint.load("evil.pt", config) is None and not (tmp_path / "planted").exists()


# ---- end to end, on a fresh clone restored from the published remote ---------------------------------

def _digest(root: Path) -> dict[str, str]:
    """Every result, table, figure and metric file with its sha256."""
    out = {}
    for top in ("results", "figures"):
        for f in sorted((root / top).rglob("*")):
            if f.is_file():
                out[str(f.relative_to(root))] = hashlib.sha256(f.read_bytes()).hexdigest()
    return out


@pytest.mark.e2e
@pytest.mark.parametrize("edit, words", [
    (lambda p: p["mlt_synthetic"]["quick"]["defaults"].update(heads="four"),
     ["mlt_synthetic.quick.defaults.heads", "'four'"]),
    (lambda p: p["scale"].update(theory="huge"), ["huge"]),   # DVC's own parse of ${scale.theory} may stop first
])
def test_dvc_repro_with_bad_params_stops_before_any_output_is_deleted(restored, edit, words):
    before = _digest(restored.root)
    restored.edit_params(edit)
    proc = restored.run("dvc", "repro", check=False, env=ih.code_env(restored.root))
    assert proc.returncode != 0
    assert all(w in proc.stdout + proc.stderr for w in words), proc.stdout + proc.stderr
    assert _digest(restored.root) == before        # report, metrics.json and every family's outputs


@pytest.mark.e2e
def test_a_grid_of_your_own_trains_beside_the_published_results_and_pull_keeps_it(restored, tmp_path):
    """The README's example: a preset of your own trains exactly its points; no published run changes;
    `make pull` then restores the published tables and figures and keeps your runs, and `dvc repro`
    (as `make reproduce` runs it) has nothing to do. The same for a real search of a capacity preset of
    your own (its rows and probes below runs/mine/; the published probes folder gains nothing)."""
    root, env = restored.root, ih.code_env(restored.root)
    readme = (REPO / "README.md").read_text()
    example = "# mine.yaml" + readme.split("# mine.yaml", 1)[1].split("```", 1)[0]
    (root / "mine.yaml").write_text(example)
    before = _digest(root)
    out = restored.snakemake("--configfile", "mine.yaml", "--", "mlt_synthetic", env=env)
    log = out.stdout + out.stderr
    assert log.count("rule mlt_train:") == 3, log[-3000:]
    mine = sorted(str(f.relative_to(root)) for f in root.glob("results/*/runs/mine/**/*") if f.is_file())
    assert len(mine) == 3
    table = pd.read_parquet(root / "results/mlt_synthetic/tables/runs.parquet")
    assert set(table.sweep) == {"scale_head_shared"} and set(table.scale) == {"mine"}

    p = restored.params()
    tiny_capacity(p)
    p["capacity"]["quick"].update(heads_grid=[1])       # one architecture: one search is enough here
    capacity_yaml = tmp_path / "capacity-mine.yaml"
    capacity_yaml.write_text(yaml.safe_dump({"scale": {**p["scale"], "capacity": "mine"},
                                             "capacity": {"mine": p["capacity"]["quick"]}}))
    restored.snakemake("--configfile", str(capacity_yaml), "--", "capacity", env=env)
    after = _digest(root)
    capacity_mine = [f for f in after if f.startswith("results/capacity/runs/mine/")]
    assert len([f for f in capacity_mine if "/probes/" not in f]) == 1          # its architecture's row
    assert any("/probes/" in f for f in capacity_mine)
    runs = [f for f in before if "/runs/" in f or "/attention/" in f]
    assert all(after[f] == before[f] for f in runs)            # every published run and probe, byte for byte
    assert not [f for f in after if f.startswith("results/capacity/runs/probes/") and f not in before]
    mine += capacity_mine

    pulled = restored.run("python", "tools/dvc_pull.py", env=env)
    # your runs are invisible to DVC (.dvcignore): the checkout leaves them where they are
    assert "replacing" in pulled.stdout and "runs/mine" not in pulled.stdout, pulled.stdout
    final = _digest(root)
    assert {f: final[f] for f in before} == before             # the published state, whole
    assert all(final[f] == after[f] for f in mine)             # and your runs, kept
    # then `make reproduce`'s dvc repro: your runs are invisible to DVC (.dvcignore), so no stage runs,
    # dvc.lock and every tracked file stay as they are, and nothing asks for a push
    lock = (root / "dvc.lock").read_bytes()
    repro = restored.run("dvc", "repro", env=env, timeout=900)
    said = repro.stdout + repro.stderr
    assert "Running stage" not in said and "dvc push" not in said, said[-3000:]
    assert (root / "dvc.lock").read_bytes() == lock
    assert restored.run("git", "status", "--porcelain").stdout == "?? mine.yaml\n"   # nothing else, nothing tracked
    assert all(_digest(root)[f] == after[f] for f in mine)


@pytest.mark.e2e
def test_a_corrupt_result_stops_the_run_naming_the_file(restored):
    run = sorted((restored.root / "results/dpc/runs/paper").rglob("*.parquet"))[0]
    run.write_bytes(run.read_bytes()[:1000])
    dry = restored.snakemake("-n", "dpc", check=False, env=ih.code_env(restored.root))
    out = dry.stdout + dry.stderr
    assert dry.returncode != 0 and str(run.relative_to(restored.root)) in out and "dvc checkout" in out, out
    assert "Traceback" not in out


@pytest.mark.e2e
def test_a_missing_remote_folder_changes_nothing_and_a_missing_object_only_its_output(restored, tmp_path):
    root, env = restored.root, ih.code_env(restored.root)
    restored.run("dvc", "remote", "modify", "--local", "published", "url", str(tmp_path / "nowhere"))
    gone = restored.run("python", "tools/dvc_pull.py", check=False, env=env)
    assert gone.returncode == 1 and "does not exist (no such folder)" in gone.stderr, gone.stderr

    # A remote that lacks one folder's listing, on a machine without a cache: that folder stays absent,
    # everything else is restored, and the pull says which and how to rebuild it.
    remote = tmp_path / "remote"
    shutil.copytree(root / "published" / "dvc-remote", remote)
    lock = yaml.safe_load((root / "dvc.lock").read_text())
    lost = next(o for o in lock["stages"]["theory"]["outs"] if o["md5"].endswith(".dir"))
    next(remote.rglob(lost["md5"][2:])).unlink()
    restored.run("dvc", "remote", "modify", "--local", "published", "url", str(remote))
    shutil.rmtree(root / ".dvc" / "cache")
    full = _digest(root)
    for top in ("results", "figures"):
        for f in (root / top).rglob("*"):
            if f.is_file() and f.name != ".gitignore" and f.parent.name != "params" and f.name != "metrics.json":
                f.unlink()
    failed = restored.run("python", "tools/dvc_pull.py", check=False, env=env)
    assert failed.returncode == 1 and f"theory: {lost['path']} (missing)" in failed.stderr, failed.stderr
    assert "dvc repro theory" in failed.stderr and "Traceback" not in failed.stderr, failed.stderr
    assert _digest(root) == {f: d for f, d in full.items() if not f.startswith(lost["path"] + "/")}


@pytest.mark.e2e
def test_a_second_run_on_other_targets_waits_its_turn(project):
    """One run at a time: a run on a disjoint target stops naming the first; a dry run is allowed."""
    project.edit_params(lambda p: (ih.tiny_two_families(p), p["mlt_synthetic"]["quick"]["defaults"].update(
        min_steps=100000, eval_every=1000, early_stop=False)))
    env = ih.popen_env(project.root)
    point = project.run_path("mlt_synthetic", "scale_head_shared", 2, 64)     # outputs disjoint from theory's
    first = subprocess.Popen([str(BIN / "snakemake"), "--cores", "1", "--", point], cwd=project.root,
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             start_new_session=True)
    try:
        lock = project.root / ".snakemake/memcap/run.lock"
        end = time.monotonic() + 120
        while not (lock.exists() and "pid" in lock.read_text()) and time.monotonic() < end:
            time.sleep(0.2)
        construct = "results/theory/tables/construct.parquet"
        second = project.snakemake("--", construct, check=False)
        assert second.returncode != 0 and "another Snakemake run is going on" in second.stderr + second.stdout, \
            second.stderr[-2000:]
        assert not (project.root / construct).exists()                      # it started no job
        assert project.snakemake("-n", "--", construct).returncode == 0
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    # the kernel released the killed run's lock: the next run is not blocked by it
    assert "another Snakemake run" not in project.snakemake("--unlock", check=False).stderr
