"""What a Snakemake run did, written when it ends (the Snakefile's onsuccess/onerror hooks).

logs/summary/latest.md (and a copy named by the start time): whether the run succeeded, its wall time,
how many jobs finished or failed (from Snakemake's log of the run), and the slowest jobs with their
wall time, CPU time and peak memory (from the `benchmark:` files the training rules write).
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pandas as pd

from memcap.results import atomic_path

SLOWEST = 10
# File times come from the kernel's coarse clock, a tick behind time.time(): a file written just after
# the run started can carry an earlier mtime, so "this run's" allows this much.
MTIME_SLACK_S = 1.0


def _benchmarks(logs: Path, since: float) -> pd.DataFrame:
    rows = []
    for path in logs.rglob("*.benchmark.tsv"):
        if path.stat().st_mtime >= since - MTIME_SLACK_S:
            last = pd.read_csv(path, sep="\t").iloc[-1]
            rows.append({"job": str(path.relative_to(logs)).removesuffix(".benchmark.tsv"),
                         "wall_s": float(last["s"]), "cpu_s": float(last["cpu_time"]),
                         "max_rss_mb": float(last["max_rss"])})
    return pd.DataFrame(rows, columns=["job", "wall_s", "cpu_s", "max_rss_mb"])


def write(snakemake_log, started: float, ok: bool, logs: str | Path = "logs") -> Path:
    """snakemake_log: the `log` of an onsuccess/onerror hook (a path, a list of paths, or None)."""
    logs = Path(logs)
    paths = [snakemake_log] if isinstance(snakemake_log, (str, Path)) else list(snakemake_log or [])
    snakemake_log = next((str(p) for p in paths if Path(p).exists()), None)
    text = Path(snakemake_log).read_text(errors="replace") if snakemake_log else ""
    finished = len(re.findall(r"^Finished job(?:id)?[: ]", text, flags=re.M))
    failed = sorted(set(re.findall(r"^Error in rule (\S+?):", text, flags=re.M)))
    bench = _benchmarks(logs, started).sort_values("wall_s", ascending=False)
    stamp = time.strftime("%Y-%m-%dT%H%M%S", time.localtime(started))
    lines = [f"# memcap run {stamp}: {'succeeded' if ok else 'FAILED'}", "",
             f"- wall time: {(time.time() - started) / 60:.1f} min",
             f"- jobs finished: {finished}" + (f"; failed rules: {', '.join(failed)}" if failed else ""),
             f"- Snakemake's log: {snakemake_log or 'none'}",
             f"- training jobs timed (benchmark files): {len(bench)}, {bench.wall_s.sum() / 60:.1f} min in all", ""]
    if len(bench):
        lines += [f"Slowest {min(SLOWEST, len(bench))} jobs:", "",
                  bench.head(SLOWEST).to_markdown(index=False, floatfmt=".1f"), ""]
    out = logs / "summary"
    out.mkdir(parents=True, exist_ok=True)
    for path in (out / f"{stamp}.md", out / "latest.md"):
        with atomic_path(path) as tmp:
            Path(tmp).write_text("\n".join(lines))
    return out / "latest.md"
