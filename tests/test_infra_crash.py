"""Crash safety: a training job SIGKILLed mid-run leaves no Parquet where a later step would read it, and
the rerun resumes from the job's checkpoint to the very numbers of an uninterrupted run, locally and
under SLURM (SIGKILL of the job's processes, then a requeue as a preemption would do it)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest
import torch

import infra_helpers as ih
from conftest import BIN, log_of
from infra_helpers import slurm  # noqa: F401  (fixture)

pytestmark = pytest.mark.e2e
POINT = ("scale_head_shared", 2, 64)


def _paths(project) -> tuple[str, str, str]:
    """The point's result, checkpoint and log: named by its preset and settings key (memcap.keys)."""
    out = project.run_path("mlt_synthetic", *POINT)
    stem = out.removeprefix("results/mlt_synthetic/runs/").removesuffix(".parquet")
    return out, f"checkpoints/mlt_synthetic/{stem}.pt", log_of(out)


def _long_single_point(p: dict) -> None:
    """One grid point that trains for a few seconds, checkpointing at every evaluation."""
    ih.tiny_two_families(p)
    q = p["mlt_synthetic"]["quick"]
    q["checkpoint_every_s"] = 0
    q["defaults"].update(min_steps=3000, eval_every=100, early_stop=False)
    q["sweeps"] = {"scale_head_shared": q["sweeps"]["scale_head_shared"]}
    p["resources"]["quick"]["train"]["gpu"] = 0


def _checkpoint_step(path: Path) -> int:
    """Training step stored in the checkpoint, 0 while there is none (saves are atomic renames)."""
    try:
        return int(torch.load(path, map_location="cpu", weights_only=False)["state"]["step"])
    except (FileNotFoundError, EOFError, RuntimeError):
        return 0


def _text(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def _wait_for(predicate, timeout: float, what: str, proc: subprocess.Popen | None = None) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the run ended before {what}:\n{proc.stdout.read()[-4000:]}")
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.1)


def _trainer_pids(root: Path, CKPT: str) -> list[int]:
    """The `memcap mlt_synthetic train` processes of this point running in `root` (from /proc; no pkill by name)."""
    pids = []
    for d in Path("/proc").iterdir():
        try:
            cmd = (d / "cmdline").read_bytes().split(b"\0")
            if b"mlt_synthetic" in cmd and b"train" in cmd and CKPT.encode() in cmd and os.readlink(d / "cwd") == str(root):
                pids.append(int(d.name))
        except (OSError, ValueError):
            continue
    return pids


def _reference_run(project) -> subprocess.Popen:
    """The same grid point trained in one go, without a checkpoint (its own file, reference.parquet)."""
    return subprocess.Popen(["python", "-m", "memcap", "mlt_synthetic", "train", "--sweep", "scale_head_shared",
                             "--value", "2", "--dataset-size", "64", "--device", "cpu", "--out", "reference.parquet"],
                            cwd=project.root, env=ih.popen_env(project.root), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def _reference(project, run: subprocess.Popen | None = None) -> pd.DataFrame:
    """The reference's numbers: of `run` (started earlier), or of a run started now."""
    run = run or _reference_run(project)
    out, _ = run.communicate(timeout=600)
    assert run.returncode == 0, out[-4000:]
    return _numbers(project.root / "reference.parquet")


def _numbers(path: Path) -> pd.DataFrame:
    df = pd.read_parquet(path)
    return df.drop(columns=[c for c in df.columns if ih.TIMING.search(c)])


def _no_partial_output(root: Path, OUT: str) -> None:
    # write_parquet writes a hidden temp file then renames it: a killed job leaves no `*.parquet` that a
    # rule's input (or a glob over the results) would pick up.
    assert not (root / OUT).exists()
    assert not list((root / "results").rglob("*.parquet"))


def test_sigkill_mid_run_then_rerun_resumes_to_identical_results(project):
    project.edit_params(_long_single_point)
    root = project.root
    OUT, CKPT, LOG = _paths(project)
    # The whole snakemake run dies with SIGKILL (its process group: snakemake and the trainer) as soon
    # as the trainer has written a checkpoint: no cleanup handler of either gets to run.
    run = subprocess.Popen([str(BIN / "snakemake"), "--profile", "profiles/local", "--cores", "1", "--nocolor",
                            "--", OUT], cwd=root, env=ih.popen_env(root), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        _wait_for(lambda: _checkpoint_step(root / CKPT) > 0, 300, "the first checkpoint", run)
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    killed_at = _checkpoint_step(root / CKPT)
    killed_seconds = torch.load(root / CKPT, map_location="cpu", weights_only=True)["state"]["train_seconds"]
    assert 0 < killed_at < 3000
    _no_partial_output(root, OUT)

    # Rerun: the stale lock of the killed run is reported clearly, `--unlock` clears it, and
    # --rerun-incomplete (profiles/local) redoes the job, which resumes from the checkpoint.
    locked = project.run(str(BIN / "snakemake"), "--profile", "profiles/local", "--cores", "1", "--", OUT,
                         check=False, env=ih.code_env(root))
    assert locked.returncode != 0 and "Directory cannot be locked" in locked.stdout + locked.stderr
    project.run(str(BIN / "snakemake"), "--unlock", env=ih.code_env(root))
    project.run(str(BIN / "snakemake"), "--profile", "profiles/local", "--cores", "1", "--", OUT,
                env=ih.code_env(root))
    log = (root / LOG).read_text()
    resumed_at = int(log.split("resumed from checkpoint")[1].split("at step ")[1].split("/")[0])
    assert resumed_at >= killed_at > 0, log
    assert not (root / CKPT).exists()                       # removed once the result is written
    pd.testing.assert_frame_equal(_numbers(root / OUT), _reference(project))
    # the recorded training time is the job's whole: the killed segment's seconds plus the resumed one's
    out = pd.read_parquet(root / OUT)
    assert set(out.segments) == {2} and (out.wall_time_s > killed_seconds).all(), (out.wall_time_s, killed_seconds)


@pytest.mark.slurm
def test_slurm_sigkill_and_requeue_resume_to_identical_results(slurm, project):
    project.edit_params(_long_single_point)
    project.edit_params(lambda p: p["mlt_synthetic"]["quick"]["defaults"].update(min_steps=4000))
    root = project.root
    OUT, CKPT, LOG = _paths(project)
    reference = _reference_run(project)     # alongside: the SLURM run mostly waits on polling
    run = subprocess.Popen([str(BIN / "snakemake"), *ih.SLURM_PROFILES, "--nocolor", "--", OUT],
                           cwd=root, env=ih.popen_env(root), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
    try:
        def training_job() -> str:
            ids = [j for j in ih.jobs_under(root) if ih.show_job(j)["JobState"] == "RUNNING"]
            return ids[-1] if ids else ""

        # 1. SIGKILL the job's processes (as the OOM killer would): the job fails, the profile's
        #    `retries: 1` resubmits it (with twice the time limit), and the new job resumes from the checkpoint.
        _wait_for(lambda: _checkpoint_step(root / CKPT) > 0 and training_job(), 300, "a checkpoint", run)
        first = training_job()
        subprocess.run(["scancel", "--signal=KILL", first], check=True)
        # the step read once the job has ended: a checkpoint it wrote as the kill arrived is not the retry's
        _wait_for(lambda: ih.show_job(first)["JobState"] in ("FAILED", "CANCELLED"), 60, "the killed job to end", run)
        killed_at = _checkpoint_step(root / CKPT)
        _wait_for(lambda: not (root / OUT).exists() and training_job() not in ("", first)
                  and "resumed from checkpoint" in _text(root / LOG)
                  and _checkpoint_step(root / CKPT) > killed_at, 300, "the retry to checkpoint", run)
        assert not (root / OUT).exists()

        # 2. Requeue the retry (what preemption does): same job id, restarted, resumes again. SLURM holds
        #    a requeued job for 120 s (BeginTime); starttime=now lets it go at once, but only once the
        #    job is back to PENDING (sent while it is still COMPLETING, the requeue resets it), and in a
        #    later second than the requeue: SLURM revokes the job's credential then, to the second, and kills
        #    a relaunch within that second as non-startable ("Job credential revoked": the job FAILED).
        second = training_job()
        requeued_at = _checkpoint_step(root / CKPT)
        subprocess.run(["scontrol", "requeue", second], check=True)
        revoked = time.time()
        _wait_for(lambda: ih.show_job(second)["JobState"] == "PENDING", 60, "the requeued job to pend", run)
        time.sleep(max(0.0, revoked + 1.1 - time.time()))
        subprocess.run(["scontrol", "update", f"jobid={second}", "starttime=now"], check=True)
        out, _ = run.communicate(timeout=600)
    except BaseException:
        reference.kill()
        raise
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, out[-4000:]
    assert ih.show_job(first)["JobState"] in ("FAILED", "CANCELLED"), ih.show_job(first)
    assert int(ih.show_job(second)["Restarts"]) == 1 and ih.show_job(second)["JobState"] == "COMPLETED"
    # the retry asked for twice the time limit (params.yaml runtime x attempt: a job killed at its limit
    # gets more time), through the profile's `retries: 1`
    limits = [ih.minutes(ih.show_job(j)["TimeLimit"]) for j in (first, second)]
    assert limits == [ih.TRAIN_RES["runtime"] * a for a in (1, 2)], limits
    log = (root / LOG).read_text()          # the last attempt's log: it resumed, it did not restart
    resumed_at = int(log.split("resumed from checkpoint")[1].split("at step ")[1].split("/")[0])
    assert resumed_at >= requeued_at > killed_at > 0, log
    pd.testing.assert_frame_equal(_numbers(root / OUT), _reference(project, reference))
