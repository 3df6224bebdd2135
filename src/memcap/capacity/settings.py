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
    """The subject a preset measures (memcap.capacity.subjects)."""
    return p.get("family", MLT)


def columns(p: dict) -> dict:
    """The setting columns its rows carry (its subject's): model, readout, d_out, variant, and `bound`,
    the bound that speaks for them in words."""
    from memcap.capacity import subjects

    subject = subjects.of(p)
    return {k: v for k, v in subject.setting(p).items() if k != "label"} | {"bound": subject.bound(p)}


def label(p: dict) -> str:
    """The setting's name as every row, legend and scorecard detail shows it (its subject's)."""
    from memcap.capacity import subjects

    return subjects.of(p).setting(p)["label"]


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
