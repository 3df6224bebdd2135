"""Train a round's probes of MLT's layer (memcap.capacity.subjects.mlt) as one pack: MLT's model and its
training loop (memcap.training).

A probe (H, d_h, seed, T, budget) is one MLT model (memcap.models.mlt_attention, its initialisation
from the seed) trained by memcap.training.loop on the first T examples of its seed's pool: the
pool is make_data at T = pool (context(s), then queries, then labels from RandomState(seed)), so a
seed's datasets are nested, and its first T queries and context are those make_data draws at T
(labels are drawn after all the pool's queries, so they differ from a lone draw at T). Steps:
budget × the paper's S = max(floor(500·T/256), 50,000) (epochs and min_steps both scaled).

A round's probes of one budget train as one pack (M models, each with its own T, schedule and early
stop; architectures of different shape padded, MLTAttention.stack), so each probe's numbers are what
it gets alone: the CPU's round of one architecture's seeds and a GPU's round of every open
architecture run the same loop.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable

import torch

from memcap.capacity import grid
from memcap.models.mlt_attention import MLTAttention
from memcap.tasks.mlt_data import MLTData, make_data
from memcap.training import memory
from memcap.training.config import RunResult, TrainConfig
from memcap.training.loop import train


@dataclass(frozen=True, order=True)
class Probe:
    heads: int
    head_dim: int
    seed: int
    T: int
    budget: int = 1


def pool(p: dict, seed: int) -> MLTData:
    """One seed's pool of p['pool'] examples: every probe of the seed takes its first T."""
    return make_data([seed], dataset_size=p["pool"], context_size=p["context_size"], input_dim=p["input_dim"],
                     context=p["context"], task="classification", num_classes=p["num_classes"])


def nested_data(probes: list[Probe], p: dict) -> MLTData:
    """The probes' datasets, one after the other (MLTData's layout): each the first T rows of its
    seed's pool; random contexts are stored once a seed and read through context offsets."""
    pools = {seed: pool(p, seed) for seed in dict.fromkeys(pr.seed for pr in probes)}
    queries = torch.cat([pools[pr.seed].query_rows[:pr.T] for pr in probes])
    labels = torch.cat([pools[pr.seed].label_rows[:pr.T] for pr in probes])
    sizes = tuple(pr.T for pr in probes)
    if p["context"] == "shared":
        contexts = torch.cat([pools[pr.seed].context_rows for pr in probes])   # (M, n, d)
        return MLTData(queries, contexts, labels, True, sizes)
    order = list(pools)
    contexts = torch.cat([pools[s].context_rows for s in order])              # (seeds · pool, n, d)
    starts = tuple(order.index(pr.seed) * p["pool"] for pr in probes)
    return MLTData(queries, contexts, labels, False, sizes, context_starts=starts)


def model_of(probes: list[Probe], p: dict) -> MLTAttention:
    models = [MLTAttention([pr.seed], input_dim=p["input_dim"], heads=pr.heads, context_size=p["context_size"],
                           head_dim=pr.head_dim, out_dim=p["num_classes"], value_dim=p.get("value_dim", 1))
              for pr in probes]
    return models[0] if len(models) == 1 else MLTAttention.stack(models)


def config(p: dict, budget: int, checkpoint_every_s: float) -> TrainConfig:
    t = p["training"]
    return TrainConfig.of(t, epochs=budget * t["epochs"], min_steps=budget * t["min_steps"],
                          checkpoint_every_s=checkpoint_every_s)


def train_probes(probes: list[Probe], p: dict, device: torch.device, on_probe: Callable[[Probe, dict], None],
                 skip: set[Probe] = frozenset(), checkpoint_path: str | None = None,
                 checkpoint_every_s: float = 300.0, progress: bool = True, desc: str = "capacity",
                 cuda_graphs: bool = False) -> None:
    """Train `probes` (one budget) as one pack; on_probe(probe, row) hears of each as soon as it is
    done (row: RunResult's fields, its device and the pack's size). Probes in `skip` are done already
    (a resumed round): they keep their place, so the round's checkpoint still fits. cuda_graphs: each
    step replayed from CUDA graphs (memcap.training.graphed), the rows' device then "cuda+graphs"."""
    budgets = {pr.budget for pr in probes}
    if len(budgets) != 1:
        raise ValueError(f"a pack of probes trains one budget, not {sorted(budgets)}")
    if cuda_graphs and device.type != "cuda":
        raise ValueError("capacity: CUDA graphs need a CUDA device")
    memory.check(f"capacity H={probes[0].heads} d_h={probes[0].head_dim} ({len(probes)} probes, T up to "
                 f"{max(pr.T for pr in probes)})", memory.mlt_job_bytes(
                     {**p, "batch_size": p["training"]["batch_size"]}, [(pr.seed, p["pool"], pr.heads, pr.head_dim)
                                                                        for pr in probes]))
    cfg = config(p, budgets.pop(), checkpoint_every_s)
    # one schedule's models side by side (StackedAdam): by step count, stable, so a pack of equal counts
    # keeps its order; each probe keeps its own row whatever its place
    probes = sorted(probes, key=lambda pr: grid.steps(p, pr.T, pr.budget))
    model = model_of(probes, p).to(device)
    data = nested_data(probes, p).to(device)

    skipped = {m for m, pr in enumerate(probes) if pr in skip}
    told: set[int] = set()

    def finished(new: dict[int, RunResult]) -> None:
        for m, r in new.items():
            told.add(m)
            on_probe(probes[m], {**asdict(r), "device": f"{device}+graphs" if cuda_graphs else str(device),
                                 "models_in_round": len(probes)})

    final, _ = train(model, data, [pr.seed for pr in probes], cfg, True,
                     checkpoint_path, progress, desc, on_finish=finished, skip=skipped, cuda_graphs=cuda_graphs)
    finished({m: r for m, r in enumerate(final) if r is not None and m not in told})   # done before a resume
