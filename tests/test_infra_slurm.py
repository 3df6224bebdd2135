"""The pipeline on a live single-node SLURM (tools/slurm-up.sh): the shipped profiles/slurm (plus the
test cluster's tests/profiles/slurm-local) across two families, every job through sbatch with its rule's
resources, GPU jobs on the `gpu` partition and the others on `cpu`, every job requeueable, a grid as a
job array, the same numbers as a local run, a failing job's log shown, and
`SNAKEMAKE_PROFILE=... dvc repro`. Skipped where no SLURM answers."""

from __future__ import annotations

import os
import subprocess

import pandas as pd
import pytest

import infra_helpers as ih
from conftest import BIN, REPO, Project
from infra_helpers import slurm  # noqa: F401  (fixture)

pytestmark = [pytest.mark.slurm, pytest.mark.e2e]

# Two families, three job waves: train (mlt_train x 2, mlt_train_with_attention, theory_gd), then
# mlt_aggregate, then mlt_figures (the light jobs). mlt_train's two grid points go as one array.
TARGETS = ("mlt_synthetic", "results/theory/tables/gd.parquet")
RULES = ["mlt_train", "mlt_train", "mlt_train_with_attention", "mlt_aggregate", "mlt_figures", "theory_gd"]
SIZES = [48, 64]    # scale_head_shared's dataset sizes: two mlt_train jobs ready at once


@pytest.fixture
def background():
    """Popen for commands that run alongside the test's own; any still running at the end is killed."""
    procs = []

    def start(args, cwd, env):
        procs.append(subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))
        return procs[-1]

    yield start
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()


def _rule_of(job: dict) -> str:
    comment = job["Comment"].removeprefix("rule_")
    return comment.split("_wildcards_")[0]


def _two_sizes(p: dict) -> None:
    ih.tiny_two_families(p)
    p["mlt_synthetic"]["quick"]["sweeps"]["scale_head_shared"]["dataset_sizes"] = SIZES


def test_snakemake_profile_slurm_two_families(slurm, project, background, tmp_path):
    project.edit_params(_two_sizes)
    assert (project.root / "slurm").resolve() == (project.root / "profiles/slurm").resolve()  # `--profile slurm`
    ih.git_commit_all(project)                                  # DVC needs git (for `dvc repro` below)
    local, failing_copy = tmp_path / "local", tmp_path / "failing"
    ih.copy_tree(project.root, local)
    ih.copy_tree(project.root, failing_copy)
    local_project = Project(local)

    # Three runs at once, each in its own copy (one snakemake per working directory; SLURM jobs mostly
    # wait on polling, so overlapping them is what keeps this test short):
    # 1. the targets through the SLURM profile, --set-threads: one job asks for 2 CPUs, so threads ->
    #    --cpus-per-task is checked with a value != 1;
    run = background([str(BIN / "snakemake"), "--profile", "slurm", "--profile", "tests/profiles/slurm-local",
                      "--nocolor", "--set-threads", "mlt_aggregate=2", "--", *TARGETS],
                     cwd=project.root, env=ih.popen_env(project.root))
    # 2. a failing job: its log is shown, not just its path. device=auto fails in the job: SLURM gave it
    #    a (fake) GPU that this CPU-only torch cannot use, and it must not fall back to the CPU silently.
    #    No retry here (the retry's doubled time limit: test_infra_crash.py): after a failure the
    #    plugin's status checks back off (11, 21, 31 s), and the run waits out the last one;
    failing = background(
        [str(BIN / "snakemake"), *ih.SLURM_PROFILES, "--nocolor", "--retries", "0", "--config",
         "device=auto", "--", project.run_path("mlt_synthetic", "scale_head_shared", 2, 32)],
        cwd=failing_copy, env=ih.popen_env(failing_copy))
    # 3. the reference: the same targets on local cores, then (below) `dvc repro` on top of it.
    local_run = background([str(BIN / "snakemake"), "--cores", "2", "--nocolor", "--quiet", "progress", "--",
                            *TARGETS], cwd=local, env=ih.popen_env(local))
    out, _ = local_run.communicate(timeout=600)
    assert local_run.returncode == 0, out[-4000:]
    reference = ih.result_tables(local)

    # `dvc repro` with the SLURM profiles from the environment, now packing (a GPU preset's
    # pack_models): one new grid value's two jobs go as one pack job through sbatch, with its GPU, on
    # the GPU partition, requeueable, plus the aggregate and figures jobs; the finished grid points are
    # not redone. The pack job's own Snakemake reads the plan its scheduler made (MEMCAP_PACK_PLAN).
    def one_more_value_packed(p):
        p["mlt_synthetic"]["quick"]["sweeps"]["scale_head_shared"].update(values=[2, 3])
        p["resources"]["quick"]["train"].update(pack_models=8, pack_mem_mb=1000)
    local_project.edit_params(one_more_value_packed)
    kept = local / local_project.run_path("mlt_synthetic", "scale_head_shared", 2, 64)
    before = kept.stat().st_mtime_ns
    repro = local_project.run("dvc", "repro", "mlt_synthetic", timeout=600,
                              env={**ih.code_env(local), "SNAKEMAKE_PROFILE": ih.SLURM_PROFILE_ENV})
    rlog = repro.stdout + repro.stderr
    jobs = [ih.show_job(j) for j in ih.submitted_jobs(rlog)]
    rules = sorted(_rule_of(j) for j in jobs)
    assert rules[:2] == ["mlt_aggregate", "mlt_figures"] and len(rules) == 3, rlog[-3000:]
    pack = next(j for j in jobs if _rule_of(j).startswith("mlt_train_pack_"))
    assert pack["JobState"] == "COMPLETED" and pack["Partition"] == "gpu" and pack["Requeue"] == "1", pack
    assert pack["TresPerJob"] == f"gres:gpu:{ih.TRAIN_RES['gpu']}", pack
    for T in SIZES:
        made = pd.read_parquet(local / local_project.run_path("mlt_synthetic", "scale_head_shared", 3, T))
        assert (made.models_in_job == 4).all(), made          # both jobs' seeds in one pack
    assert kept.stat().st_mtime_ns == before
    runs = pd.read_parquet(local / "results/mlt_synthetic/tables/runs.parquet")
    assert sorted(runs.loc[runs.sweep == "scale_head_shared", "x"].unique()) == [2, 3]
    assert "scale_head_shared" in (local / "dvc.lock").read_text()

    out, _ = run.communicate(timeout=600)
    assert run.returncode == 0, out[-6000:]
    # Every job went through sbatch, with the resources its rule declares (scontrol keeps finished
    # jobs for MinJobAge; sacct needs slurmdbd, which the test cluster does not run).
    jobids = ih.submitted_jobs(out)
    jobs = {jid: ih.show_job(jid) for jid in jobids}
    assert sorted(_rule_of(j) for j in jobs.values()) == sorted(RULES), out[-3000:]
    for jid, job in jobs.items():
        rule = _rule_of(job)
        res = ih.TRAIN_RES if rule in ih.TRAIN_RULES else ih.LIGHT_RES
        threads = 2 if rule == "mlt_aggregate" else res["threads"]
        array = "_" in jid
        assert job["JobState"] == "COMPLETED", (jid, job)
        assert job["WorkDir"] == str(project.root)
        assert job["CPUs/Task"] == str(threads), (rule, job["CPUs/Task"])
        # An array's --mem carries the plugin's allowance (>= 1 MB) for the tasks' encoded commands.
        memory = int(job["MinMemoryNode"].removesuffix("M"))
        assert memory == res["mem_mb"] or (array and 0 < memory - res["mem_mb"] <= 16), (rule, memory)
        assert ih.minutes(job["TimeLimit"]) == res["runtime"], (rule, job["TimeLimit"])
        # profiles/slurm/partitions.yaml: a job that asks for a GPU goes to `gpu`, the others to `cpu`.
        assert job["Partition"] == ("gpu" if res["gpu"] else "cpu"), (rule, job["Partition"])
        assert job["Requeue"] == "1", (rule, job)      # slurm-requeue: a preempted job is requeued
        if res["gpu"]:
            # Requested and allocated one of the node's fake GPUs.
            assert job["TresPerJob"] == f"gres:gpu:{res['gpu']}" and job["JOB_GRES"] == f"gpu:{res['gpu']}", job
        else:
            assert "gpu" not in job.get("TresPerJob", "") and job["JOB_GRES"] == "(null)", (rule, job)
        assert (project.root / job["StdOut"]).exists()      # the plugin's per-job log, kept on success
    # The grid went as one job array (slurm-array-jobs), the single jobs as plain jobs.
    arrays = {jid: job for jid, job in jobs.items() if "ArrayJobId" in job}
    assert sorted(_rule_of(j) for j in arrays.values()) == ["mlt_train", "mlt_train"], out[-3000:]
    assert len({j["ArrayJobId"] for j in arrays.values()}) == 1
    assert sorted(j["ArrayTaskId"] for j in arrays.values()) == ["1", "2"]
    # A checkpointing training job among them, requeueable (checked for every job above).
    assert any(_rule_of(j) == "mlt_train" and j["Requeue"] == "1" and j["Partition"] == "gpu"
               for j in jobs.values())
    # Same numbers as the local run (timing columns aside), file by file.
    ih.assert_same_tables(ih.result_tables(project.root), reference)

    out, _ = failing.communicate(timeout=600)
    assert failing.returncode != 0
    assert "Error in rule mlt_train" in out, out[-3000:]
    attempts = [ih.show_job(j) for j in ih.submitted_jobs(out)]
    assert [ih.minutes(j["TimeLimit"]) for j in attempts] == [ih.TRAIN_RES["runtime"]], out[-3000:]
    # The job's own log (the memcap error), printed by --show-failed-logs; plus the SLURM log's path.
    # a job given a (fake) GPU by SLURM with a CPU-only torch stops with the reason, not on the CPU
    assert "this job was given a GPU" in out and "CPU-only build" in out, out[-3000:]
    assert ".snakemake/slurm_logs/rule_mlt_train/" in out


def test_slurm_up_on_a_bare_path_finds_the_running_cluster(slurm):
    """`make test` in a clean environment (env -i: no sbin on PATH) must find the installed daemons, not
    reinstall them (with SLURM down it then needs sbin's runuser: a fresh machine's `make test` runs that)."""
    if os.geteuid() != 0:
        pytest.skip("tools/slurm-up.sh needs root")
    proc = subprocess.run(["bash", str(REPO / "tools/slurm-up.sh")], capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root")})
    assert proc.returncode == 0, proc.stderr
    assert "installing" not in proc.stderr
