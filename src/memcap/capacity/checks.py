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
    return out
