"""Verdicts from a statistic's 95% interval and the region the claim accepts.

    reproduced        the whole interval lies inside the accepted region
    not reproduced    the whole interval lies outside it
    inconclusive      the interval straddles a threshold: more seeds/repetitions, or the paper's scale,
                      would decide
    not run at this scale   the sweep/experiment the claim needs is absent from this scale's tables
    skipped: why      the statistic cannot be computed from what ran
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memcap.scales import scale_note

REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE = "reproduced", "not reproduced", "inconclusive"
NOT_RUN = "not run at this scale"
SKIPPED = "skipped"
VERDICTS = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, NOT_RUN, SKIPPED)

PAPER_CLAIM, PROPERTY = "paper claim", "verified property"


class NotRun(Exception):
    """The claim's inputs were not produced at this scale (sweep / experiment absent)."""


class Skip(Exception):
    """The statistic cannot be computed; the message says why."""


@dataclass(frozen=True)
class Region:
    """The accepted values of a statistic, a closed interval [low, high] (either end may be infinite)."""
    low: float = -np.inf
    high: float = np.inf

    def text(self) -> str:
        if self.low == self.high:
            return f"= {self.low:g}"
        if np.isinf(self.high):
            return f">= {self.low:g}"
        if np.isinf(self.low):
            return f"<= {self.high:g}"
        return f"in [{self.low:g}, {self.high:g}]"


@dataclass(frozen=True)
class Check:
    """One test of a claim made of several: what it measures, its statistic and 95% interval, the region
    it accepts and its own verdict (the claim's verdict combines them: `combine`)."""
    name: str
    statistic: float
    ci_low: float
    ci_high: float
    accept: str
    verdict: str

    def text(self) -> str:
        value = "not computed" if np.isnan(self.statistic) else (
            f"{self.statistic:.3g}" if self.ci_low == self.ci_high == self.statistic
            else fmt(self.statistic, self.ci_low, self.ci_high))
        return f"{self.name} {value} (accept {self.accept}): {self.verdict}"


def check(name: str, point: float, low: float, high: float, accept: Region) -> Check:
    """A test decided by its interval against the region it accepts."""
    return Check(name, float(point), float(low), float(high), accept.text(), decide(low, high, accept))


@dataclass(frozen=True)
class Outcome:
    """What a claim function returns: the statistic, its 95% interval, the verdict and a readable detail;
    for a claim made of several tests, each test (the first is the statistic's)."""
    statistic: float
    ci_low: float
    ci_high: float
    verdict: str
    detail: str
    checks: tuple[Check, ...] = ()

    def checks_text(self) -> str:
        """'(1) slope/bound 0.917 [0.748, 1.09] (accept >= 1): inconclusive; (2) ...', '' for one test."""
        return "; ".join(f"({i}) {c.text()}" for i, c in enumerate(self.checks, 1))


def decide(low: float, high: float, accept: Region) -> str:
    """reproduced / not reproduced / inconclusive from an interval [low, high] and the accepted region."""
    if np.isnan(low) or np.isnan(high):
        return INCONCLUSIVE
    if accept.low <= low and high <= accept.high:
        return REPRODUCED
    if high < accept.low or low > accept.high:
        return NOT_REPRODUCED
    return INCONCLUSIVE


def combine(*verdicts: str) -> str:
    """A claim made of several tests: not reproduced if any test fails, reproduced if all pass, else
    inconclusive."""
    if NOT_REPRODUCED in verdicts:
        return NOT_REPRODUCED
    if all(v == REPRODUCED for v in verdicts):
        return REPRODUCED
    return INCONCLUSIVE


def outcome(point: float, low: float, high: float, accept: Region, detail: str, *also: Check,
            name: str = "statistic") -> Outcome:
    """Outcome of one interval test (`name`), combined with the claim's other tests (`also`): the verdict
    is `combine`d and every test is kept, so a reader sees which one decided."""
    first = check(name, point, low, high, accept)
    return Outcome(float(point), float(low), float(high), combine(first.verdict, *(c.verdict for c in also)),
                   detail, (first, *also) if also else ())


def fmt(point: float, low: float, high: float) -> str:
    """'1.23 [1.01, 1.45]'."""
    return f"{point:.3g} [{low:.3g}, {high:.3g}]"


def scale_title(scales, reason: str = "") -> str:
    """A table title's scale part; rows at quick are stand-ins (`reason` says how they are reduced)."""
    scales = sorted(set(scales)) or ["none"]
    notes = [f"rows at {s}: {scale_note(s)}" + (f", {reason}" if s == "quick" and reason else "")
             for s in scales if s != "none" and scale_note(s)]
    head = f"(scale: {scales[0]})" if len(scales) == 1 else f"(scales: {', '.join(scales)}; each row names its own)"
    return head + (f" ({'; '.join(notes)})" if notes else "")
