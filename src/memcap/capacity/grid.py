"""The capacity family's grid, from its preset (torch-free): the architectures searched, what one probe
trains, and where probes and rows live.

A probe is one model trained on one seed's first T examples (its pool) at `budget` times the paper's
steps (a preset's `budgets`: the budget curve, each budget's search of a seed starting from the bracket
of the budget before, memcap.capacity.search); its file depends only on what its numbers depend on (the architecture, the data and the
trainer), not on the search, so every preset with the same model and trainer settings shares it: a
new threshold, tolerance or seed list trains only the probes it lacks.
"""

from __future__ import annotations

import math

from memcap.capacity import search, subjects
from memcap.keys import settings_key

FAMILY = "capacity"
# The search's own knobs: they decide which probes are trained and how a row reads them.
SEARCH_KEYS = ("seeds", "threshold", "start_bits", "grow", "t_min", "rel_tol", "max_probes", "budget_factor")
# Keys a preset may leave out (their default is the paper's setting): a row's key names them only when
# given, so presets without them keep their rows.
OPTIONAL_SEARCH_KEYS = {"budgets": [1], "budget_not_run": {}, "tuned_lr": []}   # the budget curve; the tuned lr
PROBE_PRESET = "probe"   # the name probe keys hash with: one for all presets, so they share probes


def architectures(p: dict) -> list[tuple[int, int]]:
    """(H, d_h) points: the H grid at the fixed d_h, and the d_h grid at the fixed H (deduplicated)."""
    points = [(H, p["head_dim"]) for H in p["heads_grid"]] + [(p["heads"], dh) for dh in p["head_dim_grid"]]
    return list(dict.fromkeys(points))


def probe_settings(p: dict, heads: int, head_dim: int) -> dict:
    """Everything a probe's numbers depend on but its seed, T and budget (its subject's)."""
    return subjects.of(p).probe_settings(p, heads, head_dim)


def _given(p: dict, optional: dict) -> dict:
    return {k: p[k] for k, default in optional.items() if k in p and p[k] != default}


def search_settings(p: dict, heads: int, head_dim: int) -> dict:
    """Everything one architecture's row depends on (its rule's params): its probes' settings and the
    search's knobs, without the grids, so adding an architecture reruns only that one. Of
    `budget_not_run` only this row's own reason counts: marking another row leaves this one alone."""
    given, reason = _given(p, OPTIONAL_SEARCH_KEYS), not_run(p, heads, head_dim)
    given.pop("budget_not_run", None)
    if reason:
        given["budget_not_run"] = reason
    stop = {"min_seeds": search.min_seeds(p), "width": search.width(p)}   # resolved: a row says how its search ended
    return {**probe_settings(p, heads, head_dim), **{k: p[k] for k in SEARCH_KEYS}, **stop, **given}


def lr_variants(p: dict) -> list[dict]:
    """The presets whose probes a row reads: itself, or with `tuned_lr` one a learning rate (Nichani et
    al.'s tuned capacity: a size is memorized when any of them memorizes it). A variant's probes are
    those of any preset with its lr (DPC: its lr_low scaled alike), so they are shared with the lr checks."""
    if not p.get("tuned_lr"):
        return [p]
    subject = subjects.of(p)
    return [{**{k: v for k, v in p.items() if k != "tuned_lr"}, "training": subject.with_lr(p["training"], lr)}
            for lr in p["tuned_lr"]]


def budgets(p: dict) -> list[int]:
    """The budgets of the preset's budget curve (multiples of the paper's steps); [1]: no curve."""
    return sorted({1, *p.get("budgets", [1])})


def not_run(p: dict, heads: int, head_dim: int) -> str | None:
    """Why an architecture's budget curve is not searched by this preset (budget_not_run: {reason:
    [[H, d_h], ...]}), or None."""
    for reason, archs in p.get("budget_not_run", {}).items():
        if [heads, head_dim] in [list(a) for a in archs]:
            return reason
    return None


def curve_budgets(p: dict, heads: int, head_dim: int) -> list[int]:
    """The budgets searched for one architecture: the preset's, or budget 1 alone where not run."""
    return [1] if not_run(p, heads, head_dim) else budgets(p)


def steps(p: dict, T: int, budget: int) -> int:
    """Training steps of a probe at this budget (its subject's)."""
    return subjects.of(p).steps(p, T, budget)


def exposures(p: dict, T: float, budget: int) -> float:
    """Passes over each of T examples at this budget: steps x batch / T (Allen-Zhu & Li's exposures); a
    subject without a batch_size steps on all T at once."""
    return steps(p, round(T), budget) * p["training"].get("batch_size", T) / T


def arch_name(heads: int, head_dim: int) -> str:
    return f"H{heads}_dh{head_dim}"


def run_name(preset_name: str, p: dict, heads: int, head_dim: int) -> str:
    """One architecture's row below runs/: <preset>/H<H>_dh<d_h>-<key>.parquet (memcap.keys)."""
    key = settings_key(preset_name, search_settings(p, heads, head_dim))
    return f"{preset_name}/{arch_name(heads, head_dim)}-{key}.parquet"


def parse_run_name(path: str) -> tuple[int, int]:
    """(H, d_h) of a row's file name (run_name)."""
    stem = str(path).rsplit("/", 1)[-1].split("-", 1)[0]       # H<H>_dh<d_h>
    heads, head_dim = stem.removeprefix("H").split("_dh")
    return int(heads), int(head_dim)


def probe_folder(p: dict, heads: int, head_dim: int) -> str:
    """The architecture's probes below runs/: probes/<its subject's name for it>-<probe key>/ (shared by presets)."""
    name = subjects.of(p).folder_name(p, heads, head_dim)
    return f"probes/{name}-{settings_key(PROBE_PRESET, probe_settings(p, heads, head_dim))}"


def probe_file(seed: int, T: int, budget: int) -> str:
    """One probe's file in its architecture's folder."""
    return f"seed{seed}_T{T}_x{budget}.parquet"


def params_of(p: dict, heads: int, head_dim: int) -> int:
    """Parameters of one model of the architecture (the paper's P; DPC: what its model allocates)."""
    return subjects.of(p).params_of(p, heads, head_dim)


def classes(p: dict) -> int:
    """Labels an example can take: C (MLT), or the vocabulary N (a DPC association's target)."""
    return subjects.of(p).classes(p)


def context_size(p: dict) -> int:
    """n: context tokens an example's query attends to (DPC: the pair)."""
    return subjects.of(p).context_size(p)


def start_size(p: dict, heads: int, head_dim: int) -> int:
    """The first T probed: start_bits bits a parameter at log2 C bits an example, within [t_min, pool].
    Any start finds the same bracket for a monotone outcome; a near one saves probes."""
    T = round(p["start_bits"] * params_of(p, heads, head_dim) / math.log2(classes(p)))
    return min(max(T, p["t_min"]), p["pool"])
