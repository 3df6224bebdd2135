"""The experiment families and their cross-field params checks.

A family is one experiment group with its own params section, rules file, DVC stage and figures.
Each family module appends a function `params -> list[str]` of problems to CROSS_FIELD_CHECKS for
rules that JSON Schema cannot express.
"""

from __future__ import annotations

from typing import Callable

CROSS_FIELD_CHECKS: list[Callable[[dict], list[str]]] = []


def cross_field_check(fn: Callable[[dict], list[str]]) -> Callable[[dict], list[str]]:
    CROSS_FIELD_CHECKS.append(fn)
    return fn


# Importing the family modules registers their checks.
from memcap import mlt_sweeps  # noqa: E402,F401
from memcap.theory import mlt_experiments  # noqa: E402,F401
from memcap.dpc import experiments as dpc_experiments  # noqa: E402,F401
from memcap.assumptions import family as assumptions_family  # noqa: E402,F401
