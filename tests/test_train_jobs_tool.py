"""tools/train_jobs.py (a lent GPU's and this CPU's paper runs): the jobs named by --only start in that
order, packs too, and a job whose run file exists is not trained again."""

import importlib.util
import os
import shutil
import subprocess
import sys
import time

from conftest import REPO
from memcap import params as memcap_params
from memcap.mlt_synthetic import grid, packing

ONLY = ["scale_head/60/130000", "scale_head/60/110000", "scale_head/20/30000", "scale_head/20/50000"]


def _plan(root, *args) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    out = subprocess.run([sys.executable, str(REPO / "tools/train_jobs.py"), "--scale", "paper", "--sweeps",
                          "scale_head", "--seeds", "0", "1", "--dry-run", *args],
                         cwd=root, env=env, capture_output=True, text=True, check=True).stdout
    return [" ".join(p.split("/")[2] + "/" + p.split("/")[3].split("-")[0] for p in line.split())
            for line in out.splitlines()]


def test_packs_start_in_the_order_only_names_their_jobs(tmp_path):
    shutil.copy(REPO / "params.yaml", tmp_path)
    assert _plan(tmp_path, "--pack-models", "4", "--only", *ONLY) == ["60/T110000 60/T130000", "20/T30000 20/T50000"]
    assert _plan(tmp_path, "--pack-models", "4", "--only", *ONLY[2:], *ONLY[:2]) == [
        "20/T30000 20/T50000", "60/T110000 60/T130000"]
    assert _plan(tmp_path, "--pack-models", "1", "--only", *ONLY) == ["60/T130000", "60/T110000", "20/T30000", "20/T50000"]


def test_a_job_whose_run_file_exists_is_left_out(tmp_path):
    shutil.copy(REPO / "params.yaml", tmp_path)
    first = _plan(tmp_path, "--pack-models", "1", "--only", *ONLY)
    run = tmp_path / "results/mlt_synthetic/runs/paper/scale_head/60" / f"T110000-{_key(tmp_path)}.parquet"
    run.parent.mkdir(parents=True)
    run.write_bytes(b"published")
    assert _plan(tmp_path, "--pack-models", "1", "--only", *ONLY) == [p for p in first if p != "60/T110000"]


def _key(root) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    out = subprocess.run([sys.executable, str(REPO / "tools/train_jobs.py"), "--scale", "paper", "--sweeps",
                          "scale_head", "--seeds", "0", "1", "--dry-run", "--pack-models", "1", "--only", ONLY[0]],
                         cwd=root, env=env, capture_output=True, text=True, check=True).stdout
    return out.split("-")[-1].removesuffix(".parquet\n")


def test_threads_reach_every_process():
    """--threads N (the last big job of a run on both cores) is what each job's and pack's command gets."""
    spec = importlib.util.spec_from_file_location("train_jobs", REPO / "tools/train_jobs.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    sweeps = grid.resolve(memcap_params.load(str(REPO / "params.yaml"), {"scale": "paper"})[grid.FAMILY], "paper")
    jobs = [j for j in grid.jobs(sweeps) if j[:2] == ("scale_head", 60)][:2]   # one shape: one pack
    names = {grid.run_name(sweeps, *j[:3], list(j[3])) for j in jobs}
    pack = packing.plan({"scale_head": sweeps["scale_head"]}, names, 4, 60000)[0]   # 2 jobs of 2 seeds
    for threads in (1, 2):
        single, _ = tool.command(sweeps, jobs[0], "params.yaml", "paper", threads)
        packed, _ = tool.pack_command(sweeps, pack, "params.yaml", "paper", threads)
        assert single[single.index("--threads") + 1] == packed[packed.index("--threads") + 1] == str(threads)


CHILD = """import pathlib, signal, sys, time
def saved(*_):   # what a trainer does on SIGTERM: save its checkpoint, exit as killed
    pathlib.Path(sys.argv[1]).write_text("checkpoint")
    sys.exit(143)
signal.signal(signal.SIGTERM, saved)
print("training", flush=True)
time.sleep(120)
"""

TOOL = """import importlib.util, sys
spec = importlib.util.spec_from_file_location("train_jobs", sys.argv[1])
tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tool)
todo = [([sys.executable, "-c", sys.argv[2], f"saved{k}"], tool.MLT / "runs" / f"job{k}.parquet") for k in (1, 2)]
tool.run_all(todo, workers=1, deadline=float(sys.argv[3]))
"""


def _run_tool(tmp_path, deadline: float, sigterm: bool) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    tool = subprocess.Popen([sys.executable, "-c", TOOL, str(REPO / "tools/train_jobs.py"), CHILD, str(deadline)],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True)
    log = tmp_path / "logs/train_jobs/runs/job1.log"
    for _ in range(600):   # until the first job trains
        if log.exists() and "training" in log.read_text():
            break
        time.sleep(0.05)
    if sigterm:
        tool.terminate()
    return tool.communicate(timeout=60)[0]


def test_sigterm_to_the_tool_stops_its_jobs_as_the_deadline_would(tmp_path):
    """`kill` of the tool reaches its running job, which saves its checkpoint (no orphan left training);
    the jobs not started stay so. At the deadline the same happens without a signal."""
    out = _run_tool(tmp_path, deadline=600, sigterm=True)
    assert (tmp_path / "saved1").read_text() == "checkpoint"
    assert "rc=143" in out and "not started" in out and not (tmp_path / "saved2").exists(), out
    (tmp_path / "deadline").mkdir()
    out = _run_tool(tmp_path / "deadline", deadline=3, sigterm=False)
    assert (tmp_path / "deadline/saved1").exists() and "rc=143" in out and "not started" in out, out
