"""DPC's attention-plus-MLP arm (Dana et al. §5.2, Exp 5) as a capacity subject: one head with d_h = d and an
MLP of width W = 2d(H − 1) with its own skip, on DPC's random associations (memcap.capacity.associations,
DPC's loop). H is the attention arm's head count it is paired with: at each H the two hold the same
parameters up to W's biases, so the rows sit beside attention-only rows at equal parameter count."""

from __future__ import annotations

from memcap.capacity.subjects import dpc

NAME = "dpc_mlp"
SCHEMA = {**dpc.SCHEMA, "description": "DPC's one-head transformer with an MLP arm W = 2d(H − 1) on T random associations",
          "properties": {**dpc.SCHEMA["properties"], "family": {"const": NAME}}}
EXAMPLE = {**dpc.EXAMPLE, "family": NAME, "head_dim": 4, "head_dim_grid": [4]}


def width(p: dict, heads: int) -> int:
    """The MLP's width paired with H heads of d_h = d (Exp 5: W = 2d(H − 1))."""
    return 2 * p["input_dim"] * (heads - 1)


def probe_settings(p: dict, heads: int, head_dim: int) -> dict:
    return {**dpc.probe_settings(p, heads, head_dim), "family": NAME, "width": width(p, heads)}


def folder_name(p: dict, heads: int, head_dim: int) -> str:
    return f"dpc_mlp_N{p['vocab']}_d{p['input_dim']}_W{width(p, heads)}"


def params_of(p: dict, heads: int, head_dim: int) -> int:
    from memcap.models.aot_count import param_count

    return param_count(p["vocab"], p["input_dim"], p["input_dim"], 1, width=width(p, heads))


classes, context_size, steps, with_lr, memory = dpc.classes, dpc.context_size, dpc.steps, dpc.with_lr, dpc.memory
with_steps = dpc.with_steps


def model(p: dict, heads: int, head_dim: int, *seeds: int):
    from memcap.models.aot import AoT

    return AoT(list(seeds), vocab=p["vocab"], dim=p["input_dim"], head_dim=p["input_dim"], heads=1,
               width=width(p, heads))


train_probes = dpc.trainer(lambda p, H, dh, *seeds: model(p, H, dh, *seeds))


def setting(p: dict) -> dict:
    variant = f" [{p['variant']}]" if p.get("variant") else ""
    return {"model": NAME, "readout": "associations", "d_out": p["vocab"], "variant": p.get("variant"),
            "label": f"dpc/associations N={p['vocab']}, MLP arm{variant}"}


def bound(p: dict) -> None:
    return None   # Corollary 1 counts attention heads; the arm's capacity is the paper's Exp 5 finding


def problems(p: dict, key: str) -> list[str]:
    out = [f"{key}.head_dim_grid: {p['head_dim_grid']}; allowed: [{p['input_dim']}] (the arm's one head has d_h = d)"
           for _ in [0] if list(p["head_dim_grid"]) != [p["input_dim"]] or p["head_dim"] != p["input_dim"]]
    if p["pool"] > p["vocab"] ** 2:
        out.append(f"{key}.pool: {p['pool']} above the {p['vocab'] ** 2} pairs of N = {p['vocab']}; allowed: pool <= N²")
    return out
