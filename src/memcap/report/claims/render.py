"""The scorecard as text: the interval notation and the markdown that reads in a terminal."""

from __future__ import annotations

import numpy as np
import pandas as pd

from memcap.report.claims.assemble import short_verdict
from memcap.report.verdicts import PAPER_CLAIM, PROPERTY, scale_title


def interval(r) -> str:
    """'1.23 [1.01, 1.45]', '1' (exact), or '' (not computed); for a claim of several tests, each test's
    statistic, interval and verdict (the claim's verdict is read next to them)."""
    tests = getattr(r, "tests", "")
    if isinstance(tests, str) and tests:
        return tests
    if np.isnan(r.statistic):
        return ""
    if r.ci_low == r.ci_high == r.statistic:
        return f"{r.statistic:.4g}"
    return f"{r.statistic:.4g} [{r.ci_low:.4g}, {r.ci_high:.4g}]"


SECTIONS = [(PAPER_CLAIM, "Paper claims", "the figures and tables of the papers' experiments"),
            (PROPERTY, "Verified properties", "the theory checked numerically, and trained models checked "
                                              "against a proven bound")]
HOW_TO_READ = (
    "How to read a verdict: the statistic comes with its 95% interval (seeds or repetitions resampled; "
    "Wilson for fractions of runs; exact properties have none). **reproduced**: the whole interval lies in "
    "the accepted region (the `accept` column), so the named alternative is rejected. **not reproduced**: "
    "the whole interval lies outside it. **inconclusive**: the interval straddles the threshold; more "
    "seeds/repetitions or the paper's scale would decide. **not run at this scale**: the sweep it needs "
    "is absent. **skipped**: the statistic cannot be computed (why is given). A claim made of several "
    "tests shows each, numbered, with its statistic, interval and own verdict: reproduced only if every "
    "test is, not reproduced if any is. Points left out of a fit are named in the detail.")


def markdown(card: pd.DataFrame) -> str:
    """A table per kind that fits a terminal (id, verdict, statistic, accepted region, scale), each claim's
    sentence below it; the tests and details are in results/report/index.html and the Parquet."""
    lines = [f"# Claims scorecard {scale_title(card.scale)}", "",
             "Each verdict applies the test written next to the claim (src/memcap/report/claims/) to the "
             "families' Parquet results; the tests, details and the papers' numbers are in "
             "results/report/index.html and tables/scorecard.parquet.", "", HOW_TO_READ, ""]
    for kind, title, what in SECTIONS:
        part = card[card.kind == kind]
        counts = part.verdict.map(short_verdict).value_counts()
        table = pd.DataFrame({
            "claim": part.claim_id, "source": part.paper + " " + part.source,
            "verdict": part.verdict.map(short_verdict), "statistic [95% CI]": [interval(r) for r in part.itertuples()],
            "accept": part.accept, "scale": part.scale,
            "on the authors' means": part.verdict_authors.map(lambda v: short_verdict(v) if v else ""),
        }).astype(str).apply(lambda col: col.str.replace("|", "/", regex=False))   # a '|' would split a cell
        lines += [f"## {title}", "", f"{title} ({what}): " + ", ".join(f"{k}: {v}" for k, v in counts.items()) + ".",
                  "", table.to_markdown(index=False, disable_numparse=True), ""]
        lines += [f"- `{r.claim_id}`: {r.claim}" + (f" ({r.verdict})" if r.verdict != short_verdict(r.verdict) else "")
                  for r in part.itertuples()] + [""]
    return "\n".join(lines)
