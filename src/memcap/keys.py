"""Settings keys: the short hash in every run file's name (torch-free; the rules and the jobs use it).

A run is stored as results/<family>/runs/<preset>/...-<key>.parquet, where <key> stands for the preset's
name and everything the run's numbers depend on. Two different settings never share a path, so a grid
of your own, a --configfile or an edited preset trains beside a published result, never over it, and a
job checks that the name it was given stands for the settings it read.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from memcap.errors import ParamsError

KEY_PATTERN = r"[0-9a-f]{8}"


def settings_key(preset_name: str, settings: dict[str, Any]) -> str:
    """Eight hex digits of the SHA-256 of the preset name and the settings (canonical JSON)."""
    blob = json.dumps({"preset": preset_name, "settings": settings}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:8]


def check(key: str | None, preset_name: str, settings: dict[str, Any], source: str) -> None:
    """Refuse to write under a name that stands for other settings than those the job read."""
    if key is not None and key != settings_key(preset_name, settings):
        raise ParamsError(f"--settings-key {key}: the output's name stands for other settings than the "
                          f"{preset_name!r} preset of {source} (key {settings_key(preset_name, settings)}); "
                          f"run the job through Snakemake, which names its output from the same params")
