"""The DPC authors' published result tables (reference/dpc-published/, see its SOURCE.md), each row
placed on memcap's grid and checked against it.

A file `Data_exp_<exp>[_<d>][_<variant>].csv` holds the mean accuracy `acc` (the train-batch window,
over the repetitions) of one curve. Its rows are matched to (experiment, series, x) of the paper
preset's grid (DPC Figs 1-10): `para` is the swept value for Exps 1, 5 and 6 and their variants, `d_head`
for Exp 2, `d` for Exp 3, `width / d` for the dim and depth Exp 5. The row's N, d and d_h are then
checked against the shape memcap trains at that point; a disagreement is reported in `check`, never
guessed away.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from memcap.dpc import grid
from memcap.params import REPO_ROOT

FOLDER = REPO_ROOT / "reference" / "dpc-published"
NAME = re.compile(r"Data_exp_(?P<exp>\d)(?:_(?P<d>\d+))?(?:_(?P<variant>dim|depth|att|mlp))?\.csv")
EXPERIMENT = {("1", None): "exp1", ("1", "dim"): "dim_exp1", ("1", "depth"): "depth_exp1",
              ("2", None): "exp2", ("2", "dim"): "dim_exp2", ("2", "depth"): "depth_exp2",
              ("3", None): "exp3", ("5", "att"): "exp5_aot", ("5", "mlp"): "exp5_mlp",
              ("5", "dim"): "dim_exp5", ("5", "depth"): "depth_exp5", ("6", None): "exp6"}
WIDTH_CHECKED = ("exp5_mlp", "dim_exp5", "depth_exp5")   # the MLP width is the swept or derived value
COLUMNS = ["file", "row", "experiment", "series", "x", "acc", "N", "dim", "head_dim", "width", "check"]


def _x(experiment: str, r) -> int:
    """The grid's x of a row: which CSV column holds the swept value depends on the experiment."""
    if experiment.endswith("exp2"):
        return int(r.d_head)
    if experiment == "exp3":
        return int(r.d)
    if experiment in ("dim_exp5", "depth_exp5"):
        return int(r.width) // int(r.d)
    return int(r.para)


def _check(preset: dict, experiment: str, series: int, x: int, r) -> str:
    """'ok', or how the row disagrees with the grid point it names."""
    if experiment not in preset["experiments"]:
        return f"experiment {experiment} is not in the preset"
    s = grid.settings(preset, experiment)
    series_values = s["series"]["values"] if s.get("series") else [-1]
    if series not in series_values or x not in s["x"]["values"]:
        return f"({series}, {x}) is not a grid point of {experiment} (series {series_values}, x {s['x']['values']})"
    m = grid.shape(s, None if series == -1 else series, x)
    wrong = [f"{name} {got} (grid {want})" for name, got, want in
             (("N", int(r.N), s["N"]), ("d", int(r.d), m["dim"]), ("d_head", int(r.d_head), m["head_dim"]),
              *((("width", int(r.width), m["width"]),) if experiment in WIDTH_CHECKED else ()))
             if got != want]
    return "; ".join(wrong) or "ok"


def read(preset: dict, files: list[Path] | Path = FOLDER) -> pd.DataFrame:
    """Every row of every file (a list, or a folder's *.csv), placed on the preset's grid: COLUMNS, one
    row per published mean."""
    rows = []
    for path in sorted(files.glob("*.csv") if isinstance(files, Path) else map(Path, files)):
        m = NAME.fullmatch(path.name)
        key = (m["exp"], m["variant"]) if m else None
        if key not in EXPERIMENT:
            rows.append({"file": path.name, "row": -1, "experiment": "", "series": -1, "x": -1, "acc": float("nan"),
                         "N": -1, "dim": -1, "head_dim": -1, "width": -1,
                         "check": "file name not understood (Data_exp_<exp>[_<d>][_<variant>].csv)"})
            continue
        experiment = EXPERIMENT[key]
        series = int(m["d"]) if m["d"] else -1
        for i, r in enumerate(pd.read_csv(path).itertuples()):
            x = _x(experiment, r)
            rows.append({"file": path.name, "row": i, "experiment": experiment, "series": series, "x": x,
                         "acc": float(r.acc), "N": int(r.N), "dim": int(r.d), "head_dim": int(r.d_head),
                         "width": int(getattr(r, "width", 0)), "check": _check(preset, experiment, series, x, r)})
    return pd.DataFrame(rows, columns=COLUMNS)
