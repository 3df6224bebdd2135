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

from memcap.scales import stand_in_mark

MLT, DPC = "mlt", "dpc"
ASSOCIATIONS = "associations"   # the readout of DPC's task: a pair's target token (its rows span d, no context n)
COMPOSITE = "settings"   # a preset {settings: [names]}: those presets' rows in one table


def family(p: dict) -> str:
    """The subject a preset measures (memcap.capacity.subjects)."""
    return p.get("family", MLT)


SETTING_COLUMNS = ("model", "readout", "d_out", "variant", "applies", "bounded", "setting_base")
NO_BOUND = "neither bound"   # how `applies` starts where no theorem of either paper speaks


def columns(p: dict, preset: str | None = None) -> dict:
    """The setting columns a preset's rows carry (its subject's): model, readout, d_out, variant (None:
    the setting's own rows), `applies` (the bound that speaks for them, in words; `bounded`: one does) and
    setting_base (the setting's label without its d_v and variant): what tables, figures and claims
    select rows by."""
    from memcap.capacity import subjects

    subject = subjects.of(p)
    own = {k: v for k, v in p.items() if k not in ("variant", "value_dim")}
    applies = subject.bound(p) or f"{NO_BOUND} (neither paper's theorem is about this model)"
    return {**{k: v for k, v in subject.setting(p).items() if k != "label"}, "applies": applies,
            "bounded": not applies.startswith(NO_BOUND), "setting_base": label(own, preset)}


def label(p: dict, preset: str | None = None) -> str:
    """The setting's name as every row, legend and scorecard detail shows it (its subject's); a quick
    preset's rows say they are a stand-in, so they never read as the paper task's beside it."""
    from memcap.capacity import subjects

    return subjects.of(p).setting(p)["label"] + stand_in_mark(preset)


def is_composite(p: dict) -> bool:
    return COMPOSITE in p


def members(section: dict, name: str) -> list[str]:
    """The presets a preset stands for: a composite's settings, else itself."""
    p = section[name]
    return list(p[COMPOSITE]) if is_composite(p) else [name]
