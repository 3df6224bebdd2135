"""The claims scorecard: one small function per claim, each computing its statistic from the families'
Parquet tables, with a 95% interval, and testing it against the alternative named next to it.

Two kinds of rows: paper claims (the figures and tables of the papers' experiments) and verified
properties (the theory checked numerically, or trained models checked against a proven bound).

A claim function takes `tables` (name -> DataFrame, or None when the file was not given) and returns
an `Outcome` (statistic, its interval, verdict, detail; see memcap.report.verdicts for the verdicts).
It raises `NotRun` when the sweep/experiment it needs is absent from this scale's tables, and `Skip`
when the statistic cannot be computed (the reason is reported). Intervals come from resampling seeds
(MLT) or repetitions (DPC) within each grid point (memcap.report.shapes); points left out of a fit are
named in the detail.

registry.py   Claim, the @claim decorator, INPUTS (the input tables' names, declared once)
common.py     what the claim functions share: row selection, curves, the linearity test, formatting
mlt.py        the MLT paper's claims
dpc.py        the DPC paper's claims
authors.py    every DPC claim judged on the authors' published means too
capacity.py   the capacity search against both papers' counts
assemble.py   the scorecard table, its metrics and plot data
render.py     the markdown (a terminal-width table; the test texts live in the HTML and the Parquet)
"""

# importing a claims module registers its claims: the scorecard's rows come in this order
from memcap.report.claims import mlt  # noqa: F401,I001
from memcap.report.claims import dpc  # noqa: F401,I001
from memcap.report.claims import capacity  # noqa: F401,I001
from memcap.report.claims.assemble import COLUMNS, metrics, metrics_json, plot_data, scorecard
from memcap.report.claims.registry import CLAIMS, INPUT_FAMILY, INPUTS, Claim
from memcap.report.claims.render import HOW_TO_READ, interval, markdown
from memcap.report.verdicts import (INCONCLUSIVE, NOT_REPRODUCED, NOT_RUN, PAPER_CLAIM, PROPERTY, REPRODUCED,
                                    NotRun, Skip)

__all__ = ["CLAIMS", "COLUMNS", "HOW_TO_READ", "INCONCLUSIVE", "INPUTS", "INPUT_FAMILY", "NOT_REPRODUCED", "NOT_RUN",
           "PAPER_CLAIM", "PROPERTY", "REPRODUCED", "Claim", "NotRun", "Skip", "interval", "markdown", "metrics",
           "metrics_json", "plot_data", "scorecard"]
