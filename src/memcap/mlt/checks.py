"""Checks of the `mlt_synthetic` params section that JSON Schema cannot express (torch-free)."""

from __future__ import annotations

FAMILY = "mlt_synthetic"


def problems(params: dict) -> list[str]:
    out = []
    for scale, p in (params.get(FAMILY) or {}).items():
        for name, sw in p.get("sweeps", {}).items():
            s = {**p.get("defaults", {}), **sw}
            d = s.get("input_dim")
            key = f"{FAMILY}.{scale}.sweeps.{name}"
            head_dims = sw["values"] if sw.get("vary") == "head_dim" else [s.get("head_dim")]
            for dh in head_dims:
                if dh is not None and d is not None and dh > d:
                    out.append(f"{key}: head_dim {dh} > input_dim {d}; allowed: head_dim <= input_dim")
            if s.get("task") == "classification" and s.get("analysis") and s.get("early_stop", True):
                out.append(f"{key}.early_stop: true with analysis: true; saturation runs need "
                           f"early_stop: false (the original disables it)")
    return out
