"""Restore cached results instead of retraining: `make pull`, the first half of `make reproduce`, or
`python tools/dvc_pull.py [stage ...]` (stage names are the Snakemake target names; default: everything).

 1. Check that the filesystem has room for what the pull writes (dvc.lock's sizes), then fetch
    from the default DVC remote: the repository's own read-only published remote
    (published/dvc-remote) unless you set another (README "Your lab's remote"). A missing remote, or
    one that holds none of the objects, stops with a short message before the workspace changes.
 2. Check every fetched object against its hash (tools/dvc_verify.py), then check out. Run files of
    other settings are kept, never deleted; every restored output must be the one dvc.lock records (a
    params change since is fine: `dvc repro` retrains what it made stale). A file whose object is
    missing or corrupted is left absent and everything else is restored (a folder file by file); the
    pull then exits 1 naming each absent file, its stage and the `dvc repro` that rebuilds exactly those.
 3. Let Snakemake record the restored files as made from the params they were made from (the
    committed params.yaml). DVC restores files with arbitrary mtimes and no Snakemake metadata:
    without this step `snakemake -n` would rerun aggregation steps, or miss a params change and
    silently reuse runs made from other settings.

Steps 1 and 2 run in this process through DVC's Python API (one DVC start instead of five, ~2 CPU-s
a pull); step 3 in Snakemake's own (tools/snakemake_touch.py).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dvc_verify  # noqa: E402  (a sibling tool)

MEMCAP = Path(".snakemake/memcap")
KEPT = MEMCAP / "kept-runs"
RUN_FILE = re.compile(r"^results/[^/]+/(runs|attention)/")
OTHER_REMOTE = "dvc remote default --local <name>"


class PullFailed(Exception):
    """Its lines go to stderr and the pull exits 1."""


class Captured(logging.Handler):
    """DVC's log lines as its CLI prints them ("WARNING: ..."), kept instead of printed (the loggers
    dvc.logger.setup gives handlers: their records stop there)."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines += f"{record.levelname}: {record.getMessage()}".splitlines()


def remote_folder(url: str) -> Path | None:
    """The folder of a remote that is one (None for a URL): ~ expanded, relative to .dvc/ (DVC's config)."""
    if "://" in url:
        return None
    path = Path(url).expanduser()
    return path if path.is_absolute() else Path(".dvc") / path


def default_remote(repo) -> tuple[str, str]:
    """(the default remote's name and URL, its description in messages); stops when there is none or
    when a remote that is a folder does not exist (DVC would only say that the results are not there)."""
    name = repo.config["core"].get("remote", "")
    url = str(repo.config["remote"].get(name, {}).get("url", "")) if name else ""
    where = f"DVC remote '{name or '<none>'}'" + (f" ({url})" if url else "")
    if not name:
        raise PullFailed("memcap: no default DVC remote; add one (README \"Your lab's remote\") or retrain: make retrain")
    folder = remote_folder(url) if url else None
    if folder is not None and not folder.is_dir():
        raise PullFailed(f"memcap: the {where} does not exist (no such folder); see: dvc remote list")
    return url, where


def lock_outs(targets: list[str]) -> list[dict]:
    """dvc.lock's outputs (path, md5, size) of the stages pulled (all without targets)."""
    import yaml

    stages = (yaml.safe_load(Path("dvc.lock").read_text()) or {}).get("stages", {})
    return [o for name, stage in stages.items() if not targets or name in targets for o in stage.get("outs", [])]


def space_needed(outs: list[dict]) -> tuple[int, int]:
    """(bytes the fetch writes into DVC's cache, bytes the checkout writes into the workspace): the
    sizes dvc.lock records of the objects not cached yet and of the outputs not in the workspace."""
    cache = Path(".dvc/cache/files/md5")
    fetched = sum(o.get("size", 0) for o in outs if not (cache / o["md5"][:2] / o["md5"][2:]).exists())
    written = sum(o.get("size", 0) for o in outs if not Path(o["path"]).exists())
    return fetched, written


def check_space(targets: list[str]) -> None:
    """Space before writing: stops before the fetch when the filesystem has less free space than the
    pull writes (DVC knows each object's size), naming both numbers."""
    fetched, written = space_needed(lock_outs(targets))
    free = shutil.disk_usage(".").free
    if fetched + written > free:
        mb = 2 ** 20
        raise PullFailed(f"memcap: not enough disk space: the pull writes {(fetched + written) / mb:.1f} MB "
                         f"({fetched / mb:.1f} MB into DVC's cache, {written / mb:.1f} MB of results), and "
                         f"{os.getcwd()} has {free / mb:.1f} MB free; nothing in your workspace changed.",
                         "  Free some space (df -h .), or pull one family: python tools/dvc_pull.py <stage>.")


def fetch(repo, targets: list[str], where: str) -> PullFailed | None:
    """Everything into DVC's cache first. DVC's complaints (a missing object is only a warning to it) are
    returned, not raised: the per-file check that follows (verify) says which files lack a good object,
    and what it cannot explain (a remote that answers nothing) is raised then."""
    from dvc.exceptions import DvcException

    captured = Captured()
    loggers = [logging.getLogger(name) for name in ("dvc", "dvc_data", "dvc_objects")]   # DVC's own handlers' loggers
    handlers = [log.handlers for log in loggers]
    for log in loggers:
        log.handlers = [captured]
    try:
        repo.fetch(targets=targets or None)
    except DvcException as e:
        captured.lines += f"ERROR: failed to fetch data from the cloud - {e}".splitlines()
    finally:
        for log, kept in zip(loggers, handlers):
            log.handlers = kept
    text = "\n".join(captured.lines)
    if not any(line.startswith("ERROR") for line in captured.lines) and not re.search(
            r"missing cache files|do not exist", text, re.I):
        return None
    lines = [f"memcap: could not fetch the cached results from the {where}; nothing in your workspace changed."]
    lines += [f"  dvc: {line[:300]}" for line in captured.lines if re.match(r"(ERROR|WARNING)", line)][:3]
    if re.search(r"missing", text, re.I):
        lines += ["  Some results of this commit's dvc.lock are not on that remote: it was not pushed after",
                  "  the last run, or dvc.lock changed since. Retrain instead (make retrain: the quick preset),",
                  f"  or pull from a remote that has them: {OTHER_REMOTE}."]
    return PullFailed(*lines)


def verify(targets: list[str]) -> dict[str, str]:
    """No byte is trusted without its hash: every object dvc.lock names is hashed against its md5 name
    (a corrupted one is dropped from the cache). Returns {file: what is wrong} of the files without a
    good object."""
    bad = {}
    for line in dvc_verify.problems(targets):
        path, _, what = line.partition(": object ")
        bad[path] = "corrupted" if "does not match" in what else "missing"
    return bad


def remote_corrupt(targets: list[str], url: str) -> list[str]:
    """For a remote that is a folder: which of its objects are the corrupted ones (one line each)."""
    folder = remote_folder(url)
    return [b for b in dvc_verify.problems(targets, folder) if "does not match" in b] if folder else []


def lock_stages(targets: list[str]) -> dict[str, list[dict]]:
    """{stage: its cached outputs (path, md5)} of the stages pulled, from dvc.lock."""
    import yaml

    stages = (yaml.safe_load(Path("dvc.lock").read_text()) or {}).get("stages", {})
    skip = dvc_verify.uncached(Path("dvc.yaml"))
    return {name: [o for o in stage.get("outs", []) if o.get("md5") and o["path"] not in skip]
            for name, stage in stages.items() if not targets or name in targets}


def owner(stages: dict[str, list[dict]], path: str) -> tuple[str, dict]:
    """The stage and output that hold a file of dvc.lock."""
    return next((name, o) for name, outs in stages.items() for o in outs
                if path == o["path"] or path.startswith(o["path"] + "/"))


def restore_files(out: dict, bad: dict[str, str]) -> int:
    """A folder output whose listing verifies but some of whose files do not: every other file copied from
    the cache (each object verified), the bad ones left absent (a copy already there that differs is set
    aside in KEPT: never a wrong file). DVC's checkout would remove the whole folder instead."""
    import json

    listing = json.loads(dvc_verify.object_path(Path(".dvc/cache"), out["md5"]).read_text())
    copied = 0
    for entry in listing:
        dest = Path(out["path"]) / entry["relpath"]
        same = dest.is_file() and dvc_verify.md5(dest) == entry["md5"]
        if str(dest) in bad or same:
            if str(dest) in bad and dest.exists() and not same:
                (KEPT / dest).parent.mkdir(parents=True, exist_ok=True)
                shutil.move(dest, KEPT / dest)
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f".{dest.name}.pull.tmp")
        shutil.copyfile(dvc_verify.object_path(Path(".dvc/cache"), entry["md5"]), tmp)
        os.replace(tmp, dest)
        copied += 1
    return copied


def restore_what_verifies(repo, targets: list[str], bad: dict[str, str], fetched: PullFailed | None
                          ) -> tuple[list[str], list[str], list[str]]:
    """Check out every output whose objects all verify; of a folder with bad files, the others. Returns
    (the stages fully restored, the run files kept, the stages with files left absent). When no output
    verifies, nothing changes: the fetch's own complaint (`fetched`) says why."""
    stages = lock_stages(targets)
    holders = {path: owner(stages, path) for path in bad}
    broken = sorted({name for name, _ in holders.values()})
    whole = {o["path"] for _, o in holders.values()}
    clean = [name for name in stages if name not in broken]
    if len(whole) == sum(len(outs) for outs in stages.values()):
        raise fetched or PullFailed("memcap: no output of dvc.lock has a verified object; nothing in your "
                                    "workspace changed.", *(f"  {f}: {what}" for f, what in list(bad.items())[:20]))
    kept = checkout(repo, clean) if clean else []
    good = [o["path"] for name in broken for o in stages[name] if o["path"] not in whole]
    if good:
        kept += checkout(repo, good)
    for path in whole:
        out = next(o for _, o in holders.values() if o["path"] == path)
        if out["md5"].endswith(".dir") and path not in bad:     # its listing is good: the other files
            restore_files(out, bad)
    return clean, kept, broken


def checkout(repo, targets: list[str]) -> list[str]:
    """DVC refuses to replace files that differ from dvc.lock ("unsaved"). Run files
    (results/<family>/runs|attention/...) are results of other settings, under names of their own: they
    are kept, put back after the checkout. Tables and figures are derived: they are replaced by the
    published ones (your own grid's are rebuilt from its kept runs by running it again). Returns the
    run files kept."""
    from dvc.exceptions import DvcException

    try:
        repo.checkout(targets=targets or None)
        return []
    except DvcException as e:
        text = str(e)
    cwd = os.getcwd() + "/"
    after = text.split("unsaved files", 1)[1] if "unsaved files" in text else ""
    unsaved = [line.removeprefix(cwd) for line in after.splitlines() if line.startswith("/")]
    if not unsaved:
        raise PullFailed("memcap: dvc checkout failed:", *(f"  dvc: {line}" for line in text.splitlines()[-5:]))
    runs = [f for f in unsaved if RUN_FILE.match(f)]
    derived = [f for f in unsaved if not RUN_FILE.match(f)]
    if runs:
        print(f"keeping {len(runs)} run files that dvc.lock does not record (other settings):")
        print("\n".join(f"  {f}" for f in runs[:20]))
    if derived:
        print(f"replacing {len(derived)} tables/figures that differ from the published ones:")
        print("\n".join(f"  {f}" for f in derived[:20]))
    for f in runs:
        (KEPT / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.move(f, KEPT / f)
    repo.checkout(targets=targets or None, force=True)
    for f in runs:
        if Path(f).exists():      # the published result has this very name: both kept, yours beside it
            print(f"  {f}: the published file has this name; yours is kept as {KEPT / f}", file=sys.stderr)
        else:
            Path(f).parent.mkdir(parents=True, exist_ok=True)
            shutil.move(KEPT / f, f)
    return runs


def check_outputs(repo, targets: list[str], kept: list[str]) -> None:
    """Outputs must match dvc.lock; changed deps or params only mean `dvc repro` has work to do. A run
    folder where run files of other settings were kept differs by those files only."""
    folders = {"/".join(f.split("/")[:3]) for f in kept}
    bad = []
    for stage, changes in repo.status(targets=targets or None).items():
        for change in changes:
            outs = change.get("changed outs") if isinstance(change, dict) else None
            outs = {path: what for path, what in (outs or {}).items() if not (path in folders and what == "modified")}
            if outs:
                bad.append(f"  {stage} {outs}")
    if bad:
        raise PullFailed("memcap: pulled outputs do not match dvc.lock:", *bad)


PROBE_FILE = re.compile(r"^results/capacity/runs/probes/H(\d+)_dh(\d+)[^/]*/seed(\d+)_T(\d+)_x(\d+)\.parquet$")


def _recorded(family: str, cache: dict):
    """A family's table of what its run files took (restored above), or None: MLT's and DPC's runs
    tables (a row a model, `job` the run file), capacity's probes table."""
    import pandas as pd

    if family not in cache:
        path = Path("results", family, "tables", "probes.parquet" if family == "capacity" else "runs.parquet")
        try:
            cache[family] = pd.read_parquet(path) if path.exists() else None
        except Exception:   # a table that does not read gives no estimate; the pull's verdict stands
            cache[family] = None
    return cache[family]


def last_build(files: list[str]) -> str:
    """The training time the absent run files took when they were made, from their families' tables:
    each job's seconds (its longest row: a pack's models train together), summed; '' when none is recorded."""
    cache, seconds, devices, found = {}, 0.0, set(), 0
    for f in files:
        parts = Path(f).parts
        if len(parts) < 4 or parts[0] != "results" or parts[2] != "runs" or not f.endswith(".parquet"):
            continue
        t = _recorded(parts[1], cache)
        if t is None or "wall_time_s" not in t:
            continue
        probe = PROBE_FILE.match(f)
        if probe and {"heads", "head_dim", "seed", "dataset_size", "budget"} <= set(t):
            H, dh, seed, T, b = map(int, probe.groups())
            rows = t[(t.heads == H) & (t.head_dim == dh) & (t.seed == seed) & (t.dataset_size == T) & (t.budget == b)]
        elif "job" in t:
            rows = t[t.job == str(Path(*parts[3:]).with_suffix(""))]
        else:
            continue
        if len(rows):
            seconds, found = seconds + float(rows.wall_time_s.max()), found + 1
            devices.update(str(d) for d in rows.device)
    if not found:
        return ""
    took = f"{seconds / 3600:,.1f} h" if seconds >= 3600 else f"{seconds / 60:,.1f} min"
    return (f" Their last build trained {took} on {', '.join(sorted(devices))} ({found} of {len(files)} "
            "files' times recorded in their family's results/<family>/tables).")


def partial_report(bad: dict[str, str], broken: list[str], url: str, where: str, targets: list[str]) -> list[str]:
    """What was not restored, by stage, and the two ways to get it."""
    stages, corrupt = lock_stages(targets), remote_corrupt(targets, url)
    on_remote = {line.partition(": object ")[0] for line in corrupt}
    files = "1 file of dvc.lock has" if len(bad) == 1 else f"{len(bad)} files of dvc.lock have"
    lines = [f"memcap: restored everything else from the {where}, but {files} no verified "
             "object (missing there, or bytes that do not match their hash); they are left absent, never a "
             "wrong copy:"]
    lines += [f"  {owner(stages, f)[0]}: {f} ({'corrupted on the remote' if f in on_remote else what})"
              for f, what in list(bad.items())[:20]]
    lines += [f"  ... and {len(bad) - 20} more"] if len(bad) > 20 else []
    lines += [f"  corrupted on the {where}:", *(f"    {c}" for c in corrupt[:20])] if corrupt else []
    lines += [f"  To rebuild exactly those: dvc repro {' '.join(broken)} (Snakemake reruns only the jobs of the "
              f"absent files and what reads them; `snakemake -n` lists them).{last_build(list(bad))}",
              "  Or restore those objects on the remote from a good copy (or pull from another remote:",
              f"  {OTHER_REMOTE}), then run make pull again."]
    return lines


def record_for_snakemake(targets: list[str], partial: bool = False) -> str:
    """Snakemake's metadata from the committed params (what dvc.lock's outputs were made from), then,
    in the same process, the dry run of the current params.yaml; returns its last line (what is left)."""
    MEMCAP.mkdir(parents=True, exist_ok=True)
    config = []
    head = subprocess.run(["git", "rev-parse", "--verify", "-q", "HEAD"], capture_output=True)
    if head.returncode == 0 and subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "params.yaml"],
                                               capture_output=True).returncode != 0:
        committed = MEMCAP / "committed-params.yaml"
        committed.write_bytes(subprocess.run(["git", "show", "HEAD:params.yaml"], capture_output=True,
                                             check=True).stdout)
        config = ["--configfile", str(committed)]
        print("params.yaml differs from the commit: restored results are recorded as made from the committed")
        print("params, so the next run retrains exactly the jobs your changes make stale.")
    smk_targets = targets or ["all"]
    log = MEMCAP / "pull-touch.log"
    with open(log, "w") as out:
        # files left absent (a partial pull): their jobs cannot be touched; --keep-going touches the rest,
        # and what reads an absent file stays unrecorded, so the next run rebuilds exactly those
        done = subprocess.run([sys.executable, "tools/snakemake_touch.py", "--cores", "1024", "--touch", "--forceall",
                               *(["--keep-going"] if partial else []), "--quiet", "all", *config, "--", *smk_targets,
                               "++", "--cores", "1", "--dry-run", "--quiet", "all", "--", *smk_targets],
                              stdout=out, stderr=subprocess.STDOUT)
    lines = log.read_text().splitlines()
    if done.returncode != 0 and not partial:
        raise PullFailed(f"memcap: restored the files, but Snakemake could not record them ({log}):", *lines[-5:])
    return lines[-1] if lines else ""


def clean_tmp() -> None:
    """Temp files of an interrupted pull or run (DVC's `.<token>.tmp`, memcap's `.<name>.<random>.tmp`)
    are junk: removed (and invisible to DVC anyway, .dvcignore), so nothing records them."""
    for folder in ("results", "figures"):
        for f in Path(folder).rglob("*.tmp"):
            if f.is_file():
                f.unlink(missing_ok=True)


def main(targets: list[str]) -> int:
    from dvc.exceptions import DvcException
    from dvc.repo import Repo

    clean_tmp()
    try:
        with Repo() as repo:
            url, where = default_remote(repo)
            check_space(targets)
            fetched = fetch(repo, targets, where)
            bad = verify(targets)
            if not bad:
                if fetched:
                    raise fetched
                check_outputs(repo, targets, checkout(repo, targets))
            else:
                clean, kept, broken = restore_what_verifies(repo, targets, bad, fetched)
                if clean:
                    check_outputs(repo, clean, kept)
        left = record_for_snakemake(targets, partial=bool(bad))
        if bad:
            print("\n".join(partial_report(bad, broken, url, where, targets)), file=sys.stderr)
            return 1
    except PullFailed as e:
        print("\n".join(e.args), file=sys.stderr)
        return 1
    except DvcException as e:
        print(f"memcap: dvc: {e}", file=sys.stderr)
        return 1
    finally:
        clean_tmp()
    print(f"restored from the {where}")
    print(left)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
