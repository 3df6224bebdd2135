"""Checks of the `capacity` params section that JSON Schema cannot express (torch-free)."""

from __future__ import annotations

FAMILY = "capacity"


def problems(params: dict) -> list[str]:
    out = []
    for scale, p in (params.get(FAMILY) or {}).items():
        key = f"{FAMILY}.{scale}"
        if p["t_min"] > p["pool"]:
            out.append(f"{key}.t_min: {p['t_min']} above pool {p['pool']}; allowed: t_min <= pool")
        if max([p["head_dim"], *p["head_dim_grid"]]) > p["input_dim"]:
            out.append(f"{key}.head_dim_grid: a head_dim above input_dim {p['input_dim']}; allowed: head_dim <= input_dim")
        if p["threshold"] > 0 and len(p["seeds"]) < 2:
            out.append(f"{key}.seeds: {p['seeds']}: T*'s interval needs at least 2 seeds")
    return out
