"""`memcap suite`: which files a long run owns, and params.yaml's scale set without losing a comment."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import REPO
from memcap import results, suite


def test_set_scale_changes_only_the_scale_and_keeps_every_comment(tmp_path):
    path = tmp_path / "params.yaml"
    shutil.copy(REPO / "params.yaml", path)
    before = path.read_text()
    scale = suite.set_scale({"mlt_synthetic": "paper"}, ["mlt_synthetic"], path)
    after = path.read_text()
    assert scale["mlt_synthetic"] == "paper"
    comments = [line for line in before.splitlines() if line.lstrip().startswith("#")]
    assert comments and all(c in after.splitlines() for c in comments)
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines()) if a != b]
    assert len(before.splitlines()) == len(after.splitlines()) and len(changed) == 1, changed
    assert changed[0][1].startswith("scale:") and "mlt_synthetic: paper" in changed[0][1]
    old, new = yaml.safe_load(before), yaml.safe_load(after)
    assert {**old, "scale": None} == {**new, "scale": None}


def test_set_scale_turns_one_word_into_the_mapping(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text("# lab settings\nscale: quick   # all families\ndevice: cpu\n")
    suite.set_scale({"dpc": "paper"}, ["dpc"], path)
    doc = yaml.safe_load(path.read_text())
    assert doc["scale"]["dpc"] == "paper" and doc["scale"]["theory"] == "quick" and doc["device"] == "cpu"
    assert path.read_text().startswith("# lab settings\n")


def _write(path: str, scale: str | None = None) -> Path:
    df = pd.DataFrame({"x": [1]}) if scale is None else pd.DataFrame({"x": [1], "scale": [scale]})
    return results.write_parquet(df, path, {"params": {"scale": scale}})


def test_a_run_owns_its_presets_files_and_restore_never_overwrites_them(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    mine = _write("results/dpc/runs/paper/exp2/all-1.parquet")
    other = _write("results/dpc/runs/quick/exp2/all-2.parquet")
    att = _write("results/mlt_synthetic/attention/paper/s/2/T8-3.parquet")
    theory_paper, theory_quick = _write("results/theory/tables/a.parquet", "paper"), _write("results/theory/tables/b.parquet", "quick")
    ck = Path("checkpoints/dpc/paper/exp2_all-1_x1.pt")
    ck.parent.mkdir(parents=True)
    ck.write_bytes(b"state")
    done = Path("checkpoints/mlt_synthetic/paper/s/2/T8-3.pt")   # its run file exists: a finished job's leftover
    done.parent.mkdir(parents=True)
    done.write_bytes(b"state")
    run = _write("results/mlt_synthetic/runs/paper/s/2/T8-3.parquet")
    scales = {"dpc": "paper", "mlt_synthetic": "paper", "theory": "paper"}
    assert suite.files("dpc", "paper") == [mine, ck] and other not in suite.files("dpc", "quick")[1:]
    assert suite.files("mlt_synthetic", "paper") == [run, att]
    assert suite.files("theory", "paper") == [theory_paper] and theory_quick not in suite.files("theory", "paper")
    counts = suite.snapshot(scales, ["dpc", "mlt_synthetic", "theory"])
    assert counts == {"results": 4, "checkpoints": 1}
    assert suite.saved_run() == {"scale": scales, "families": ["dpc", "mlt_synthetic", "theory"]}

    # another machine: a result of the run's scale made there is kept, a quick table under the same
    # name is replaced (and named), what is missing is copied
    results.write_parquet(pd.DataFrame({"x": [2]}), mine, {})   # same name, made here: kept
    shutil.rmtree("results/mlt_synthetic")
    _write("results/theory/tables/a.parquet", "quick")
    copied, kept, replaced = suite.restore()
    assert replaced == [Path("results/theory/tables/a.parquet")]
    assert (copied, kept) == (3, 2) and Path("results/mlt_synthetic/attention/paper/s/2/T8-3.parquet").exists()
    assert results.read_parquet("results/theory/tables/a.parquet").scale.tolist() == ["paper"]
    assert results.read_parquet(mine).x.tolist() == [2]


def test_suite_help_names_its_commands():
    from memcap.cli import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["suite", "--help"])


def test_finish_refreshes_the_stages_that_read_the_runs_results_and_only_those(tmp_path):
    """After an MLT run, theory (its Fig 3 reads MLT's attention files) and capacity (Morris's bits read
    MLT's runs table) are stale: `finish` rebuilds them with Snakemake instead of leaving them to
    `dvc repro`, which would retrain them whole."""
    assert suite.downstream(["mlt_synthetic"], REPO / "dvc.yaml") == ["theory", "capacity"]
    assert suite.downstream(["dpc"], REPO / "dvc.yaml") == []
    dvc_yaml = tmp_path / "dvc.yaml"
    dvc_yaml.write_text(yaml.safe_dump({"stages": {
        "a": {"cmd": "x", "deps": ["src/a"], "outs": [{"results/a/runs": {"persist": True}}, "results/a/tables"]},
        "reads_a_file": {"cmd": "x", "deps": ["results/a/runs/p/1.parquet"], "outs": ["results/b"]},
        "reads_all_results": {"cmd": "x", "deps": ["results/a"], "outs": ["results/c"]},
        "reads_code_only": {"cmd": "x", "deps": ["src/a", "results/ab"], "outs": ["results/d"]},
        "report": {"cmd": "x", "deps": ["results/a/tables"], "outs": ["results/report"]}}}))
    assert suite.downstream(["a"], dvc_yaml) == ["reads_a_file", "reads_all_results"]
    assert suite.downstream(["a"], dvc_yaml, skip=()) == ["reads_a_file", "reads_all_results", "report"]


def test_first_names_the_missing_runs_of_those_sweeps_and_refuses_an_unknown_one(tmp_path, monkeypatch):
    """`memcap suite run --first SWEEP`: Snakemake trains those sweeps' jobs first (the figures a run
    must deliver before the optional ones); finished ones are not named; a misspelt sweep stops the run."""
    from memcap.errors import ParamsError
    from memcap.mlt_synthetic import grid

    shutil.copy(REPO / "params.yaml", tmp_path / "params.yaml")
    monkeypatch.chdir(tmp_path)
    scales = {"mlt_synthetic": "published"}
    sweeps = grid.resolve(yaml.safe_load(Path("params.yaml").read_text())["mlt_synthetic"], "published")
    def jobs(*names):
        return sum(len(s["values"]) * len(s["dataset_sizes"]) * len(grid.seed_groups(s)) for s in map(sweeps.get, names))
    fig3 = suite.first_runs(scales, ["head_saturation_h4", "head_saturation_h8"])
    assert len(fig3) == jobs("head_saturation_h4", "head_saturation_h8") >= 2
    assert all("/runs/paper/head_saturation_h" in f for f in fig3)
    fig2a = suite.first_runs(scales, ["scale_head_shared"])
    assert len(fig2a) == jobs("scale_head_shared")
    _write(fig2a[0])                                              # finished: not named again
    assert suite.first_runs(scales, ["scale_head_shared"]) == fig2a[1:]
    with pytest.raises(ParamsError, match=r"no sweep \['fig9'\].*defined:"):
        suite.first_runs(scales, ["fig9"])


def test_forgetting_metadata_of_files_snakemake_never_recorded_is_no_error(tmp_path, monkeypatch):
    """After `dvc pull` the restored files have no Snakemake metadata: the restore goes on. Any other
    failure of snakemake --cleanup-metadata stops it, with Snakemake's message."""
    from memcap.cli.suite import forget_metadata
    monkeypatch.chdir(tmp_path)
    Path("Snakefile").write_text("rule all:\n    input: 'a.txt'\n\nrule a:\n    output: 'a.txt'\n    shell: 'touch {output}'\n")
    Path("a.txt").write_text("pulled")
    forget_metadata([Path("a.txt")])
    Path("Snakefile").write_text("rule all:\n    input 'a.txt'\n")   # a syntax error
    with pytest.raises(SystemExit, match="cleanup-metadata failed"):
        forget_metadata([Path("a.txt")])


def test_a_run_whose_preset_params_yaml_dropped_is_not_restored(tmp_path, monkeypatch):
    """Files of a preset params.yaml no longer has cannot be told from the project's own: restore
    refuses (naming the preset) instead of replacing every result with the snapshot's copy."""
    monkeypatch.chdir(tmp_path)
    Path("params.yaml").write_text("mlt_synthetic:\n  paper: {defaults: {}}\n  mine: {defaults: {}}\n")
    run = _write("results/mlt_synthetic/runs/paper/s/2/T8-3.parquet")
    suite.snapshot({"mlt_synthetic": "mine"}, ["mlt_synthetic"])
    assert suite.restore() == (0, 0, [])   # the preset is there: nothing to copy
    suite.snapshot({"mlt_synthetic": "paper"}, ["mlt_synthetic"])
    assert suite.restore() == (0, 1, [])   # the run's own result here is kept
    Path("params.yaml").write_text("mlt_synthetic:\n  mine: {defaults: {}}\n")
    with pytest.raises(ValueError, match=r"\{'mlt_synthetic': 'paper'\}.*no longer defines"):
        suite.restore()
    assert run.exists()
