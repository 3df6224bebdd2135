"""Checks of the `dpc` params section that JSON Schema cannot express (torch-free)."""

from __future__ import annotations

from memcap.dpc.grid import FAMILY, shape


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
    return out
