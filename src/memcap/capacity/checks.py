"""Checks of the `capacity` params section that JSON Schema cannot express (torch-free)."""

from __future__ import annotations

FAMILY = "capacity"
COMPOSITE = "settings"   # memcap.capacity.settings.COMPOSITE (this module stays import-free)


def problems(params: dict) -> list[str]:
    out = []
    section = params.get(FAMILY) or {}
    for scale, p in section.items():
        key = f"{FAMILY}.{scale}"
        if COMPOSITE in p:
            out += [f"{key}.settings: {m!r} is not a search preset of {FAMILY}; allowed: {sorted(n for n, q in section.items() if COMPOSITE not in q)}"
                    for m in p[COMPOSITE] if m not in section or COMPOSITE in section[m]]
            continue
        if p.get("family") == "dpc" and p["pool"] > p["vocab"] ** 2:
            out.append(f"{key}.pool: {p['pool']} above the {p['vocab'] ** 2} pairs of N = {p['vocab']}; allowed: pool <= N²")
        if p["t_min"] > p["pool"]:
            out.append(f"{key}.t_min: {p['t_min']} above pool {p['pool']}; allowed: t_min <= pool")
        if max([p["head_dim"], *p["head_dim_grid"]]) > p["input_dim"]:
            out.append(f"{key}.head_dim_grid: a head_dim above input_dim {p['input_dim']}; allowed: head_dim <= input_dim")
        archs = [[H, p["head_dim"]] for H in p["heads_grid"]] + [[p["heads"], dh] for dh in p["head_dim_grid"]]
        out += [f"{key}.budget_not_run: {list(a)} is not an architecture of the preset; allowed: its (H, d_h) grid"
                for group in p.get("budget_not_run", {}).values() for a in group if list(a) not in archs]
        if p["threshold"] > 0 and len(p["seeds"]) < 2:
            out.append(f"{key}.seeds: {p['seeds']}: T50's interval needs at least 2 seeds")
        if p.get("tuned_lr") and p["training"]["lr"] not in p["tuned_lr"]:
            out.append(f"{key}.tuned_lr: {p['tuned_lr']} lacks the preset's own lr {p['training']['lr']}; "
                       "allowed: a list that holds it (the fixed-lr capacity is one of the tuned one's)")
    scale = params.get("scale")
    active = scale.get(FAMILY, scale.get("default")) if isinstance(scale, dict) else scale
    return out + (memory_problems(section, active) if active in section and not out else [])


PACK = 12   # the most probes a round packs (memcap.capacity.rounds): the estimate's pack


def memory_problems(section: dict, active: str) -> list[str]:
    """Each MLT architecture of the active preset (or its members) as a round's largest pack, every probe at
    the pool's size, against the machine's memory (memcap.training.memory); DPC's models are a few
    thousand parameters."""
    from memcap.training import memory

    out = []
    for name in section[active].get(COMPOSITE, [active]):
        p = section[name]
        if p.get("family") == "dpc":
            continue
        s = {**p, "batch_size": p["training"]["batch_size"]}
        archs = [(H, p["head_dim"]) for H in p["heads_grid"]] + [(p["heads"], dh) for dh in p["head_dim_grid"]]
        for H, dh in dict.fromkeys(archs):
            seeds = p["seeds"][:PACK]
            said = memory.problem(f"{FAMILY}.{name} (H={H}, d_h={dh}, {len(seeds)} probes at T={p['pool']})",
                                  memory.mlt_job_bytes(s, [(seed, p["pool"], H, dh) for seed in seeds]))
            out += [said] if said else []
    return out


def slow_jobs(params: dict) -> list[str]:
    """The active preset's search jobs (one a member preset) whose first round alone (every architecture's
    min_seeds probes at its start size, memcap.training.duration) is above the runtime limit."""
    from memcap import params as memcap_params
    from memcap.capacity import grid, search
    from memcap.training import duration

    section, active = params[FAMILY], memcap_params.scale_of(params, FAMILY)
    sizes = memcap_params.job_sizes(params, "train", FAMILY)
    out = []
    for name in section[active].get(COMPOSITE, [active]):
        p = section[name]
        if p.get("family") == "dpc":
            continue   # a few thousand parameters a model: minutes
        s = {**p, **p["training"]}
        archs = dict.fromkeys([(H, p["head_dim"]) for H in p["heads_grid"]] + [(p["heads"], dh) for dh in p["head_dim_grid"]])
        flops = sum(search.min_seeds(p) * duration.mlt_model_flops(s, H, dh, p["context_size"], grid.start_size(p, H, dh))
                    for H, dh in archs)
        said = duration.problem(f"{FAMILY}.{name} (its first round: {len(archs)} architectures x "
                                f"{search.min_seeds(p)} probes)", flops, sizes, "params.yaml resources, train runtime")
        out += [said] if said else []
    return out
