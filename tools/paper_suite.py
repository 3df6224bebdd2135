"""The Python side of tools/paper-suite.sh: which results are at paper scale, copied both ways, and
params.yaml's scale once they are published.

    python tools/paper_suite.py snapshot WIP   # paper-scale DPC curves and theory tables -> WIP
    python tools/paper_suite.py restore WIP    # WIP -> results/, over anything not at paper scale
    python tools/paper_suite.py set-scale CONFIG FAMILY...   # params.yaml's scale: CONFIG's for FAMILY...

`restore` prints the local files it replaced (theory's tables of a `make pull` at quick share the
paper tables' names), one per line, so that the caller drops Snakemake's record of them. Run files
never collide: their names carry the preset and a key of their settings (memcap.keys).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pyarrow.parquet as pq
import yaml

from memcap import params as memcap_params

# (results folder, WIP folder, glob): DPC curves are runs/paper/<experiment>/<series>-<key>.parquet
PLACES = [(Path("results/dpc/runs"), "runs", "paper/*/*.parquet"), (Path("results/theory/tables"), "theory", "*.parquet")]


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


def set_scale(config: Path, families: list[str]) -> None:
    """Rewrite params.yaml's `scale` line (comments kept) with config's scale for these families."""
    published = memcap_params.scales(yaml.safe_load(config.read_text()))
    path = Path("params.yaml")
    text = path.read_text()
    scale = yaml.safe_load(text)["scale"]
    if not isinstance(scale, dict):
        sys.exit(f"paper-suite: params.yaml's scale is {scale!r}; keep the mapping form (one entry per family)")
    scale.update({family: published[family] for family in families})
    line = "scale: {" + ", ".join(f"{k}: {v}" for k, v in scale.items()) + "}"
    text, n = re.subn(r"^scale:.*(?:\n[ \t]+\S.*)*", line, text, count=1, flags=re.M)   # flow or block style
    if n != 1:
        sys.exit("paper-suite: no `scale:` line in params.yaml")
    path.write_text(text)
    print(f"params.yaml: {line}")


if __name__ == "__main__":
    if sys.argv[1] == "set-scale":
        set_scale(Path(sys.argv[2]), sys.argv[3:])
    else:
        {"snapshot": snapshot, "restore": restore}[sys.argv[1]](Path(sys.argv[2]))
