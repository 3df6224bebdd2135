"""Training loop for DPC's look-up-table runs (spec dana.md §2.3–2.5).

Faithful to the original protocol:
  the fixed sample of batch_size·batches trigrams is reshuffled every epoch (DataLoader shuffle=True);
  Adam (default betas/eps, no weight decay) with the effective lr rule, changed once per epoch;
  loss = NLL of softmax(logits) + 1e-12 at the last position (the KL, since the table has 0 entropy);
  per-batch accuracy from the forward pass just before that batch's step; the reported accuracy is
  the mean over the 100 batches before the very last one (`Acc[-101:-1]`).
Added: the exact full-table accuracy (and KL) over all N² contexts after training.

M models (repetitions) train in one batched computation; each has its own seed for its
initialisation and its own shuffling, so its result does not depend on which others share the job.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import torch
from tqdm import tqdm

from memcap import checkpoint as ckpt
from memcap.dpc.schedule import effective_lr
from memcap.models.aot import AoT
from memcap.tasks.lookup import LookupTask


@dataclass
class TrainConfig:
    batch_size: int = 256        # B
    batches: int = 64            # M: the sample has B·M trigrams
    epochs: int = 64
    lr: float = 0.1              # the original's `lr` argument (effective start lr·lr)
    lr_low: float = 5e-3         # the original's `lr_low` argument (effective end ~ lr·lr_low)
    window: int = 100            # accuracy = mean over the `window` batches before the last
    eval_batch_size: int = 8192
    checkpoint_every_s: float = 300.0   # seconds between checkpoints (at epoch ends); < 0: never


@dataclass
class RunResult:
    acc_window: float            # the original's number: mean train-batch accuracy, Acc[-101:-1]
    acc_table: float             # exact: fraction of all N² contexts whose argmax is g(t)
    loss_window: float           # mean train-batch loss over the same window
    kl_table: float              # d_KL(π, T) over the full table (uniform prior on pairs)
    steps: int
    memorized_bits: float = float("nan")   # Σ over the N² contexts of max(0, log2 N − NLL in bits)


def nll(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """The original's loss, per model and sample: −log(softmax(logits)[target] + 1e-12). (M, B)."""
    p = logits.softmax(-1).gather(-1, target[..., None])[..., 0]
    return -(p + 1e-12).log()


@torch.no_grad()
def evaluate_table(model: AoT, task: LookupTask, batch_size: int = 8192, with_bits: bool = False):
    """Exact accuracy and KL over every context (N², each with prior 1/N²), per model: (M,), (M,).

    with_bits: also the memorized bits Σ_t max(0, log2 N − NLL_t in bits), (M,), for bits per parameter.
    """
    ctx, answer = task.all_contexts()
    M = model.num_models
    hits = torch.zeros(M, dtype=torch.float64, device=ctx.device)
    loss, bits = torch.zeros_like(hits), torch.zeros_like(hits)
    log2_n = torch.log2(torch.tensor(float(task.vocab)))
    for start in range(0, len(ctx), batch_size):
        c, y = ctx[start:start + batch_size], answer[start:start + batch_size]
        logits = model(c.expand(M, -1, -1))                                   # (M, b, N)
        y = y.expand(M, -1)
        hits += (logits.argmax(-1) == y).sum(1).double()
        per = nll(logits, y)                                                  # (M, b) nats
        loss += per.sum(1).double()
        bits += (log2_n - per / torch.log(torch.tensor(2.0))).clamp(min=0).sum(1).double()
    if with_bits:
        return hits / len(ctx), loss / len(ctx), bits
    return hits / len(ctx), loss / len(ctx)


def train(model: AoT, task: LookupTask, seeds: list[int], cfg: TrainConfig,
          checkpoint_path: str | None = None, progress: bool = True, desc: str = "train") -> list[RunResult]:
    """Train M models on the task's fixed sample; return one RunResult per model."""
    device = task.samples.device
    M, n = len(seeds), task.samples.shape[0]
    if n != cfg.batch_size * cfg.batches:
        raise ValueError(f"sample has {n} trigrams, expected batch_size*batches = {cfg.batch_size * cfg.batches}")
    total = cfg.epochs * cfg.batches
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=effective_lr(0, cfg.epochs, cfg.lr, cfg.lr_low), fused=True)
    gens = [torch.Generator().manual_seed(int(s) + 1) for s in seeds]         # per-model shuffling
    acc_hist = torch.zeros(M, total, device=device)                           # per-batch accuracy
    loss_hist = torch.zeros(M, total, device=device)
    epoch = 0

    run_config = {"cfg": asdict(cfg), "seeds": seeds, "n": n,
                  "model": [model.vocab, model.dim, model.head_dim, model.heads, model.width, model.layers,
                            model.per_head_proj]}
    saved = ckpt.load(checkpoint_path, run_config)
    if saved is not None:
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["opt"])
        for g, st in zip(gens, saved["gens"]):
            g.set_state(st)
        acc_hist, loss_hist = saved["acc_hist"].to(device), saved["loss_hist"].to(device)
        epoch = saved["epoch"]

    last_save = time.monotonic()
    bar = tqdm(total=total, initial=epoch * cfg.batches, desc=desc, disable=not progress, mininterval=10,
               leave=False)
    B = cfg.batch_size
    while epoch < cfg.epochs:
        for group in opt.param_groups:
            group["lr"] = effective_lr(epoch, cfg.epochs, cfg.lr, cfg.lr_low)
        perm = torch.stack([torch.randperm(n, generator=g) for g in gens]).to(device)   # (M, n)
        batches = task.samples[perm].view(M, cfg.batches, B, 3)              # (M, batches, B, 3)
        for b in range(cfg.batches):
            step = epoch * cfg.batches + b
            tokens = batches[:, b]                                            # (M, B, 3)
            logits = model(tokens[..., :2])                                   # (M, B, N)
            loss = nll(logits, tokens[..., 2])                                # (M, B)
            with torch.no_grad():
                acc_hist[:, step] = (logits.argmax(-1) == tokens[..., 2]).float().mean(1)
                loss_hist[:, step] = loss.mean(1)
            opt.zero_grad(set_to_none=True)
            loss.mean(1).sum().backward()   # sum over models of each model's mean loss
            opt.step()
        epoch += 1
        bar.update(cfg.batches)
        if checkpoint_path and cfg.checkpoint_every_s >= 0 and epoch < cfg.epochs \
                and time.monotonic() - last_save >= cfg.checkpoint_every_s:
            ckpt.save(checkpoint_path, {"model": model.state_dict(), "opt": opt.state_dict(),
                                        "gens": [g.get_state() for g in gens], "epoch": epoch,
                                        "acc_hist": acc_hist.cpu(), "loss_hist": loss_hist.cpu()}, run_config)
            last_save = time.monotonic()
    bar.close()

    lo = max(total - cfg.window - 1, 0)          # Acc[-101:-1]: the window before the last batch
    acc_window = acc_hist[:, lo:total - 1].mean(1)
    loss_window = loss_hist[:, lo:total - 1].mean(1)
    acc_table, kl_table, bits = evaluate_table(model, task, cfg.eval_batch_size, with_bits=True)
    return [RunResult(float(acc_window[m]), float(acc_table[m]), float(loss_window[m]), float(kl_table[m]),
                      total, float(bits[m])) for m in range(M)]
