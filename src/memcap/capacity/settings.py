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
    if family(p) == DPC:
        return f"dpc/associations N={p['vocab']}"
    return "mlt/scalar" if p["num_classes"] == 2 else f"mlt/classification C={p['num_classes']}"


def bound_sentence(p: dict) -> str:
    """One sentence on which bound applies to the setting's rows."""
    if family(p) == DPC:
        return ("DPC Corollary 1 applies: a one-layer attention-only transformer memorizes H·d_h + d "
                "associations; MLT's H(min(n, d_h) − 1) + 1 is shown for comparison only.")
    if p["num_classes"] == 2:
        return ("MLT Theorem 1 applies (one logit: d_out = 1 <= d_v = 1): every architecture memorizes "
                "H(min(n, d_h) − 1) + 1 examples by construction.")
    return (f"Neither bound applies: {p['num_classes']} logits from d_v = 1 a head is outside MLT Theorem 1 "
            "(d_v >= d_out) and MLT's layer is not DPC's transformer; the laws are measured findings.")


def is_composite(p: dict) -> bool:
    return COMPOSITE in p


def members(section: dict, name: str) -> list[str]:
    """The presets a preset stands for: a composite's settings, else itself."""
    p = section[name]
    return list(p[COMPOSITE]) if is_composite(p) else [name]
