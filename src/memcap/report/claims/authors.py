"""Every DPC claim judged on the authors' published means too (the fidelity table of memcap.dpc.fidelity):
the same claim function on a summary whose means are theirs, at the grid points we trained with their
settings. They publish no spread, so the statistic is a point (its interval collapses to it), in their
measure (the train-batch window)."""

from __future__ import annotations

import pandas as pd

from memcap.report.verdicts import INCONCLUSIVE, PAPER_CLAIM, REPRODUCED

INPUT = "dpc_fidelity"   # the input table (memcap.report.claims.INPUTS) that holds their means


def tables(ours: dict[str, pd.DataFrame | None]) -> dict[str, pd.DataFrame] | None:
    """Our summary with the authors' mean in place of ours at every point they published; None without both."""
    summary, fidelity = ours.get("dpc_summary"), ours.get(INPUT)
    if summary is None or fidelity is None:
        return None
    theirs = fidelity.dropna(subset=["theirs", "ours_window"])[["experiment", "series", "x", "theirs"]]
    merged = summary.merge(theirs, on=["experiment", "series", "x"])
    return {"dpc_summary": merged.assign(acc_table_mean=merged.theirs)} if len(merged) else None


def applies(claim) -> bool:
    return claim.paper == "DPC" and claim.kind == PAPER_CLAIM and "dpc_summary" in claim.inputs


def reading(ours: str, theirs: str) -> str:
    """What the two verdicts say together."""
    if not theirs:
        return ""
    if theirs == REPRODUCED:
        return {REPRODUCED: "reproduced, and holds in the paper's data",
                INCONCLUSIVE: "holds in the paper's data; inconclusive here (more repetitions would decide)"}.get(
            ours, "holds in the paper's data but not here: a memcap difference to explain")
    if ours == REPRODUCED:
        return "reproduced here, though not in the paper's own means"
    return "not supported by the paper's own numbers either: the claim, as tested, is stronger than its data"
