"""Checks of the `dpc` params section that JSON Schema cannot express (torch-free)."""

from __future__ import annotations

from memcap.dpc.grid import FAMILY, jobs, point_bytes, series_value, settings, shape
from memcap.scales import active_preset


def problems(params: dict) -> list[str]:
    out = []
    for scale, p in (params.get(FAMILY) or {}).items():
        for name, e in p.get("experiments", {}).items():
            key = f"{FAMILY}.{scale}.experiments.{name}"
            if e.get("group") not in p.get("groups", {}):
                out.append(f"{key}.group: {e.get('group')!r} is not a group; allowed: {sorted(p.get('groups', {}))}")
                continue
            series = e.get("series") or {"key": None, "values": [None]}
            for sv in series["values"]:
                for x in e["x"]["values"]:
                    m = shape({**p["groups"][e["group"]], **e}, sv, x)
                    if m["dim"] is None:
                        out.append(f"{key}: no dim given (set dim, or a series/x over dim)")
                        break
                    if m["width"] < 0 or m["heads"] < 1:
                        out.append(f"{key}: x={x} gives heads {m['heads']}, width {m['width']}; "
                                   f"allowed: heads >= 1, width >= 0")
        for g, grp in p.get("groups", {}).items():
            if grp.get("batches", 0) * grp.get("epochs", 0) <= grp.get("window", 100):
                out.append(f"{FAMILY}.{scale}.groups.{g}: batches*epochs must exceed the accuracy "
                           f"window ({grp.get('window', 100)} batches)")
    active = active_preset(params, FAMILY)
    return out + (memory_problems(params[FAMILY][active], active) if active in (params.get(FAMILY) or {}) and not out else [])


def memory_problems(p: dict, active: str) -> list[str]:
    """Each curve's largest point (every repetition at once) against the machine's memory (torch-free)."""
    from memcap.training import memory

    out = []
    for experiment, label in jobs(p):
        s = settings(p, experiment)
        sized = [(x, point_bytes(s, series_value(label), x)) for x in s["x"]["values"]]
        x, parts = max(sized, key=lambda point: sum(point[1].values()))
        said = memory.problem(f"{FAMILY}.{active}.experiments.{experiment} ({label}, x={x})", parts,
                              knobs=memory.AOT_KNOBS)
        out += [said] if said else []
    return out
