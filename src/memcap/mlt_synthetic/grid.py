"""MLT synthetic grids, from the family's preset (torch-free; docs/method.md, "MLT: Training protocol").

A sweep varies one of heads / context_size / head_dim over `values` for each dataset size T in
`dataset_sizes`. One grid point = (sweep, value, T); all seeds of a grid point train together in one
job (they share every shape), one Parquet per grid point.
"""

from __future__ import annotations

import math
import re

from memcap import keys
from memcap.errors import ParamsError
from memcap.keys import settings_key
from memcap.scales import scale_note
from memcap.training.sizes import pack_data_bytes

FAMILY = "mlt_synthetic"


# Keys of a resolved sweep that say where its settings come from or how its jobs are cut, not what a
# run's numbers depend on: they stay out of the settings key (memcap.keys), so a job cut differently or
# taken into another preset keeps its name.
NOT_SETTINGS = ("values", "dataset_sizes", "preset", "seeds_per_job", "checkpoint_every_s", "why", "label")


def resolve(family: dict, name: str) -> dict[str, dict]:
    """Every sweep of the preset `name`, with everything its runs depend on: {sweep: settings}.

    A sweep's settings are its preset's defaults overridden by the sweep's keys, plus the seeds, and
    `preset`: the preset they come from. A sweep written `{from: paper, seeds: [0, 1]}` (a composite
    preset, e.g. the published one) is the paper preset's sweep with those seeds: its runs have the
    paper preset's names, so the same runs serve both presets. `label` says in every output what the
    settings are ("paper settings, 2 of the paper's 6 seeds"; a quick stand-in with its `why`)."""
    if name not in family:
        raise ParamsError(f"{FAMILY}: no preset named {name!r}; defined: {sorted(family)}")
    preset, out = family[name], {}
    for sweep, sw in preset["sweeps"].items():
        if "from" in sw:
            s = dict(resolve(family, sw["from"])[sweep])
            s["seeds"] = sw.get("seeds", s["seeds"])
            s["why"] = sw.get("why")
        else:
            s = {**preset["defaults"], **sw, "seeds": preset["seeds"], "preset": name,
                 "seeds_per_job": preset.get("seeds_per_job"), "checkpoint_every_s": preset["checkpoint_every_s"]}
        s["label"] = settings_label(family, s)
        out[sweep] = s
    return out


def settings_label(family: dict, settings: dict) -> str:
    """What a sweep's runs are, for titles, tables and the scorecard: the paper's settings (with how
    many of the paper's seeds), a quick stand-in (and why it stays one), or a preset of your own."""
    source, seeds = settings["preset"], len(settings["seeds"])
    if source == "paper":
        all_seeds = len(family["paper"]["seeds"])
        return "paper settings" + (f", {seeds} of the paper's {all_seeds} seeds" if seeds < all_seeds else "")
    note = scale_note(source)
    return note + (f" ({settings['why']})" if settings.get("why") else "")


def sweep_settings(sweeps: dict[str, dict], sweep: str) -> dict:
    """The resolved settings of one sweep (`resolve`)."""
    if sweep not in sweeps:
        raise ParamsError(f"{FAMILY}.sweeps: no sweep named {sweep!r}; defined: {sorted(sweeps)}")
    return sweeps[sweep]


def seed_groups(settings: dict) -> list[list[int]]:
    """The seeds of one grid point, cut into jobs of `seeds_per_job` (all in one job when unset).
    Each group is its own job and file, so adding seeds later trains only the new groups."""
    seeds, per_job = list(settings["seeds"]), settings.get("seeds_per_job") or len(settings["seeds"])
    return [seeds[i:i + per_job] for i in range(0, len(seeds), per_job)]


def point_settings(settings: dict, seeds: list[int]) -> dict:
    """What one job's numbers depend on (its rule's params): the sweep settings without the grid lists
    and bookkeeping (NOT_SETTINGS), with the job's seeds, so adding or changing one value or T reruns
    only that point, not the whole sweep."""
    return {**{k: v for k, v in settings.items() if k not in NOT_SETTINGS}, "seeds": list(seeds)}


def settings_key_of(settings: dict, seeds: list[int]) -> str:
    return settings_key(settings["preset"], point_settings(settings, seeds))


def seeds_for_key(settings: dict, key: str | None, source: str) -> list[int]:
    """The seeds of the job whose file name carries `key`; all the sweep's seeds without a key (a job
    run by hand). A key that stands for none of the sweep's jobs is refused (memcap.keys.check)."""
    if key is None:
        return list(settings["seeds"])
    for seeds in seed_groups(settings):
        if settings_key_of(settings, seeds) == key:
            return seeds
    keys.check(key, settings["preset"], point_settings(settings, settings["seeds"]), source)
    raise AssertionError("unreachable: keys.check refuses a key of other settings")


def run_name(sweeps: dict[str, dict], sweep: str, value: int, T: int, seeds: list[int] | None = None) -> str:
    """A job's file below runs/ (and attention/): <preset>/<sweep>/<value>/T<T>-<key>.parquet, the
    preset its settings come from and the key standing for them and its seeds (memcap.keys)."""
    s = sweep_settings(sweeps, sweep)
    seeds = seed_groups(s)[0] if seeds is None else seeds
    return f"{s['preset']}/{sweep}/{value}/T{T}-{settings_key_of(s, seeds)}.parquet"


_RUN_PATH = re.compile(r"(?:.*/)?(?:runs|attention)/(?P<preset>[a-z][a-z0-9_]*)/(?P<sweep>[A-Za-z0-9_]+)/(?P<value>\d+)/"
                       r"T(?P<T>\d+)-(?P<key>[0-9a-f]+)\.parquet$")


def parse_run_path(path: str) -> tuple[str, str, int, int, str]:
    """(preset, sweep, value, T, key) of a run file's path (run_name below RUNS_ROOT)."""
    m = _RUN_PATH.match(str(path))
    if not m:
        raise ParamsError(f"{path}: not a run file's path (<...>/runs/<preset>/<sweep>/<value>/T<T>-<key>.parquet)")
    return m["preset"], m["sweep"], int(m["value"]), int(m["T"]), m["key"]


def run_name_of(path: str) -> str:
    """A run file's name below runs/ (or attention/): <preset>/<sweep>/<value>/T<T>-<key>.parquet."""
    preset, sweep, value, T, key = parse_run_path(path)
    return f"{preset}/{sweep}/{value}/T{T}-{key}.parquet"


def data_bytes(settings: dict, value: int, T: int) -> int:
    """Host memory of one job's data: every seed's (of the job's seed group) float32 queries, contexts and labels, built in place
    (memcap.tasks.mlt_data), plus one chunk of float64 draws and, for random contexts, the contexts an
    evaluation batch gathers with the keys and values computed from them."""
    # the seeds of one job: a seed group (every group has at most the first's size)
    return pack_data_bytes(settings, [(value, T, seed) for seed in seed_groups(settings)[0]], value)


def job_mem_mb(settings: dict, value: int, T: int, class_mem_mb: int) -> int:
    """A training job's memory request: its class's (params.yaml resources), or its data with half
    again for torch's buffers and 1 GB for the interpreter, torch and the model, when that is more."""
    return max(class_mem_mb, math.ceil(1.5 * data_bytes(settings, value, T) / 2 ** 20) + 1024)


def grid_points(sweeps: dict[str, dict]) -> list[tuple[str, int, int]]:
    """Every (sweep, value, T) of a resolved preset."""
    return [(name, v, T) for name, sw in sweeps.items() for v in sw["values"] for T in sw["dataset_sizes"]]


def jobs(sweeps: dict[str, dict]) -> list[tuple[str, int, int, tuple[int, ...]]]:
    """Every training job: (sweep, value, T, seeds), one per grid point and seed group."""
    return [(s, v, T, tuple(g)) for s, v, T in grid_points(sweeps) for g in seed_groups(sweeps[s])]


def analysis_sweeps(sweeps: dict[str, dict]) -> list[str]:
    """The saturation sweeps (Fig 3): their jobs also write the max attention weights."""
    return [name for name, s in sweeps.items() if s["analysis"]]
