"""Checks of the `dpc` params section that JSON Schema cannot express (torch-free)."""

from __future__ import annotations

from memcap.dpc.grid import FAMILY, jobs, point_bytes, series_value, settings, shape
from memcap.scales import active_preset


def problems(params: dict) -> list[str]:
    out = []
    for scale, p in (params.get(FAMILY) or {}).items():
        for name, e in p.get("experiments", {}).items():
            key = f"{FAMILY}.{scale}.experiments.{name}"
            if e.get("group") not in p.get("groups", {}):
                out.append(f"{key}.group: {e.get('group')!r} is not a group; allowed: {sorted(p.get('groups', {}))}")
                continue
            series = e.get("series") or {"key": None, "values": [None]}
            for sv in series["values"]:
                for x in e["x"]["values"]:
                    m = shape({**p["groups"][e["group"]], **e}, sv, x)
                    if m["dim"] is None:
                        out.append(f"{key}: no dim given (set dim, or a series/x over dim)")
                        break
                    if m["width"] < 0 or m["heads"] < 1:
                        out.append(f"{key}: x={x} gives heads {m['heads']}, width {m['width']}; "
                                   f"allowed: heads >= 1, width >= 0")
        for g, grp in p.get("groups", {}).items():
            if grp.get("batches", 0) * grp.get("epochs", 0) <= grp.get("window", 100):
                out.append(f"{FAMILY}.{scale}.groups.{g}: batches*epochs must exceed the accuracy "
                           f"window ({grp.get('window', 100)} batches)")
    active = active_preset(params, FAMILY)
    return out + (memory_problems(params[FAMILY][active], active) if active in (params.get(FAMILY) or {}) and not out else [])


def memory_problems(p: dict, active: str) -> list[str]:
    """Each curve's largest point (every repetition at once) against the machine's memory (torch-free)."""
    from memcap.training import memory

    out = []
    for experiment, label in jobs(p):
        s = settings(p, experiment)
        sized = [(x, point_bytes(s, series_value(label), x)) for x in s["x"]["values"]]
        x, parts = max(sized, key=lambda point: sum(point[1].values()))
        said = memory.problem(f"{FAMILY}.{active}.experiments.{experiment} ({label}, x={x})", parts,
                              knobs=memory.AOT_KNOBS)
        out += [said] if said else []
    return out


def job_flops(s: dict, label: str) -> float:
    """A floor of one curve job's arithmetic: every point and repetition, each training example's
    readout onto the N tokens forward and backward (6·N·d; the attention adds more) and one evaluation of
    the N² pairs (2·N·d each): the readout alone is a lower bound of the job's work."""
    steps = s["epochs"] * s["batches"] * s["batch_size"]
    return sum(s["repetitions"] * s["N"] * shape(s, series_value(label), x)["dim"] * (6 * steps + 2 * s["N"] ** 2)
               for x in s["x"]["values"])


def job_steps(s: dict) -> int:
    """A curve job's training steps: every point one after another (its repetitions packed in each step)."""
    return len(s["x"]["values"]) * s["epochs"] * s["batches"]


def slow_jobs(params: dict) -> list[str]:
    """The curve jobs of the active preset whose floor (arithmetic, or its steps one after another) is
    above their runtime limit (memcap.training.duration)."""
    from memcap import params as memcap_params
    from memcap.training import duration

    active = memcap_params.scale_of(params, FAMILY)
    p, sizes = params[FAMILY][active], memcap_params.job_sizes(params, "train", FAMILY)
    said = []
    for e, label in jobs(p):
        s = settings(p, e)
        said.append(duration.problem(f"{FAMILY}.{active}.experiments.{e} ({label})", job_flops(s, label), sizes,
                                     "params.yaml resources, train runtime", job_steps(s)))
    return [line for line in said if line]
