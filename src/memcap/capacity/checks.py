"""Checks of the `capacity` params section that JSON Schema cannot express (torch-free)."""

from __future__ import annotations

from memcap.capacity import subjects   # torch-free to import
from memcap.capacity.settings import COMPOSITE   # {settings: [names]}: a composite preset
from memcap.scales import active_preset

FAMILY = "capacity"


def problems(params: dict) -> list[str]:
    out = []
    section = params.get(FAMILY) or {}
    active = active_preset(params, FAMILY)
    read = {active, *section.get(active, {}).get(COMPOSITE, [])}   # the presets the active one reads
    for scale, p in section.items():
        key = f"{FAMILY}.{scale}"
        if COMPOSITE in p:
            out += [f"{key}.settings: {m!r} is not a search preset of {FAMILY}; allowed: {sorted(n for n, q in section.items() if COMPOSITE not in q)}"
                    for m in p[COMPOSITE] if m not in section or COMPOSITE in section[m]]
            continue
        out += subjects.of(p).problems(p, key)
        if p["t_min"] > p["pool"]:
            out.append(f"{key}.t_min: {p['t_min']} above pool {p['pool']}; allowed: t_min <= pool")
        archs = [[H, p["head_dim"]] for H in p["heads_grid"]] + [[p["heads"], dh] for dh in p["head_dim_grid"]]
        # checked where the active preset reads it: trimming a base's grid (quick's, for a test) must not
        # break a variant nothing runs
        out += [f"{key}.budget_not_run: {list(a)} is not an architecture of the preset; allowed: its (H, d_h) grid"
                for group in p.get("budget_not_run", {}).values() for a in group if list(a) not in archs
                and scale in read]
        if p["threshold"] > 0 and len(p["seeds"]) < 2:
            out.append(f"{key}.seeds: {p['seeds']}: T50's interval needs at least 2 seeds")
        if p.get("tuned_lr") and p["training"]["lr"] not in p["tuned_lr"]:
            out.append(f"{key}.tuned_lr: {p['tuned_lr']} lacks the preset's own lr {p['training']['lr']}; "
                       "allowed: a list that holds it (the fixed-lr capacity is one of the tuned one's)")
    return out + (memory_problems(section, active) if active in section and not out else [])


PACK = 12   # the most probes a round packs (memcap.capacity.rounds): the estimate's pack


def memory_problems(section: dict, active: str) -> list[str]:
    """Each architecture of the active preset (or its members) as a round's largest pack, every probe at
    the pool's size, against the machine's memory (its subject's estimate; None: a small model)."""
    from memcap.training import memory

    out = []
    for name in section[active].get(COMPOSITE, [active]):
        p = section[name]
        archs = [(H, p["head_dim"]) for H in p["heads_grid"]] + [(p["heads"], dh) for dh in p["head_dim_grid"]]
        for H, dh in dict.fromkeys(archs):
            seeds = p["seeds"][:PACK]
            parts = subjects.of(p).memory(p, [(seed, p["pool"], H, dh) for seed in seeds])
            said = parts and memory.problem(f"{FAMILY}.{name} (H={H}, d_h={dh}, {len(seeds)} probes at T={p['pool']})", parts)
            out += [said] if said else []
    return out


def schema_defs() -> dict:
    """The capacity schema's subject part (memcap.params merges it into workflow/schemas/capacity.schema.yaml's
    $defs): `subject` picks each registered subject's SCHEMA by the preset's `family` (left out: mlt)."""
    found = subjects.registered()
    defs = {f"subject_{name}": {"type": "object", **s.SCHEMA} for name, s in found.items()}
    picks = [{"if": {"properties": {"family": {"const": name}}, "required": ["family"]} if name != subjects.DEFAULT
              else {"anyOf": [{"not": {"required": ["family"]}}, {"properties": {"family": {"const": name}}}]},
              "then": {"$ref": f"#/$defs/subject_{name}"}} for name in found]
    defs["subject"] = {"properties": {"family": {"description": "the model measured (memcap.capacity.subjects)",
                                                 "enum": sorted(found)}}, "allOf": picks}
    return defs


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
        if subjects.of(p).NAME != subjects.DEFAULT:
            continue   # the floor counts MLT's arithmetic (memcap.training.duration)
        s = {**p, **p["training"]}
        archs = dict.fromkeys([(H, p["head_dim"]) for H in p["heads_grid"]] + [(p["heads"], dh) for dh in p["head_dim_grid"]])
        flops = sum(search.min_seeds(p) * duration.mlt_model_flops(s, H, dh, p["context_size"], grid.start_size(p, H, dh))
                    for H, dh in archs)
        said = duration.problem(f"{FAMILY}.{name} (its first round: {len(archs)} architectures x "
                                f"{search.min_seeds(p)} probes)", flops, sizes, "params.yaml resources, train runtime")
        out += [said] if said else []
    return out
