"""The report's first screen, in words generated from the scorecard and the capacity tables: per paper
what reproduced, what did not and why; the capacity in one sentence; each paper's claims in a short
table (the claim in words, our statistic [interval], the paper's value, the verdict, why where it is not
reproduced); the exact checks as a list."""

from __future__ import annotations

import math
import re

import pandas as pd

from memcap.capacity.aggregate import is_plain, paper_task_first
from memcap.report.verdicts import INCONCLUSIVE, NOT_REPRODUCED, PAPER_CLAIM, REPRODUCED

PAPERS = {"MLT": "Mahdavi et al. (MLT)", "DPC": "Dana et al. (DPC)"}
MAX_ROWS = 12


def _skipped(r) -> bool:
    return str(r.verdict).startswith("skipped")


def why(r) -> str:
    """Why a claim is not reproduced, in words from its own numbers: the authors' data where they fail
    too, the detail's points that go against the paper, or what an undecided interval needs."""
    if r.verdict == REPRODUCED:
        return ""
    if _skipped(r):
        return str(r.verdict).removeprefix("skipped: ")
    parts = []
    if getattr(r, "verdict_authors", "") == NOT_REPRODUCED:
        parts.append("it fails on the authors' own published means too: the claim, as tested, is stronger than "
                     "their data")
    against = [_against(p.strip()) for p in str(r.detail).split(";") if "against the paper" in p]
    if against:
        parts.append("; ".join(against))
    if r.verdict == INCONCLUSIVE:
        reading = str(getattr(r, "reading", "") or "")
        parts.append(reading if reading else f"the 95% interval [{_num(r.ci_low)}, {_num(r.ci_high)}] straddles "
                                             f"the accepted region ({r.accept}): more seeds or repetitions would decide")
    if not parts:
        parts.append(f"the 95% interval [{_num(r.ci_low)}, {_num(r.ci_high)}] lies outside the accepted region ({r.accept})")
    return "; ".join(parts)


AGAINST = re.compile(r"^(?P<track>[^/]+)/(?P<model>[^/]+)/(?P<layer>[^:]+): (?P<verdict>fails|holds) \(against the paper\)$")


def _against(item: str) -> str:
    """'gpt2/trained causal LM (SmolLM2 stand-in)/L1: fails (against the paper)' in words."""
    m = AGAINST.match(item)
    if not m:
        return item
    other = "holds" if m["verdict"] == "fails" else "fails"
    return f"the {m['model']} {m['verdict']} at {m['layer']} on the {m['track']} track, where the paper's model {other}"


def _num(v) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.3g}"


def _sources(rows: pd.DataFrame) -> str:
    return ", ".join(dict.fromkeys(rows.source))


def paper_sentences(card: pd.DataFrame, paper: str) -> list[str]:
    """What reproduced, what did not, and why, for one paper's claims (its paper claims and the
    properties memcap checks)."""
    c = card[card.paper == paper]
    run = c[~c.verdict.map(str).str.startswith("skipped")]
    ok, bad, open_ = run[run.verdict == REPRODUCED], run[run.verdict == NOT_REPRODUCED], run[run.verdict == INCONCLUSIVE]
    first = (f"{PAPERS[paper]}: {len(ok)} of the {len(run)} claims judged are reproduced ({_sources(ok)})" if len(ok)
             else f"{PAPERS[paper]}: none of the {len(run)} claims judged is reproduced")
    skipped = len(c) - len(run)
    first += f"; {skipped} not judged at this scale." if skipped else "."
    if len(bad) or len(open_):
        second = ("Not reproduced: " + "; ".join(f"{r.claim.rstrip('.')} ({r.source})" for r in bad.itertuples())
                  if len(bad) else "Nothing is contradicted")
        second += ("; undecided: " + "; ".join(f"{r.claim.rstrip('.')} ({r.source})" for r in open_.itertuples())
                   if len(open_) else "") + "."
        third = "Why: " + " ".join(f"{r.source}: {why(r)}." for r in pd.concat([bad, open_]).itertuples())
    else:
        second, third = "Nothing is contradicted or undecided.", ""
    return [s for s in (first, second, third) if s]


def capacity_sentence(cap: pd.DataFrame | None, laws: pd.DataFrame | None) -> str:
    """The capacity in one sentence: bits per parameter at T₅₀ per setting, and the law in H. It speaks
    for the paper-scale settings where the table has any; quick stand-ins beside them are only named."""
    if cap is None or not len(cap):
        return "Capacity: SKIPPED (no capacity table; `snakemake --cores all capacity` searches it)."
    every = cap[is_plain(cap)]
    plain = paper_task_first(every)
    stand_ins = every.setting[~every.index.isin(plain.index)].nunique()
    laws = paper_task_first(laws) if laws is not None and "scale" in laws else laws
    parts = []
    for setting, g in plain.groupby("setting", sort=False):
        b = g.bits_per_param.dropna()
        if len(b):
            parts.append(f"{_setting(setting)} " + (f"{b.min():.2g}" if f"{b.min():.2g}" == f"{b.max():.2g}" else f"{b.min():.2g}–{b.max():.2g}"))
    laws_said = []
    if laws is not None and len(laws):
        for r in laws[(laws.law == "alpha_heads") & laws.statistic.notna() & is_plain(laws)].itertuples():
            if math.isfinite(r.ci_low) and math.isfinite(r.ci_high):
                laws_said.append(f"{_setting(r.setting)}{_dpc_d(r)} α = {r.statistic:.2g} [{r.ci_low:.2g}, {r.ci_high:.2g}]")
            else:
                laws_said.append(f"{_setting(r.setting)}{_dpc_d(r)} α undetermined ({r.censored} of {r.points} rows lower bounds)")
    text = ("Capacity (T₅₀, the dataset size half the trained models memorize at train accuracy ≥ "
            f"{cap.threshold.max():g}): {'; '.join(parts)} bits per parameter, against 2–3.6 published for "
            "perceptrons and language models")
    if laws_said:
        text += "; T₅₀ ∝ H^α with " + "; ".join(laws_said)
    if stand_ins:
        text += f" ({stand_ins} quick stand-in setting{'s' * (stand_ins > 1)} in the capacity table below)"
    return text + "."


SETTING_SHORT = {"mlt/classification C=100": "MLT's layer with 100 classes", "mlt/scalar": "MLT's layer with one logit",
                 "dpc/associations N=50": "DPC's transformer on associations",
                 "dpc/associations N=50, MLP arm": "DPC's attention + MLP arm on associations"}


def _setting(setting: str) -> str:
    return SETTING_SHORT.get(setting, setting)


def _dpc_d(r) -> str:
    m = re.search(r"d = (\d+):", str(r.meaning))
    return f" (d = {m.group(1)})" if m and str(r.setting).startswith("dpc/") else ""


def claims_table(card: pd.DataFrame, paper: str) -> pd.DataFrame:
    """One paper's paper claims (at most MAX_ROWS): the claim, our statistic [interval], the paper's
    value, the verdict and why where it is not reproduced."""
    c = card[(card.paper == paper) & (card.kind == PAPER_CLAIM)].head(MAX_ROWS)
    return pd.DataFrame({
        "claim": [f"{r.claim} ({r.source})" for r in c.itertuples()],
        "ours [95% CI]": ["–" if _skipped(r) or math.isnan(r.statistic) else
                          f"{_num(r.statistic)} [{_num(r.ci_low)}, {_num(r.ci_high)}]" for r in c.itertuples()],
        "the paper": c.paper_value.fillna("").tolist(),
        "verdict": ["skipped" if _skipped(r) else r.verdict for r in c.itertuples()],
        "why": [why(r) for r in c.itertuples()]})


def exact_checks(card: pd.DataFrame) -> list[tuple[bool, str]]:
    """The properties memcap checks (theorem bounds, constructions): (held, the claim with its count)."""
    props = card[card.kind != PAPER_CLAIM]
    return [(r.verdict == REPRODUCED, f"{r.claim} ({r.paper} {r.source}): {r.verdict}") for r in props.itertuples()]
