"""DVC remote round trip: two stages (mlt_synthetic, theory) pushed with their run-cache, a fresh
`git clone` + `tools/dvc_pull.py` (nothing reruns, nothing trains), then figures rebuilt from pulled
Parquet without training, one changed grid value (`dvc exp run -S`) rerunning only its job, and `dvc repro --pull`
restoring earlier params' results from the run-cache.

The first params' results are the shared tiny pipeline's (conftest.pipeline, trained by Snakemake),
recorded with `dvc commit` (which writes dvc.lock and the run-cache entry as a `dvc repro` would);
`dvc repro` must then find both stages up to date. The second params' run is a real `dvc repro`.

Which stage has a run-cache: DVC keeps no run-cache for a stage with a `persist: true` out, so
`mlt_synthetic` (its per-run folders persist so finished grid points survive params changes) has none;
`theory` (only ordinary outs) has one. Going back to earlier params therefore restores `theory` from the
run-cache without running anything, while `mlt_synthetic` runs its stage again, and Snakemake rebuilds
only the aggregate table and figures from the per-run Parquet still in the persisted folder."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

import infra_helpers as ih
from conftest import REPO, Project, log_of

pytestmark = pytest.mark.e2e
STAGES = ("mlt_synthetic", "theory")
SSH_STAGE = "dpc"   # the one stage the lab remote over SSH carries
POINT = "scale_head_shared"


def _grid(values):
    return lambda p: p["mlt_synthetic"]["quick"]["sweeps"][POINT].update(values=values)


def _construct_heads(heads):
    return lambda p: p["theory"]["quick"]["construct"].update(heads=heads)


def _run(project, value) -> str:
    (size,) = project.params()["mlt_synthetic"]["quick"]["sweeps"][POINT]["dataset_sizes"]
    return project.run_path("mlt_synthetic", POINT, value, size)


def _log(project, value) -> str:
    return (project.root / log_of(_run(project, value))).read_text()


def _stage_tables(root) -> dict:
    """The two stages' result tables (the shared pipeline also holds the other families')."""
    return {k: v for k, v in ih.result_tables(root).items() if k.startswith(tuple(f"results/{s}/" for s in STAGES))}


def _use_remote(root, remote) -> None:
    """What `dvc remote modify --local local url <remote>` and `dvc remote default --local local`
    write (two DVC starts, ~4 CPU-s, saved): the repository's remote `local` at `remote`, the default."""
    (root / ".dvc" / "config.local").write_text(f"[core]\n    remote = local\n['remote \"local\"']\n    url = {remote}\n")


def test_dvc_round_trip_incremental_and_run_cache(pipeline, tmp_path):
    project = Project(tmp_path / "memcap")
    ih.copy_tree(pipeline.root, project.root)                  # results A: the shared pipeline's
    values = project.params()["mlt_synthetic"]["quick"]["sweeps"][POINT]["values"]
    heads_a = project.params()["theory"]["quick"]["construct"]["heads"]
    assert len(values) == 2 and len(heads_a) >= 2, (values, heads_a)
    new_value, heads_b = max(values) + 1, [*heads_a[:-1], heads_a[-1] + 1]
    env = ih.code_env(project.root)
    remote = tmp_path / "remote"
    (project.root / "dvc.lock").unlink()    # the repository's lock names outputs this copy never made
    ih.git_commit_all(project)
    _use_remote(project.root, remote)

    # Params A (recorded), then theory params B (run): both of `theory` land in the run-cache. A
    # run-cache entry restores only if its outputs were pushed too (an entry whose objects are missing reruns).
    project.run("dvc", "repro", "params", env=env)
    project.run("dvc", "commit", "-f", *STAGES, env=env)
    assert "Data and pipelines are up to date" in project.run("dvc", "repro", *STAGES, env=env).stdout
    project.run("git", "add", "-A")
    project.run("git", "commit", "-qm", "results A")
    project.run("dvc", "push", "--run-cache", *STAGES)      # each result pushed when committed, as users do
    project.edit_params(_construct_heads(heads_b))
    repro_b = project.run("dvc", "repro", "theory", env=env).stdout
    assert "Stage 'mlt_synthetic' didn't change, skipping" in repro_b, repro_b
    assert "Running stage 'theory'" in repro_b, repro_b
    project.run("git", "add", "-A")
    project.run("git", "commit", "-qm", "results B")
    project.run("dvc", "push", "--run-cache", *STAGES)

    # Fresh clone + the project's one pull command: nothing reruns, for DVC and for Snakemake.
    clone = tmp_path / "clone"
    project.run("git", "clone", "-q", str(project.root), str(clone))
    fresh = Project(clone)
    env = ih.code_env(clone)
    _use_remote(clone, remote)
    pulled = fresh.run("python", "tools/dvc_pull.py", *STAGES, env=env).stdout
    assert "Nothing to be done" in pulled, pulled       # the pull's last line: Snakemake's dry run of STAGES
    assert "Data and pipelines are up to date" in fresh.run("dvc", "repro", *STAGES, env=env).stdout
    ih.assert_same_tables(_stage_tables(project.root), _stage_tables(clone))
    assert (clone / "figures/mlt_synthetic/fig2a.png").stat().st_size > 1000
    # Nothing was trained in the clone: `--touch` leaves empty logs, a training job never does.
    trained_logs = list(clone.glob("logs/mlt_synthetic/**/T*.log"))
    assert trained_logs and all(f.stat().st_size == 0 for f in clone.glob("logs/**/*.log"))
    assert not list(clone.glob("logs/**/*.benchmark.tsv"))

    # Figures rebuild from the pulled Parquet alone: only the figures job has work (drawn below).
    for f in clone.glob("figures/mlt_synthetic/fig2*"):
        f.unlink()
    dry = fresh.snakemake("-n", *STAGES, env=env).stdout
    assert "rule mlt_figures:" in dry and "rule mlt_train" not in dry and "rule theory_" not in dry, dry

    # One grid value changed (the second), with `dvc exp run -S` in the workspace: its job trains, the
    # untouched first value is not redone, the figures are drawn again (the pulled runs' logs stay
    # empty: nothing pulled retrained), and the experiment is recorded under its name.
    first, second = values
    kept_mtime = (clone / _run(fresh, first)).stat().st_mtime_ns
    out = fresh.run("dvc", "exp", "run", "-n", "more-heads", "-S",
                    f"mlt_synthetic.quick.sweeps.{POINT}.values=[{first},{new_value}]", "mlt_synthetic", env=env)
    log = out.stdout + out.stderr
    assert re.search(r"mlt_train\s+1\n", log) and re.search(r"mlt_figures\s+1\n", log), log
    assert (clone / "figures/mlt_synthetic/fig2a.png").stat().st_size > 1000
    assert all(f.stat().st_size == 0 for f in trained_logs)
    assert (clone / _run(fresh, first)).stat().st_mtime_ns == kept_mtime and _log(fresh, first) == ""
    assert "resumed" not in _log(fresh, new_value) and (clone / _run(fresh, new_value)).exists()
    runs = pd.read_parquet(clone / "results/mlt_synthetic/tables/runs.parquet")
    assert sorted(runs.loc[runs.sweep == POINT, "x"].unique()) == [first, new_value]
    assert list(clone.glob("logs/mlt_synthetic/quick/head_saturation_h2/**/*.log"))[0].stat().st_size == 0
    # recorded under its name (what `dvc exp list` reads: a git ref of DVC's, ~4 CPU-s cheaper to ask git)
    assert "Ran experiment(s): more-heads" in log, log[-3000:]
    assert re.search(r"refs/exps/.+/more-heads$", fresh.run("git", "for-each-ref", "refs/exps").stdout, re.M)

    # Back to the theory params of the first commit: restored from the run-cache, nothing runs.
    fresh.edit_params(_construct_heads(heads_a))
    back = fresh.run("dvc", "repro", "--pull", "theory", env=env).stdout
    assert "Stage 'theory' is cached - skipping run, checking out outputs" in back, back
    construct = pd.read_parquet(clone / "results/theory/tables/construct.parquet")
    assert set(construct["heads"]) == set(heads_a)
    assert (clone / "logs/theory/construct.log").stat().st_size == 0       # the job never ran here

    # mlt_synthetic back to grid A: a persist stage has no run-cache, so the stage runs; Snakemake finds
    # the second value's run still in the persisted folder and only re-aggregates (no training).
    fresh.edit_params(_grid(values))
    again = fresh.run("dvc", "repro", "--pull", "mlt_synthetic", env=env).stdout
    assert "is cached - skipping run" not in again and "Running stage 'mlt_synthetic'" in again, again
    assert _log(fresh, second) == "" and _log(fresh, first) == ""
    runs = pd.read_parquet(clone / "results/mlt_synthetic/tables/runs.parquet")
    assert sorted(runs.loc[runs.sweep == POINT, "x"].unique()) == values
    assert "Data and pipelines are up to date" in fresh.run("dvc", "repro", *STAGES, env=env).stdout

    # `dvc exp run --temp` (a copy without data/ and Snakemake's metadata) stops with a message that
    # names the alternative.
    temp = fresh.run("dvc", "exp", "run", "--temp", "-S", "mlt_synthetic.quick.seeds=[3]", "mlt_synthetic",
                     check=False, env=env)
    assert temp.returncode != 0
    assert "Run `dvc exp run -S key=value` in the workspace" in temp.stdout + temp.stderr, temp.stderr[-3000:]


def test_published_remote_restores_every_result_of_a_fresh_clone(published_clone, restored, tmp_path):
    """The repository's own read-only remote (published/dvc-remote) holds this commit's dvc.lock: a
    fresh clone restores every output from it, offline, and then neither DVC nor Snakemake has work.
    (The clone and its pull are the session's, conftest.published_clone, shared with test_nothing_lost.)"""
    import yaml

    pulled = (published_clone.parent / "pull.log").read_text()
    assert "restored from the DVC remote 'published'" in pulled, pulled
    assert "Nothing to be done" in pulled, pulled
    clone = restored.root                                    # a copy: changed below
    fresh = restored
    env = ih.code_env(clone)
    lock = yaml.safe_load((clone / "dvc.lock").read_text())
    outs = [o["path"] for stage in lock["stages"].values() for o in stage.get("outs", [])]
    assert outs and all((clone / path).exists() for path in outs), [p for p in outs if not (clone / p).exists()]
    # the pull's jobs cached memcap's bytecode beside its modules, as Python does by default: the code
    # deps DVC records (src/memcap/<package>) must not change with it (.dvcignore)
    assert list((clone / "src" / "memcap").rglob("__pycache__/*.pyc"))
    assert "Data and pipelines are up to date" in fresh.run("dvc", "status", env=env).stdout
    assert "Nothing to be done" in fresh.run("snakemake", "-n", env=env).stdout
    size = sum(f.stat().st_size for f in (clone / "published").rglob("*") if f.is_file())
    # every probe of the capacity search is published (~12 kB each, ~3,300 of them): data a later search
    # builds on; the limit keeps the repository's copy small enough to clone in seconds
    assert size <= 72 * 2 ** 20, f"published remote is {size / 2 ** 20:.1f} MB (limit 72)"

    # A remote without this commit's objects: a short message that says what to do, no traceback.
    shutil.rmtree(clone / ".dvc" / "cache")
    shutil.rmtree(clone / "results" / "capacity" / "tables")
    (tmp_path / "empty-remote").mkdir()
    fresh.run("dvc", "remote", "modify", "--local", "published", "url", str(tmp_path / "empty-remote"))
    failed = fresh.run("python", "tools/dvc_pull.py", check=False, env=env)
    assert failed.returncode == 1
    assert "not on that remote" in failed.stderr and "make retrain" in failed.stderr, failed.stderr
    assert "Traceback" not in failed.stderr + failed.stdout


def _stale_stages(project, env: dict) -> set[str]:
    """The stages `dvc status` names as changed (its lines `<stage>:` at the left margin)."""
    out = project.run("dvc", "status", env=env).stdout
    return {line[:-1] for line in out.splitlines() if line.endswith(":") and not line.startswith((" ", "\t"))}


def test_an_edit_of_any_preset_the_published_capacity_reads_makes_its_stage_stale(restored):
    """The published capacity preset is a composite (paper_all): its rows come from its members'
    settings, so DVC tracks the whole capacity section and an edit of a member (paper_dpc's threshold)
    makes `dvc status` name the capacity stage; an edit outside what the stage reads (theory's quick
    preset while theory is at paper) leaves it up to date."""
    env = ih.code_env(restored.root)
    assert "capacity" not in _stale_stages(restored, env)
    before = restored.params_path.read_text()
    restored.edit_params(lambda p: p["theory"]["quick"].update(seeds=[0, 1, 2, 3]))
    assert "capacity" not in _stale_stages(restored, env)
    restored.params_path.write_text(before)
    members = restored.params()["capacity"][restored.params()["scale"]["capacity"]]["settings"]
    assert "paper_dpc" in members
    restored.edit_params(lambda p: p["capacity"]["paper_dpc"].update(threshold=0.98))
    assert "capacity" in _stale_stages(restored, env)


SSHD = Path("/tmp/memcap-sshd")   # tools/sshd-up.sh (`make test` starts it)


def _lab_remote(project, url: str, env: dict) -> None:
    """The README's lab remote over SSH, as a user sets it up (in .dvc/config.local, not committed)."""
    project.run("dvc", "remote", "add", "--local", "--force", "lab", url, env=env)
    project.run("dvc", "remote", "modify", "--local", "lab", "keyfile", str(SSHD / "id_ed25519"), env=env)
    project.run("dvc", "remote", "default", "--local", "lab", env=env)


@pytest.mark.sshd
def test_a_run_pushed_to_a_lab_remote_over_ssh_is_pulled_into_a_fresh_clone_and_nothing_retrains(restored, tmp_path):
    """A lab's remote over SSH (Debian's openssh-server on localhost, tools/sshd-up.sh; dvc[ssh]): what
    one clone pushes, a fresh clone without the published remote pulls with `make pull`'s script, and
    then neither DVC nor Snakemake has work. One stage (dpc) travels: the whole published state's pull
    is tested from the published remote (test_published_remote_restores_every_result_of_a_fresh_clone)."""
    if not (SSHD / "sshd.pid").exists():
        pytest.skip("SKIPPED: no local SSH server (bash tools/sshd-up.sh; `make test` starts it)")
    import getpass

    port = (SSHD / "sshd_config").read_text().split("Port ", 1)[1].split()[0]
    url = f"ssh://{getpass.getuser()}@127.0.0.1:{port}{tmp_path / 'lab-store'}"
    env = ih.code_env(restored.root)
    _lab_remote(restored, url, env)
    pushed = restored.run("dvc", "push", SSH_STAGE, env=env, timeout=600)
    assert "pushed" in pushed.stdout + pushed.stderr, pushed.stdout[-2000:]
    assert any((tmp_path / "lab-store").rglob("*"))                       # the objects went over SSH

    fresh = Project(tmp_path / "fresh")
    subprocess.run(["git", "clone", "-q", str(REPO), str(fresh.root)], check=True)
    shutil.rmtree(fresh.root / "published" / "dvc-remote")                 # nothing but the lab remote
    shutil.copytree(REPO / "data" / "gpt2-bpe", fresh.root / "data" / "gpt2-bpe")   # what make setup fetches
    env = ih.code_env(fresh.root)
    _lab_remote(fresh, url, env)
    pulled = fresh.run("python", "tools/dvc_pull.py", SSH_STAGE, env=env, timeout=900)
    assert "restored from the DVC remote 'lab'" in pulled.stdout + pulled.stderr, pulled.stdout[-2000:]
    assert "Data and pipelines are up to date" in fresh.run("dvc", "status", SSH_STAGE, env=env).stdout
    assert "Nothing to be done" in fresh.run("snakemake", "-n", SSH_STAGE, env=env).stdout
