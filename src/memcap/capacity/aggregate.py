"""The capacity table: one row per searched architecture, its bracket beside both papers' bounds."""

from __future__ import annotations

import pandas as pd

from memcap.bounds import associations
from memcap.bounds import memorization_bound

TABLES = {"capacity": "capacity.parquet"}
# Column order of tables/capacity.parquet (the search's row with the two bounds after the trace; miss_*:
# the seeds that failed at capacity_high, memcap.capacity.search.first_miss).
COLUMNS = ["family", "scale", "heads", "head_dim", "context_size", "input_dim", "num_classes", "context",
           "threshold", "seeds", "capacity_low", "capacity_high", "status", "evaluations", "trace", "mlt_bound",
           "dpc_bound", "miss_min_acc", "miss_loss_falling", "miss_best_steps", "param_count", "train_seconds"]


def table(runs: pd.DataFrame) -> pd.DataFrame:
    """The searches' rows (one per architecture), sorted by (H, d_h), with both bounds."""
    cap = runs.sort_values(["heads", "head_dim"]).reset_index(drop=True)
    cap["mlt_bound"] = [memorization_bound(h, n, dh) for h, n, dh in zip(cap.heads, cap.context_size, cap.head_dim)]
    cap["dpc_bound"] = associations(cap.heads, cap.head_dim, cap.input_dim).astype(int)
    return cap.reindex(columns=COLUMNS)
