"""Which code made a result: the commit, what differed from it, and whether a reader can trace it.

A result is traceable when its commit is in the repository's history and the files that can change a
result (code, rules, schemas, tools) were those of that commit. Files that cannot change a result
(dvc.lock, docs, tests, tracked results) and params (recorded in full in every Parquet) are named when
they differ but do not make a result "dirty". Published results made before this record existed are
judged by their `-dirty` flag and, where the history explains it, by a note in NOTES_FILE.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import subprocess
from pathlib import Path
from typing import Any

import yaml

NOTES_FILE = "published/provenance-notes.yaml"
# Cannot change a number: lock files, prose, tests, benchmarks, CI, and the tracked results themselves.
NEUTRAL = ("dvc.lock", "*.md", "docs/*", "tests/*", "benchmarks/*", ".ci/*", "results/*", "figures/*",
           "published/*", "wip/*", "*.dvc", ".gitignore", "*/.gitignore", ".dvcignore", ".dvc/*", "LICENSE*")
# Recorded in full in every Parquet's provenance (the resolved params), so a difference is not hidden.
PARAMS = ("params.yaml", "config/*")
# Untracked files count only where they can be imported or read by a rule.
CODE_DIRS = ("src", "workflow")
# How the hashed diff is written. Full blob ids: git abbreviates them to a length that grows with the
# repository, so an abbreviated diff of the same code hashes differently once the history is larger.
# The abbreviated forms are tried only to recognise results recorded before the ids were written in full.
DIFF_FORMATS = (("--binary", "--no-renames", "--full-index"),
                *(("--binary", "--no-renames", f"--abbrev={n}") for n in range(7, 13)))


def kind(path: str) -> str:
    """'neutral', 'params' or 'code' for a repository path."""
    if any(fnmatch.fnmatch(path, p) for p in NEUTRAL):
        return "neutral"
    if any(fnmatch.fnmatch(path, p) for p in PARAMS):
        return "params"
    return "code"


def _git(repo, *args: str, binary: bool = False):
    out = subprocess.run(["git", *args], cwd=repo, capture_output=True, check=True, text=not binary)
    return out.stdout


_PINNED: dict[str, Any] | None = None


def pin() -> dict[str, Any]:
    """This process's code: read once, when the job starts (memcap.cli.main), and returned ever after.
    A job that trains for hours while the checkout moves on records the code it ran, not the code it
    found when it finished."""
    global _PINNED
    if _PINNED is None:
        _PINNED = code_state()
    return _PINNED


def code_state(repo: str | os.PathLike | None = None) -> dict[str, Any]:
    """The commit of the working tree, every tracked file that differs from it, which of those (plus
    untracked files under src/ and workflow/) can change a result, and a SHA-256 of that difference
    (None when there is none). {'commit': 'unknown'} outside git. In a process that pinned its code
    (`pin`), that state."""
    if repo is None and _PINNED is not None:
        return _PINNED
    repo = repo or Path(__file__).resolve().parent
    try:
        commit = _git(repo, "rev-parse", "HEAD").strip()
        root = _git(repo, "rev-parse", "--show-toplevel").strip()
        differs = sorted(_git(root, "diff", "HEAD", "--name-only", "--no-renames").split())
        untracked = sorted(_git(root, "ls-files", "--others", "--exclude-standard", "--", *CODE_DIRS).split())
    except (OSError, subprocess.CalledProcessError):
        return {"commit": "unknown", "differs": [], "code_differs": [], "code_diff_sha256": None}
    code = [p for p in differs if kind(p) == "code"]
    digest = None
    if code or untracked:
        h = hashlib.sha256(_git(root, "diff", "HEAD", *DIFF_FORMATS[0], "--", *code, binary=True)
                           if code else b"")
        for p in untracked:   # a new module the diff does not show
            h.update(p.encode() + b"\0" + Path(root, p).read_bytes())
        digest = h.hexdigest()
    try:   # the code's own identity: a commit of docs or results keeps it
        trees = _git(root, "rev-parse", *[f"HEAD:{d}" for d in CODE_DIRS]).split()
    except subprocess.CalledProcessError:
        trees = [commit]
    return {"commit": commit, "differs": differs + [f"{p} (untracked)" for p in untracked],
            "code_differs": code + untracked, "code_diff_sha256": digest, "code_trees": trees}


def commit_label(state: dict[str, Any]) -> str:
    """'<sha>' or '<sha>-dirty' (code differed): the `git_commit` field every Parquet has carried."""
    return state["commit"] + ("-dirty" if state["code_differs"] else "")


# --- judging a result file ---------------------------------------------------------------------------

def file_sha256(path: str | os.PathLike) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def read_notes(repo: str | os.PathLike = ".") -> dict[str, dict]:
    path = Path(repo, NOTES_FILE)
    return (yaml.safe_load(path.read_text()) or {}).get("results", {}) if path.exists() else {}


def in_history(commit: str, repo: str | os.PathLike = ".") -> bool:
    try:
        _git(repo, "merge-base", "--is-ancestor", commit, "HEAD")
        return True
    except (OSError, subprocess.CalledProcessError):
        return False


def judge(path: str, prov: dict[str, Any], notes: dict[str, dict], repo: str | os.PathLike = ".") -> tuple[str, str]:
    """('clean' | 'explained' | 'untraceable', why) for one result file and its provenance."""
    label = prov.get("git_commit", "unknown")
    state = prov.get("code") or {"commit": label.removesuffix("-dirty"),
                                 "code_differs": ["files not recorded: made before provenance named them"]
                                 if label.endswith("-dirty") else []}
    commit = state["commit"]
    if commit == "unknown" or not in_history(commit, repo):
        return "untraceable", f"commit {commit} is not in this repository's history"
    if not state["code_differs"]:
        return "clean", f"made by commit {commit[:12]}"
    later = commit_with_that_code(state, repo)
    if later:
        return "clean", f"made by the code of commit {later[:12]} (in a checkout of {commit[:12]})"
    note = notes.get(path)
    if note and note.get("sha256") == file_sha256(Path(repo, path)):
        return "explained", note["note"]
    return "untraceable", (f"made by commit {commit[:12]} with code that differed from it "
                           f"({', '.join(state['code_differs'])[:300]})")


_SAME_CODE: dict[tuple, str | None] = {}


def commit_with_that_code(state: dict[str, Any], repo: str | os.PathLike = ".") -> str | None:
    """A later commit of this history whose code is exactly the recorded difference: a machine that got
    a copy of a commit's work tree on an older checkout (a GPU machine's copy of the working tree keeps
    an earlier commit as HEAD) records HEAD plus the difference; if the files that differed, the new ones
    and the SHA-256 of the difference are those between HEAD and a later commit, that commit's code
    made the result. None when no commit's code is that."""
    commit, want = state["commit"], state.get("code_diff_sha256")
    if not want or not state.get("code_differs"):
        return None
    key = (str(Path(repo).resolve()), commit, want)
    if key not in _SAME_CODE:
        _SAME_CODE[key] = None
        files = sorted(state["code_differs"])
        for later in _git(repo, "rev-list", "--ancestry-path", f"{commit}..HEAD").split():
            code, new = _code_difference(repo, commit, later)
            if sorted(code + new) == files and any(_diff_sha256(repo, commit, later, code, new, form) == want
                                                   for form in DIFF_FORMATS):
                _SAME_CODE[key] = later
                break
    return _SAME_CODE[key]


def _code_difference(repo, base: str, later: str) -> tuple[list[str], list[str]]:
    """What code_state would name in a checkout of `base` whose files are `later`'s: (changed code files,
    new files under CODE_DIRS, which that checkout sees as untracked)."""
    code, new = [], []
    for line in _git(repo, "diff", "--name-status", "--no-renames", base, later).splitlines():
        status, path = line.split("\t", 1)
        if status == "A":
            if any(path.startswith(d + "/") for d in CODE_DIRS):
                new.append(path)
        elif kind(path) == "code":
            code.append(path)
    return sorted(code), sorted(new)


def _diff_sha256(repo, base: str, later: str, code: list[str], new: list[str], form: tuple[str, ...]) -> str:
    """The hash code_state would record for that difference, its diff written in `form`."""
    h = hashlib.sha256(_git(repo, "diff", base, later, *form, "--", *code, binary=True) if code else b"")
    for p in new:
        h.update(p.encode() + b"\0" + _git(repo, "show", f"{later}:{p}", binary=True))
    return h.hexdigest()


# --- explaining results made before this record existed ----------------------------------------------

def history_note(commit: str, family_deps: list[str], repo: str | os.PathLike = ".") -> str | None:
    """Why a legacy '<commit>-dirty' result is still traceable, if the history shows it: from `commit`
    to the first later commit that recorded results (dvc.lock or a .dvc file), no file the family's
    jobs depend on changed, so the code in that span was `commit`'s. None when one did (the result
    must then be retrained)."""
    after = _git(repo, "rev-list", "--ancestry-path", "--reverse", f"{commit}..HEAD").split()
    end = next((c for c in after if any(p == "dvc.lock" or p.endswith(".dvc") for p in
                                        _git(repo, "diff", "--name-only", f"{c}^", c).split())), None)
    if end is None:
        return None
    changed = _git(repo, "diff", "--name-only", commit, end).split()
    code = [p for p in changed
            if kind(p) == "code" and any(p == d or p.startswith(d.rstrip("/") + "/") for d in family_deps)]
    if code:
        return None
    shown = sorted({"published/ (remote objects)" if p.startswith("published/") else p for p in changed})
    return (f"inferred from history: from {commit[:12]} to {end[:12]}, the commit that recorded it, no file "
            f"this family's jobs depend on changed (changed: {', '.join(shown)[:300]}); the tree differed "
            f"outside the code (params.yaml's scale as the suite tool set it, recorded in this "
            f"file's params, or dvc.lock while `dvc repro` ran)")
