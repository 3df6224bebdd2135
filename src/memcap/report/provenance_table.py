"""The report's provenance table: per family, the commits and package versions its results came from.

Read from the tables the report reads: each aggregated table records the commits of the run files it
was made from (`sources`), and its own commit (the aggregation's code). A commit ending in -dirty made
its results with code that differed from it: traceable only where published/provenance-notes.yaml
explains each such file from the history (`memcap provenance check` judges every file)."""

from __future__ import annotations

import pandas as pd

from memcap import provenance
from memcap.results import read_provenance

COLUMNS = ["family", "made", "commit", "code", "files", "torch", "python"]


def _code(label: str, files: int, explained: dict[str, int]) -> str:
    if not label.endswith("-dirty"):
        return "as committed" if label != "unknown" else "no commit recorded"
    n = explained.get(label.removesuffix("-dirty"), 0)
    return (f"differed; explained from history ({provenance.NOTES_FILE})" if n >= files
            else f"differed; {files - n} of {files} files not explained")


def table(named: dict[str, str], family_of: dict[str, str], notes: dict[str, dict]) -> pd.DataFrame:
    """named: report input name -> table path; family_of: input name -> family; notes: read_notes()."""
    explained: dict[str, int] = {}
    for note in notes.values():
        explained[note["commit"]] = explained.get(note["commit"], 0) + 1
    rows: dict[tuple, int] = {}
    for name, path in named.items():
        prov = read_provenance(path)
        own = [{"git_commit": prov.get("git_commit", "unknown"), "torch": prov.get("packages", {}).get("torch", "?"),
                "python": prov.get("packages", {}).get("python", "?"), "files": 1}]
        for made, srcs in (("runs", prov.get("sources") or []), ("table", own)):
            for s in srcs:
                key = (family_of[name], made, s["git_commit"], s["torch"], s["python"])
                # a run file read by two tables of its family counts once: keep the larger count
                rows[key] = max(rows.get(key, 0), s["files"]) if made == "runs" else rows.get(key, 0) + 1
    out = pd.DataFrame([{"family": f, "made": m, "commit": c[:12] + ("-dirty" if c.endswith("-dirty") else ""),
                         "code": _code(c, n, explained), "files": n, "torch": t, "python": py}
                        for (f, m, c, t, py), n in rows.items()], columns=COLUMNS)
    return out.sort_values(["family", "made", "commit"], ignore_index=True)


def markdown(df: pd.DataFrame) -> str:
    return ("Which code made the results: per family, the commit of its run files and of its tables, and "
            "whether the code differed from that commit.\n\n" + df.to_markdown(index=False) + "\n")
