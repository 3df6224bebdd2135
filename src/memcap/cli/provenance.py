"""provenance: can every result be traced to the code of a commit? (`make publish` asks first)."""

from __future__ import annotations

import sys
from pathlib import Path

HELP = "which commit's code made each result; refuse to publish what cannot be traced"


def register(sub) -> None:
    p = sub.add_parser("check", help="judge every result Parquet: clean, explained or untraceable (exit 1)")
    p.add_argument("paths", nargs="*", help="result files (default: every Parquet under results/)")
    p.add_argument("--quiet", action="store_true", help="print only the results that cannot be traced")
    p.set_defaults(func=_check)

    p = sub.add_parser("notes", help=f"explain legacy '-dirty' results from the history into {_notes()}")
    p.add_argument("paths", nargs="*", help="result files (default: every Parquet under results/)")
    p.set_defaults(func=_notes_cmd)


def _notes() -> str:
    from memcap.provenance import NOTES_FILE

    return NOTES_FILE


def _results(paths: list[str]) -> list[str]:
    return paths or sorted(str(p) for p in Path("results").rglob("*.parquet"))


def _check(args) -> None:
    from memcap import provenance
    from memcap.results import read_provenance

    notes = provenance.read_notes()
    judged = [(p, *provenance.judge(p, read_provenance(p), notes)) for p in _results(args.paths)]
    counts = {s: sum(1 for _, state, _ in judged if state == s) for s in ("clean", "explained", "untraceable")}
    for path, state, why in judged:
        if state == "untraceable" or not args.quiet:
            print(f"{state:<12} {path}: {why}")
    print(f"{len(judged)} results: " + ", ".join(f"{n} {s}" for s, n in counts.items()), flush=True)
    if counts["untraceable"]:
        sys.exit(f"memcap provenance: {counts['untraceable']} results cannot be traced to the code of a commit "
                 f"(listed above). Commit the code and rerun their jobs (delete the files; `dvc repro`), "
                 f"or, for results made before provenance named the code, explain them from the history "
                 f"with `memcap provenance notes`. Nothing was published.")


def _notes_cmd(args) -> None:
    """Write an entry for each legacy '-dirty' result the history explains; list those it does not."""
    import yaml

    from memcap import provenance
    from memcap.results import read_provenance

    stages = yaml.safe_load(Path("dvc.yaml").read_text())["stages"]
    notes, unexplained = provenance.read_notes(), []
    for path in _results(args.paths):
        prov = read_provenance(path)
        label = prov.get("git_commit", "unknown")
        if "code" in prov or not label.endswith("-dirty") or path in notes:
            continue
        family = Path(path).parts[1]
        deps = [d for d in stages[family]["deps"] if not d.startswith(("results/", "figures/"))]
        why = provenance.history_note(label.removesuffix("-dirty"), deps)
        if why is None:
            unexplained.append(path)
            continue
        notes[path] = {"commit": label.removesuffix("-dirty"), "sha256": provenance.file_sha256(path), "note": why}
    header = ("# Results made before provenance named the code (their `git_commit` ends in -dirty), with what\n"
              "# the history shows about the code that made them. Written by `memcap provenance notes`; an\n"
              "# entry holds only for the file with that SHA-256 (a retrained file needs none).\n")
    from memcap.results import write_text

    write_text(header + yaml.safe_dump({"results": dict(sorted(notes.items()))}, width=100, sort_keys=True),
               provenance.NOTES_FILE)
    print(f"{provenance.NOTES_FILE}: {len(notes)} explained results")
    for path in unexplained:
        print(f"not explained by the history (retrain it): {path}")
