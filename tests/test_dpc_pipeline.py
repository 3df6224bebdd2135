"""End to end: the DPC family's real Snakemake target on a tiny grid, and its params checks."""

import copy

import pytest
import yaml

from memcap import params as memcap_params
from memcap.dpc import figures as dpc_figures
from memcap.results import read_parquet, read_provenance


def tiny_dpc(params: dict) -> None:
    """Every DPC experiment with 2 x values, one series value (two for Exp 1, so Exp 4 has slopes)."""
    q = params["dpc"]["quick"]
    for g in q["groups"].values():
        g.update(N=min(g["N"], 8), batch_size=32, batches=4, epochs=8, window=10, repetitions=2)
    for name, e in q["experiments"].items():
        e["x"]["values"] = e["x"]["values"][:2]
        if e.get("series"):
            e["series"]["values"] = e["series"]["values"][:2 if name == "exp1" else 1]
    t = q["theory"]
    t.update(prop3_N=[5], prop3_lambdas=[0, 10, 100], thm2_deltas=[0.0, 0.1], lsq_draws=1, lsq_contexts=10)


@pytest.mark.e2e
def test_dpc_target_runs_end_to_end(project):
    project.edit_params(tiny_dpc)
    # validate against the copy's own schemas (the editable install would read the live tree's)
    project.snakemake("dpc")
    root = project.root
    tables = root / "results/dpc/tables"
    runs = read_parquet(tables / "runs.parquet")
    q = project.params()["dpc"]["quick"]
    expected = sum(len(e["x"]["values"]) * len((e.get("series") or {"values": [0]})["values"])
                   * q["groups"][e["group"]]["repetitions"] for e in q["experiments"].values())
    assert len(runs) == expected
    assert set(runs.experiment) == set(q["experiments"])
    assert runs.acc_window.between(0, 1).all() and runs.acc_table.between(0, 1).all()
    assert (runs.groupby(["experiment", "series", "x"]).seed.nunique() == 2).all()   # a seed per repetition
    assert (runs.bound >= runs.chance).all() and (runs.steps == 32).all()
    assert read_provenance(tables / "runs.parquet")["params"]["group_seed"] == 2222
    assert read_parquet(tables / "summary.parquet").repetitions.eq(2).all()
    assert (root / "results/dpc/metrics.json").stat().st_size > 0
    fits = read_parquet(tables / "fits.parquet")
    assert {"linear_before_saturation", "quadratic", "piece_low", "piece_high", "cubic"} <= set(fits.fit)
    assert "QUICK STAND-IN" in (tables / "fits.md").read_text()
    theory = read_parquet(tables / "kl.parquet")
    assert set(theory.part) == {"prop3", "thm2", "lsq"}
    names = ["exp1", "exp2", "exp3", "exp4", "exp5", "exp6", "dim_exp1", "dim_exp2", "dim_exp5",
             "depth_exp1", "depth_exp2", "depth_exp5", "kl"]
    assert dpc_figures.names(q) == names
    for name in names:
        for ext in dpc_figures.FORMATS:
            assert (root / f"figures/dpc/{name}.{ext}").stat().st_size > 1000, name


def test_bad_dpc_params_are_rejected_with_the_key():
    params = yaml.safe_load((memcap_params.REPO_ROOT / "params.yaml").read_text())
    bad = copy.deepcopy(params)
    bad["dpc"]["quick"]["experiments"]["exp2"]["group"] = "nope"
    with pytest.raises(memcap_params.ParamsError, match=r"dpc\.quick\.experiments\.exp2\.group"):
        memcap_params.validate(bad)
    bad = copy.deepcopy(params)
    bad["dpc"]["quick"]["groups"]["base"]["lr"] = -1
    with pytest.raises(memcap_params.ParamsError, match=r"dpc\.quick\.groups\.base\.lr"):
        memcap_params.validate(bad)
