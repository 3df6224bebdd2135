"""Bits per parameter of every trained model of both families, beside published LM capacities.

Memorized bits of a model = Σ over its training examples of max(0, log2 C − NLL in bits) for C-way
labels (MLT: C classes over the T training examples; DPC: N-way answers over the N² table contexts),
divided by its parameter count. The families record `memorized_bits` per run; this module only gathers.
"""

from __future__ import annotations

import pandas as pd

from memcap.bounds import PUBLISHED_BITS_PER_PARAM
from memcap.report.verdicts import scale_title

# Published capacities drawn as reference lines (bits per parameter): memcap.bounds, the one list.
REFERENCES = PUBLISHED_BITS_PER_PARAM
COLUMNS = ["family", "scale", "experiment", "x_key", "x", "dataset_size", "seed", "num_classes", "param_count",
           "memorized_bits", "bits_per_param", "accuracy"]


def mlt_bits(runs: pd.DataFrame | None) -> pd.DataFrame:
    """Classification runs of the MLT family (regression has no C-way labels, so no bits)."""
    if runs is None or "memorized_bits" not in runs:
        return pd.DataFrame(columns=COLUMNS)
    r = runs[runs.task == "classification"]
    return pd.DataFrame({"family": "mlt_synthetic", "scale": r.scale, "experiment": r.sweep, "x_key": r.vary,
                         "x": r.x, "dataset_size": r.dataset_size, "seed": r.seed, "num_classes": r.num_classes,
                         "param_count": r.param_count, "memorized_bits": r.memorized_bits,
                         "bits_per_param": r.memorized_bits / r.param_count, "accuracy": r.mem_acc})[COLUMNS]


def dpc_bits(runs: pd.DataFrame | None) -> pd.DataFrame:
    """DPC runs: bits over the full N² table (the look-up table is the training set)."""
    if runs is None or "memorized_bits" not in runs:
        return pd.DataFrame(columns=COLUMNS)
    return pd.DataFrame({"family": "dpc", "scale": runs.scale, "experiment": runs.experiment,
                         "x_key": runs.x_key, "x": runs.x, "dataset_size": runs.contexts, "seed": runs.seed,
                         "num_classes": runs.N, "param_count": runs.param_count,
                         "memorized_bits": runs.memorized_bits,
                         "bits_per_param": runs.memorized_bits / runs.param_count,
                         "accuracy": runs.acc_table})[COLUMNS]


def bits_table(mlt_runs: pd.DataFrame | None, dpc_runs: pd.DataFrame | None) -> pd.DataFrame:
    return pd.concat([mlt_bits(mlt_runs), dpc_bits(dpc_runs)], ignore_index=True).astype({"bits_per_param": float})


def skipped(mlt_runs: pd.DataFrame | None, dpc_runs: pd.DataFrame | None) -> list[str]:
    """Families whose bits could not be computed, with the reason."""
    out = []
    for name, runs in (("mlt_synthetic", mlt_runs), ("dpc", dpc_runs)):
        if runs is None:
            out.append(f"{name}: SKIPPED (runs table not given)")
        elif "memorized_bits" not in runs:
            out.append(f"{name}: SKIPPED (its runs table has no memorized_bits column)")
    return out


def markdown(table: pd.DataFrame, notes: list[str]) -> str:
    summary = pd.DataFrame([
        {"family": fam, "experiment": exp, "runs": len(g),
         "params (min–max)": f"{int(g.param_count.min())}–{int(g.param_count.max())}",
         "bits/param mean": f"{g.bits_per_param.mean():.3f}", "bits/param max": f"{g.bits_per_param.max():.3f}"}
        for (fam, exp), g in table.groupby(["family", "experiment"])],
        columns=["family", "experiment", "runs", "params (min–max)", "bits/param mean", "bits/param max"])
    lines = [f"# Bits per parameter {scale_title(table.scale, 'small models, short training')}", "",
             "memorized bits = Σ_t max(0, log2 C − NLL_t in bits), divided by the parameter count.",
             "References: " + "; ".join(REFERENCES) + ".", *[f"- {n}" for n in notes], "",
             summary.to_markdown(index=False, disable_numparse=True)]
    return "\n".join(lines) + "\n"
