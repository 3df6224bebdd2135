"""MLT's attention layer (Mahdavi et al.) as a capacity subject: C-way labels (mlt/classification) or binary
labels read from two logits (mlt/scalar, where MLT Theorem 1 speaks), on MLT's synthetic task; trained by
memcap.training (memcap.capacity.probes)."""

from __future__ import annotations

from memcap.capacity.subjects import POSITIVE, RATE

NAME = "mlt"
# The MLT trainer's settings a probe takes from the preset's `training` block.
TRAINING_KEYS = ("lr", "batch_size", "epochs", "min_steps", "eval_every", "early_stop")
# What a probe's numbers depend on beside H, d_h and the trainer (pool: the size of each seed's pool).
DATA_KEYS = ("input_dim", "context_size", "num_classes", "context", "pool")
OPTIONAL_DATA_KEYS = {"value_dim": 1}   # d_v: values a head; a probe's key names it only when given

SCHEMA = {
    "description": "T50 by search, the dataset size half the trained models memorize (MLT model and trainer)",
    "required": ["input_dim", "context_size", "num_classes", "context", "pool", "training"],
    "properties": {
        "family": {"const": NAME},
        "input_dim": {"description": "d", **POSITIVE, "default": 8},
        "context_size": {"description": "n (< d for Theorem 1)", **POSITIVE, "default": 4},
        "num_classes": {"description": "C-way labels", "type": "integer", "minimum": 2, "default": 100},
        "context": {"description": "shared or random contexts", "type": "string", "enum": ["shared", "random"],
                    "default": "shared"},
        "pool": {"description": "examples drawn per seed; every probe takes the first T (the largest T probed)",
                 **POSITIVE},
        "value_dim": {"description": "d_v: values a head, the readout seeing H·d_v numbers (the paper's: 1)",
                      **POSITIVE},
        "training": {
            "description": "trainer settings (keys of the MLT defaults) used by every probe",
            "type": "object", "additionalProperties": False, "required": list(TRAINING_KEYS),
            "properties": {"lr": RATE, "batch_size": POSITIVE,
                           "epochs": POSITIVE, "min_steps": POSITIVE, "eval_every": POSITIVE,
                           "early_stop": {"type": "boolean"}}},
    },
}

# A tiny preset of this subject (check_subject trains it in seconds; the search's keys are the schema's defaults).
EXAMPLE = {"input_dim": 8, "context_size": 4, "num_classes": 10, "context": "shared", "pool": 128, "heads": 2,
           "head_dim": 4, "training": {"lr": 1.0e-2, "batch_size": 32, "epochs": 1, "min_steps": 60, "eval_every": 30,
                                       "early_stop": True}}


def value_dim(p: dict) -> int:
    return int(p.get("value_dim", 1))


def probe_settings(p: dict, heads: int, head_dim: int) -> dict:
    given = {k: p[k] for k, default in OPTIONAL_DATA_KEYS.items() if k in p and p[k] != default}
    return {"heads": heads, "head_dim": head_dim, **{k: p[k] for k in DATA_KEYS}, **given,
            **{k: p["training"][k] for k in TRAINING_KEYS}}


def folder_name(p: dict, heads: int, head_dim: int) -> str:
    return f"H{heads}_dh{head_dim}" + (f"_dv{value_dim(p)}" if value_dim(p) != 1 else "")


def params_of(p: dict, heads: int, head_dim: int) -> int:
    from memcap.models.mlt_work import param_count

    return param_count(p["input_dim"], heads, head_dim, p["num_classes"], value_dim(p))


def classes(p: dict) -> int:
    return p["num_classes"]


def context_size(p: dict) -> int:
    return p["context_size"]


def steps(p: dict, T: int, budget: int) -> int:
    """budget x the paper's S = max(floor(500·T/256), min_steps) (epochs and min_steps both scaled)."""
    from memcap.training.schedule import mlt_num_steps

    t = p["training"]
    return mlt_num_steps(T, budget * t["min_steps"], budget * t["epochs"], t["batch_size"])


def with_lr(training: dict, lr: float) -> dict:
    return {**training, "lr": lr}


def train_probes(probes, p, device, on_probe, skip=frozenset(), checkpoint_path=None, checkpoint_every_s=300.0,
                 progress=True, desc="capacity", cuda_graphs=False) -> None:
    from memcap.capacity import probes as mlt_probes

    mlt_probes.train_probes(probes, p, device, on_probe, skip, checkpoint_path, checkpoint_every_s, progress,
                            desc, cuda_graphs)


def model(p: dict, heads: int, head_dim: int, *seeds: int):
    """One model, or with several seeds a pack of them (MLTAttention stacks its models)."""
    from memcap.capacity.probes import Probe, model_of

    return model_of([Probe(heads, head_dim, seed, 1) for seed in seeds], p)


def memory(p: dict, probes: list[tuple[int, int, int, int]]) -> dict[str, int]:
    """A pack of probes ((seed, T, H, d_h) each) (memcap.training.memory)."""
    from memcap.training import memory as mem

    return mem.mlt_job_bytes({**p, "batch_size": p["training"]["batch_size"]}, probes)


def setting(p: dict) -> dict:
    scalar = p["num_classes"] == 2
    dv = f" d_v={value_dim(p)}" if value_dim(p) != 1 else ""      # values a head, where not the paper's 1
    variant = f" [{p['variant']}]" if p.get("variant") else ""
    readout = "mlt/scalar" if scalar else f"mlt/classification C={p['num_classes']}"
    return {"model": NAME, "readout": "scalar" if scalar else "classification", "d_out": 1 if scalar else p["num_classes"],
            "variant": p.get("variant"), "label": readout + dv + variant}


def bound(p: dict) -> str:
    if p["num_classes"] == 2:
        return "MLT Theorem 1 (H(min(n, d_h) − 1) + 1; one logit, d_out = 1 <= d_v)"
    return "neither bound (d_out = C > d_v is outside MLT Theorem 1; MLT's layer is not DPC's transformer)"


def problems(p: dict, key: str) -> list[str]:
    if max([p["head_dim"], *p["head_dim_grid"]]) > p["input_dim"]:
        return [f"{key}.head_dim_grid: a head_dim above input_dim {p['input_dim']}; allowed: head_dim <= input_dim"]
    return []


def gradient_check(p: dict, heads: int, head_dim: int, seed: int) -> None:
    """The hand-written shared-context gradient against autograd's (memcap.training.step: every run does it)."""
    from memcap.capacity.probes import Probe, nested_data
    from memcap.training.step import check_step_gradient

    probe = Probe(heads, head_dim, seed, min(16, p["pool"]))
    check_step_gradient(model(p, heads, head_dim, seed), nested_data([probe], p), True)
