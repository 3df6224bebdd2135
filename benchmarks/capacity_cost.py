"""What a capacity search costs on this machine, projected from steps timed now.

For each architecture of the preset (params.yaml capacity.<scale>), measured in this run:
  1. the training step of one round's pack (one probe a seed: M = len(seeds) models, memcap's own
     train_step) and of one model (the budget check), in model-steps/s and as a share of sgemm;
  2. one evaluation row (memcap's evaluate) of the round's pack.
Then the projection: the search's rounds (memcap.capacity.search.simulate) against an oracle whose
capacity is the preset's start times f, for f = 1/4, 1 and 4 (the start a guess off by 4x either way,
or right), each round costing its longest probe's steps S = budget x max(floor(500 T / 256),
min_steps) at the measured step time plus its evaluations every eval_every steps over each probe's
T rows (early stopping ignored: an upper bound where probes pass). Core-hours at one thread a job.

A preset with a budget curve (`budgets`): the oracle's capacity grows as B^GROWTH with the budget B
(the budget check's observed step at H = 40: 16,760 passes at 2x), so each budget's search moves up.
--table: a capacity table whose T* (budget 1) replaces the guesses for the rows it has; --runs: the
probes already on disk there pass or fail as they did and cost nothing (the published search's budget
1 and its budget checks), so a curve starts from the real brackets.

DPC presets (memcap.capacity.associations): a probe is budget x epochs x batches steps of DPC's loop
whatever its T, timed the same way (its exact evaluation on the T pairs is one forward pass).

    python benchmarks/capacity_cost.py [--scale paper] [--threads 1] [--seconds 1.5]
    python benchmarks/capacity_cost.py --scale paper_settings     # every preset of the composite
    python benchmarks/capacity_cost.py --scale paper_budget --table results/capacity/tables/capacity.parquet \
        --runs results/capacity/runs                                # the budget curves, what is on disk free
"""

from __future__ import annotations

import argparse
import math

import pandas as pd
import torch

import train_throughput as tt   # benchmarks/train_throughput.py: the step and evaluation timings
from peak import sgemm_gflops   # benchmarks/peak.py

from memcap import params as memcap_params
from memcap.capacity import aggregate, grid, settings
from memcap.capacity.search import simulate
from memcap.capacity.store import ProbeStore
from memcap.training.schedule import mlt_num_steps

FACTORS = (0.25, 1.0, 4.0)
GROWTH = 0.25   # the oracle's T*(B) = T*(1)·B^GROWTH on a budget curve


def measure(p: dict, H: int, dh: int, seconds: float, peak: float) -> dict:
    """Step rates (round pack and one model), their share of sgemm, seconds an evaluation row."""
    M = len(p["seeds"])
    tt.D, tt.N_CTX, tt.CLASSES, tt.BATCH = p["input_dim"], p["context_size"], p["num_classes"], p["training"]["batch_size"]
    n = p["context_size"]
    pack = tt.rate(tt.job(H, p["context"], n=n, head_dim=dh, models=M)[2], seconds)
    one = tt.rate(tt.job(H, p["context"], n=n, head_dim=dh, models=1)[2], seconds)
    flops = tt.train_step_flops(H, p["context"], n=n, head_dim=dh)
    row = tt.eval_row_seconds((H, p["context"], p["context_size"], dh, "classification"), M, seconds / 2)
    return {"pack_steps_s": pack, "one_steps_s": one, "share": flops * M * pack / 1e9 / peak, "eval_row_s": row}


def measure_dpc(p: dict, H: int, dh: int, seconds: float) -> dict:
    """Step rates of DPC's loop (memcap.dpc.train.train_step) for a round's pack and for one model."""
    import time

    from memcap.capacity import associations
    from memcap.dpc.train import per_epoch_lr, train_step
    from memcap.models.aot import AoT
    from memcap.stacked_adam import StackedAdam

    out = {}
    for key, M in (("pack_steps_s", len(p["seeds"])), ("one_steps_s", 1)):
        model = AoT(list(range(M)), vocab=p["vocab"], dim=p["input_dim"], head_dim=dh, heads=H,
                    per_head_proj=grid.per_head_proj(p, dh))
        cfg = associations.config(p, 1, -1)
        opt = StackedAdam([q for q in model.parameters() if q.requires_grad], 1.0, [10 ** 9] * M,
                          lambda holder, _: per_epoch_lr(holder, cfg))   # as memcap.dpc.train.train
        tokens = torch.randint(p["vocab"], (M, p["training"]["batch_size"], 3))
        hist = torch.zeros(M, 10 ** 6)
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            train_step(model, tokens, opt, hist, hist, steps)
            steps += 1
        out[key] = steps / (time.perf_counter() - start)
    return {**out, "share": float("nan"), "eval_row_s": 0.0}


def round_seconds(p: dict, probes: list[tuple], rate: dict) -> float:
    """A round's seconds: one pack a budget, one after the other."""
    return sum(pack_seconds(p, [pr for pr in probes if pr[4] == b], rate) for b in {pr[4] for pr in probes})


def pack_seconds(p: dict, probes: list[tuple], rate: dict) -> float:
    t = p["training"]
    if settings.family(p) == settings.DPC:   # every probe: budget x epochs x batches steps, whatever its T
        steps = max(b * t["epochs"] * t["batches"] for *_, b in probes)
        return steps / (rate["pack_steps_s"] if len(probes) > 1 else rate["one_steps_s"])
    steps = [mlt_num_steps(T, b * t["min_steps"], b * t["epochs"], t["batch_size"]) for _, _, _, T, b in probes]
    if not steps:
        return 0.0
    per_step = 1 / (rate["pack_steps_s"] if len(probes) > 1 else rate["one_steps_s"])
    evals = sum(S / t["eval_every"] * T for S, (_, _, _, T, _) in zip(steps, probes)) * rate["eval_row_s"]
    return max(steps) * per_step + evals


def measured(table: pd.DataFrame | None, p: dict, a: tuple[int, int]) -> float:
    """T* at budget 1 of the architecture in a capacity table of the same setting, else NaN."""
    if table is None:
        return math.nan
    r = table[(table.heads == a[0]) & (table.head_dim == a[1]) & (aggregate.setting_of(table) == settings.label(p))]
    return float(r.capacity.iloc[0]) if len(r) else math.nan


def project(p: dict, name: str, seconds: float, peak: float, table: pd.DataFrame | None = None,
            runs: str | None = None) -> dict[float, float]:
    """Print one preset's architectures and their projected core-hours; return the preset's total a factor."""
    dpc = settings.family(p) == settings.DPC
    what = (f"N={p['vocab']} d={p['input_dim']}" if dpc else
            f"d={p['input_dim']} n={p['context_size']} C={p['num_classes']} {p['context']} context")
    print(f"\ncapacity.{name} ({settings.label(p)}): {what}, {len(p['seeds'])} seeds, rel_tol {p['rel_tol']}, "
          f"budget check x{p['budget_factor']}, budgets {grid.budgets(p)}")
    archs = grid.architectures(p)
    starts = {a: grid.start_size(p, *a) for a in archs}
    hours = {f: 0.0 for f in FACTORS}
    print(f"{'H':>3} {'d_h':>4} {'start':>6} {'pack steps/s':>13} {'1 model':>8} {'sgemm':>6}  "
          + "  ".join(f"T*={f:g}x{'measured' if table is not None else 'start'}: rounds, hours" for f in FACTORS))
    for a in archs:
        rate = measure_dpc(p, *a, seconds) if dpc else measure(p, *a, seconds, peak)
        store = ProbeStore(runs, p, *a) if runs else None
        disk = {b: store.outcomes(p["seeds"], b) for b in {1, p["budget_factor"], *grid.budgets(p)}} if store else {}
        known = measured(table, p, a)
        cells = []
        for f in FACTORS:
            truth = f * (known if not math.isnan(known) else starts[a])

            def passes(H, dh, s, T, b):   # a probe on disk passes as it did; others as the oracle says
                return disk[b][s][T] if T in disk.get(b, {}).get(s, {}) else T <= truth * (1 + 0.02 * s) * b ** GROWTH
            rounds = simulate({**p}, {a: starts[a]}, passes, budgets=lambda arch: grid.curve_budgets(p, *arch))
            if store is not None:   # probes on disk are trained already
                rounds = [[pr for pr in r if not store.has(pr[2], pr[3], pr[4])] for r in rounds]
            h = sum(round_seconds(p, r, rate) for r in rounds) / 3600
            hours[f] += h
            cells.append(f"{len(rounds):>2} rounds {h:5.2f} h")
        print(f"{a[0]:>3} {a[1]:>4} {starts[a]:>6} {rate['pack_steps_s']:>13.1f} {rate['one_steps_s']:>8.1f} "
              f"{100 * rate['share']:>5.1f}%  " + "  ".join(cells), flush=True)
    print(f"capacity.{name}, core-hours at one thread a job: " +
          ", ".join(f"{h:.1f} (T* = {f:g} x the measured T*, else the start)" for f, h in hours.items()))
    return hours


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", default="paper", help="the capacity preset, or a composite of presets (default paper)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=1.5, help="timing window per measurement")
    ap.add_argument("--table", help="a capacity table (tables/capacity.parquet): its T* replace the start's guesses")
    ap.add_argument("--runs", help="the runs folder (results/capacity/runs): probes on disk cost nothing")
    args = ap.parse_args()
    table = pd.read_parquet(args.table) if args.table else None
    torch.set_num_threads(args.threads)
    section = memcap_params.load("params.yaml", {"scale": {"default": "quick", grid.FAMILY: args.scale}})[grid.FAMILY]
    peak = sgemm_gflops(args.seconds)
    print(f"torch {torch.__version__}, {args.threads} thread(s): sgemm (float32) {peak:.1f} GFLOP/s")
    total = {f: 0.0 for f in FACTORS}
    for name in settings.members(section, args.scale):
        for f, h in project(section[name], name, args.seconds, peak, table, args.runs).items():
            total[f] += h
    print("\nall presets, core-hours at one thread a job: " +
          ", ".join(f"{h:.1f} (T* = {f:g} x the measured T*, else the start)" for f, h in total.items()))
    print(f"two jobs at a time on two cores: ~{total[1.0] / 2:.1f} wall-hours at T* = start")


if __name__ == "__main__":
    main()
