"""Checks of the `theory` params section that JSON Schema cannot express (torch-free)."""

from __future__ import annotations

from memcap.scales import active_preset
from memcap.theory.grid import FAMILY, construct_cases, gd_cases, gd_settings


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
    active = active_preset(params, FAMILY)
    return out + (memory_problems(params[FAMILY][active], active) if active in (params.get(FAMILY) or {}) and not out else [])


def memory_problems(p: dict, active: str) -> list[str]:
    """Each gradient-descent case (every seed at once, as it trains) against the machine's memory."""
    from memcap.training import memory

    s, seeds = gd_settings(p["gradient_descent"]), p["seeds"]
    said = [memory.problem(f"{FAMILY}.{active}.gradient_descent (H={c['heads']}, T={c['dataset_size']})",
                           memory.mlt_job_bytes(s, [(seed, c["dataset_size"], c["heads"], c["head_dim"]) for seed in seeds]))
            for c in gd_cases(p)]
    return [line for line in said if line]


def slow_jobs(params: dict) -> list[str]:
    """The gradient-descent job (every case, one after another) when its arithmetic alone is above its
    runtime limit (memcap.training.duration)."""
    from memcap import params as memcap_params
    from memcap.training import duration

    active = memcap_params.scale_of(params, FAMILY)
    p = params[FAMILY][active]
    s = gd_settings(p["gradient_descent"])
    flops = sum(len(p["seeds"]) * duration.mlt_model_flops(s, c["heads"], c["head_dim"], c["context_size"], c["dataset_size"])
                for c in gd_cases(p))
    said = duration.problem(f"{FAMILY}.{active}.gradient_descent ({len(gd_cases(p))} cases)", flops,
                            memcap_params.job_sizes(params, "train", FAMILY), "params.yaml resources, train runtime")
    return [said] if said else []
