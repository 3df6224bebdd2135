"""What a preset's results are, said on every title and table (torch-free, imports nothing of memcap).

quick and paper are the two scales every family defines. A family may ship variants of them, named
`quick_<what>` or `paper_<what>` (capacity's `paper_scalar`: the paper's budget in another setting);
they are labeled, stored and published as their scale. Any other preset name is one of your own.
"""

from __future__ import annotations

SCALES = ("quick", "paper")
STAND_IN_MARK = " (QUICK STAND-IN)"   # a quick preset's rows carry it beside the paper task's (a table of both)


def shipped_scale(preset: str) -> str | None:
    """The scale a shipped preset belongs to (quick, paper, quick_<what>, paper_<what>), else None."""
    base = preset.split("_", 1)[0]
    return base if base in SCALES else None


def scale_note(scale: str) -> str:
    """What results at a preset are, printed on every title and table so a stand-in never passes for
    the paper: quick is a stand-in, a preset of your own is not the papers' settings, paper says nothing."""
    if shipped_scale(scale) == "quick":
        return "QUICK STAND-IN: reduced grid"
    return f"OWN PRESET {scale!r}: not the papers' settings" if shipped_scale(scale) is None else ""


def is_stand_in(preset: str) -> bool:
    return shipped_scale(preset) == "quick"


def stand_in_mark(preset: str | None) -> str:
    """What a quick preset's setting label ends with, so its rows never read as the paper task's."""
    return STAND_IN_MARK if preset and is_stand_in(preset) else ""


def scale_tag(scale: str) -> str:
    """A title's scale part: the note where there is one, else 'paper scale'."""
    return scale_note(scale) or f"{scale} scale"


def scale_rank(scale: str) -> int:
    """quick < paper (a shipped variant ranks with its scale); a preset of your own ranks with quick (it
    gets quick's resources by default)."""
    return SCALES.index(shipped_scale(scale) or SCALES[0])


def active_preset(params: dict, family: str) -> str | None:
    """The family's preset that `scale` selects (one name for all, or {family: ..., default: ...}), as a
    family's cross-field checks read it before anything else is resolved; None without a scale."""
    scale = params.get("scale")
    return scale.get(family, scale.get("default")) if isinstance(scale, dict) else scale
