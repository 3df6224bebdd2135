"""Checks of the `theory` params section that JSON Schema cannot express (torch-free)."""

from __future__ import annotations

from memcap.theory.grid import FAMILY, construct_cases


def problems(params: dict) -> list[str]:
    out = []
    for scale, p in (params.get(FAMILY) or {}).items():
        if not construct_cases(p):
            out.append(f"{FAMILY}.{scale}.construct: no grid point with context_size < input_dim "
                       f"and head_dim <= input_dim (Theorem 1 needs both)")
        gd = p["gradient_descent"]
        if gd["context_size"] >= gd["input_dim"]:
            out.append(f"{FAMILY}.{scale}.gradient_descent.context_size: {gd['context_size']} >= input_dim "
                       f"{gd['input_dim']}; allowed: context_size < input_dim (the construction needs n < d)")
        b2 = p["bounds"]["prop2"]
        if b2["context_size"] >= b2["input_dim"]:
            out.append(f"{FAMILY}.{scale}.bounds.prop2.context_size: {b2['context_size']} >= input_dim "
                       f"{b2['input_dim']}; allowed: context_size < input_dim (constructed weights need n < d)")
        if (gd["head_dim"] or gd["input_dim"]) > gd["input_dim"]:
            out.append(f"{FAMILY}.{scale}.gradient_descent.head_dim: > input_dim; allowed: head_dim <= input_dim")
    return out
