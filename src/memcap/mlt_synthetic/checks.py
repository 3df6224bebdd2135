"""Checks of the `mlt_synthetic` params section that JSON Schema cannot express (torch-free)."""

from __future__ import annotations

from memcap.scales import active_preset

FAMILY = "mlt_synthetic"
# The sweeps a figure or table reads (the original's 11 sweeps, docs/method.md; memcap.mlt_synthetic.figures
# maps them to figures). A sweep of another name is read by nothing unless it is a saturation sweep
# (analysis: true, Fig 3), so a misspelled name would train for nothing and its figure say SKIPPED.
KNOWN_SWEEPS = ("regress_scale_ctx_size", "regress_scale_ctx_size_shared", "regress_scale_head",
                "regress_scale_head_shared", "scale_head", "scale_head_shared", "scale_ctx_size",
                "scale_ctx_size_shared", "scale_dh_shared")


def problems(params: dict) -> list[str]:
    out, family = [], params.get(FAMILY) or {}
    active = active_preset(params, FAMILY)
    for scale, p in family.items():
        if "defaults" not in p:   # a composite preset: each sweep from a full preset that defines it
            # checked when selected: trimming quick's sweeps for a test grid must not break an unused one
            for name, sw in (p.get("sweeps", {}) if scale == active else {}).items():
                src = family.get(sw.get("from"))
                key = f"{FAMILY}.{scale}.sweeps.{name}.from"
                full = sorted(k for k, v in family.items() if "defaults" in v)
                if src is None or "defaults" not in src:
                    out.append(f"{key}: got {sw.get('from')!r}; allowed: a full preset of {FAMILY} (one with "
                               f"defaults and sweeps): {full}")
                elif name not in src.get("sweeps", {}):
                    out.append(f"{key}: the preset {sw['from']!r} has no sweep {name!r}; its sweeps: "
                               f"{sorted(src.get('sweeps', {}))}")
            continue
        for name, sw in p.get("sweeps", {}).items():
            s = {**p.get("defaults", {}), **sw}
            d = s.get("input_dim")
            key = f"{FAMILY}.{scale}.sweeps.{name}"
            if name not in KNOWN_SWEEPS and not s.get("analysis"):
                out.append(f"{key}: no figure or table reads a sweep of this name; allowed: one of "
                           f"{list(KNOWN_SWEEPS)}, or any name with analysis: true (a Fig 3 saturation sweep)")
            head_dims = sw["values"] if sw.get("vary") == "head_dim" else [s.get("head_dim")]
            for dh in head_dims:
                if dh is not None and d is not None and dh > d:
                    out.append(f"{key}: head_dim {dh} > input_dim {d}; allowed: head_dim <= input_dim")
            if s.get("task") == "classification" and s.get("analysis") and s.get("early_stop", True):
                out.append(f"{key}.early_stop: true with analysis: true; saturation runs need "
                           f"early_stop: false (the original disables it)")
    return out + (memory_problems(family, active) if active in family and not out else [])


def memory_problems(family: dict, active: str) -> list[str]:
    """The largest job of each sweep of the active preset against the machine's memory
    (memcap.training.memory): a job that cannot fit is named before anything is submitted."""
    from memcap.mlt_synthetic import grid
    from memcap.training import memory

    out = []
    for name, s in grid.resolve(family, active).items():
        T, seeds = max(s["dataset_sizes"]), grid.seed_groups(s)[0]
        jobs = [(value, memory.mlt_point_bytes(s, value, T, seeds)) for value in s["values"]]
        value, parts = max(jobs, key=lambda job: sum(job[1].values()))
        said = memory.problem(f"{FAMILY}.{active}.sweeps.{name} ({s['vary']}={value}, T={T})", parts)
        out += [said] if said else []
    return out


def slow_jobs(params: dict) -> list[str]:
    """The active preset's jobs whose least possible time (memcap.training.duration: their arithmetic
    at more than the hardware computes) is above their resources' runtime limit, one line a sweep."""
    from memcap import params as memcap_params
    from memcap.mlt_synthetic import grid
    from memcap.training import duration
    from memcap.training.sizes import shape

    active = memcap_params.scale_of(params, FAMILY)
    sweeps = grid.resolve(params[FAMILY], active)
    sizes = memcap_params.job_sizes(params, "train", FAMILY)
    out = []
    for name, s in sweeps.items():
        def flops(job):
            _, value, T, seeds = job
            p = {**s, **shape(s, value)}
            return len(seeds) * duration.mlt_model_flops(p, p["heads"], p["head_dim"] or p["input_dim"],
                                                         p["context_size"], T)
        job = max((j for j in grid.jobs({name: s})), key=flops)
        said = duration.problem(f"{FAMILY}.{active}.sweeps.{name} ({s['vary']}={job[1]}, T={job[2]}, "
                                f"{len(job[3])} seed(s))", flops(job), sizes, "params.yaml resources, train runtime")
        out += [said] if said else []
    return out
