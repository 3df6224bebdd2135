"""The assumptions family's tracks (torch-free): one job per track."""

from __future__ import annotations

FAMILY = "assumptions"
VISION_TRACKS = ("photos", "digits")
TEXT_TRACKS = ("gpt2", "bert")
TRACKS = (*VISION_TRACKS, *TEXT_TRACKS)
MINILM_MAX_N = 383             # d = 384: Asm 2 (rank n) needs n <= d - 1 with [CLS] among the rows


def track_settings(preset: dict, track: str) -> dict:
    """The params one track reads (its rule's params: it reruns when they change)."""
    section = preset["vision" if track in VISION_TRACKS else "text"][track]
    return {k: preset[k] for k in ("seed", "threshold", "trials", "fig1")} | {track: section}
