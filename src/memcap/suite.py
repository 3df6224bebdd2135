"""A long run at some families' presets (the papers' scale) that outlives a job and a machine.

The run's files are those of its families at its presets: run files (results/<family>/runs/<preset>/,
MLT's attention/<preset>/), theory's tables at that scale, and the checkpoints of finished and
in-training grid points. `snapshot` copies them under WIP (same relative paths) with the run's scales
in WIP/suite.yaml, for DVC to track and push; `restore` copies them back on any machine, never over a
result of the run's scale made here. `set_scale` records the finished run's presets in params.yaml's
`scale` with a YAML round trip that keeps every comment.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import yaml

from memcap import params as memcap_params

WIP = Path("wip/suite")
CONFIG = WIP / "suite.yaml"
# Training rules run one thread per job here: the models are too small for threads to pay.
TRAIN_RULES = {"mlt_synthetic": ["mlt_train", "mlt_train_with_attention"], "dpc": ["dpc_train", "dpc_train_pack"],
               "capacity": ["capacity_search"], "theory": ["theory_gd", "theory_construct", "theory_bounds"],
               "assumptions": ["assumptions_track", "assumptions_digits_vit"]}


def folders(family: str, preset: str) -> list[str]:
    """Where `family`'s runs at `preset` live below runs/ and checkpoints/: the preset's folder, or, for
    a composite MLT preset (its sweeps taken from others: memcap.mlt_synthetic.grid.resolve), each
    sweep's folder in the preset it comes from (read from ./params.yaml)."""
    if family != "mlt_synthetic" or not Path("params.yaml").exists():
        return [preset]
    from memcap.mlt_synthetic import grid

    section = memcap_params.read_yaml("params.yaml").get(family, {})
    if preset not in section or "defaults" in section[preset]:
        return [preset]
    return [f"{s['preset']}/{sweep}" for sweep, s in grid.resolve(section, preset).items()]


def files(family: str, preset: str) -> list[Path]:
    """The finished results and checkpoints of `family` at `preset` in this project."""
    found: list[Path] = []
    for where in folders(family, preset):
        for folder in ("runs", "attention"):
            found += sorted(Path("results", family, folder, where).rglob("*.parquet"))
        found += [c for c in sorted(Path("checkpoints", family, where).rglob("*.pt")) if not finished(c)]
    if family == "theory":   # no run files: its tables are trained in the job, named without the preset
        found += [t for t in sorted(Path("results/theory/tables").glob("*.parquet")) if table_scale(t) == preset]
        found += sorted(Path("checkpoints/theory").glob("*.pt"))
    return found


def finished(checkpoint: Path) -> bool:
    """A checkpoint left beside its grid point's run file (checkpoints/<family>/X.pt and
    results/<family>/runs/X.parquet) belongs to a finished job: not part of the run, never restored."""
    family, rest = checkpoint.parts[1], Path(*checkpoint.parts[2:])
    return Path("results", family, "runs", rest.with_suffix(".parquet")).exists()


def table_scale(path: Path) -> str | None:
    """A table's scale: its `scale` column where it has one, else its provenance's params."""
    schema = pq.read_schema(path)
    if "scale" in schema.names:
        values = set(pq.read_table(path, columns=["scale"]).column("scale").to_pylist())
        return values.pop() if len(values) == 1 else None
    return json.loads(schema.metadata[b"memcap"])["params"].get("scale")


def is_result_at(path: Path, scales: dict[str, str]) -> bool:
    """A local result this run must never overwrite: a Parquet at the run's scale for its family."""
    if path.suffix != ".parquet" or not path.exists():
        return False
    family = path.parts[1]
    if family == "theory":
        return table_scale(path) == scales.get(family)
    return family in scales and any("/".join(path.parts[3:]).startswith(f"{where}/")
                                    for where in folders(family, scales[family]))


def snapshot(scales: dict[str, str], families: list[str]) -> dict[str, int]:
    """WIP := this run's files and its scales; how many results and checkpoints went in."""
    shutil.rmtree(WIP, ignore_errors=True)
    counts = {"results": 0, "checkpoints": 0}
    for family in families:
        for f in files(family, scales[family]):
            dest = WIP / f
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, dest)
            counts["results" if f.parts[0] == "results" else "checkpoints"] += 1
    WIP.mkdir(parents=True, exist_ok=True)   # a run with nothing finished yet has its config too
    CONFIG.write_text(yaml.safe_dump({"scale": scales, "families": families}, sort_keys=False))
    return counts


def saved_run() -> dict | None:
    """The scales and families of the run in WIP (after `dvc pull`), None when there is none."""
    return yaml.safe_load(CONFIG.read_text()) if CONFIG.exists() else None


def restore() -> tuple[int, int, list[Path]]:
    """WIP's files back into the project: (files copied, files kept, local results it replaced). A
    result of the run's scale made here is kept; a checkpoint here is newer than the snapshot's, kept."""
    run = saved_run()
    if run is None:
        return 0, 0, []
    presets = memcap_params.read_yaml("params.yaml") if Path("params.yaml").exists() else {}
    gone = {f: run["scale"][f] for f in run["families"] if f in presets and run["scale"][f] not in presets[f]}
    if gone:   # its files could no longer be told from this project's own: every one would be replaced
        raise ValueError(f"{WIP}'s run is at {gone}, which params.yaml no longer defines: put the preset "
                         f"back, or drop the run (git rm {WIP}.dvc) once its results are elsewhere")
    copied, kept, replaced = 0, 0, []
    for f in sorted(p for p in WIP.rglob("*") if p.is_file() and p != CONFIG):
        dest = f.relative_to(WIP)
        if dest.exists() and (dest.suffix == ".pt" or is_result_at(dest, run["scale"])):
            kept += 1
            continue
        if dest.exists():
            replaced.append(dest)   # e.g. theory's quick tables, pulled under the same names
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, dest)    # a new mtime: what depends on it is rebuilt
        copied += 1
    return copied, kept, replaced


def set_scale(scales: dict[str, str], families: list[str], path: Path = Path("params.yaml")) -> dict[str, str]:
    """params.yaml's `scale` gets the run's preset for each family, written as one flow mapping in
    place of the entry it replaces; every other line, comments included, stays byte for byte. The YAML parser
    finds the entry (its line) and checks the result: the file must read back as before, but the scale."""
    from ruamel.yaml import YAML

    text = path.read_text()
    doc = YAML().load(text)
    scale = memcap_params.scales({"scale": doc["scale"]}) if not isinstance(doc["scale"], dict) else dict(doc["scale"])
    scale.update({family: scales[family] for family in families})
    lines = text.splitlines(keepends=True)
    start = doc.lc.key("scale")[0]
    stop = start + 1
    while stop < len(lines) and lines[stop][:1] in (" ", "\t"):   # the entry's continuation lines
        stop += 1
    comment = lines[start].partition("#")[2].rstrip("\n") if stop == start + 1 else ""
    entry = "scale: {" + ", ".join(f"{k}: {v}" for k, v in scale.items()) + "}" + (f"   #{comment}" if comment else "")
    new = "".join(lines[:start]) + entry + "\n" + "".join(lines[stop:])
    before, after = yaml.safe_load(text), yaml.safe_load(new)
    if {**before, "scale": scale} != after:
        raise RuntimeError(f"{path}: rewriting `scale` would change more than the scale; edit it by hand to {scale}")
    path.write_text(new)
    return scale


def downstream(families: list[str], dvc_yaml: Path = Path("dvc.yaml"), skip: tuple[str, ...] = ("report",)) -> list[str]:
    """The DVC stages (other than `families` and `skip`) that read an output of the families' stages,
    e.g. theory's Fig 3 reads mlt_synthetic's attention files: after a run finishes they are stale, and
    `dvc repro` would delete their outputs and retrain them whole (theory's GD cases) where Snakemake
    rebuilds only the jobs that read the new files."""
    stages = yaml.safe_load(dvc_yaml.read_text())["stages"]

    def outs(stage: dict) -> list[str]:
        return [next(iter(o)) if isinstance(o, dict) else o for o in stage.get("outs", [])]

    made = [o.rstrip("/") for f in families for o in outs(stages.get(f, {}))]
    return [name for name, stage in stages.items() if name not in (*families, *skip)
            and any(d == o or d.startswith(f"{o}/") or o.startswith(f"{d}/") for d in stage.get("deps", []) for o in made)]


def first_runs(scales: dict[str, str], sweeps: list[str], path: Path = Path("params.yaml")) -> list[str]:
    """The run files of these MLT sweeps at the run's preset that are not made yet, for Snakemake's
    --prioritize: the figures a run must deliver train before the optional ones."""
    from memcap.errors import ParamsError
    from memcap.mlt_synthetic import grid

    resolved = grid.resolve(memcap_params.read_yaml(path)[grid.FAMILY], scales[grid.FAMILY])   # validated by the caller
    unknown = sorted(set(sweeps) - set(resolved))
    if unknown:
        raise ParamsError(f"memcap suite --first: no sweep {unknown} in {grid.FAMILY}.{scales[grid.FAMILY]}; "
                          f"defined: {sorted(resolved)}")
    files = [f"results/{grid.FAMILY}/runs/{grid.run_name(resolved, s, v, T, list(seeds))}"
             for s, v, T, seeds in grid.jobs(resolved) if s in sweeps]
    return [f for f in files if not Path(f).exists()]
