"""A module imported on its first attribute access.

Snakemake imports the library to name every output, at each start and in every cluster job: the
plotting stack and scipy.stats (~1 s there) are only needed once something is drawn or fitted.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Callable


class OnFirstUse:
    """Stands for module `name`; `before()` runs once, just before the import (e.g. a backend)."""

    def __init__(self, name: str, before: Callable[[], None] | None = None):
        self._name, self._before, self._module = name, before, None

    def _load(self) -> ModuleType:
        if self._module is None:
            if self._before is not None:
                self._before()
            self._module = importlib.import_module(self._name)
        return self._module

    def __getattr__(self, attr: str):
        return getattr(self._load(), attr)
