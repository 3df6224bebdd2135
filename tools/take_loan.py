"""Take a lent GPU machine's MLT results (tools/gpu_loan.sh's results.tgz) into this project.

The tarball holds the run files of packs that finished (results/mlt_synthetic/runs/, attention/) and the
jobs that packs stopped at the loan's end had finished (checkpoints/mlt_synthetic/finished/<run name>,
with <stem>.attention.parquet beside a saturation job's): each is the file the pack would have written
at its end. They land at their run names below results/mlt_synthetic/, read-only for the lab (0644),
written whole (a temporary file renamed), **never over a file that exists** (a published run stays as
it is). A saturation job's run is taken only with its attention file (the pipeline needs both).

    python tools/take_loan.py path/to/results.tgz [--dry-run]   # the loan's returned tarball

Then: `memcap provenance check`, `dvc commit -f mlt_synthetic` (docs/presets-and-published.md).
"""

from __future__ import annotations

import argparse
import os
import sys
import tarfile
from pathlib import Path, PurePosixPath

MLT = PurePosixPath("results/mlt_synthetic")
FINISHED = PurePosixPath("checkpoints/mlt_synthetic/finished")


def destinations(names: list[str]) -> dict[str, PurePosixPath]:
    """{member name: where it goes below the project} for the tarball's run and attention files."""
    names = [n for n in names if n.endswith(".parquet") and not PurePosixPath(n).is_absolute()
             and ".." not in PurePosixPath(n).parts]
    out: dict[str, PurePosixPath] = {}
    for n in names:
        p = PurePosixPath(n)
        if p.is_relative_to(MLT / "runs") or p.is_relative_to(MLT / "attention"):
            out[n] = p
        elif p.is_relative_to(FINISHED) and not p.name.endswith(".attention.parquet"):
            out[n] = MLT / "runs" / p.relative_to(FINISHED)
            att = p.with_name(p.name.removesuffix(".parquet") + ".attention.parquet")
            if str(att) in names:
                out[str(att)] = MLT / "attention" / p.relative_to(FINISHED)
    return out


def take(tarball: Path, root: Path, dry_run: bool = False, analysis_sweeps: set[str] = frozenset()) -> dict:
    """Copy the tarball's new run and attention files into `root`; {"new": [...], "kept": [...],
    "left": [...]} (kept: a file exists there already; left: a saturation run without its attention)."""
    report = {"new": [], "kept": [], "left": []}
    with tarfile.open(tarball) as tar:
        where = destinations([m.name for m in tar.getmembers() if m.isfile()])
        landing = set(where.values())
        for name, dest in sorted(where.items(), key=lambda kv: str(kv[1])):
            if dest.is_relative_to(MLT / "runs") and dest.parts[4] in analysis_sweeps:
                att = MLT / "attention" / dest.relative_to(MLT / "runs")
                if att not in landing and not (root / att).exists():
                    report["left"].append(str(dest))
                    continue
            target = root / dest
            if target.exists():
                report["kept"].append(str(dest))
                continue
            report["new"].append(str(dest))
            if not dry_run:
                target.parent.mkdir(parents=True, exist_ok=True)
                tmp = target.with_name(f".{target.name}.tmp")
                tmp.write_bytes(tar.extractfile(name).read())
                os.chmod(tmp, 0o644)
                os.replace(tmp, target)
    return report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tarball", type=Path)
    ap.add_argument("--root", type=Path, default=Path("."), help="the project (default: here)")
    ap.add_argument("--dry-run", action="store_true", help="say what would be copied; copy nothing")
    args = ap.parse_args()
    sys.path.insert(0, str(args.root / "src"))
    from memcap import params as memcap_params
    from memcap.mlt_synthetic import grid

    family = memcap_params.read_yaml(str(args.root / "params.yaml"))[grid.FAMILY]
    analysis = set(grid.analysis_sweeps(grid.resolve(family, "paper")))
    report = take(args.tarball, args.root, args.dry_run, analysis)
    for what, label in (("new", "copied" if not args.dry_run else "would copy"), ("kept", "kept (exists here)"),
                        ("left", "left (a saturation run without its attention file)")):
        for path in report[what]:
            print(f"{label}: {path}")
    print(f"take_loan: {len(report['new'])} new, {len(report['kept'])} kept, {len(report['left'])} left")


if __name__ == "__main__":
    main()
