"""What the claim functions share: selecting rows, building curves, the linearity test, formatting."""

from __future__ import annotations

import numpy as np
import pandas as pd

from memcap.report import shapes
from memcap.report.shapes import Curve
from memcap.report.verdicts import NotRun, Outcome, Region, Skip, outcome


# "Linear in X" against concave growth: the parabola's end-slope ratio (shapes.end_slope_ratio) is 1 for
# a line; on H = {1, 2, 4} it is 0.47 for √H, 0.34 for log(1 + H) and 0.70 for H^0.75.
LINEAR = Region(0.75, np.inf)
FASTER_THAN_LINEAR = 1.25


# The rows each claim selected, in order (assemble.scorecard empties it before a claim runs): a table
# whose sweeps come from different presets (MLT's published one) gives each claim the scale and
# settings label of the rows it read, not of the table's first row.
READ: list[pd.DataFrame] = []


def _rows(df: pd.DataFrame | None, what: str, **eq) -> pd.DataFrame:
    """Rows of `df` matching every column == value; NotRun when there are none."""
    if df is None:
        raise NotRun(f"no {what} table")
    for k, v in eq.items():
        df = df[df[k] == v]
    if df.empty:
        raise NotRun(f"{what}: no rows with {eq}")
    READ.append(df)
    return df


def _exact(fraction: float, detail: str) -> Outcome:
    """A property computed exactly (no sampling): the interval is the point; it holds iff fraction = 1."""
    return outcome(fraction, fraction, fraction, Region(1, 1), detail)


def _each(cs: list[Curve], values: list[float], unit: str = "") -> str:
    return "; ".join(f"{c.label}: {v:.3g}{unit}" for c, v in zip(cs, values))


def _at_least(cs: list[Curve], n: int, what: str) -> list[Curve]:
    """The curves with n+ points; the others are named as dropped; Skip when none is left."""
    keep = [c for c in cs if len(c.x) >= n]
    for c in cs:
        if len(c.x) < n:
            c.dropped.append(f"{c.label}: whole curve ({len(c.x)} usable points, the test needs {n})")
    if not keep:
        raise Skip(f"no curve with {n}+ {what}" + shapes.dropped(cs))
    return keep


def _replicates(cs: list[Curve], what: str) -> str:
    return f"{', '.join(sorted({c.replicates for c in cs}))} {what} per point"


def mlt_curves(runs: pd.DataFrame | None, sweep: str, value: str = "mem_acc") -> list[Curve]:
    """One curve per dataset size T of an MLT sweep; replicates = seeds."""
    return shapes.curves(_rows(runs, "mlt_synthetic runs", sweep=sweep), "dataset_size", "x", value, "T={}")


