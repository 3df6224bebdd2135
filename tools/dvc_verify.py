"""Check every DVC object that dvc.lock's outputs need against its name: no byte is trusted without its hash.

    python tools/dvc_verify.py [--remote DIR] [stage ...]     # default: every stage of dvc.lock

DVC names each object by the md5 of its bytes (<cache>/files/md5/ab/cdef...; a folder's object, named
`<md5>.dir`, lists its files' md5s). This reads dvc.lock, follows each cached output (folders through
their `.dir` listing) and hashes the object in the local cache (.dvc/cache), or with --remote in a
remote that is a folder. A missing object, or one whose bytes do not match its name, is named with the
output file it holds; a mismatching object in the cache is deleted (never checked out), so the next
fetch brings it again. Exit 1 with one line per bad file; exit 0 and nothing printed when all match.
`make pull` runs it between fetch and checkout (tools/dvc_pull.py), `make publish` before and after `dvc push`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import yaml


def md5(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "md5").hexdigest()


def uncached(dvc_yaml: Path) -> set[str]:
    """Outputs that dvc.yaml marks `cache: false` (in dvc.lock with an md5, never in the cache)."""
    out = set()
    for stage in (yaml.safe_load(dvc_yaml.read_text()) or {}).get("stages", {}).values():
        for kind in ("outs", "metrics", "plots"):
            for entry in stage.get(kind, []) or []:
                if isinstance(entry, dict):
                    out |= {path for path, opts in entry.items() if (opts or {}).get("cache") is False}
    return out


def objects(lock: dict, stages: list[str], skip: set[str]) -> list[tuple[str, str]]:
    """(output path, md5) of each cached output of `stages` (all when empty), in dvc.lock's order."""
    chosen = stages or list(lock.get("stages", {}))
    unknown = [s for s in chosen if s not in lock.get("stages", {})]
    if unknown:
        sys.exit(f"memcap: dvc.lock has no stage {', '.join(unknown)}")
    return [(o["path"], o["md5"]) for s in chosen for o in lock["stages"][s].get("outs", [])
            if o.get("md5") and o["path"] not in skip]


def object_path(store: Path, digest: str) -> Path:
    return store / "files" / "md5" / digest[:2] / digest[2:]


def check(store: Path, path: str, digest: str, drop: bool) -> list[str]:
    """Problems of one output's objects (a folder's: its listing, then each file)."""
    obj = object_path(store, digest)
    if not obj.is_file():
        return [f"{path}: object {digest} is missing in {store}"]
    if md5(obj) != digest.removesuffix(".dir"):
        if drop:
            obj.unlink()
        return [f"{path}: object {digest} in {store} does not match its hash (corrupted)"
                + ("; removed from the cache" if drop else "")]
    if not digest.endswith(".dir"):
        return []
    problems = []
    for entry in json.loads(obj.read_text()):
        problems += check(store, f"{path}/{entry['relpath']}", entry["md5"], drop)
    return problems


def problems(stages: list[str], remote: Path | None = None, lock: Path = Path("dvc.lock")) -> list[str]:
    """One line per bad file of `stages` (all when empty): in the cache (a bad object dropped from it),
    or in `remote`, a remote that is a folder (nothing dropped)."""
    data = yaml.safe_load(lock.read_text()) or {}
    store = remote or Path(".dvc/cache")
    found, seen = [], set()
    for path, digest in objects(data, stages, uncached(lock.with_name("dvc.yaml"))):
        if digest not in seen:
            seen.add(digest)
            found += check(store, path, digest, drop=remote is None)
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("stages", nargs="*")
    ap.add_argument("--remote", type=Path, help="a remote that is a folder (default: the cache, .dvc/cache)")
    ap.add_argument("--lock", type=Path, default=Path("dvc.lock"))
    args = ap.parse_args(argv)
    bad = problems(args.stages, args.remote, args.lock)
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
