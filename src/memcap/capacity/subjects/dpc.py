"""DPC's attention-only transformer (Dana et al.) as a capacity subject: T random associations of token pairs,
where Corollary 1's count H·d_h + d speaks; its model, initialisation and loop (memcap.capacity.associations)."""

from __future__ import annotations

from memcap.capacity.subjects import POSITIVE, RATE

NAME = "dpc"
TRAINING_KEYS = ("batch_size", "batches", "epochs", "lr", "lr_low")   # the DPC trainer's settings
DATA_KEYS = ("vocab", "input_dim", "pool")
CONTEXT = 2   # S: a context is a pair of tokens (t_1, t_2)

SCHEMA = {
    "description": "DPC's attention-only transformer (its model, initialisation and loop) on T random associations",
    "required": ["family", "vocab", "input_dim", "per_head_proj", "pool", "training"],
    "properties": {
        "family": {"const": NAME},
        "vocab": {"description": "N: tokens; an association is a pair of tokens and a target token",
                  "type": "integer", "minimum": 2, "maximum": 4096},
        "input_dim": {"description": "d", **POSITIVE},
        "per_head_proj": {"description": "rows with d_h < d: the paper's per-head d -> d_h -> d maps (false: the "
                                         "original code's one shared pair)", "type": "boolean"},
        "pool": {"description": "pairs in each seed's order (at most N²); every probe takes the first T", **POSITIVE},
        "training": {
            "description": "DPC trainer settings (a group of the original notebook) used by every probe",
            "type": "object", "additionalProperties": False, "required": list(TRAINING_KEYS),
            "properties": {"batch_size": POSITIVE, "batches": POSITIVE, "epochs": POSITIVE, "lr": RATE,
                           "lr_low": RATE}},
    },
}

# A tiny preset of this subject (check_subject trains it in seconds).
EXAMPLE = {"family": NAME, "vocab": 8, "input_dim": 4, "per_head_proj": True, "pool": 64, "heads": 2, "head_dim": 2,
           "training": {"batch_size": 32, "batches": 4, "epochs": 6, "lr": 0.1, "lr_low": 5.0e-3}}


def per_head_proj(p: dict, head_dim: int) -> bool:
    """Rows with d_h < d use the paper's per-head d -> d_h -> d maps (Corollary 1's model, rank up to
    H·d_h); the original code's one shared pair would cap the attention's rank at d_h whatever H is."""
    return bool(p.get("per_head_proj", True)) and head_dim < p["input_dim"]


def probe_settings(p: dict, heads: int, head_dim: int) -> dict:
    return {"family": NAME, "heads": heads, "head_dim": head_dim, **{k: p[k] for k in DATA_KEYS},
            "per_head_proj": per_head_proj(p, head_dim), **{k: p["training"][k] for k in TRAINING_KEYS}}


def folder_name(p: dict, heads: int, head_dim: int) -> str:
    return f"dpc_N{p['vocab']}_d{p['input_dim']}_H{heads}_dh{head_dim}"


def params_of(p: dict, heads: int, head_dim: int) -> int:
    from memcap.models.aot_count import param_count

    return param_count(p["vocab"], p["input_dim"], head_dim, heads, per_head_proj=per_head_proj(p, head_dim))


def classes(p: dict) -> int:
    return p["vocab"]   # a target token


def context_size(p: dict) -> int:
    return CONTEXT


def steps(p: dict, T: int, budget: int) -> int:
    t = p["training"]
    return budget * t["epochs"] * t["batches"]


def with_steps(p: dict, n: int) -> dict:
    """The preset with every probe trained n steps at budget 1 (one epoch of n batches: a benchmark's run)."""
    return {**p, "training": {**p["training"], "epochs": 1, "batches": n}}


def with_lr(training: dict, lr: float) -> dict:
    """At another lr, lr_low scaled alike (DPC's effective-lr rule keeps their ratio)."""
    return {**training, "lr": lr, "lr_low": float(f"{training['lr_low'] * lr / training['lr']:.6g}")}


def trainer(build):
    """train_probes for a model of DPC's family on its associations, through DPC's loop
    (memcap.capacity.associations): build(p, H, d_h, *seeds) is a pack's model."""
    def train_probes(probes, p, device, on_probe, skip=frozenset(), checkpoint_path=None, checkpoint_every_s=300.0,
                     progress=True, desc="capacity", cuda_graphs=False) -> None:
        if cuda_graphs:
            raise ValueError("capacity: CUDA graphs replay the MLT step; a DPC preset steps eagerly")
        from memcap.capacity import associations

        associations.train_probes(probes, p, lambda seeds, H, dh: build(p, H, dh, *seeds), device, on_probe, skip,
                                  checkpoint_path, checkpoint_every_s, progress, desc)
    return train_probes


train_probes = trainer(lambda p, H, dh, *seeds: model(p, H, dh, *seeds))


def model(p: dict, heads: int, head_dim: int, *seeds: int):
    """One model, or with several seeds a pack of them (AoT stacks its models)."""
    from memcap.models.aot import AoT

    return AoT(list(seeds), vocab=p["vocab"], dim=p["input_dim"], head_dim=head_dim, heads=heads,
               per_head_proj=per_head_proj(p, head_dim))


def memory(p: dict, probes: list) -> None:
    return None   # a few thousand parameters a model


def setting(p: dict) -> dict:
    variant = f" [{p['variant']}]" if p.get("variant") else ""
    return {"model": NAME, "readout": "associations", "d_out": p["vocab"], "variant": p.get("variant"),
            "label": f"dpc/associations N={p['vocab']}{variant}"}


def bound(p: dict) -> str:
    return "DPC Corollary 1 (H·d_h + d)"


def problems(p: dict, key: str) -> list[str]:
    out = []
    if p["pool"] > p["vocab"] ** 2:
        out.append(f"{key}.pool: {p['pool']} above the {p['vocab'] ** 2} pairs of N = {p['vocab']}; allowed: pool <= N²")
    if max([p["head_dim"], *p["head_dim_grid"]]) > p["input_dim"]:
        out.append(f"{key}.head_dim_grid: a head_dim above input_dim {p['input_dim']}; allowed: head_dim <= input_dim")
    return out
