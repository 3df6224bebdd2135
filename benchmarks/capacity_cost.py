"""What a capacity search costs on this machine, projected from steps timed now.

For each architecture of the preset (params.yaml capacity.<scale>), measured in this run on one thread:
  1. the training step of a pack of M models (memcap's own train_step) at M = 1, 3 and 12, in
     model-steps/s and as a share of sgemm (M = 12: a round's pack of the search, M = 3: one probe a
     seed of three seeds); a pack of any other M is timed by the line through M = 1 and 12;
  2. one evaluation row (memcap's evaluate) of a pack.
Then two projections, each round costing its longest probe's steps S = budget x max(floor(500 T / 256),
min_steps) at the pack's step time plus its evaluations every eval_every steps over each probe's T rows
(early stopping ignored: an upper bound where probes pass), summed as core-hours at one thread a job:

  from nothing   against an oracle whose seeds' thresholds are logistic in log T around the preset's
                 start (scale SPREAD), both searches: today's bisection (three seeds, one probe a seed
                 a round, each bracket closed to rel_tol) and memcap.capacity.search (five seeds or
                 more, rounds of about 12 models, stopped by the pooled fit's width);
  the run        (--runs results/capacity/runs) what the search still has to train given the probes on
                 disk, which pass or fail as they did and cost nothing: a seed with probes keeps its own
                 threshold (its bracket's middle), a new seed's is drawn from the architecture's fitted
                 transition (memcap.capacity.transition), each larger budget multiplying it by
                 budget^GROWTH where no probe says otherwise.

DPC presets (memcap.capacity.associations): a probe is budget x epochs x batches steps of DPC's loop
whatever its T, timed the same way (its exact evaluation on the T pairs is one forward pass). A preset of
any other subject (DPC's MLP arm, the torch block, your own) is timed through its own train_probes, a
pack of M probes trained a few steps (the subject's with_steps), evaluation included; a subject without
with_steps is named and SKIPPED. Its share of sgemm is not given (memcap counts no FLOPs of its step).

    python benchmarks/capacity_cost.py [--scale paper] [--seconds 1.5]
    python benchmarks/capacity_cost.py --scale paper_all --runs results/capacity/runs   # the run left to do
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np
import torch

import train_throughput as tt   # benchmarks/train_throughput.py: the step and evaluation timings
from peak import sgemm_gflops   # benchmarks/peak.py

from memcap import params as memcap_params
from memcap.capacity import grid, search, settings, subjects, transition
from memcap.capacity.store import ProbeStore
from memcap.capacity.subjects import dpc as dpc_subject
from memcap.training.schedule import mlt_num_steps

SPREAD = 0.1    # the oracle's seeds: log T_s logistic with this scale (T₁₀/T₉₀ = 81^0.1 = 1.55)
GROWTH = 0.25   # the oracle's T(B) = T(1)·B^GROWTH on a budget curve
PACKS = (1, 3, 12)


def measure(p: dict, H: int, dh: int, seconds: float, peak: float) -> dict:
    """Seconds a step of a pack of M models (M in PACKS), their share of sgemm, seconds an evaluation row."""
    tt.D, tt.N_CTX, tt.CLASSES, tt.BATCH = p["input_dim"], p["context_size"], p["num_classes"], p["training"]["batch_size"]
    n = p["context_size"]
    flops = tt.train_step_flops(H, p["context"], n=n, head_dim=dh)
    step = {M: 1 / tt.rate(tt.job(H, p["context"], n=n, head_dim=dh, models=M)[2], seconds) for M in PACKS}
    row = tt.eval_row_seconds((H, p["context"], p["context_size"], dh, "classification"), 3, seconds / 2)
    return {"step": step, "share": {M: flops * M / step[M] / 1e9 / peak for M in PACKS}, "eval_row_s": row}


def measure_dpc(p: dict, H: int, dh: int, seconds: float) -> dict:
    """Seconds a step of DPC's loop (memcap.dpc.train.train_step) for packs of M models."""
    from memcap.capacity import associations
    from memcap.dpc.train import per_epoch_lr, train_step
    from memcap.models.aot import AoT
    from memcap.stacked_adam import StackedAdam

    step = {}
    for M in PACKS:
        model = AoT(list(range(M)), vocab=p["vocab"], dim=p["input_dim"], head_dim=dh, heads=H,
                    per_head_proj=dpc_subject.per_head_proj(p, dh))
        cfg = associations.config(p, 1, -1)
        opt = StackedAdam([q for q in model.parameters() if q.requires_grad], 1.0, [10 ** 9] * M,
                          lambda holder, _: per_epoch_lr(holder, cfg))   # as memcap.dpc.train.train
        tokens = torch.randint(p["vocab"], (M, p["training"]["batch_size"], 3))
        hist = torch.zeros(M, 10 ** 6)
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            train_step(model, tokens, opt, hist, hist, steps)
            steps += 1
        step[M] = (time.perf_counter() - start) / steps
    return {"step": step, "share": {M: math.nan for M in PACKS}, "eval_row_s": 0.0}


def measure_subject(p: dict, H: int, dh: int, seconds: float) -> dict:
    """Seconds a step of a pack of M models through the subject's own train_probes: the pack trained n
    steps (its with_steps), n growing until one run takes `seconds`, after a warm-up run."""
    from memcap.capacity.probes import Probe

    subject = subjects.of(p)
    step = {}
    for M in PACKS:
        probes = [Probe(H, dh, seed, min(p["pool"], 256), 1) for seed in range(M)]
        def run(n: int) -> None:
            with warnings.catch_warnings():   # torch.func's "no batching rule" notes: the timing is what is asked
                warnings.simplefilter("ignore", UserWarning)
                subject.train_probes(probes, subject.with_steps(p, n), "cpu", lambda *_: None, progress=False)
        run(2)
        n = 4
        while True:
            start = time.perf_counter()
            run(n)
            spent = time.perf_counter() - start
            if spent >= seconds or n >= 10 ** 5:
                break
            n *= 4
        step[M] = spent / n
    return {"step": step, "share": {M: math.nan for M in PACKS}, "eval_row_s": 0.0}


def step_seconds(rate: dict, M: int) -> float:
    """A pack of M models' step: measured at PACKS, else the line through M = 1 and 12."""
    s = rate["step"]
    return s[M] if M in s else s[1] + (s[12] - s[1]) * (M - 1) / 11


def pack_seconds(p: dict, probes: list[tuple], rate: dict) -> float:
    t = p["training"]
    if not probes:
        return 0.0
    if settings.family(p) != settings.MLT:   # a probe's steps are its subject's (DPC's: whatever its T)
        return max(subjects.of(p).steps(p, T, b) for _, _, _, T, b in probes) * step_seconds(rate, len(probes))
    steps = [mlt_num_steps(T, b * t["min_steps"], b * t["epochs"], t["batch_size"]) for _, _, _, T, b in probes]
    evals = sum(S / t["eval_every"] * T for S, (_, _, _, T, _) in zip(steps, probes)) * rate["eval_row_s"]
    return max(steps) * step_seconds(rate, len(probes)) + evals


def rounds_seconds(p: dict, rounds: list[list[tuple]], rate: dict) -> float:
    """Each round one pack a budget, one after the other."""
    return sum(pack_seconds(p, [pr for pr in r if pr[4] == b], rate) for r in rounds for b in {pr[4] for pr in r})


def bisection(p: dict, arch: tuple[int, int], start: int, passes, budgets: list[int]) -> list[list[tuple]]:
    """Today's search: three seeds, each bisected (one probe a round) until its bracket is within
    rel_tol, at each budget of the curve from the bracket at the one before (its first probe there the
    previous T_fail); without a curve, the budget check at budget_factor x the steps."""
    seeds = [int(s) for s in p["seeds"][:3]]
    curves: dict[int, dict] = {s: {} for s in seeds}
    rounds, before = [], None
    for b in budgets:
        while True:
            todo = []
            for s in seeds:
                own = curves[s].get(b, {})
                if before is not None and not own and (last := search.bracket_at(curves[s], before)).high is not None:
                    todo.append((*arch, s, last.high, b))
                    continue
                todo += [(*arch, s, T, b) for T in search.next_sizes(search.at_budget(curves[s], b), p, start, 1, len(own))]
            if not todo:
                break
            rounds.append(todo)
            for *_, s, T, bb in todo:
                curves[s].setdefault(bb, {})[T] = passes(*arch, s, T, bb)
        before = b
    check = search.budget_probe({s: search.bracket(c.get(1, {})) for s, c in curves.items()})
    return rounds + ([[(*arch, *check, p["budget_factor"])]] if check and p["budget_factor"] > 1 and len(budgets) == 1 else [])


def oracle(thresholds: dict, known: dict):
    """passes(H, d_h, seed, T, budget): a probe on disk as it went, else T below the seed's threshold."""
    def passes(H, dh, s, T, b):
        if T in known.get(b, {}).get(s, {}):
            return known[b][s][T]
        return T < thresholds[s] * b ** GROWTH
    return passes


def from_disk(p: dict, arch: tuple[int, int], runs: str, rng) -> tuple[dict, dict]:
    """The probes on disk (budget -> seed -> {T: passed}) and every seed's threshold: its own bracket's
    middle where it has one at budget 1, else a draw from the fitted transition (the start without one)."""
    store = ProbeStore(runs, p, *arch)
    known = {b: store.outcomes(p["seeds"], b) for b in {1, p["budget_factor"], *grid.budgets(p)}}
    try:
        fit = transition.transition({s: o for s, o in known[1].items() if o})
        t50, scale = fit.t50, max(math.log(fit.width) / (2 * transition.LOGIT_90), 0.03)
    except transition.NoTransition:
        t50, scale = grid.start_size(p, *arch), SPREAD
    thresholds = {}
    for s in (int(s) for s in p["seeds"]):
        b = search.bracket(known[1].get(s, {}))
        thresholds[s] = b.middle() if b.low and b.high else float(transition.simulate_thresholds(t50, scale, 1, rng)[0])
    return known, thresholds


def project(p: dict, name: str, seconds: float, peak: float, runs: str | None) -> dict[str, float]:
    """Print one preset's architectures and their projected core-hours; return the preset's totals."""
    total = {"today": 0.0, "new": 0.0, "new_packs": 0.0, "run": 0.0}
    family = settings.family(p)
    if family not in (settings.MLT, settings.DPC) and not hasattr(subjects.of(p), "with_steps"):
        print(f"\ncapacity.{name} ({settings.label(p)}): SKIPPED, the {family} subject has no with_steps "
              f"(memcap.capacity.subjects: a short run to time its pack); not in the totals")
        return total
    dpc = family == settings.DPC
    what = (f"N={p['vocab']} d={p['input_dim']}" if "vocab" in p else
            f"d={p['input_dim']} n={p['context_size']} C={p['num_classes']} {p.get('context', 'shared')} context")
    print(f"\ncapacity.{name} ({settings.label(p)}): {what}, seeds {search.min_seeds(p)} to {len(p['seeds'])}, "
          f"width {search.width(p)}, budgets {grid.budgets(p)}")
    print(f"{'H':>3} {'d_h':>4} {'model-steps/s M=1/3/12':>24} {'sgemm M=3/12':>13}   "
          f"{'today (3 seeds)':>16} {'new, k=1':>9} {'new, packs of 12':>17}"
          + ("   the run (k=1): rounds, probes, hours" if runs else ""))
    for a in grid.architectures(p):
        rate = (measure_dpc(p, *a, seconds) if dpc else measure(p, *a, seconds, peak) if family == settings.MLT
                else measure_subject(p, *a, seconds))
        rng = np.random.default_rng(a[0] * 1000 + a[1])
        start = grid.start_size(p, *a)
        thresholds = {int(s): float(v) for s, v in zip(p["seeds"], transition.simulate_thresholds(start, SPREAD, len(p["seeds"]), rng))}
        passes = oracle(thresholds, {})
        curve = lambda arch: grid.curve_budgets(p, *arch)                                       # noqa: E731
        today = rounds_seconds(p, bisection(p, a, start, passes, curve(a)), rate) / 3600
        new = rounds_seconds(p, search.simulate(p, {a: start}, passes, k=1, budgets=curve), rate) / 3600
        packs = rounds_seconds(p, search.simulate(p, {a: start}, passes, budgets=curve), rate) / 3600
        cells = f"{today:13.2f} h {new:7.2f} h {packs:15.2f} h"
        total["today"] += today
        total["new"] += new
        total["new_packs"] += packs
        if runs:
            known, own = from_disk(p, a, runs, rng)
            left = search.simulate(p, {a: start}, oracle(own, known), k=1, budgets=curve, known={a: known})
            hours = rounds_seconds(p, left, rate) / 3600
            total["run"] += hours
            cells += f"   {len(left):>2} rounds {sum(map(len, left)):>3} probes {hours:6.2f} h"
        steps = "/".join(f"{M / rate['step'][M]:,.0f}" for M in PACKS)
        share = "/".join("–" if math.isnan(rate["share"][M]) else f"{100 * rate['share'][M]:.0f}%" for M in (3, 12))
        print(f"{a[0]:>3} {a[1]:>4} {steps:>24} {share:>13}   {cells}", flush=True)
    print(f"capacity.{name}, core-hours at one thread a job: today {total['today']:.1f}, new {total['new']:.1f} "
          f"(packs of 12: {total['new_packs']:.1f})"
          + (f", the run left {total['run']:.1f}" if runs else ""))
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", default="paper", help="the capacity preset, or a composite of presets (default paper)")
    ap.add_argument("--seconds", type=float, default=1.5, help="timing window per measurement")
    ap.add_argument("--runs", help="the runs folder (results/capacity/runs): the run left, probes on disk free")
    args = ap.parse_args()
    torch.set_num_threads(1)
    section = memcap_params.load("params.yaml", {"scale": {"default": "quick", grid.FAMILY: args.scale}})[grid.FAMILY]
    peak = sgemm_gflops(args.seconds)
    print(f"torch {torch.__version__}, 1 thread: sgemm (float32) {peak:.1f} GFLOP/s")
    total = {"today": 0.0, "new": 0.0, "new_packs": 0.0, "run": 0.0}
    for name in settings.members(section, args.scale):
        for k, h in project(section[name], name, args.seconds, peak, args.runs).items():
            total[k] += h
    print(f"\nall presets, core-hours at one thread a job: today's search (3 seeds) {total['today']:.1f}, "
          f"the new one (>= 5 seeds) {total['new']:.1f} one probe a seed a round (x{total['new'] / max(total['today'], 1e-9):.2f}), "
          f"{total['new_packs']:.1f} in packs of 12 (x{total['new_packs'] / max(total['today'], 1e-9):.2f})"
          + (f"; the run left, given the probes on disk: {total['run']:.1f} (~{total['run'] / 2:.1f} wall-hours "
             "on two cores)" if args.runs else ""))


if __name__ == "__main__":
    main()
