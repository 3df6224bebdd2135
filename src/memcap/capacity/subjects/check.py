"""check_subject: the battery every capacity subject passes (as scikit-learn's check_estimator runs on any
estimator). Each check trains the subject's tiny preset (its EXAMPLE) for seconds on the CPU:

  its parameter count      params_of equals the numel of its module's parameters
  packs                    a pack's probes train exactly as each alone (their rows equal)
  seeds                    the same probe trained twice gives the same row; another seed another model
  gradient                 a hand-written gradient (gradient_check, where a subject has one) is autograd's
"""

from __future__ import annotations

import copy
from types import ModuleType

SEARCH_DEFAULTS = {"seeds": [0, 1], "threshold": 0.99, "heads_grid": [1, 2], "head_dim_grid": [2], "start_bits": 0.25,
                   "grow": 2, "t_min": 2, "rel_tol": 0.3, "max_probes": 6, "budget_factor": 2, "checkpoint_every_s": 0}
COMPARED = ("best_step", "steps_run", "early_stopped")


def example(subject: ModuleType) -> dict:
    """The subject's tiny preset with the search's keys: a whole search of it takes seconds."""
    return {**SEARCH_DEFAULTS, **copy.deepcopy(subject.EXAMPLE)}


def _rows(subject: ModuleType, p: dict, probes: list) -> dict:
    import torch

    rows = {}
    subject.train_probes(probes, p, torch.device("cpu"), lambda pr, row: rows.__setitem__(pr, row), progress=False)
    return rows


def _same(a: dict, b: dict) -> bool:
    return (all(a[k] == b[k] for k in COMPARED) and abs(a["mem_acc"] - b["mem_acc"]) <= 1e-9
            and abs(a["mem_loss"] - b["mem_loss"]) <= 1e-4 * max(abs(a["mem_loss"]), 1e-12))


def check_subject(subject: ModuleType, p: dict | None = None) -> None:
    """Raise AssertionError naming the subject and the check it fails."""
    from memcap.capacity.probes import Probe

    p = p or example(subject)
    name, H, dh = subject.NAME, p["heads"], p["head_dim"]
    module = subject.model(p, H, dh, 0)
    counted = sum(t.numel() for t in module.parameters())
    assert subject.params_of(p, H, dh) == counted, (
        f"{name}: params_of says {subject.params_of(p, H, dh)}, its module has {counted} parameters")
    T = max(p["t_min"], min(24, p["pool"]))
    group = [Probe(H, dh, 0, T), Probe(H, dh, 1, T + 8), Probe(H, dh, 0, T + 16)]
    alone = {pr: _rows(subject, p, [pr])[pr] for pr in group}
    packed = _rows(subject, p, group)
    wrong = [pr for pr in group if not _same(alone[pr], packed[pr])]
    assert not wrong, f"{name}: probes train differently in a pack than alone: {wrong}"
    again = _rows(subject, p, [group[0]])[group[0]]
    assert _same(again, alone[group[0]]), f"{name}: the same probe trained twice differs: seeds are not deterministic"
    import torch

    seeded = [torch.cat([t.detach().flatten() for t in subject.model(p, H, dh, s).parameters()]) for s in (0, 0, 1)]
    assert torch.equal(seeded[0], seeded[1]), f"{name}: seed 0's initialisation differs twice"
    assert not torch.equal(seeded[0], seeded[2]), f"{name}: seeds 0 and 1 start alike"
    if hasattr(subject, "gradient_check"):
        subject.gradient_check(p, H, dh, 0)
