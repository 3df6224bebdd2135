"""CUDA graphs for a pack's step (memcap.training.graphed), checked and timed on a GPU.

For a shared-context pack (Fig 2c's: 72 models, d_h 10-64 padded to 64) and a random-context one
(Fig 4 left's H = 1-10 at its smallest T), from the same start:
  1. the same numbers: N steps eager and N steps replayed, both reading the learning rate from device
     tensors, over several epochs (short last batches included): parameters and Adam's moments
     compared bit for bit, and against the eager float-lr step (today's trainer), the largest relative
     difference (the tensor lr is float32);
  2. the speed: steps/s eager (today's train_step) and replayed, the GPU's own timing of each.
Prints one verdict per pack; a pack trusts graphs (`train(..., cuda_graphs=True)`) only after this
says SAME. Needs a CUDA device (about a minute on an H200).

    python benchmarks/graph_check.py [--steps 600] [--seconds 10]
"""

from __future__ import annotations

import argparse
import time

import torch

from memcap import params as memcap_params
from memcap.mlt_synthetic import grid
from memcap.runtime import enable_determinism
from memcap.stacked_adam import StackedAdam
from memcap.training.batches import BatchStream
from memcap.training.graphed import GraphedStep
from memcap.training.pack import Job, build
from memcap.training.schedule import mlt_num_steps, warmup_cosine
from memcap.training.step import step_kernels, train_step


def packs() -> dict[str, list[Job]]:
    """Fig 2c's whole pack (seeds 0, 1), and Fig 4 left's H = 1, 5, 10 at its smallest T."""
    sweeps = grid.resolve(memcap_params.load("params.yaml", {})["mlt_synthetic"], "paper")
    dh, heads = ({**sweeps[k], "seeds": [0, 1]} for k in ("scale_dh_shared", "scale_head"))
    return {"scale_dh_shared": [Job(dh, v, T) for v in dh["values"] for T in dh["dataset_sizes"]],
            "scale_head": [Job(heads, v, heads["dataset_sizes"][0]) for v in (1, 5, 10)]}


def state(jobs: list[Job], device, lr_tensors: bool):
    pack, s = build(jobs, device), jobs[0].settings
    totals = [mlt_num_steps(T, s["min_steps"], s["epochs"], s["batch_size"]) for T in pack.data.sizes]
    opt = StackedAdam(list(pack.model.parameters()), s["lr"], totals, warmup_cosine)
    if lr_tensors:
        opt.use_lr_tensors()
    batches = BatchStream(pack.seeds, list(pack.data.sizes), s["batch_size"], device)
    return pack, opt, batches


def tensors(pack, opt) -> list[torch.Tensor]:
    return [p.detach() for p in pack.model.parameters()] + opt.exp_avg + opt.exp_avg_sq


def check(jobs: list[Job], steps: int, seconds: float, device) -> None:
    classification = jobs[0].settings["task"] == "classification"
    # 1. numbers: eager with device lrs, replayed, and today's eager (float lr)
    eager, opt_e, b_e = state(jobs, device, lr_tensors=True)
    for _ in range(steps):
        opt_e.write_lrs()
        step_kernels(eager.model, eager.data, *b_e.next(), opt_e, classification)
        opt_e.advance()
    graphed, opt_g, b_g = state(jobs, device, lr_tensors=True)
    step = GraphedStep(lambda i, v, r: step_kernels(graphed.model, graphed.data, i, v, r, opt_g, classification),
                       opt_g, device)
    for _ in range(steps):
        step(b_g)
    today, opt_t, b_t = state(jobs, device, lr_tensors=False)
    for _ in range(steps):
        train_step(today.model, today.data, b_t, opt_t, classification)
    torch.cuda.synchronize()
    same = all(torch.equal(a, b) for a, b in zip(tensors(eager, opt_e), tensors(graphed, opt_g)))
    rel = max(((a - b).abs().max() / b.abs().max().clamp(min=1e-30)).item()
              for a, b in zip(tensors(graphed, opt_g), tensors(today, opt_t)))
    print(f"  {steps} steps, {len(step.graphs)} graphs ({sorted(step.graphs)}): replayed vs eager "
          f"(device lr) {'SAME bit for bit' if same else 'DIFFERENT'}; vs today's eager step (float lr) "
          f"max relative difference {rel:.2e}")

    # 2. speed
    def rate(fn) -> float:
        for _ in range(20):
            fn()
        torch.cuda.synchronize()
        t, n = time.perf_counter(), 0
        while time.perf_counter() - t < seconds:
            fn()
            n += 1
        torch.cuda.synchronize()
        return n / (time.perf_counter() - t)
    r_eager = rate(lambda: train_step(today.model, today.data, b_t, opt_t, classification))
    r_graph = rate(lambda: step(b_g))
    models = today.model.num_models
    print(f"  eager {r_eager:.0f} steps/s ({r_eager * models:.0f} model-steps/s), replayed {r_graph:.0f} "
          f"steps/s ({r_graph * models:.0f}): x{r_graph / r_eager:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--seconds", type=float, default=10.0)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("graph_check: needs a CUDA device (CUDA graphs)")
    enable_determinism()
    device = torch.device("cuda")
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}")
    for name, jobs in packs().items():
        print(f"{name}: {len(jobs)} jobs, {sum(len(j.seeds) for j in jobs)} models")
        check(jobs, args.steps, args.seconds, device)


if __name__ == "__main__":
    main()
