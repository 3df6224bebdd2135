"""tools/take_loan.py: a lent GPU's results land at their run names, never over a file that exists."""

import importlib.util
import io
import stat
import subprocess
import sys
import tarfile

from conftest import REPO

spec = importlib.util.spec_from_file_location("take_loan", REPO / "tools" / "take_loan.py")
take_loan = importlib.util.module_from_spec(spec)
spec.loader.exec_module(take_loan)

RUNS, ATT, FIN = "results/mlt_synthetic/runs", "results/mlt_synthetic/attention", "checkpoints/mlt_synthetic/finished"


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
    tgz = _tarball(tmp_path / "results.tgz", {
        f"{RUNS}/paper/scale_ctx_size/1/T20000-k.parquet": b"retrained",          # exists here: kept
        f"{FIN}/paper/scale_ctx_size/5/T20000-k.parquet": b"finished in a stopped pack",
        f"{RUNS}/paper/scale_ctx_size/10/T20000-k.parquet": b"a pack that finished",
        f"{FIN}/paper/head_saturation_h4/4/T550-a.parquet": b"run",               # its attention too
        f"{FIN}/paper/head_saturation_h4/4/T550-a.attention.parquet": b"attention",
        f"{FIN}/paper/head_saturation_h4/4/T550-b.parquet": b"run, no attention",  # left
        "../outside.parquet": b"never",
        f"logs/train_jobs/runs/paper/scale_ctx_size/5/T20000-k.log": b"not a result",
    })
    report = take_loan.take(tgz, root, analysis_sweeps={"head_saturation_h4"})
    assert published.read_bytes() == b"published" and report["kept"] == [str(published.relative_to(root))]
    new = root / RUNS / "paper/scale_ctx_size/5/T20000-k.parquet"
    assert new.read_bytes() == b"finished in a stopped pack"
    assert stat.S_IMODE(new.stat().st_mode) == 0o644
    assert (root / RUNS / "paper/scale_ctx_size/10/T20000-k.parquet").read_bytes() == b"a pack that finished"
    assert (root / ATT / "paper/head_saturation_h4/4/T550-a.parquet").read_bytes() == b"attention"
    assert (root / RUNS / "paper/head_saturation_h4/4/T550-a.parquet").read_bytes() == b"run"
    assert report["left"] == [f"{RUNS}/paper/head_saturation_h4/4/T550-b.parquet"]
    assert not (root / RUNS / "paper/head_saturation_h4/4/T550-b.parquet").exists()
    assert len(report["new"]) == 4
    assert not (tmp_path / "outside.parquet").exists() and not (root / "logs").exists()
    assert not list(root.rglob("*.tmp"))
    # again: everything is there now, nothing is copied
    assert take_loan.take(tgz, root, analysis_sweeps={"head_saturation_h4"})["new"] == []


def test_the_command_reads_the_saturation_sweeps_from_params_and_a_dry_run_copies_nothing(tmp_path):
    tgz = _tarball(tmp_path / "results.tgz", {f"{FIN}/paper/head_saturation_h4/4/T550-b.parquet": b"run",
                                              f"{FIN}/paper/scale_head/1/T30000-k.parquet": b"run"})
    root = tmp_path / "project"
    root.mkdir()
    (root / "params.yaml").write_bytes((REPO / "params.yaml").read_bytes())
    (root / "src").symlink_to(REPO / "src")
    out = subprocess.run([sys.executable, str(REPO / "tools/take_loan.py"), str(tgz), "--root", str(root),
                          "--dry-run"], capture_output=True, text=True, check=True).stdout
    assert "take_loan: 1 new, 0 kept, 1 left" in out, out
    assert not (root / "results").exists()
