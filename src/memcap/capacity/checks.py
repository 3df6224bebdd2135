"""Checks of the `capacity` params section that JSON Schema cannot express (torch-free)."""

from __future__ import annotations

FAMILY = "capacity"


def problems(params: dict) -> list[str]:
    out = []
    for scale, p in (params.get(FAMILY) or {}).items():
        key = f"{FAMILY}.{scale}"
        if not p["t_min"] <= p["start"] <= p["t_max"]:
            out.append(f"{key}.start: {p['start']} outside [t_min, t_max] = [{p['t_min']}, {p['t_max']}]")
        if max([p["head_dim"], *p["head_dim_grid"]]) > p["input_dim"]:
            out.append(f"{key}.head_dim_grid: a head_dim above input_dim {p['input_dim']}; allowed: head_dim <= input_dim")
    return out
