"""A plain PyTorch block as a capacity subject: `torch.nn.MultiheadAttention` (H heads of d_h, its output
projection), optionally followed by an MLP with a residual and a LayerNorm, on MLT's classification task
(the same pools as MLT's layer: memcap.capacity.probes.pool). Trained by autograd; a round's probes are
packed with torch.func (stack_module_state, vmap, functional_call), PyTorch's model-ensembling recipe, so
this module is also the pattern for a subject of any `nn.Module` (docs/own-model.md).

The block reads a query x and a context of n tokens (one per seed: MLT's shared context): each is
mapped to the attention's width E = H·d_h (a linear map and a learned position), the query attends to
itself and the context, and a linear readout gives C logits. Every probe trains `steps` x budget Adam
steps at a constant lr on batches its own generator draws from its T examples; memorized: its
train accuracy at the end.
"""

from __future__ import annotations

from memcap.capacity.subjects import POSITIVE, RATE

NAME = "torch_block"
TRAINING_KEYS = ("lr", "batch_size", "steps")
DATA_KEYS = ("input_dim", "context_size", "num_classes", "pool", "mlp_width")

SCHEMA = {
    "description": "torch.nn.MultiheadAttention (+ an optional MLP) on MLT's classification task, shared context",
    "required": ["family", "input_dim", "context_size", "num_classes", "pool", "mlp_width", "training"],
    "properties": {
        "family": {"const": NAME},
        "input_dim": {"description": "d: a token's features", **POSITIVE},
        "context_size": {"description": "n: context tokens", **POSITIVE},
        "num_classes": {"description": "C-way labels", "type": "integer", "minimum": 2},
        "pool": {"description": "examples drawn per seed; every probe takes the first T", **POSITIVE},
        "mlp_width": {"description": "the MLP's hidden width after the attention (0: attention alone)",
                      "type": "integer", "minimum": 0, "maximum": 100000},
        "training": {"type": "object", "additionalProperties": False, "required": list(TRAINING_KEYS),
                     "properties": {"lr": RATE, "batch_size": POSITIVE,
                                    "steps": POSITIVE}},
    },
}
EXAMPLE = {"family": NAME, "input_dim": 8, "context_size": 4, "num_classes": 10, "pool": 64, "mlp_width": 0,
           "heads": 2, "head_dim": 2, "training": {"lr": 1.0e-2, "batch_size": 16, "steps": 60}}
INIT_STREAM = 2   # a probe's initialisation: SeedSequence([seed, INIT_STREAM]); its batches: [seed, BATCH_STREAM]
BATCH_STREAM = 3


def probe_settings(p: dict, heads: int, head_dim: int) -> dict:
    return {"family": NAME, "heads": heads, "head_dim": head_dim, **{k: p[k] for k in DATA_KEYS},
            **{k: p["training"][k] for k in TRAINING_KEYS}}


def folder_name(p: dict, heads: int, head_dim: int) -> str:
    return f"torch_block_d{p['input_dim']}_mlp{p['mlp_width']}_H{heads}_dh{head_dim}"


def params_of(p: dict, heads: int, head_dim: int) -> int:
    d, n, C, W, E = p["input_dim"], p["context_size"], p["num_classes"], p["mlp_width"], heads * head_dim
    block = (d + 1) * E + (n + 1) * E + 4 * E * E + 4 * E + (E + 1) * C     # embedding, positions, attention, readout
    return block + (2 * E + (E + 1) * W + (W + 1) * E if W else 0)           # LayerNorm and the MLP


def classes(p: dict) -> int:
    return p["num_classes"]


def context_size(p: dict) -> int:
    return p["context_size"]


def steps(p: dict, T: int, budget: int) -> int:
    return budget * p["training"]["steps"]


def with_lr(training: dict, lr: float) -> dict:
    return {**training, "lr": lr}


def with_steps(p: dict, n: int) -> dict:
    """The preset with every probe trained n steps at budget 1 (benchmarks/capacity_cost.py times a pack so)."""
    return {**p, "training": {**p["training"], "steps": n}}


def _seed(seed: int, stream: int) -> int:
    import numpy as np

    return int(np.random.SeedSequence([int(seed), stream]).generate_state(1)[0])


_BLOCK: list[type] = []   # the block's class, defined on first use (this module imports torch only then)


def block_class() -> type:
    """The block as an nn.Module class (one class for every probe: stack_module_state needs that)."""
    if not _BLOCK:
        import torch
        from torch import nn

        class Block(nn.Module):
            def __init__(self, p: dict, heads: int, head_dim: int):
                super().__init__()
                E, W = heads * head_dim, p["mlp_width"]
                self.embed = nn.Linear(p["input_dim"], E)
                self.position = nn.Parameter(torch.randn(p["context_size"] + 1, E) * 0.02)
                self.attention = nn.MultiheadAttention(E, heads, batch_first=True)
                self.norm = nn.LayerNorm(E) if W else None
                self.mlp = nn.Sequential(nn.Linear(E, W), nn.GELU(), nn.Linear(W, E)) if W else None
                self.readout = nn.Linear(E, p["num_classes"])

            def forward(self, query, context):          # query (B, d), context (n, d) shared by the batch
                tokens = torch.cat([query[:, None], context.expand(len(query), *context.shape)], 1)
                x = self.embed(tokens) + self.position
                out = self.attention(x[:, :1], x, x, need_weights=False)[0][:, 0]
                if self.mlp is not None:
                    out = out + self.mlp(self.norm(out))
                return self.readout(out)

        _BLOCK.append(Block)
    return _BLOCK[0]


def model(p: dict, heads: int, head_dim: int, seed: int):
    """One probe's block, initialised from its seed alone (torch's global generator is left as it was)."""
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(_seed(seed, INIT_STREAM))
        return block_class()(p, heads, head_dim)


def pack_data(probes: list, p: dict):
    """The probes' examples padded to the largest T: queries (M, T, d), labels (M, T), contexts (M, n, d);
    each probe's first T rows of its seed's MLT pool (memcap.capacity.probes.pool, a shared context)."""
    import torch
    from torch.nn.functional import pad

    from memcap.capacity.probes import pool

    pools = {s: pool({**p, "context": "shared"}, s) for s in dict.fromkeys(pr.seed for pr in probes)}
    top = max(pr.T for pr in probes)
    queries = torch.stack([pad(pools[pr.seed].query_rows[:pr.T], (0, 0, 0, top - pr.T)) for pr in probes])
    labels = torch.stack([pad(pools[pr.seed].label_rows[:pr.T], (0, top - pr.T)) for pr in probes])
    return queries, labels, torch.stack([pools[pr.seed].context_rows[0] for pr in probes])


def train_probes(probes, p, device, on_probe, skip=frozenset(), checkpoint_path=None, checkpoint_every_s=300.0,
                 progress=True, desc="capacity", cuda_graphs=False) -> None:
    """One pack: every probe's block stacked (torch.func.stack_module_state) and stepped by one vmap'd
    gradient and one Adam over the stacked parameters (elementwise: each model's update is its own)."""
    import copy
    import math
    import time

    import torch
    from torch.func import functional_call, grad, stack_module_state, vmap

    if cuda_graphs:
        raise ValueError("capacity: CUDA graphs replay the MLT step; a torch_block preset steps eagerly")
    todo = [pr for pr in probes if pr not in skip]
    if not todo:
        return
    if len({(pr.heads, pr.head_dim, pr.budget) for pr in todo}) != 1:
        raise ValueError("a torch_block pack trains one architecture at one budget")
    start = time.perf_counter()
    pr0, M, B = todo[0], len(todo), p["training"]["batch_size"]
    modules = [model(p, pr.heads, pr.head_dim, pr.seed) for pr in todo]
    params, buffers = stack_module_state(modules)
    params = {k: v.to(device).detach().requires_grad_() for k, v in params.items()}
    base = copy.deepcopy(modules[0]).to("meta")
    queries, labels, contexts = (x.to(device) for x in pack_data(todo, p))
    Tmax, sizes = queries.shape[1], torch.tensor([pr.T for pr in todo], device=device)

    def loss(w, q, c, y):
        return torch.nn.functional.cross_entropy(functional_call(base, (w, buffers), (q, c)), y)

    gradient = vmap(grad(loss))
    opt = torch.optim.Adam(list(params.values()), lr=p["training"]["lr"])
    gens = [torch.Generator().manual_seed(_seed(pr.seed, BATCH_STREAM)) for pr in todo]
    n = steps(p, pr0.T, pr0.budget)
    for _ in range(n):
        idx = torch.stack([torch.randint(pr.T, (B,), generator=g) for pr, g in zip(todo, gens)]).to(device)
        q, y = queries.gather(1, idx[..., None].expand(-1, -1, queries.shape[-1])), labels.gather(1, idx)
        grads = gradient(params, q, contexts, y)
        for k, w in params.items():
            w.grad = grads[k]
        opt.step()
    with torch.no_grad():
        logits = vmap(lambda w, q, c: functional_call(base, (w, buffers), (q, c)))(params, queries, contexts)
        nll = torch.nn.functional.cross_entropy(logits.transpose(1, 2), labels, reduction="none")   # (M, Tmax)
        hits = (logits.argmax(-1) == labels).double()
    mask = torch.arange(Tmax, device=device)[None] < sizes[:, None]
    seconds = time.perf_counter() - start
    for m, pr in enumerate(todo):
        acc = float(hits[m][mask[m]].mean())
        bits = (math.log2(p["num_classes"]) - nll[m][mask[m]].double() / math.log(2)).clamp(min=0).sum()
        on_probe(pr, {"mem_acc": acc, "mem_loss": float(nll[m][mask[m]].double().mean()), "memorized_bits": float(bits),
                      "best_step": n, "steps_run": n, "steps_planned": n, "early_stopped": False,
                      "wall_time_s": seconds, "segments": 1, "device": str(device), "models_in_round": M})


def memory(p: dict, probes: list) -> None:
    return None   # a pack's data are MLT's shared-context pools; its models at most a few MB each


def setting(p: dict) -> dict:
    arm = f" + MLP {p['mlp_width']}" if p["mlp_width"] else ""
    variant = f" [{p['variant']}]" if p.get("variant") else ""
    return {"model": NAME, "readout": "classification", "d_out": p["num_classes"], "variant": p.get("variant"),
            "label": f"torch block{arm} C={p['num_classes']}{variant}"}


def bound(p: dict) -> None:
    return None   # neither paper's theorem is about this block


def problems(p: dict, key: str) -> list[str]:
    return []
