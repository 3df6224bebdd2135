"""The Parquet side of tools/paper-suite.sh: which results are at paper scale, copied both ways.

    python tools/paper_suite.py snapshot WIP   # paper-scale DPC curves and theory tables -> WIP
    python tools/paper_suite.py restore WIP    # WIP -> results/, over anything not at paper scale

`restore` prints the local files it replaced (a `make pull` brings quick results under the same
names), one per line, so that the caller drops Snakemake's record of them: that record names the
quick params, and Snakemake would retrain the restored curve for a params change.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pyarrow.parquet as pq

# (results folder, WIP folder, glob): DPC curves are runs/<experiment>/<series>.parquet
PLACES = [(Path("results/dpc/runs"), "runs", "*/*.parquet"), (Path("results/theory/tables"), "theory", "*.parquet")]


def paper_scale(f: Path) -> bool:
    """The scale column where a table has one, else the provenance's resolved params."""
    schema = pq.read_schema(f)
    if "scale" in schema.names:
        return set(pq.read_table(f, columns=["scale"]).column("scale").to_pylist()) == {"paper"}
    return json.loads(schema.metadata[b"memcap"])["params"].get("scale") == "paper"


def snapshot(wip: Path) -> None:
    for results, folder, pattern in PLACES:
        n = 0
        for f in sorted(results.glob(pattern)):
            if paper_scale(f):
                dest = wip / folder / f.relative_to(results)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(f, dest)
                n += 1
        print(f"{n} finished paper-scale {'curves' if folder == 'runs' else 'theory tables'}")


def restore(wip: Path) -> None:
    for results, folder, pattern in PLACES:
        for f in sorted((wip / folder).glob(pattern)):
            dest = results / f.relative_to(wip / folder)
            if dest.exists() and paper_scale(dest):
                continue                       # a paper-scale result made here: never overwritten
            if dest.exists():
                print(dest)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, dest)           # a new mtime: what depends on it is rebuilt


if __name__ == "__main__":
    {"snapshot": snapshot, "restore": restore}[sys.argv[1]](Path(sys.argv[2]))
