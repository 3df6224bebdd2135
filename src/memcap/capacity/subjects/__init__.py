"""The models whose capacity memcap measures: each a subject, one module of this package (torch-free to import).

A preset names its subject by `family` (left out: mlt). A subject says everything the search, the table
and the checks need of a model; nothing outside its module branches on which model it is:

  NAME                    the preset's `family` value
  SCHEMA                  JSON Schema of its own keys (a preset's data, model and `training` keys); the
                          search's keys (seeds, grids, threshold, ...) are the capacity schema's
  probe_settings(p,H,dh)  what a probe's numbers depend on but its seed, T and budget (its files' key)
  folder_name(p,H,dh)     its architectures' probe folders' name (before the key)
  params_of(p,H,dh)       parameters of one model; classes(p): labels an example takes; context_size(p): n
  steps(p,T,budget)       training steps of a probe; with_lr(training, lr): its training block at another lr
  train_probes(...)       a round's probes trained as one pack, each as it trains alone (memcap.capacity.probes)
  model(p,H,dh,seed)      one probe's untrained torch module (check_subject counts its parameters)
  memory(p,probes)        a pack's memory estimate (memcap.training.memory), or None where it is small
  setting(p)              its rows' setting columns: model, readout, d_out, and the label rows show
  bound(p)                the bound that speaks for its rows, in words (None: none does)
  problems(p,key)         what its SCHEMA cannot say
Optional: gradient_check(p,H,dh,seed) (a hand-written gradient against autograd's, run before a pack
trains), with_steps(p,n) (the preset with each probe trained n steps: benchmarks/capacity_cost.py times
a pack with it).

Each other module here is a subject and registers itself: adding a model adds a file, nothing else (the
shipped ones: mlt, dpc, dpc_mlp, torch_block; docs/own-model.md). check.py runs one battery on any subject (scikit-learn's check_estimator): its parameter count is its
module's, a pack's probes train exactly as each alone, seeds are deterministic, a hand-written gradient
is autograd's.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

DEFAULT = "mlt"
# JSON Schema pieces a subject's SCHEMA is written with (the capacity schema's own, workflow/schemas/)
POSITIVE = {"type": "integer", "minimum": 1, "maximum": 10000000}
RATE = {"type": "number", "exclusiveMinimum": 0}
_REGISTRY: dict[str, ModuleType] = {}
_FOUND: list[bool] = []   # this package's modules are imported once
REQUIRED = ("NAME", "SCHEMA", "probe_settings", "folder_name", "params_of", "classes", "context_size", "steps",
            "with_lr", "train_probes", "model", "memory", "setting", "bound", "problems")


def register(module: ModuleType) -> ModuleType:
    """Make a subject selectable by `family: <its NAME>`; a module lacking part of the interface is refused."""
    missing = [k for k in REQUIRED if not hasattr(module, k)]
    if missing:
        raise TypeError(f"{module.__name__}: not a capacity subject, it lacks {missing} (memcap.capacity.subjects)")
    _REGISTRY[module.NAME] = module
    return module


def registered() -> dict[str, ModuleType]:
    """Every subject: this package's modules (each a file here) and any registered by hand."""
    if not _FOUND:
        for info in pkgutil.iter_modules(__path__):
            module = importlib.import_module(f"{__name__}.{info.name}")
            if hasattr(module, "NAME") and module.NAME not in _REGISTRY:
                register(module)
        _FOUND.append(True)
    return dict(_REGISTRY)


def of(p: dict) -> ModuleType:
    """The subject a (search) preset measures."""
    name = p.get("family", DEFAULT)
    subjects = registered()
    if name not in subjects:
        raise KeyError(f"family {name!r} is not a capacity subject; allowed: {sorted(subjects)}")
    return subjects[name]
