"""Concurrency: two pipelines started at once in the same checkout. Snakemake's directory lock makes
the second fail at once with a clear message; the first finishes with correct, uncorrupted results."""

from __future__ import annotations

import os
import subprocess
import time

import pandas as pd
import pytest

import infra_helpers as ih
from conftest import BIN

pytestmark = pytest.mark.e2e
TARGET = "results/mlt_synthetic/tables/runs.parquet"


def _tiny(p: dict) -> None:
    ih.tiny_two_families(p, resources=False)
    p["mlt_synthetic"]["quick"]["sweeps"].pop("head_saturation_h2")


def test_second_concurrent_run_fails_clearly_with_the_lock(project):
    project.edit_params(_tiny)
    env = ih.code_env(project.root)
    # Both through profiles/local (what users run): its rerun-incomplete would redo the first run's
    # half-written outputs, if the lock did not stop the second run first.
    first = subprocess.Popen([str(BIN / "snakemake"), "--profile", "profiles/local", "--cores", "1", "--nocolor",
                              "--", TARGET],
                             cwd=project.root, env={**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", **env},
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        locks = project.root / ".snakemake" / "locks"
        start = time.monotonic()
        while not (locks.exists() and any(locks.iterdir())):    # the first run holds the lock
            assert first.poll() is None, first.stdout.read()
            assert time.monotonic() - start < 120, "the first run never took the lock"
            time.sleep(0.05)
        second = project.snakemake("--profile", "profiles/local", "--", TARGET, check=False, env=env)
        first_out, _ = first.communicate(timeout=600)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.poll() is not None
    msg = second.stdout + second.stderr
    assert second.returncode != 0
    assert "Directory cannot be locked" in msg and "--unlock" in msg, msg
    assert "rule mlt_train" not in msg                      # it started no job
    assert first.returncode == 0, first_out[-4000:]
    runs = pd.read_parquet(project.root / TARGET)
    assert len(runs) == 2 and runs["mem_loss"].notna().all()
    # `snakemake -n` reads without the lock; afterwards nothing is left to do and no lock remains.
    assert "Nothing to be done" in project.snakemake("-n", TARGET, env=env).stdout
    assert not any((project.root / ".snakemake" / "locks").iterdir())
