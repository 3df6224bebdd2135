"""Capacity probes of DPC's attention-only transformer: T random associations (Corollary 1's setting).

A seed's pool: a permutation of the N² token pairs (t_1, t_2) and one uniformly random target token a
pair, both drawn once from the seed's data generator; the probe at T trains on the pool's first T pairs,
so a seed's datasets are nested. Its fixed sample of batch_size·batches trigrams repeats those T pairs
in turn (each within one of as often as every other: no pair left unseen, as an i.i.d. sample would
leave some), reshuffled every epoch. The model (memcap.models.aot, its initialisation from the seed) and
the loop (memcap.dpc.train: Adam, the effective lr rule, the NLL) are DPC's; steps: budget × epochs ×
batches. Memorized: the exact accuracy on the T pairs (argmax = target) of the trained model.

A pack trains every probe of one architecture as one AoT of M models (each its own table, sample,
initialisation and shuffling), so a probe's numbers are those it gets alone.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Callable

import numpy as np
import torch

from memcap import checkpoint as ckpt
from memcap.dpc import train as dpc_train
from memcap.models.aot import AoT
from memcap.tasks.lookup import LookupTask

DATA_STREAM = 1   # the pool's generator: SeedSequence([seed, DATA_STREAM]), apart from the model's own


def pool(p: dict, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """One seed's pool: pairs (pool, 2) in the seed's order, and the target table (N, N)."""
    N = p["vocab"]
    gen = torch.Generator().manual_seed(int(np.random.SeedSequence([int(seed), DATA_STREAM]).generate_state(1)[0]))
    order = torch.randperm(N * N, generator=gen)[:p["pool"]]
    table = torch.randint(N, (N, N), generator=gen)
    return torch.stack([order // N, order % N], 1), table


def associations(p: dict, seed: int, T: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The probe's T pairs (T, 2) and their targets (T,)."""
    pairs, table = pool(p, seed)
    pairs = pairs[:T]
    return pairs, table[pairs[:, 0], pairs[:, 1]]


def sample(p: dict, seed: int, T: int) -> torch.Tensor:
    """The fixed training sample (batch_size·batches, 3): the T associations repeated in turn."""
    t = p["training"]
    pairs, targets = associations(p, seed, T)
    idx = torch.arange(t["batch_size"] * t["batches"]) % T
    return torch.cat([pairs[idx], targets[idx, None]], 1)


def config(p: dict, budget: int, checkpoint_every_s: float) -> dpc_train.TrainConfig:
    t = p["training"]
    return dpc_train.TrainConfig(batch_size=t["batch_size"], batches=t["batches"], epochs=budget * t["epochs"],
                                 lr=t["lr"], lr_low=t["lr_low"], checkpoint_every_s=checkpoint_every_s)


@torch.no_grad()
def exact(model: AoT, p: dict, probes: list) -> list[dict]:
    """Each model's accuracy, mean NLL and memorized bits (Σ max(0, log2 N − NLL in bits)) on its own
    T pairs (padded to the pack's largest T; the padding is not counted)."""
    device = model.emb.device
    data = [associations(p, pr.seed, pr.T) for pr in probes]
    size = max(pr.T for pr in probes)
    pairs = torch.zeros(len(probes), size, 2, dtype=torch.long)
    targets = torch.zeros(len(probes), size, dtype=torch.long)
    for m, (x, y) in enumerate(data):
        pairs[m, :len(y)], targets[m, :len(y)] = x, y
    logits = model(pairs.to(device))                                          # (M, T, N)
    targets = targets.to(device)
    hits, loss = logits.argmax(-1) == targets, dpc_train.nll(logits, targets)
    bits = (math.log2(p["vocab"]) - loss / math.log(2)).clamp(min=0)
    return [{"mem_acc": float(hits[m, :pr.T].double().mean()), "mem_loss": float(loss[m, :pr.T].double().mean()),
             "memorized_bits": float(bits[m, :pr.T].double().sum())} for m, pr in enumerate(probes)]


def train_probes(probes: list, p: dict, build: Callable[[list[int], int, int], AoT], device: torch.device,
                 on_probe: Callable[[object, dict], None], skip: set = frozenset(), checkpoint_path: str | None = None, checkpoint_every_s: float = 300.0,
                 progress: bool = True, desc: str = "capacity") -> None:
    """memcap.capacity.probes.train_probes for DPC presets: one pack an architecture (every probe of a
    pack runs the same steps, so all finish together); probes in `skip` are done already. build(seeds, H, d_h):
    the pack's model (memcap.capacity.subjects.dpc)."""
    budgets = {pr.budget for pr in probes}
    if len(budgets) != 1:
        raise ValueError(f"a pack of probes trains one budget, not {sorted(budgets)}")
    cfg = config(p, budgets.pop(), checkpoint_every_s)
    todo = [pr for pr in probes if pr not in skip]
    for arch in dict.fromkeys((pr.heads, pr.head_dim) for pr in todo):
        group = [pr for pr in todo if (pr.heads, pr.head_dim) == arch]
        seeds = [pr.seed for pr in group]
        model = build(seeds, *arch).to(device)
        tables = torch.stack([pool(p, pr.seed)[1] for pr in group])
        task = LookupTask(tables, torch.stack([sample(p, pr.seed, pr.T) for pr in group])).to(device)
        ck = f"{checkpoint_path}.H{arch[0]}_dh{arch[1]}" if checkpoint_path else None
        results = dpc_train.train(model, task, seeds, replace(cfg), ck, progress, f"{desc} H={arch[0]} d_h={arch[1]}")
        for pr, r, e in zip(group, results, exact(model, p, group)):
            on_probe(pr, {**e, "best_step": r.steps, "steps_run": r.steps, "steps_planned": r.steps,
                          "early_stopped": False, "wall_time_s": r.wall_time_s, "segments": r.segments,
                          "device": str(device), "models_in_round": len(group)})
        ckpt.remove(ck)
