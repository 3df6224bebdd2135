"""Helpers of the infrastructure tests (tests/test_infra_*.py): a tiny two-family grid, SLURM access,
and comparison of result trees."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pandas as pd
import pytest

# Resources of the two job classes in the tests: distinct values so each sbatch flag can be traced
# back to its rule; gpu: 1 on the training class exercises the fake GRES GPUs of tools/slurm-up.sh.
TRAIN_RES = {"threads": 1, "mem_mb": 1500, "runtime": 20, "gpu": 1}
LIGHT_RES = {"threads": 1, "mem_mb": 900, "runtime": 7, "gpu": 0}
TRAIN_RULES = {"mlt_train", "mlt_train_with_attention", "theory_gd"}   # rules with res("train")
TARGETS = ("mlt_synthetic", "theory")
# Columns that measure the machine, not the math.
TIMING = re.compile(r"wall|time_s|seconds|elapsed|segments")   # how a run was timed, not its numbers


def tiny_two_families(p: dict, resources: bool = True) -> None:
    """mlt_synthetic (one plain and one saturation grid point) plus theory, each job a few seconds."""
    q = p["mlt_synthetic"]["quick"]
    q["seeds"] = [0, 1]
    q["defaults"].update(input_dim=8, context_size=4, heads=2, min_steps=40, epochs=1, eval_every=20)
    q["sweeps"] = {
        "scale_head_shared": {**q["sweeps"]["scale_head_shared"], "values": [2], "dataset_sizes": [64]},
        "head_saturation_h2": {**q["sweeps"]["head_saturation_h2"], "dataset_sizes": [32], "min_steps": 40},
    }
    t = p["theory"]["quick"]
    t["seeds"] = [0]
    t["construct"].update(input_dims=[8], context_sizes=[3], head_dims=[2, 8], heads=[1, 2], contexts=["shared"])
    t["gradient_descent"].update(input_dim=8, context_size=3, heads=[1], dataset_size_factors=[1],
                                 min_steps=40, eval_every=20)
    t["bounds"]["prop2"].update(input_dim=8, context_size=3, heads=[1], dataset_size=20, weight_scales=[1.0])
    t["bounds"]["prop5"].update(input_dim=4, context_size=6, heads=[1], dataset_size=20, weight_scales=[1.0])
    if resources:
        p["resources"]["quick"] = {"train": dict(TRAIN_RES), "light": dict(LIGHT_RES)}
    # The test cluster's GPUs are fake and torch is the CPU build: `auto` would (rightly) refuse a job
    # that was given a GPU it cannot use; these jobs train on the CPU on purpose.
    p["device"] = "cpu"


def code_env(root: Path) -> dict:
    """Jobs import this copy's memcap (its code and schemas), one thread each."""
    return {"PYTHONPATH": str(root / "src"), "OMP_NUM_THREADS": "1"}


def popen_env(root: Path) -> dict:
    """The whole environment for a Popen in the copy at `root`: the venv's tools first on PATH, plus
    code_env (Project.run adds the same to what it is given)."""
    from conftest import BIN

    return {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", **code_env(root)}


def git_commit_all(project, message: str = "tiny") -> None:
    """Make the project copy a git repository with everything committed (DVC needs git)."""
    for cmd in (["git", "init", "-q", "-b", "main"], ["git", "config", "user.email", "t@example.com"],
                ["git", "config", "user.name", "t"], ["git", "add", "-A"], ["git", "commit", "-qm", message]):
        project.run(*cmd)


def copy_tree(src: Path, dest: Path) -> None:
    shutil.copytree(src, dest, symlinks=True)


def result_tables(root: Path) -> dict[str, pd.DataFrame]:
    """Every Parquet under results/, timing columns dropped, keyed by relative path."""
    out = {}
    for f in sorted((root / "results").rglob("*.parquet")):
        df = pd.read_parquet(f)
        out[str(f.relative_to(root))] = df.drop(columns=[c for c in df.columns if TIMING.search(c)])
    return out


def assert_same_tables(ta: dict[str, pd.DataFrame], tb: dict[str, pd.DataFrame]) -> None:
    assert ta.keys() == tb.keys() and ta, (sorted(ta), sorted(tb))
    for key in ta:
        pd.testing.assert_frame_equal(ta[key], tb[key], obj=key)


def assert_same_results(a: Path, b: Path) -> None:
    assert_same_tables(result_tables(a), result_tables(b))


# --------------------------------------------------------------------------------------------------
# SLURM
def slurm_available() -> str | None:
    """None when a SLURM controller answers, else why not (the reason of the skip)."""
    if shutil.which("sinfo") is None:
        return "SLURM not installed (no `sinfo`); run `sudo bash tools/slurm-up.sh` (make test does)"
    proc = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], capture_output=True, text=True)
    if proc.returncode != 0:
        return f"SLURM not running (`sinfo` failed: {proc.stderr.strip()}); run tools/slurm-up.sh"
    if not re.search(r"idle|mixed|allocated|completing", proc.stdout):
        return f"no usable SLURM node (state {proc.stdout.strip()!r})"
    return None


def require_slurm() -> None:
    reason = slurm_available()
    if reason:
        pytest.skip(reason)


def jobs_under(path: Path) -> list[str]:
    """SLURM job ids (any state squeue still lists) whose working directory is inside `path`."""
    out = subprocess.run(["squeue", "-h", "--states=all", "-o", "%i %Z"], capture_output=True, text=True).stdout
    return [jid for jid, _, wd in (line.partition(" ") for line in out.splitlines())
            if wd == str(path) or wd.startswith(str(path) + "/")]


def cancel_jobs_under(path: Path) -> None:
    """scancel every still-active job started from `path` (a killed snakemake does not cancel them)."""
    active = subprocess.run(["squeue", "-h", "-o", "%i %Z"], capture_output=True, text=True).stdout
    ids = [jid for jid, _, wd in (line.partition(" ") for line in active.splitlines())
           if wd == str(path) or wd.startswith(str(path) + "/")]
    if ids:
        subprocess.run(["scancel", *ids], capture_output=True)


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")   # pytest then runs the fixtures' finalizers


@pytest.fixture
def slurm(tmp_path):
    """A SLURM to submit to; every job started from tmp_path is cancelled afterwards, also when the run
    times out or pytest gets SIGTERM (a killed snakemake leaves its SLURM jobs running)."""
    require_slurm()
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        cancel_jobs_under(tmp_path)
        signal.signal(signal.SIGTERM, previous)


# The shipped SLURM profile plus the test cluster's workarounds (no accounting: squeue status checks;
# a short first status check), on the command line and in $SNAKEMAKE_PROFILE (a list, later wins).
SLURM_PROFILES = ("--profile", "profiles/slurm", "--profile", "tests/profiles/slurm-local")
SLURM_PROFILE_ENV = "[profiles/slurm, tests/profiles/slurm-local]"

SUBMITTED = re.compile(r"Job (\d+) has been submitted with SLURM jobid (\d+) \(log: ([^)]+)\)")
SUBMITTED_ARRAY = re.compile(r"Submitted array job with Snakemake IDs [\d,]+ and SLURM job ID (\d+)\. "
                             r"The individual task IDs are (\d+)-(\d+)\.")


def submitted_jobs(log: str) -> list[str]:
    """SLURM job ids of the snakemake output's 'has been submitted with SLURM jobid' lines, plus
    `<array id>_<task>` for each task of a 'Submitted array job' line."""
    single = [m.group(2) for m in SUBMITTED.finditer(log)]
    tasks = [f"{m.group(1)}_{i}" for m in SUBMITTED_ARRAY.finditer(log)
             for i in range(int(m.group(2)), int(m.group(3)) + 1)]
    return single + tasks


def show_job(jobid: str) -> dict[str, str]:
    """`scontrol show job -d` as a dict (finished jobs stay visible for MinJobAge = 600 s)."""
    out = subprocess.run(["scontrol", "show", "job", "-d", jobid], capture_output=True, text=True,
                         check=True).stdout
    fields = {}
    for token in out.split():
        key, sep, value = token.partition("=")
        if sep and key not in fields:
            fields[key] = value
    return fields


def minutes(limit: str) -> int:
    """SLURM TimeLimit ([D-]HH:MM:SS or MM:SS) in minutes."""
    days, _, rest = limit.rpartition("-")
    parts = [int(x) for x in rest.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0)
    return int(days or 0) * 1440 + parts[0] * 60 + parts[1] + (parts[2] > 0)
