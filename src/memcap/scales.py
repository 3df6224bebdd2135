"""What a preset's results are, said on every title and table (torch-free, imports nothing of memcap).

quick and paper are the two scales every family defines; any other preset name is one of your own.
"""

from __future__ import annotations

SCALES = ("quick", "paper")


def scale_note(scale: str) -> str:
    """What results at a preset are, printed on every title and table so a stand-in never passes for
    the paper: quick is a stand-in, a preset of your own is not the papers' settings, paper says nothing."""
    if scale == "quick":
        return "QUICK STAND-IN: reduced grid"
    return f"OWN PRESET {scale!r}: not the papers' settings" if scale not in SCALES else ""


def scale_tag(scale: str) -> str:
    """A title's scale part: the note where there is one, else 'paper scale'."""
    return scale_note(scale) or f"{scale} scale"


def scale_rank(scale: str) -> int:
    """quick < paper; a preset of your own ranks with quick (it gets quick's resources by default)."""
    return SCALES.index(scale) if scale in SCALES else 0
