"""memcap bundle (a machine without Snakemake): the jobs named by --only start in that order, packs too;
a run that exists is left out; the runner stops its jobs at the deadline or on SIGTERM; a bundle lands
at the run names, never over a file that exists; and end to end, a pack stopped mid-way (SIGTERM, what
the deadline sends), the bundle taken back and resumed, gives the runs Snakemake trains."""

import io
import os
import stat
import subprocess
import sys
import tarfile
import time

import pandas as pd
import pytest

import infra_helpers as ih
from conftest import REPO, copy_project, tiny_mlt
from memcap import params as memcap_params
from memcap.bundle import archive, jobs, runner
from memcap.mlt_synthetic import grid, packing

RUNS, ATT, FIN = "results/mlt_synthetic/runs", "results/mlt_synthetic/attention", "checkpoints/mlt_synthetic/finished"
ONLY = ["scale_head/60/130000", "scale_head/60/110000", "scale_head/20/30000", "scale_head/20/50000"]


def paper_sweeps():
    return grid.resolve(memcap_params.load(str(REPO / "params.yaml"), {"scale": "paper"})[grid.FAMILY], "paper")


def plan(tmp_path, pack_models, only):
    sweeps = paper_sweeps()
    selected = jobs.select(sweeps, jobs.parse_specs(["scale_head:0,1"]), only)
    todo, _ = jobs.commands(sweeps, selected, jobs.missing_runs(sweeps, selected, tmp_path), pack_models, 60000,
                            "params.yaml", "paper", in_order=True)
    runs = [c.argv[c.argv.index("--runs") + 1:] if "--runs" in c.argv else [c.argv[c.argv.index("--out") + 1]]
            for c in todo]
    return [" ".join(r.split("/")[5] + "/" + r.split("/")[6].split("-")[0] for r in rs) for rs in runs]


def test_packs_start_in_the_order_only_names_their_jobs(tmp_path):
    assert plan(tmp_path, 4, ONLY) == ["60/T110000 60/T130000", "20/T30000 20/T50000"]
    assert plan(tmp_path, 4, ONLY[2:] + ONLY[:2]) == ["20/T30000 20/T50000", "60/T110000 60/T130000"]
    assert plan(tmp_path, 1, ONLY) == ["60/T130000", "60/T110000", "20/T30000", "20/T50000"]


def test_a_job_whose_run_file_exists_is_left_out(tmp_path):
    first = plan(tmp_path, 1, ONLY)
    sweeps = paper_sweeps()
    run = tmp_path / RUNS / grid.run_name(sweeps, "scale_head", 60, 110000, [0, 1])
    run.parent.mkdir(parents=True)
    run.write_bytes(b"published")
    assert plan(tmp_path, 1, ONLY) == [p for p in first if p != "60/T110000"]


def test_threads_reach_every_process_and_a_sweep_only_does_not_name_trains_whole():
    sweeps = paper_sweeps()
    picked = [j for j in grid.jobs(sweeps) if j[:2] == ("scale_head", 60)][:2]   # one shape: one pack
    names = {grid.run_name(sweeps, *j[:3], list(j[3])) for j in picked}
    pack = packing.plan({"scale_head": sweeps["scale_head"]}, names, 4, 60000)[0]
    for threads in (1, 2):
        single = jobs.job_command(sweeps, picked[0], "params.yaml", "paper", threads).argv
        packed = jobs.pack_command(sweeps, pack, "params.yaml", "paper", threads).argv
        assert single[single.index("--threads") + 1] == packed[packed.index("--threads") + 1] == str(threads)
    both = jobs.select(sweeps, jobs.parse_specs(["scale_head:0,1", "scale_ctx_size:0,1"]), ONLY[:1])
    assert both[0][:3] == ("scale_head", 60, 130000) and {j[0] for j in both[1:]} == {"scale_ctx_size"}
    with pytest.raises(SystemExit, match="no sweep"):
        jobs.select(sweeps, jobs.parse_specs(["no_such_sweep"]))


CHILD = """import pathlib, signal, sys, time
def saved(*_):   # what a trainer does on SIGTERM: save its checkpoint, exit as killed
    pathlib.Path(sys.argv[1]).write_text("checkpoint")
    sys.exit(143)
signal.signal(signal.SIGTERM, saved)
print("training", flush=True)
time.sleep(120)
"""

RUNNER = """import sys
from memcap.bundle import jobs, runner
todo = [jobs.Command([sys.executable, "-c", sys.argv[1], f"saved{k}"], jobs.MLT / "runs" / f"job{k}.parquet") for k in (1, 2)]
runner.run_all(todo, workers=1, deadline=float(sys.argv[2]))
"""


def _run_runner(tmp_path, deadline: float, sigterm: bool) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.Popen([sys.executable, "-c", RUNNER, CHILD, str(deadline)], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, text=True)
    log = tmp_path / runner.LOGS / "runs/job1.log"
    end = time.monotonic() + 300   # until the first job trains (its handler is set): an event, not a delay
    while not (log.exists() and "training" in log.read_text()) and proc.poll() is None and time.monotonic() < end:
        time.sleep(0.05)
    if sigterm:
        proc.terminate()
    return proc.communicate(timeout=60)[0]


def test_sigterm_to_the_runner_stops_its_jobs_as_the_deadline_would(tmp_path):
    """`kill` of the runner reaches its running job, which saves its checkpoint (no orphan left training);
    the jobs not started stay so. At the deadline the same happens without a signal."""
    out = _run_runner(tmp_path, deadline=600, sigterm=True)
    assert (tmp_path / "saved1").read_text() == "checkpoint"
    assert "rc=143" in out and "not started" in out and not (tmp_path / "saved2").exists(), out
    (tmp_path / "deadline").mkdir()
    # the deadline leaves a loaded machine time to start the child and set its handler (~0.1 s idle)
    out = _run_runner(tmp_path / "deadline", deadline=10, sigterm=False)
    assert (tmp_path / "deadline/saved1").exists() and "rc=143" in out and "not started" in out, out


def _tarball(path, files: dict[str, bytes]):
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_finished_jobs_land_as_run_files_and_an_existing_run_is_never_overwritten(tmp_path):
    root = tmp_path / "project"
    published = root / RUNS / "paper/scale_ctx_size/1/T20000-k.parquet"
    published.parent.mkdir(parents=True)
    published.write_bytes(b"published")
    tgz = _tarball(tmp_path / "bundle.tgz", {
        f"{RUNS}/paper/scale_ctx_size/1/T20000-k.parquet": b"retrained",          # exists here: kept
        f"{FIN}/paper/scale_ctx_size/5/T20000-k.parquet": b"finished in a stopped pack",
        f"{RUNS}/paper/scale_ctx_size/10/T20000-k.parquet": b"a pack that finished",
        f"{FIN}/paper/head_saturation_h4/4/T550-a.parquet": b"run",               # its attention too
        f"{FIN}/paper/head_saturation_h4/4/T550-a.attention.parquet": b"attention",
        f"{FIN}/paper/head_saturation_h4/4/T550-b.parquet": b"run, no attention",  # left
        "../outside.parquet": b"never",
        "logs/bundle/runs/paper/scale_ctx_size/5/T20000-k.log": b"not a result",
    })
    report = archive.take(tgz, root, analysis_sweeps={"head_saturation_h4"})
    assert published.read_bytes() == b"published" and report["kept"] == [str(published.relative_to(root))]
    new = root / RUNS / "paper/scale_ctx_size/5/T20000-k.parquet"
    assert new.read_bytes() == b"finished in a stopped pack" and stat.S_IMODE(new.stat().st_mode) == 0o644
    assert (root / RUNS / "paper/scale_ctx_size/10/T20000-k.parquet").read_bytes() == b"a pack that finished"
    assert (root / ATT / "paper/head_saturation_h4/4/T550-a.parquet").read_bytes() == b"attention"
    assert (root / RUNS / "paper/head_saturation_h4/4/T550-a.parquet").read_bytes() == b"run"
    assert report["left"] == [f"{RUNS}/paper/head_saturation_h4/4/T550-b.parquet"]
    assert not (root / RUNS / "paper/head_saturation_h4/4/T550-b.parquet").exists() and len(report["new"]) == 4
    assert not (tmp_path / "outside.parquet").exists() and not (root / "logs").exists()
    assert not list(root.rglob("*.tmp"))
    assert archive.take(tgz, root, analysis_sweeps={"head_saturation_h4"})["new"] == []   # again: nothing


def _packed(p):
    """One sweep, 4 seeds in jobs of 2, T = 64 (stops early) and 1,024 (1,600 steps): two packs (one an H) of 8 models."""
    tiny_mlt(p, ("scale_head_shared",))
    q = p["mlt_synthetic"]["quick"]
    q.update(seeds=[0, 1, 2, 3], seeds_per_job=2)
    q["defaults"].update(epochs=400, eval_every=200)
    q["sweeps"]["scale_head_shared"].update(values=[1, 2], dataset_sizes=[64, 1024])
    p["resources"]["quick"]["train"].update(pack_models=8, pack_mem_mb=1000)


@pytest.mark.e2e
def test_a_pack_stopped_midway_then_resumed_from_the_bundles_gives_the_runs_snakemake_trains(tmp_path):
    """The runner is stopped (SIGTERM: what it sends its jobs at the deadline, test above) as soon as a
    pack's first job has finished, while its T = 1,024 jobs still train: the bundle brings the finished
    jobs home, the second call resumes the pack from its checkpoint, and the runs equal Snakemake's."""
    remote, home, base = (copy_project(tmp_path / name) for name in ("remote", "home", "base"))
    for project in (remote, home, base):
        project.edit_params(_packed)
    train = ["python", "-m", "memcap", "bundle", "train", "scale_head_shared", "--workers", "2"]
    stopped = subprocess.Popen([*train, "--out", "b1.tgz"], cwd=remote.root, env=ih.popen_env(remote.root),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    end = time.monotonic() + 300
    while not list((remote.root / FIN).rglob("*.parquet")) and stopped.poll() is None and time.monotonic() < end:
        time.sleep(0.1)
    stopped.terminate()
    first = stopped.communicate(timeout=300)[0]
    assert "2 processes (2 packs of 16 models" in first, first
    assert list((remote.root / "checkpoints/mlt_synthetic/packs").glob("*.pt")), first   # saved when stopped
    took = home.run("python", "-m", "memcap", "bundle", "take", str(remote.root / "b1.tgz")).stdout
    n_first = int(took.split("bundle take: ")[1].split(" new")[0])
    assert 0 < n_first < 8, (first, took)            # some jobs of the stopped pack came back, not all
    second = remote.run(*train, "--out", "b2.tgz", timeout=600, env=ih.code_env(remote.root)).stdout   # the same code
    logs = "".join(f.read_text() for f in (remote.root / runner.LOGS).rglob("*.log"))
    assert "resumed from checkpoint" in logs, logs
    took = home.run("python", "-m", "memcap", "bundle", "take", str(remote.root / "b2.tgz")).stdout
    assert f"{8 - n_first} new, {n_first} kept" in took, (second, took)
    base.snakemake("mlt_synthetic", extra=("--omit-from", "mlt_aggregate", "--"))   # the runs alone: compared file by file
    for run in sorted((base.root / RUNS).rglob("*.parquet")):
        rel = run.relative_to(base.root)
        ours = pd.read_parquet(home.root / rel)
        assert stat.S_IMODE((home.root / rel).stat().st_mode) == 0o644
        keep = [c for c in ours.columns if not ih.TIMING.search(c)]
        pd.testing.assert_frame_equal(ours[keep], pd.read_parquet(run)[keep], obj=str(rel))
    dry = home.snakemake("-n", "mlt_synthetic").stdout
    assert "rule mlt_train" not in dry and "mlt_aggregate" in dry, dry[-2000:]   # nothing left to train at home
