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
from memcap.capacity import subjects
from memcap.capacity.probes import Probe
from memcap.capacity.search import next_round
from memcap.capacity.store import ProbeStore, store

log = logging.getLogger(__name__)


def plan(archs: list[tuple[int, int]], p: dict, runs_dir: str | Path, k: int | None = None,
         preset: str | None = None) -> list[Probe]:
    """The next round's probes (memcap.capacity.search.next_round) from the probes on disk."""
    stores = {(H, dh): store(runs_dir, p, H, dh, preset) for H, dh in archs}
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
    stores = {(H, dh): store(runs_dir, p, H, dh, preset) for H, dh in archs}
    variants = grid.lr_variants(p)
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
            for i, q in enumerate(variants):
                # a tuned preset's lrs one after the other: a probe an earlier lr memorized is decided
                parts = {arch: (s.parts[i] if len(variants) > 1 else s) for arch, s in stores.items()}
                earlier = [{arch: s.parts[j] for arch, s in stores.items()} for j in range(i)] if len(variants) > 1 else []
                mine = [pr for pr in group if not any(_passed(e[pr.heads, pr.head_dim], pr, p) for e in earlier)]
                path = f"{checkpoint}.x{budget}.pt" if len(variants) == 1 else f"{checkpoint}.x{budget}.lr{i}.pt"
                _train(mine, q, parts, device, path, rounds, budget, checkpoint_every_s, progress, cuda_graphs)
        plan_path.unlink()
    return rounds


def _passed(part: ProbeStore, pr: Probe, p: dict) -> bool:
    return part.has(pr.seed, pr.T, pr.budget) and pr.T in {T for T, ok in part.outcomes([pr.seed], pr.budget)[pr.seed].items() if ok}


def _train(group: list[Probe], q: dict, stores: dict, device, path: str, rounds: int, budget: int,
           checkpoint_every_s: float, progress: bool, cuda_graphs: bool) -> None:
    """One pack of a round: the group's probes not on disk yet, trained with preset q, each written to
    its architecture's store as soon as it is done."""
    done = {pr for pr in group if stores[pr.heads, pr.head_dim].has(pr.seed, pr.T, pr.budget)}
    if len(done) == len(group):
        return
    pack = pack_id(group)
    lr = f" at lr {q['training']['lr']:g}"
    log.info("round %d: %d probes at %dx the steps%s (%s)", rounds, len(group) - len(done), budget, lr,
             ", ".join(f"H={pr.heads} d_h={pr.head_dim} seed {pr.seed} T={pr.T}" for pr in group if pr not in done))

    def write(pr: Probe, row: dict) -> None:
        stores[pr.heads, pr.head_dim].write(
            {"heads": pr.heads, "head_dim": pr.head_dim, "seed": pr.seed, "dataset_size": pr.T, "budget": pr.budget,
             **row, "param_count": grid.params_of(q, pr.heads, pr.head_dim), "pack": pack},
            results.provenance(grid.probe_settings(q, pr.heads, pr.head_dim), seed=pr.seed, dataset_size=pr.T,
                               budget=pr.budget))
        log.info("H=%d d_h=%d seed %d T=%d x%d: accuracy %.4f -> %s", pr.heads, pr.head_dim, pr.seed, pr.T,
                 pr.budget, row["mem_acc"], "pass" if row["mem_acc"] >= q["threshold"] else "fail")

    train_probes(group, q, device, write, skip=done, checkpoint_path=path, checkpoint_every_s=checkpoint_every_s,
                 progress=progress, desc=f"capacity round {rounds} x{budget} ({len(group)} probes)", cuda_graphs=cuda_graphs)
    ckpt.remove(path)


def train_probes(probes: list[Probe], p: dict, device, on_probe, **kwargs) -> None:
    """A pack of probes trained by the preset's subject (memcap.capacity.subjects)."""
    subjects.of(p).train_probes(probes, p, device, on_probe, **kwargs)
