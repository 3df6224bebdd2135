"""Parquet results: atomic writes and provenance in the file metadata.

Every Parquet memcap writes carries, in its schema metadata under the key ``memcap``, a JSON object
with the params that produced it, the package versions, the code (commit and what differed from
it: memcap.provenance) and the device. Files are
written to a temporary name in the same folder and renamed, so a crash or a SIGKILL never leaves a
half-written file where a later step would read it.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import platform
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any, Iterator

from memcap.lazy_import import OnFirstUse
from memcap.provenance import code_state, commit_label

# Imported at the first read or write: commands that only check params, provenance or a bundle start
# ~0.3 CPU-s sooner without them (the `params` stage runs at every `dvc repro`).
pd = OnFirstUse("pandas")
pa = OnFirstUse("pyarrow")
pq = OnFirstUse("pyarrow.parquet")

PROVENANCE_KEY = b"memcap"
_PACKAGES = ("memcap", "torch", "numpy", "pandas", "pyarrow", "seaborn", "snakemake", "dvc",
             "transformers")


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in _PACKAGES:
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[name] = metadata.version(name)
    return versions


def provenance(params: dict[str, Any], inputs: list | None = None, **extra: Any) -> dict[str, Any]:
    """What produced a file: params, package versions, the code (memcap.provenance.code_state: commit,
    what differed, a hash of any code difference) and, for a table built from other Parquets, the
    commits and packages those came from. Deliberately free of timestamps so reruns give identical bytes."""
    state = code_state()
    meta = {"params": params, "packages": package_versions(), "git_commit": commit_label(state), "code": state}
    if inputs is not None:
        meta["sources"] = sources([read_provenance(p) for p in inputs])
    return {**meta, **extra}


def sources(provs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The distinct (commit label, torch, python) of some results' provenance, with how many files each:
    what an aggregated table was made from, for the report's provenance table."""
    seen: dict[tuple, int] = {}
    for prov in provs:
        for src in prov.get("sources") or [{"git_commit": prov.get("git_commit", "unknown"),
                                            "torch": prov.get("packages", {}).get("torch", "?"),
                                            "python": prov.get("packages", {}).get("python", "?"), "files": 1}]:
            key = (src["git_commit"], src["torch"], src["python"])
            seen[key] = seen.get(key, 0) + src["files"]
    return [{"git_commit": c, "torch": t, "python": py, "files": n} for (c, t, py), n in sorted(seen.items())]


def current_umask() -> int:
    mask = os.umask(0o022)   # the only way to read it is to set it; put it back at once
    os.umask(mask)
    return mask


class DiskFull(OSError):
    """A write found no space left: the message names the path and the free space; nothing half-written stays."""


def disk_full_message(path: Path) -> str:
    free = shutil.disk_usage(path.parent).free
    return (f"disk full at {path}: {free / 2 ** 20:.1f} MB free on that filesystem; nothing was written there "
            f"(the partial file is removed). Free some space (df -h {path.parent}) and run the same command again.")


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside `path`; rename it onto `path` only if the block succeeds.
    The file gets the mode a plain open() would give (0666 less the umask), not mkstemp's 0600, so
    the lab can read results on a shared filesystem as it reads pulled ones. No space left: DiskFull,
    naming the path, with the temporary file gone."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.fchmod(fd, 0o666 & ~current_umask())
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except OSError as e:
        if e.errno != errno.ENOSPC:
            raise
        raise DiskFull(errno.ENOSPC, disk_full_message(path)) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def write_parquet(df: pd.DataFrame, path: str | os.PathLike, meta: dict[str, Any]) -> Path:
    """Write `df` atomically with `meta` (use `provenance(...)`) in the schema metadata."""
    table = pa.Table.from_pandas(df.reset_index(drop=True), preserve_index=False)
    existing = table.schema.metadata or {}
    blob = json.dumps(meta, sort_keys=True, default=str).encode()
    table = table.replace_schema_metadata({**existing, PROVENANCE_KEY: blob})
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)
    return Path(path)


class UnreadableResult(OSError):
    """A result file that exists but is not a readable Parquet (truncated, overwritten, half-copied)."""


def unreadable_message(path: str | os.PathLike, err: Exception) -> str:
    return (f"{path} is not a readable Parquet file ({type(err).__name__}: {str(err)[:200]}). "
            f"Restore it from the DVC cache or remote: `dvc checkout {path}` or `make pull`; or delete it "
            f"and the next run retrains exactly that result.")


def read_parquet(paths: str | os.PathLike | list) -> pd.DataFrame:
    """Read one Parquet file or concatenate several (same schema) in the order given; a file that
    cannot be read raises UnreadableResult naming it and what to run."""
    def read(path):
        try:
            return pd.read_parquet(path)
        except (OSError, pa.ArrowException) as err:
            raise UnreadableResult(unreadable_message(path, err)) from None

    if isinstance(paths, (str, os.PathLike)):
        return read(paths)
    frames = [read(p) for p in paths]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def read_runs(paths: list) -> pd.DataFrame:
    """Training jobs' run files, one after the other, each row with how its job was made, from the
    file's provenance: `job` (the file's name below runs/), `pack` (the pack it trained in; '' alone;
    a row that names its own pack keeps it) and `git_commit` (the commit of its code)."""
    frames = []
    for path in paths:
        df, prov = read_parquet(path), read_provenance(path)
        df["job"] = str(path).split("/runs/", 1)[-1].removesuffix(".parquet")
        if "pack" not in df:
            df["pack"] = Path((prov.get("pack") or {}).get("checkpoint", "")).stem
        df["git_commit"] = prov.get("git_commit", "unknown")
        frames.append(df)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def unreadable(paths: list[str | os.PathLike]) -> list[str]:
    """The messages for those of `paths` that exist but whose Parquet footer cannot be read (cheap:
    the footer only), so a run can stop before any job instead of deep inside an aggregation."""
    bad = []
    for path in paths:
        if os.path.exists(path):
            try:
                pq.read_metadata(path)
            except (OSError, pa.ArrowException) as err:
                bad.append(unreadable_message(path, err))
    return bad


def read_provenance(path: str | os.PathLike) -> dict[str, Any]:
    meta = pq.read_schema(path).metadata or {}
    return json.loads(meta[PROVENANCE_KEY]) if PROVENANCE_KEY in meta else {}


def write_text(text: str, path: str | os.PathLike) -> Path:
    """Atomic text write (markdown/LaTeX tables, JSON metrics)."""
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text)
    return Path(path)


def write_json(obj: Any, path: str | os.PathLike) -> Path:
    return write_text(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n", path)


FIGURE_FORMATS = ("png", "pdf")   # every family's figures: PNG for the report, PDF for a paper


def save_figure(fig, paths: list[str | os.PathLike] | str | os.PathLike, dpi: int = 150) -> list[Path]:
    """Save one matplotlib figure to every path (format from the suffix: .png, .pdf), atomically and
    without a timestamp, so a rerun gives the same bytes; then close it. The one figure writer."""
    import matplotlib.pyplot as plt

    paths = [Path(p) for p in ([paths] if isinstance(paths, (str, os.PathLike)) else paths)]
    for path in paths:
        fmt = path.suffix.lstrip(".")
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=fmt, dpi=dpi, bbox_inches="tight",
                        metadata={"CreationDate": None} if fmt == "pdf" else None)
    plt.close(fig)
    return paths


def by_stem(paths: list[str | os.PathLike]) -> dict[str, list[Path]]:
    """Group output paths by file stem: ['a/fig2a.png', 'a/fig2a.pdf'] -> {'fig2a': [both]}.
    Rules pass every `{output}` path of a figure command; the library draws each named figure once."""
    out: dict[str, list[Path]] = {}
    for p in map(Path, paths):
        out.setdefault(p.stem, []).append(p)
    return out
