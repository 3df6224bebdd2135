"""Nothing wrong reaches a reader: a corrupted remote object stops the pull, a failing stage keeps the
last good outputs, a preset of your own stays invisible to DVC in every family, an interrupted pull leaves
nothing that a later run records, names and scales are checked whole.

The end-to-end tests start from a copy of the shared clone restored from the published remote
(conftest.restored) and run the real `tools/dvc_pull.py`, `dvc repro` and `dvc status`."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

import infra_helpers as ih
from conftest import REPO
from memcap import params as mp

PARAMS = mp.read_yaml(REPO / "params.yaml")


# ---- names and scales, checked whole ---------------------------------------------------------------

@pytest.mark.parametrize("mutate, words", [
    (lambda p: p["mlt_synthetic"].update({"mine\n": copy.deepcopy(p["mlt_synthetic"]["quick"])}),
     ["mlt_synthetic.'mine\\n'", "not an allowed key"]),
    (lambda p: p["dpc"].update({"mine\n": copy.deepcopy(p["dpc"]["quick"])}), ["dpc.'mine\\n'"]),
    (lambda p: p.update(scale={"default": "quick\n"}), ["scale.default", "'quick\\n'"]),
])
def test_a_name_with_a_final_newline_is_refused(mutate, words):
    p = copy.deepcopy(PARAMS)
    mutate(p)
    with pytest.raises(mp.ParamsError) as err:
        mp.validate(p)
    assert all(w in str(err.value) for w in words), str(err.value)
    mutate_ok = copy.deepcopy(PARAMS)
    mutate_ok["mlt_synthetic"]["mine"] = copy.deepcopy(mutate_ok["mlt_synthetic"]["quick"])
    mp.validate(mutate_ok)                                   # the same name without the newline passes


def test_params_check_refuses_a_one_word_scale_with_the_form_dvc_reads(tmp_path):
    """dvc.yaml tracks scale.<family>: params.yaml's one-word scale would pass validation and then stop
    `dvc status`; `memcap params check` says which form works. --scale (one word) stays fine."""
    one_word = tmp_path / "params.yaml"
    text = (REPO / "params.yaml").read_text()
    one_word.write_text("\n".join("scale: quick" if line.startswith("scale:") else line for line in text.splitlines()))
    check = [sys.executable, "-m", "memcap", "params", "check", "--params", str(one_word)]
    refused = subprocess.run(check, capture_output=True, text=True)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    assert "scale: {mlt_synthetic: quick, theory: quick, dpc: quick, assumptions: quick, capacity: quick}" \
        in refused.stderr, refused.stderr
    assert subprocess.run([*check, "--scale", "quick"], capture_output=True, text=True).returncode == 0
    assert subprocess.run([*check[:-1], str(REPO / "params.yaml")], capture_output=True).returncode == 0


def test_an_own_capacity_preset_writes_its_probes_beside_its_rows_and_reads_the_shipped_ones(tmp_path):
    """The shipped presets' probes live in runs/probes/ (DVC-tracked); a preset of your own writes below
    runs/<preset>/probes/ (hidden by .dvcignore) and still reads the shipped probes of the same settings."""
    from memcap.capacity import grid
    from memcap.capacity.store import ProbeStore

    p = copy.deepcopy(PARAMS["capacity"]["quick"])
    row = {"heads": 1, "head_dim": 2, "seed": 0, "dataset_size": 8, "budget": 1, "mem_acc": 1.0}
    shipped = ProbeStore(tmp_path, p, 1, 2, "quick").write(row, {})
    assert shipped.relative_to(tmp_path).parts[0] == "probes"
    own = ProbeStore(tmp_path, p, 1, 2, "mine")
    assert own.has(0, 8, 1)                                       # read from the shipped folder
    mine = own.write({**row, "dataset_size": 16, "mem_acc": 0.5}, {})
    assert mine.relative_to(tmp_path).parts[:2] == ("mine", "probes")
    assert mine.parent.name == Path(grid.probe_folder(p, 1, 2)).name
    assert sorted(own.table().dataset_size) == [8, 16]
    assert list(ProbeStore(tmp_path, p, 1, 2, "quick").table().dataset_size) == [8]   # shipped: its own only
    assert not own.has(0, 16, 2) and own.outcomes([0]) == {0: {8: True, 16: False}}
    variant = ProbeStore(tmp_path, p, 1, 2, "quick_dpc").write({**row, "dataset_size": 32}, {})
    assert variant.relative_to(tmp_path).parts[0] == "probes"    # a shipped variant publishes with its scale


# ---- end to end ------------------------------------------------------------------------------------

def _changed_outs(project) -> dict:
    """`dvc status`'s changed outputs per stage (changed deps only mean that there is work to do)."""
    status = json.loads(project.run("dvc", "status", "--json", env=ih.code_env(project.root)).stdout)
    return {stage: c["changed outs"] for stage, changes in status.items() for c in changes
            if isinstance(c, dict) and c.get("changed outs")}


def _digest(root: Path, *tops: str) -> dict[str, str]:
    return {str(f.relative_to(root)): hashlib.sha256(f.read_bytes()).hexdigest()
            for top in tops for f in sorted((root / top).rglob("*")) if f.is_file()}


def _lock_entry(root: Path, stage: str) -> dict:
    return yaml.safe_load((root / "dvc.lock").read_text())["stages"][stage]


# the pull's free space as statvfs reports it: 100 blocks of 4 kB (0.4 MB)
SMALL_DISK = ("import os, runpy, sys; os.statvfs = lambda path: os.statvfs_result((4096, 4096, 10 ** 6, 100, 100, "
              "10 ** 6, 10 ** 6, 10 ** 6, 0, 255)); sys.argv = ['tools/dvc_pull.py']; "
              "runpy.run_path('tools/dvc_pull.py', run_name='__main__')")


@pytest.mark.e2e
def test_a_pull_onto_a_disk_too_small_stops_before_writing_with_both_numbers(restored):
    """A clone without the capacity family's tables and an empty DVC cache, on a filesystem with 0.4 MB
    free (faked at the statvfs call): the pull stops before fetching, saying what it would write and
    what is free; neither the workspace nor the cache changes."""
    root, env = restored.root, ih.code_env(restored.root)
    shutil.rmtree(root / ".dvc" / "cache")
    shutil.rmtree(root / "results" / "capacity" / "tables")
    before = _digest(root, "results", "figures")
    failed = restored.run("python", "-c", SMALL_DISK, check=False, env=env)
    said = failed.stdout + failed.stderr
    assert failed.returncode == 1 and "not enough disk space" in failed.stderr, said
    needed = sum(o["size"] for stage in yaml.safe_load((root / "dvc.lock").read_text())["stages"].values()
                 for o in stage.get("outs", []) if "size" in o)
    # an empty cache: every object is fetched; the results written are the capacity tables only
    assert f"{needed / 2 ** 20:.1f} MB into DVC's cache" in failed.stderr, said
    assert "has 0.4 MB free" in failed.stderr and "MB of results" in failed.stderr, said
    assert "Traceback" not in said and _digest(root, "results", "figures") == before
    assert not list((root / ".dvc").glob("cache/files/md5/*/*"))


def test_a_write_that_finds_the_disk_full_names_the_path_and_leaves_nothing(tmp_path, monkeypatch):
    """ENOSPC while a result is written: DiskFull names the path and the free space, and neither the
    result nor its temporary file is left; any other OSError is not mistaken for it."""
    import errno

    import pandas as pd

    from memcap import results

    def no_space(table, where):
        Path(where).write_bytes(b"half")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(results.pq, "write_table", no_space)
    out = tmp_path / "runs" / "r.parquet"
    with pytest.raises(results.DiskFull, match=f"disk full at {out}: .* MB free"):
        results.write_parquet(pd.DataFrame({"a": [1]}), out, {})
    assert list(out.parent.iterdir()) == []

    def denied(table, where):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(results.pq, "write_table", denied)
    with pytest.raises(PermissionError) as caught:
        results.write_parquet(pd.DataFrame({"a": [1]}), out, {})
    assert not isinstance(caught.value, results.DiskFull) and list(out.parent.iterdir()) == []


def test_a_checkpoint_that_finds_the_disk_full_is_diskfull_not_a_torch_error(tmp_path, monkeypatch):
    """torch.save into a full filesystem (/dev/full: the kernel's own ENOSPC) raises DiskFull naming the
    checkpoint, with nothing left beside it; torch's own writer would say 'PytorchStreamWriter failed'."""
    import torch

    from memcap import checkpoint, results

    out = tmp_path / "ckpt" / "job.pt"
    monkeypatch.setattr(checkpoint, "open", lambda path, mode: open("/dev/full", mode), raising=False)
    with pytest.raises(results.DiskFull, match=f"disk full at {out}: .* MB free"):
        checkpoint.save(out, {"w": torch.zeros(100_000)}, {"seed": 0})
    assert list(out.parent.iterdir()) == []
    monkeypatch.undo()
    checkpoint.save(out, {"w": torch.zeros(3)}, {"seed": 0})   # with space: written, and it loads
    assert checkpoint.load(out, {"seed": 0})["w"].tolist() == [0, 0, 0]


@pytest.mark.e2e
def test_a_flipped_byte_in_a_remote_object_leaves_that_file_absent_and_restores_the_rest(restored, tmp_path):
    """4 bytes of one run file's object inverted on the remote, the family's results and figures deleted:
    `make pull`'s script restores every other file (the run folder file by file), leaves that one absent
    and out of the cache (with DVC's `verify`, the shipped remotes, and without it), exits 1 naming the
    file, its stage and the `dvc repro` that rebuilds it; Snakemake then plans that file's job and what
    reads it, no other training."""
    root, env = restored.root, ih.code_env(restored.root)
    remote = tmp_path / "remote"
    shutil.copytree(root / "published" / "dvc-remote", remote)
    runs = next(o["md5"] for o in _lock_entry(root, "mlt_synthetic")["outs"] if o["path"].endswith("/runs"))
    listing = json.loads((remote / "files/md5" / runs[:2] / runs[2:]).read_text())
    entry = next(e for e in listing if e["relpath"].startswith("paper/scale_head_shared/"))
    name, digest = f"results/mlt_synthetic/runs/{entry['relpath']}", entry["md5"]
    obj = remote / "files/md5" / digest[:2] / digest[2:]
    data = bytearray(obj.read_bytes())
    data[len(data) // 2:len(data) // 2 + 4] = bytes(b ^ 0xFF for b in data[len(data) // 2:len(data) // 2 + 4])
    obj.chmod(0o644)
    obj.write_bytes(bytes(data))
    cached = root / ".dvc/cache/files/md5" / digest[:2] / digest[2:]
    (root / name).unlink()
    before = _digest(root, "results", "figures")
    for verify in ("true", "false"):
        (root / ".dvc/config.local").write_text(f"['remote \"published\"']\n    url = {remote}\n    verify = {verify}\n")
        cached.unlink(missing_ok=True)                     # this machine lacks the object: it is fetched
        for output in ("results/mlt_synthetic/runs", "results/mlt_synthetic/tables", "figures/mlt_synthetic"):
            shutil.rmtree(root / output)
        failed = restored.run("python", "tools/dvc_pull.py", check=False, env=env)
        said = failed.stdout + failed.stderr
        assert failed.returncode == 1 and f"mlt_synthetic: {name} (" in failed.stderr, (verify, said)
        assert f"{name}: object {digest} in {remote} does not match its hash" in failed.stderr, said
        assert "dvc repro mlt_synthetic" in failed.stderr and "Traceback" not in said, said
        # what rebuilding it costs: the time its job took when it was made (the restored runs table)
        assert re.search(r"Their last build trained [\d.,]+ (min|h) on [\w+]+ \(1 of 1 files' times", failed.stderr), said
        assert _digest(root, "results", "figures") == before and not (root / name).exists()
        assert not cached.exists(), verify                # never left in the cache to be checked out later
    planned = restored.run("snakemake", "--dry-run", "--quiet", "rules", env=env).stdout
    table = planned.split("Job stats:")[1].split("\n\n")[0].splitlines()[3:]      # "rule count" rows
    jobs = {line.split()[0]: int(line.split()[1]) for line in table if len(line.split()) == 2}
    assert jobs.pop("mlt_train", 0) == 1, planned                     # that file's job, no other training
    assert all(re.search(r"_(aggregate|figures)$|^report_|^(all|total)$", rule) for rule in jobs), planned


@pytest.mark.e2e
def test_a_failing_stage_keeps_the_last_good_tables_and_figures_and_says_what_to_do(restored):
    """One published MLT run file truncated: `dvc repro mlt_synthetic` stops with memcap's message, and
    the family's tables, figures and metrics are the last good ones (DVC deleted them before the command)."""
    root, env = restored.root, ih.code_env(restored.root)
    run = sorted((root / "results/mlt_synthetic/runs/paper/scale_head_shared").rglob("*.parquet"))[0]
    run.write_bytes(run.read_bytes()[:1000])
    outputs = ("results/mlt_synthetic/tables", "figures/mlt_synthetic", "results/mlt_synthetic/metrics.json")
    before, lock = _digest(root, *outputs), _lock_entry(root, "mlt_synthetic")
    assert len(before) >= 13
    proc = restored.run("dvc", "repro", "mlt_synthetic", check=False, env=env)
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0 and str(run.relative_to(root)) in said, said[-3000:]
    assert "last good outputs (dvc.lock) are back in place" in said and "dvc checkout" in said, said[-3000:]
    assert _digest(root, *outputs) == before
    assert _lock_entry(root, "mlt_synthetic") == lock


# Where a preset of your own (`mine`) writes its runs, per family with runs; theory's runs are its
# tables (replaced by the published ones on `make pull`) and its resumable cases under checkpoints/.
OWN = {
    "mlt_synthetic": ["results/mlt_synthetic/runs/mine/scale_head_shared/2/T200-0123abcd.parquet",
                      "results/mlt_synthetic/attention/mine/head_saturation_h2/2/T32-0123abcd.pt"],
    "dpc": ["results/dpc/runs/mine/exp1/h2-0123abcd.parquet"],
    "capacity": ["results/capacity/runs/mine/H1_dh2-0123abcd.parquet",
                 "results/capacity/runs/mine/probes/H1_dh2-0123abcd/seed0_T8_x1.parquet"],
    "theory": ["checkpoints/theory/gd/case.pt", "logs/theory/gd.log"],
}
# The same kind of file where the shipped presets' runs live: DVC sees it (the check can fail).
SHIPPED = {"mlt_synthetic": "results/mlt_synthetic/runs/quick/x.parquet", "dpc": "results/dpc/runs/paper/x.parquet",
           "capacity": "results/capacity/runs/probes/H1_dh2-0123abcd/seed0_T8_x1.parquet",
           "theory": "results/theory/tables/x.parquet"}


@pytest.mark.e2e
def test_an_own_presets_runs_are_invisible_to_dvc(restored):
    """Every family's own runs at once (one dvc status asks about all stages), then a shipped preset's
    run of every family: each family's stage sees its own."""
    root = restored.root
    for path in (path for paths in OWN.values() for path in paths):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(b"own run")
    assert _changed_outs(restored) == {}
    assert restored.run("git", "status", "--porcelain").stdout == ""
    for path in SHIPPED.values():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(b"a shipped preset's run")
    changed = _changed_outs(restored)
    assert {family: family in changed for family in SHIPPED} == dict.fromkeys(SHIPPED, True), changed


@pytest.mark.e2e
def test_an_interrupted_pull_then_a_pull_restores_exactly_the_published_state(restored):
    """A pull killed while the checkout writes files (SIGKILL to its process group: a closed session, an
    out-of-memory kill; DVC finishes a checkout before it heeds Ctrl-C), plus DVC temp files such a
    stop can leave (`.<token>.tmp`): the next pull removes them, DVC never records them, and every
    output and dvc.lock are as published."""
    root = restored.root
    published = _digest(root, "results", "figures")
    lock = (root / "dvc.lock").read_bytes()
    tops = ("results/mlt_synthetic/runs", "results/dpc/runs", *(f for f in (root / "figures").iterdir() if f.is_dir()))
    for top in tops:
        shutil.rmtree(root / top)
    pull = subprocess.Popen(["python", "tools/dvc_pull.py"], cwd=root, env=ih.popen_env(root), start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.monotonic() + 120
    while not any((root / "results/mlt_synthetic").glob("runs/*")) and time.monotonic() < end:
        time.sleep(0.05)
    os.killpg(pull.pid, signal.SIGKILL)
    assert pull.wait(timeout=120) == -signal.SIGKILL
    junk = [root / "results/capacity/tables/.AbCdEfGhIjKlMnOpQrStUv.tmp",
            root / "results/mlt_synthetic/runs/paper/.T10000-x.parquet.0123abcd.tmp"]
    for f in junk:
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(b"")
    restored.run("python", "tools/dvc_pull.py", env=ih.code_env(root))
    assert not [f for f in root.rglob("*.tmp") if ".dvc" not in f.parts]
    assert _digest(root, "results", "figures") == published
    assert _changed_outs(restored) == {} and (root / "dvc.lock").read_bytes() == lock
    assert restored.run("git", "status", "--porcelain").stdout == ""
    for f in junk:                          # one left by an interrupted `dvc repro`: never recorded
        f.write_bytes(b"")
    assert _changed_outs(restored) == {}


def test_a_partial_pull_says_what_the_absent_files_took_to_train(tmp_path, monkeypatch):
    """The rebuild's cost in the partial pull's message: each absent run file's job time from its family's
    restored table (MLT's runs by job, capacity's probes by architecture, seed, T and budget), summed;
    nothing said for a file no table records."""
    import pandas as pd

    monkeypatch.syspath_prepend(str(REPO / "tools"))
    import dvc_pull

    monkeypatch.chdir(tmp_path)
    for family, name, rows in (
            ("mlt_synthetic", "runs.parquet", {"job": ["paper/scale_head/4/T550-aa", "paper/scale_head/4/T550-aa"],
                                               "wall_time_s": [590.0, 600.0], "device": ["cpu", "cpu"]}),
            ("capacity", "probes.parquet", {"heads": [5], "head_dim": [64], "seed": [0], "dataset_size": [1966],
                                            "budget": [1], "wall_time_s": [1200.0], "device": ["cpu"]})):
        (tmp_path / "results" / family / "tables").mkdir(parents=True)
        pd.DataFrame(rows).to_parquet(tmp_path / "results" / family / "tables" / name)
    job, probe = ("results/mlt_synthetic/runs/paper/scale_head/4/T550-aa.parquet",
                  "results/capacity/runs/probes/H5_dh64-15186b72/seed0_T1966_x1.parquet")
    said = dvc_pull.last_build([job, probe, "results/theory/tables/gd.parquet"])
    assert "trained 30.0 min on cpu (2 of 3 files' times recorded" in said, said   # 600 s (the job) + 1200 s
    assert dvc_pull.last_build(["results/capacity/runs/probes/H5_dh64-15186b72/seed1_T1966_x1.parquet"]) == ""
