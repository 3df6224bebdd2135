"""The scorecard table: every registered claim run on the families' tables, one row each; its verdict
counts (`dvc metrics`) and its statistics (`dvc plots`)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from memcap.report import shapes
from memcap.report.claims import authors
from memcap.report.claims.common import READ
from memcap.report.claims.registry import CLAIMS, INPUT_FAMILY
from memcap.report.verdicts import NOT_RUN, PAPER_CLAIM, PROPERTY, SKIPPED, VERDICTS, NotRun, Skip

COLUMNS = ["claim_id", "kind", "paper", "source", "claim", "test", "accept", "statistic", "ci_low", "ci_high",
           "paper_value", "paper_source", "detail", "verdict", "tests", "scale", "inputs", "statistic_authors",
           "verdict_authors", "reading"]


def _scale(tables: dict, inputs: tuple[str, ...], scale: str | dict[str, str]) -> str:
    """The claim's scale: that of the rows it read (common.READ), else of its first table's rows,
    else its family's. Rows of several presets (a composite such as capacity's paper_settings) take
    the family's preset, which names them all, never one member's."""
    family = scale if isinstance(scale, str) else scale[INPUT_FAMILY[inputs[0]]]
    read = {str(s) for df in READ if "scale" in df for s in df["scale"].dropna().unique()}
    if len(read) > 1:
        return family
    for df in READ:
        if "scale" in df and df["scale"].nunique() == 1:
            return str(df["scale"].iloc[0])
    for name in inputs:
        df = tables.get(name)
        if df is not None and "scale" in df and len(df):
            return str(df["scale"].iloc[0]) if df["scale"].nunique() == 1 else family
    return family


def _labeled(detail: str) -> str:
    """The detail with what the rows' settings were, where the rows say (MLT: "paper settings, 2 of
    the paper's 6 seeds", or a quick stand-in and why)."""
    labels = sorted({lab for df in READ if "scale_label" in df for lab in df["scale_label"].dropna().unique()})
    return f"[{'; '.join(labels)}] {detail}" if labels else detail


def scorecard(tables: dict[str, pd.DataFrame | None], scale: str | dict[str, str]) -> pd.DataFrame:
    """One row per claim: statistic with its 95% interval, the written test, the verdict, the scale; for a
    claim made of several tests, `tests` gives each one's statistic, interval and verdict.

    scale: one for every family, or each family's (memcap.params.scales), for the rows whose tables
    have no scale column."""
    theirs = authors.tables(tables)
    tables = {name: tables.get(name) for c in CLAIMS for name in c.inputs}   # absent table -> None
    rows = []
    for c in CLAIMS:
        READ.clear()
        base = {"claim_id": c.claim_id, "kind": c.kind, "paper": c.paper, "source": c.source, "claim": c.claim,
                "test": c.test, "accept": c.accept.text(), "paper_value": c.paper_value,
                "paper_source": c.paper_source, "inputs": ", ".join(c.inputs)}
        try:
            o = c.fn(tables)
            res = {"statistic": o.statistic, "ci_low": o.ci_low, "ci_high": o.ci_high,
                   "detail": _labeled(o.detail), "verdict": o.verdict, "tests": o.checks_text()}
        except NotRun as e:
            res = {"detail": str(e), "verdict": NOT_RUN}
        except Skip as e:
            res = {"detail": str(e), "verdict": f"{SKIPPED}: {e}"}
        base["scale"] = _scale(tables, c.inputs, scale)
        rows.append({"statistic": np.nan, "ci_low": np.nan, "ci_high": np.nan, "tests": "", **base, **res,
                     **_on_authors(c, theirs, res["verdict"])})
    return pd.DataFrame(rows, columns=COLUMNS).astype({"statistic": float, "ci_low": float, "ci_high": float,
                                                       "statistic_authors": float})


def _on_authors(c, theirs: dict | None, ours: str) -> dict:
    """The claim's test on the authors' means (DPC paper claims), and what both verdicts say together."""
    if theirs is None or not authors.applies(c):
        return {"statistic_authors": np.nan, "verdict_authors": "", "reading": ""}
    try:
        o = c.fn(theirs)
        stat, verdict = o.statistic, o.verdict
    except (NotRun, Skip) as e:
        stat, verdict = np.nan, f"{SKIPPED}: {e}"
    return {"statistic_authors": stat, "verdict_authors": verdict, "reading": authors.reading(ours, verdict)}


def short_verdict(verdict: str) -> str:
    return SKIPPED if verdict.startswith(SKIPPED) else verdict


def metrics(card: pd.DataFrame) -> dict:
    """Verdict counts per kind and per paper (every verdict listed, zeros included), for `dvc metrics`."""
    def counts(rows):
        v = rows.verdict.map(short_verdict).value_counts()
        return {k.replace(" at this scale", "").replace(" ", "_"): int(v.get(k, 0)) for k in VERDICTS}
    return {"all": counts(card),
            "paper_claims": counts(card[card.kind == PAPER_CLAIM]),
            "verified_properties": counts(card[card.kind == PROPERTY]),
            **{f"{p}_paper_claims": counts(card[(card.paper == p) & (card.kind == PAPER_CLAIM)])
               for p in ("MLT", "DPC")}}


def metrics_json(card: pd.DataFrame) -> str:
    return json.dumps(metrics(card), indent=2) + "\n"


def plot_data(card: pd.DataFrame) -> pd.DataFrame:
    """claim_id, statistic, ci_low, ci_high, verdict (±inf left empty) for `dvc plots`."""
    out = card[["claim_id", "statistic", "ci_low", "ci_high", "verdict"]].copy()
    out["verdict"] = out.verdict.map(short_verdict)
    num = ["statistic", "ci_low", "ci_high"]
    out[num] = out[num].where(np.isfinite(out[num]) & (out[num].abs() < shapes.INF_CAP))
    return out


