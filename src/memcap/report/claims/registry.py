"""The claims and the tables they read: every claim registers here with its test, its accepted region
and the names of its input tables; INPUTS declares those names once (the report's rule file reads it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from memcap.report.verdicts import Region

# Each input name: the family that writes the table and the table's name in that family's TABLES (the
# rule file maps them to paths). A table without a scale column has its family's scale.
INPUTS = {"mlt_runs": ("mlt_synthetic", "runs"), "theory_construct": ("theory", "construct"),
          "theory_rank_bounds": ("theory", "rank_bounds"), "theory_saturation": ("theory", "saturation"),
          "assumption_checks": ("assumptions", "checks"), "dpc_runs": ("dpc", "runs"),
          "dpc_summary": ("dpc", "summary"), "dpc_theory": ("dpc", "kl"), "capacity": ("capacity", "capacity"),
          "capacity_laws": ("capacity", "laws"),
          "dpc_fidelity": ("dpc", "fidelity")}   # the authors' means (memcap.report.claims.authors)
INPUT_FAMILY = {name: family for name, (family, _) in INPUTS.items()}


@dataclass(frozen=True)
class Claim:
    claim_id: str
    kind: str         # PAPER_CLAIM | PROPERTY
    paper: str        # MLT | DPC
    source: str       # figure / table / theorem of the paper
    claim: str
    test: str         # the written-down test against its alternative, as applied by `fn`
    accept: Region    # the values of the statistic's 95% interval that reproduce the claim
    paper_value: str  # the paper's own number or statement, where it gives one
    paper_source: str
    inputs: tuple[str, ...]
    fn: Callable


CLAIMS: list[Claim] = []


def claim(claim_id, kind, paper, source, text, test, accept, inputs, paper_value="", paper_source=""):
    unknown = set(inputs) - set(INPUTS)
    if unknown:
        raise ValueError(f"claim {claim_id}: unknown input table(s) {sorted(unknown)}; declare them in INPUTS")

    def register(fn):
        CLAIMS.append(Claim(claim_id, kind, paper, source, text, test, accept, paper_value, paper_source,
                            tuple(inputs), fn))
        return fn
    return register


