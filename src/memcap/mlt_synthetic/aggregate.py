"""The MLT synthetic family's table: every run of the active preset, with derived columns and metrics."""

from __future__ import annotations

import pandas as pd

from memcap.bounds import memorization_bound

# The family's tables, in results/mlt_synthetic/tables/ (fits and summary are written with the figures).
TABLES = {"runs": "runs.parquet", "fits": "fits.parquet", "summary": "summary.md"}

# The stable schema of tables/runs.parquet: one row per (sweep, x, T, seed).
RUN_COLUMNS = {
    "family": "always 'mlt_synthetic'", "sweep": "sweep name (docs/method.md, MLT: Training protocol)",
    "scale": "the preset the run's settings come from: quick | paper | your own",
    "scale_label": "what the settings are, shown in titles: 'paper settings, 2 of the paper's 6 seeds', a quick stand-in and why",
    "vary": "swept quantity: heads | context_size | head_dim",
    "x": "value of the swept quantity", "task": "classification | regression",
    "context": "shared | random", "dataset_size": "T", "heads": "H", "context_size": "n",
    "head_dim": "d_h", "input_dim": "d", "num_classes": "C (1 for regression)", "seed": "data+init seed",
    "mem_acc": "train accuracy of the lowest-loss checkpoint (NaN for regression)",
    "mem_loss": "train loss of that checkpoint (cross-entropy, or MSE for regression)",
    "memorized_bits": "Σ_t max(0, log2 C − NLL_t/ln 2) at that checkpoint (NaN for regression)",
    "best_step": "step of that checkpoint", "steps_run": "optimizer steps run",
    "steps_planned": "max(floor(epochs*T/256), min_steps)", "early_stopped": "reached 100% train accuracy",
    "param_count": "parameters of one model", "lr": "peak lr", "batch_size": "batch size",
    "min_steps": "min steps", "device": "cpu | cuda", "models_in_job": "models trained together (a grid point's seeds, or a pack's models)",
    "wall_time_s": "training seconds of the job until its last seed finished (in a pack: the pack's seconds until then)",
    "memorized": "mem_acc * T", "memorized_above_chance": "(mem_acc - 1/C) T / (1 - 1/C)",
    "rank_bound": "H (min(n, d_h) - 1) + 1, Theorem 1's exact-label count",
    "bits_per_param": "memorized_bits / param_count",
    "job": "the run file below runs/ (one job: a grid point's seed group)",
    "pack": "the pack the job trained in ('' alone)", "git_commit": "the commit of the code that trained it",
}


def aggregate_runs(runs: pd.DataFrame, labels: dict[str, str]) -> tuple[pd.DataFrame, dict]:
    """Sort, add derived columns and each sweep's label (memcap.mlt_synthetic.grid.resolve); metrics =
    per-sweep mean memorization for `dvc metrics`."""
    df = runs.sort_values(["sweep", "x", "dataset_size", "seed"]).reset_index(drop=True)
    df["scale_label"] = df["sweep"].map(labels)
    chance = 1.0 / df["num_classes"]
    df["memorized"] = df["mem_acc"] * df["dataset_size"]
    df["memorized_above_chance"] = (df["mem_acc"] - chance) * df["dataset_size"] / (1 - chance)
    df["rank_bound"] = memorization_bound(df["heads"], df["context_size"], df["head_dim"])
    df["bits_per_param"] = df["memorized_bits"] / df["param_count"]
    df = df[list(RUN_COLUMNS)]
    metrics = {}
    for sweep, g in df.groupby("sweep"):
        key = "mem_acc" if g["task"].iloc[0] == "classification" else "mem_loss"
        metrics[sweep] = {f"mean_{key}": float(g[key].mean()), "runs": int(len(g)),
                          "early_stopped": int(g["early_stopped"].sum())}
    return df, metrics
