"""Run a DVC stage's command; if it fails, put the stage's last good outputs back and say what to do.

    python tools/dvc_keep_outputs.py STAGE -- COMMAND ...        # dvc.yaml: each family stage's cmd

DVC deletes a stage's outputs (all but `persist: true` ones) before it runs the command. When the
command fails, dvc.lock still records the last good outputs and their objects are in DVC's cache: this
copies them back (every object checked against its md5 first; nothing is touched if one is missing or
wrong), so a failed run never leaves the family without its tables, figures or report. Persist outputs
(run folders, the report's metrics) were never deleted and are left as they are.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from dvc_verify import check, object_path, uncached

CACHE = Path(".dvc/cache")


def persisted(dvc_yaml: Path, stage: str) -> set[str]:
    spec = (yaml.safe_load(dvc_yaml.read_text()) or {}).get("stages", {}).get(stage, {})
    return {path for kind in ("outs", "metrics", "plots") for entry in spec.get(kind, []) or []
            if isinstance(entry, dict) for path, opts in entry.items() if (opts or {}).get("persist")}


def deleted_outs(stage: str) -> list[tuple[str, str]]:
    """(path, md5) of the outputs DVC deleted before the command: cached, not persist."""
    lock = yaml.safe_load(Path("dvc.lock").read_text()) if Path("dvc.lock").exists() else {}
    entry = (lock or {}).get("stages", {}).get(stage)
    if not entry:
        return []
    skip = uncached(Path("dvc.yaml")) | persisted(Path("dvc.yaml"), stage)
    return [(o["path"], o["md5"]) for o in entry.get("outs", []) if o.get("md5") and o["path"] not in skip]


def restore(path: str, digest: str) -> None:
    """The output as dvc.lock records it: a file, or a folder rebuilt from its `.dir` listing."""
    target = Path(path)
    if target.is_dir():
        shutil.rmtree(target)
    elif target.exists():
        target.unlink()
    if not digest.endswith(".dir"):
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(object_path(CACHE, digest), target)   # a writable copy, not the read-only object
        return
    for entry in json.loads(object_path(CACHE, digest).read_text()):
        dest = target / entry["relpath"]
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(object_path(CACHE, entry["md5"]), dest)


def main(argv: list[str]) -> int:
    if "--" not in argv or argv.index("--") != 1:
        sys.exit("usage: dvc_keep_outputs.py STAGE -- COMMAND ...")
    stage, command = argv[0], argv[2:]
    code = subprocess.call(command)
    if code == 0:
        return 0
    outs = deleted_outs(stage)
    problems = [p for path, digest in outs for p in check(CACHE, path, digest, drop=False)]
    if problems:
        print(f"memcap: stage {stage} failed (exit {code}); its last outputs cannot be put back from DVC's cache "
              f"({problems[0]}): run `make pull` to restore them.", file=sys.stderr)
        return code
    for path, digest in outs:
        restore(path, digest)
    kept = ", ".join(path for path, _ in outs) or "none deleted"
    print(f"memcap: stage {stage} failed (exit {code}); its last good outputs (dvc.lock) are back in place: "
          f"{kept}.\n  Fix the cause named above (a damaged run file: `dvc checkout` restores it, or delete it "
          f"to retrain it), then run `dvc repro` again.", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
