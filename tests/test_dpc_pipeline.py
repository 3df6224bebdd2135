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
def test_dpc_target_runs_end_to_end(pipeline, pipeline_left):
    """Reads the shared tiny run (conftest.pipeline), whose DPC family is `tiny_dpc`'s, its curves
    trained as one pack job (resources pack_models > 1)."""
    project = pipeline
    root = project.root
    assert (root / "logs/dpc/quick/pack.log").stat().st_size > 0
    assert not list(root.glob("logs/dpc/quick/*/*.log"))                    # no curve had a job of its own
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
             "depth_exp1", "depth_exp2", "depth_exp5", "kl", "fidelity"]
    assert dpc_figures.names(q) == names
    fid = read_parquet(tables / "fidelity.parquet")          # the authors' means, none at this tiny scale
    assert len(fid) == 239 and fid.ours_window.isna().all() and not fid.within.any()
    assert "trains none of the authors' grid points" in (tables / "fidelity.md").read_text()
    for name in names:
        for ext in dpc_figures.FORMATS:
            assert (root / f"figures/dpc/{name}.{ext}").stat().st_size > 1000, name
    assert "Nothing to be done" in pipeline_left


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


@pytest.mark.e2e
def test_paper_suite_resumes_in_a_fresh_clone_from_the_snapshot(project, tmp_path):
    """`memcap suite`: a session finishes one curve and stops; `snapshot` DVC-tracks it into the
    published remote; a fresh clone's `run` restores it, trains only the other curves, and the
    restored curve's numbers are the ones the first session wrote."""
    import infra_helpers as ih
    from conftest import Project

    def tiny_paper(p):
        tiny_dpc(p)
        p["dpc"]["paper"] = copy.deepcopy(p["dpc"]["quick"])
        p["dpc"]["paper"]["experiments"] = {k: p["dpc"]["quick"]["experiments"][k] for k in ("exp2", "exp6")}
    project.edit_params(tiny_paper)
    curve = project.run_path("dpc", "exp2", "all", scale="paper")
    env = ih.code_env(project.root)
    ih.git_commit_all(project)
    # the first session: one curve, then the session ends
    (project.root / ".snakemake").mkdir(exist_ok=True)
    (project.root / ".snakemake/paper.yaml").write_text("scale: {dpc: paper}\n")
    project.run("snakemake", "--cores", "1", "--configfile", ".snakemake/paper.yaml", "--", curve, env=env)
    first = read_parquet(project.root / curve)
    snap = project.run("memcap", "suite", "snapshot", "--scale", "dpc=paper", "dpc", env=env).stdout
    assert "1 finished results and 0 checkpoints of dpc at paper" in snap, snap
    project.run("git", "add", "-A")
    project.run("git", "commit", "-qm", "snapshot")

    clone = tmp_path / "clone"
    project.run("git", "clone", "-q", str(project.root), str(clone))
    fresh = Project(clone)
    # a quick result of the same curve, as `make pull` brings: its own file, neither replaced nor used
    quick_curve = fresh.run_path("dpc", "exp2", "all")
    assert quick_curve != curve and "/runs/quick/" in quick_curve and "/runs/paper/" in curve
    fresh.run("memcap", "dpc", "train-pack", "--runs", quick_curve, env=ih.code_env(clone))
    quick_bytes = (clone / quick_curve).read_bytes()
    early = fresh.run("memcap", "suite", "finish", "--cores", "1", check=False, env=ih.code_env(clone))
    assert early.returncode == 1 and "training jobs left" in early.stderr and "dpc_train" in early.stderr, early
    assert "replaced" not in early.stdout and "restored 1, kept 0" in early.stdout, early.stdout
    assert fresh.params()["scale"]["dpc"] == "quick"                       # nothing changed
    # a killed session leaves Snakemake's lock behind (here: on the table the run will write)
    locks = clone / ".snakemake" / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    (locks / "0.output.lock").write_text("results/dpc/tables/runs.parquet\n")
    out = fresh.run("memcap", "suite", "run", "--cores", "1", env=ih.code_env(clone))   # the snapshot's run
    log = out.stdout + out.stderr
    assert "wip/suite: 1 finished results and checkpoints of the run; restored 0, kept 1" in log, log
    assert "experiment=exp6" in log and "experiment=exp2" not in log, log    # only the missing curve trained
    runs = read_parquet(clone / "results/dpc/tables/runs.parquet")
    assert set(runs.scale) == {"paper"} and set(runs.experiment) == {"exp2", "exp6"}
    assert not list(locks.glob("*"))                                          # the stale lock is gone
    again = runs[runs.experiment == "exp2"].reset_index(drop=True)
    assert again.acc_window.tolist() == first.acc_window.tolist()
    assert (clone / quick_curve).read_bytes() == quick_bytes

    # every curve done: `finish` makes them the pipeline's results (params.yaml, dvc.lock), training nothing
    done = fresh.run("memcap", "suite", "finish", "--cores", "1", env=ih.code_env(clone))
    assert "dpc_train" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert fresh.params()["scale"]["dpc"] == "paper" and fresh.params()["scale"]["theory"] == "quick"
    assert "up to date" in fresh.run("dvc", "status", "dpc").stdout
    assert "Nothing to be done" in fresh.snakemake("-n", "dpc").stdout


def test_every_dpc_figure_title_names_its_scale():
    from memcap.dpc import figures

    assert figures.scale_note("paper") == " [paper scale]"
    assert "QUICK STAND-IN" in figures.scale_note("quick")
