"""A bundle: one .tgz of what a `memcap bundle train` call finished, and taking it into a project.

It holds the run files of jobs and packs that finished (results/mlt_synthetic/runs/, attention/), the
jobs that stopped packs had finished (checkpoints/mlt_synthetic/finished/<run name>, a saturation
job's <stem>.attention.parquet beside it: each the file the pack would have written at its end), and
the call's logs and benchmarks (logs/bundle/). Taking it in copies each run to its run name, read-only
for the lab (0644), written whole (a temporary file renamed), never over a file that exists (a
published run stays as it is), byte for byte (its provenance kept); a saturation run only with its
attention file (the pipeline needs both).
"""

from __future__ import annotations

import os
import tarfile
from pathlib import Path, PurePosixPath

MLT = PurePosixPath("results/mlt_synthetic")
FINISHED = PurePosixPath("checkpoints/mlt_synthetic/finished")
CONTENTS = (str(MLT / "runs"), str(MLT / "attention"), str(FINISHED), "logs/bundle")


def write(path: Path, root: Path = Path("."), since: float = 0.0) -> list[str]:
    """The bundle of `root`'s results (files changed since `since`, a time.time(): this call's) and logs."""
    members = sorted(str(f.relative_to(root)) for folder in CONTENTS if (root / folder).exists()
                     for f in (root / folder).rglob("*") if f.is_file() and f.stat().st_mtime >= since)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with tarfile.open(tmp, "w:gz") as tar:
        for name in members:
            tar.add(root / name, arcname=name)
    os.replace(tmp, path)
    return members


def destinations(names: list[str]) -> dict[str, PurePosixPath]:
    """{member name: where it goes below the project} for the bundle's run and attention files."""
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


def take(bundle: Path, root: Path, dry_run: bool = False, analysis_sweeps: set[str] = frozenset()) -> dict:
    """Copy the bundle's new run and attention files into `root`; {"new": [...], "kept": [...],
    "left": [...]} (kept: a file exists there already; left: a saturation run without its attention)."""
    report = {"new": [], "kept": [], "left": []}
    with tarfile.open(bundle) as tar:
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
