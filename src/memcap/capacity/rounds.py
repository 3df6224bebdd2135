"""A capacity search advances in rounds: each trains, for every architecture and seed still open, its
next probe(s) (memcap.capacity.search), as one pack per budget (memcap.capacity.probes).

A job of one architecture (a CPU) trains one probe a seed a round: plain bisection, the fewest steps.
A job of many architectures (a GPU preset) trains k probes a seed a round, every open architecture in
one pack. Once every seed of an architecture has ended, its first failing T is trained again at
budget_factor times the steps (the budget check); a preset with `budgets` then searches each seed at
each larger budget (its budget curve), each round one pack per budget. Each probe's file is written as soon as it is done;
the round's plan is written before it trains, so a killed search resumes that round from its
checkpoint (the probes it finished are skipped), then plans the next from the probes on disk.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

from memcap import checkpoint as ckpt
from memcap import results
from memcap.capacity import grid
from memcap.capacity.probes import Probe, train_probes
from memcap.capacity.search import next_round
from memcap.capacity.store import ProbeStore

log = logging.getLogger(__name__)


def plan(archs: list[tuple[int, int]], p: dict, runs_dir: str | Path, k: int | None = None,
         preset: str | None = None) -> list[Probe]:
    """The next round's probes (memcap.capacity.search.next_round) from the probes on disk."""
    stores = {(H, dh): ProbeStore(runs_dir, p, H, dh, preset) for H, dh in archs}
    every = sorted({1, p["budget_factor"], *grid.budgets(p)})
    todo = next_round({arch: {b: store.outcomes(p["seeds"], b) for b in every} for arch, store in stores.items()},
                      lambda arch, seed, T: stores[arch].has(seed, T, p["budget_factor"]), p,
                      {(H, dh): grid.start_size(p, H, dh) for H, dh in archs}, k,
                      lambda arch: grid.curve_budgets(p, *arch))
    return [Probe(*fields) for fields in todo]


def pack_id(probes: list[Probe]) -> str:
    """A round's pack, named by its probes (its rows say which probes trained together)."""
    return hashlib.sha256(json.dumps(sorted(map(list, map(_fields, probes)))).encode()).hexdigest()[:10]


def _fields(pr: Probe) -> tuple:
    return pr.heads, pr.head_dim, pr.seed, pr.T, pr.budget


def _folders(archs, p) -> dict[str, str]:
    return {grid.arch_name(H, dh): grid.probe_folder(p, H, dh) for H, dh in archs}


def _saved_plan(path: Path, archs, p) -> list[Probe] | None:
    """The plan of a round a killed job left, if it is of these architectures' probe settings."""
    if not path.exists():
        return None
    saved = json.loads(path.read_text())
    if saved.get("folders") != _folders(archs, p):
        return None
    return [Probe(*f) for f in saved["probes"]]


def run(archs: list[tuple[int, int]], p: dict, runs_dir: str | Path, device, checkpoint: str | Path,
        k: int | None = None, checkpoint_every_s: float = 300.0, progress: bool = True, preset: str | None = None,
        cuda_graphs: bool = False) -> int:
    """Rounds until every architecture's search has ended; returns how many rounds trained here
    (cuda_graphs: memcap.capacity.probes.train_probes)."""
    plan_path = Path(f"{checkpoint}.plan.json")
    stores = {(H, dh): ProbeStore(runs_dir, p, H, dh, preset) for H, dh in archs}
    rounds = 0
    while True:
        todo = _saved_plan(plan_path, archs, p) or plan(archs, p, runs_dir, k, preset)
        if not todo:
            break
        results.write_text(json.dumps({"folders": _folders(archs, p), "probes": [_fields(pr) for pr in todo]}),
                           plan_path)
        rounds += 1
        for budget in sorted({pr.budget for pr in todo}):
            group = [pr for pr in todo if pr.budget == budget]
            done = {pr for pr in group if stores[pr.heads, pr.head_dim].has(pr.seed, pr.T, pr.budget)}
            if len(done) == len(group):
                continue
            pack, path = pack_id(group), f"{checkpoint}.x{budget}.pt"
            log.info("round %d: %d probes at %dx the steps (%s)", rounds, len(group) - len(done), budget,
                     ", ".join(f"H={pr.heads} d_h={pr.head_dim} seed {pr.seed} T={pr.T}" for pr in group if pr not in done))

            def write(pr: Probe, row: dict) -> None:
                store = stores[pr.heads, pr.head_dim]
                store.write({"heads": pr.heads, "head_dim": pr.head_dim, "seed": pr.seed, "dataset_size": pr.T,
                             "budget": pr.budget, **row, "param_count": grid.params_of(p, pr.heads, pr.head_dim),
                             "pack": pack},
                            results.provenance(grid.probe_settings(p, pr.heads, pr.head_dim), seed=pr.seed,
                                               dataset_size=pr.T, budget=pr.budget))
                log.info("H=%d d_h=%d seed %d T=%d x%d: accuracy %.4f -> %s", pr.heads, pr.head_dim, pr.seed,
                         pr.T, pr.budget, row["mem_acc"], "pass" if row["mem_acc"] >= p["threshold"] else "fail")

            train_probes(group, p, device, write, skip=done, checkpoint_path=path,
                         checkpoint_every_s=checkpoint_every_s, progress=progress,
                         desc=f"capacity round {rounds} x{budget} ({len(group)} probes)", cuda_graphs=cuda_graphs)
            ckpt.remove(path)
        plan_path.unlink()
    return rounds
