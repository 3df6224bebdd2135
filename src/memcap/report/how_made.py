"""How each result was made, from the results themselves: per family, sweep (experiment, track) and
device, the seeds, jobs, hours, packs and commits that the run files record (their rows and
provenance: memcap.results.read_runs).

job-hours: each job's training seconds (a job's rows share its wall_time_s; in a pack, the pack's
seconds until the job's last model was done), summed. wall-hours: each pack's seconds counted once
(its longest job), a job alone its own: the device's time. The theory and assumption families run
one job a table and record its time there (results/theory/tables/gd.parquet's time_s, the assumption
checks' wall_time_s), not in run files.
"""

from __future__ import annotations

import pandas as pd

# seeds: the seeds trained (DPC: its repetitions, whose seeds derive from them)
COLUMNS = ["family", "part", "scale", "device", "seeds", "jobs", "job_hours", "wall_hours", "packs", "pack_models",
           "commits"]


def _seeds(s: pd.Series) -> str:
    values = sorted(int(v) for v in s.dropna().unique())
    if len(values) > 2 and values[-1] - values[0] + 1 == len(values):   # consecutive
        return f"{values[0]}-{values[-1]}"
    return ", ".join(map(str, values))


def _commits(s: pd.Series) -> str:
    short = sorted({str(c).replace("-dirty", "")[:7] + ("-dirty" if str(c).endswith("-dirty") else "") for c in s})
    return ", ".join(short)


def jobs_table(rows: pd.DataFrame, family: str, part: str, models: str | None = "models_in_job",
               seed: str = "seed") -> pd.DataFrame:
    """Rows of one family's runs table (job, pack, git_commit, device, a seed column, wall_time_s) -> one
    row per (part, scale, device)."""
    out = []
    for (name, scale, device), g in rows.groupby([part, "scale", "device"], sort=True):
        per_job = g.groupby("job").agg(seconds=("wall_time_s", "max"), pack=("pack", "first"),
                                       models=(models, "first") if models else ("seed", "size"))
        packed = per_job[per_job.pack != ""]
        alone = per_job[per_job.pack == ""]
        packs = packed.groupby("pack").agg(seconds=("seconds", "max"), models=("models", "first"))
        out.append({"family": family, "part": name, "scale": scale, "device": device, "seeds": _seeds(g[seed]),
                    "jobs": len(per_job), "job_hours": per_job.seconds.sum() / 3600,
                    "wall_hours": (alone.seconds.sum() + packs.seconds.sum()) / 3600, "packs": len(packs),
                    "pack_models": ", ".join(str(int(m)) for m in sorted(packs.models)) if len(packs) else "",
                    "commits": _commits(g.git_commit)})
    return pd.DataFrame(out, columns=COLUMNS)


def table(mlt: pd.DataFrame | None, dpc: pd.DataFrame | None, capacity: pd.DataFrame | None) -> pd.DataFrame:
    """Every training family's rows: MLT by sweep, DPC by experiment, capacity's probes by architecture."""
    parts = []
    if mlt is not None and "job" in mlt:
        parts.append(jobs_table(mlt, "mlt_synthetic", "sweep"))
    if dpc is not None and "job" in dpc:
        parts.append(jobs_table(dpc, "dpc", "experiment", seed="repetition"))   # its seeds derive from these
    if capacity is not None and "git_commit" in capacity and len(capacity):
        probes = capacity.assign(job=capacity.heads.astype(str) + "/" + capacity.head_dim.astype(str) + "/"
                                 + capacity.seed.astype(str) + "/" + capacity.dataset_size.astype(str) + "x"
                                 + capacity.budget.astype(str),
                                 part="H=" + capacity.heads.astype(str) + " d_h=" + capacity.head_dim.astype(str))
        # a round's probes are one pack; a round of one probe is that probe alone
        sizes = probes.groupby("pack").job.transform("size")
        probes["pack"] = probes.pack.where(sizes > 1, "")
        parts.append(jobs_table(probes, "capacity", "part", models="models_in_round"))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=COLUMNS)


def markdown(t: pd.DataFrame) -> str:
    shown = t.assign(job_hours=t.job_hours.round(3), wall_hours=t.wall_hours.round(3))
    return ("# How each result was made (from the run files: seeds, jobs, device, hours, packs, commits)\n\n"
            "job-hours: each job's training time, summed; wall-hours: a pack's time counted once (its "
            "longest job), a job alone its own.\n\n" + shown.to_markdown(index=False) + "\n")
