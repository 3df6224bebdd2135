"""What a capacity preset measures (torch-free): its model family and output, the bound that speaks
for it, and the presets a composite gathers into one table.

Three settings, each where one paper's theorem speaks:
  mlt/classification C=100   MLT's layer as its experiments train it (d_v = 1, 100 logits): beyond
                             Theorem 1, which needs d_v >= d_out; its laws are measured findings.
  mlt/scalar                 the same layer with binary labels read from two logits. Softmax over two
                             logits depends only on their difference, one linear readout of the
                             layer's output, so this is a single-logit classifier (d_out = 1 <= d_v)
                             and the cross-entropy is the logistic loss of that logit: Theorem 1's
                             constructive bound H(min(n, d_h) − 1) + 1 holds with labels ±1.
  dpc/associations N=…       DPC's attention-only transformer on T random associations of token
                             pairs: Corollary 1's count H·d_h + d.
"""

from __future__ import annotations

MLT, DPC = "mlt", "dpc"
COMPOSITE = "settings"   # a preset {settings: [names]}: those presets' rows in one table


def family(p: dict) -> str:
    return p.get("family", MLT)


def label(p: dict) -> str:
    """The setting's name as every row, legend and scorecard detail shows it."""
    variant = f" [{p['variant']}]" if p.get("variant") else ""            # e.g. an lr check, the tuned lr
    if family(p) == DPC:
        return f"dpc/associations N={p['vocab']}{variant}"
    dv = f" d_v={p['value_dim']}" if p.get("value_dim", 1) != 1 else ""   # values a head, where not the paper's 1
    return ("mlt/scalar" if p["num_classes"] == 2 else f"mlt/classification C={p['num_classes']}") + dv + variant


def base(setting: str) -> str:
    """A setting's label without its d_v and variant: the setting proper."""
    return setting.split(" [")[0].split(" d_v=")[0]


def variant(setting: str) -> str | None:
    """The variant a label carries (label's [..]), or None."""
    return setting.split(" [", 1)[1].rstrip("]") if " [" in setting else None


def applies(setting: str) -> str:
    """Which bound speaks for a setting's rows (by its label)."""
    if setting.startswith(DPC + "/"):
        return "DPC Corollary 1 (H·d_h + d)"
    if base(setting) == "mlt/scalar":
        return "MLT Theorem 1 (H(min(n, d_h) − 1) + 1; one logit, d_out = 1 <= d_v)"
    return "neither bound (d_out = C > d_v is outside MLT Theorem 1; MLT's layer is not DPC's transformer)"


def is_composite(p: dict) -> bool:
    return COMPOSITE in p


def members(section: dict, name: str) -> list[str]:
    """The presets a preset stands for: a composite's settings, else itself."""
    p = section[name]
    return list(p[COMPOSITE]) if is_composite(p) else [name]
