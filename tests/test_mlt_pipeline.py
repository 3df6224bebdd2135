"""End to end: the real snakemake and dvc on a tiny MLT grid."""

import json

import pandas as pd
import pytest

import infra_helpers as ih
from conftest import tiny_mlt
from memcap import results

pytestmark = pytest.mark.e2e
TINY_SWEEPS = ("scale_head_shared", "regress_scale_head_shared", "head_saturation_h2")


def _tiny(p):
    tiny_mlt(p, TINY_SWEEPS)
    p["mlt_synthetic"]["quick"]["sweeps"]["head_saturation_h2"].update(min_steps=40, dataset_sizes=[32])


def test_snakemake_produces_runs_table_figures_and_provenance(pipeline, pipeline_left):
    """Reads the shared tiny run (conftest.pipeline): Fig 2a's and Fig 5's sweeps, the saturation sweeps."""
    project = pipeline
    root = project.root / "results" / "mlt_synthetic"
    q = project.params()["mlt_synthetic"]["quick"]
    runs = pd.read_parquet(root / "tables/runs.parquet")
    assert len(runs) == len(q["seeds"]) * sum(len(s["values"]) * len(s["dataset_sizes"]) for s in q["sweeps"].values())
    assert set(runs["sweep"]) == set(q["sweeps"]) >= {*TINY_SWEEPS, "head_saturation_h4"}
    assert runs.loc[runs.task == "classification", "mem_acc"].between(0, 1).all()
    assert (runs["mem_loss"] > 0).all() and (runs["steps_run"] > 0).all()
    prov = results.read_provenance(root / "tables/runs.parquet")
    assert prov["params"]["quick"]["seeds"] == [0, 1]
    assert {"torch", "pandas", "pyarrow"} <= set(prov["packages"]) and prov["git_commit"]
    run = project.root / project.run_path("mlt_synthetic", "scale_head_shared", 2, 48)
    run_prov = results.read_provenance(run)
    assert run_prov["sweep"] == "scale_head_shared" and run_prov["params"]["vary"] == "heads"
    assert pd.read_parquet(run)["heads"].eq(2).all()                 # the swept value, not the default
    attention = pd.read_parquet(project.root / project.run_path("mlt_synthetic", "head_saturation_h2", 2, 48,
                                                                folder="attention"))
    assert len(attention) == 2 * 48 * 2 and attention["max_attention"].between(0, 1).all()
    for fig in ("fig2a", "fig2b", "fig2c", "fig4", "fig5"):
        for ext in ("png", "pdf"):
            assert (project.root / "figures" / "mlt_synthetic" / f"{fig}.{ext}").stat().st_size > 1000
    assert set(pd.read_parquet(root / "tables/fits.parquet")["sweep"]) == {"scale_head_shared"}
    assert json.loads((root / "metrics.json").read_text())["scale_head_shared"]["runs"] == 4
    summary = " ".join((root / "tables/summary.md").read_text().split())   # columns are padded
    assert "| scale_head_shared | heads | 2 | 48 | 2 |" in summary
    # Nothing left to do, and no temp files left behind.
    assert "Nothing to be done" in pipeline_left
    assert not list(project.root.glob("results/**/.*.tmp"))


def test_same_params_give_identical_parquet_bytes(project):
    project.edit_params(_tiny)
    cmd = ["python", "-m", "memcap", "mlt_synthetic", "train", "--sweep", "scale_head_shared", "--value", "2",
           "--dataset-size", "64", "--device", "cpu"]
    project.run(*cmd, "--out", "a.parquet")
    project.run(*cmd, "--out", "b.parquet")
    a = pd.read_parquet(project.root / "a.parquet").drop(columns="wall_time_s")
    b = pd.read_parquet(project.root / "b.parquet").drop(columns="wall_time_s")
    pd.testing.assert_frame_equal(a, b)          # every number, bit for bit (wall time aside)
    assert results.read_provenance(project.root / "a.parquet") == results.read_provenance(project.root / "b.parquet")


def test_a_gpu_preset_trains_the_missing_runs_as_packs_and_never_touches_a_run_that_exists(project):
    """resources pack_models > 1: the runs missing when the run starts train as packs (one job per
    pack, its outputs the runs' usual files); a run that exists (a published one) is in no pack, so it
    is neither retrained nor deleted, and the packed runs are the files a job alone would name."""
    def packed(p):
        _tiny(p)
        p["mlt_synthetic"]["quick"].update(seeds=[0, 1, 2, 3], seeds_per_job=2)
        p["resources"]["quick"]["train"].update(pack_models=8, pack_mem_mb=1000)
    project.edit_params(packed)
    kept = project.root / project.run_path("mlt_synthetic", "scale_head_shared", 2, 64)   # seeds 0, 1
    project.run("python", "-m", "memcap", "mlt_synthetic", "train", "--sweep", "scale_head_shared", "--value", "2",
                "--dataset-size", "64", "--device", "cpu", "--settings-key", kept.stem.rsplit("-", 1)[1],
                "--out", str(kept.relative_to(project.root)))
    before = (kept.read_bytes(), kept.stat().st_mtime_ns)
    dry = project.snakemake("-n", "mlt_synthetic").stdout
    assert "mlt_train_pack_" in dry and "rule mlt_train:" not in dry, dry[-3000:]
    table = "results/mlt_synthetic/tables/runs.parquet"    # the runs and their table (the figures: not needed here)
    project.snakemake(table)
    assert (kept.read_bytes(), kept.stat().st_mtime_ns) == before         # neither retrained nor deleted
    runs = pd.read_parquet(project.root / table)
    assert len(runs) == (2 + 2 + 1) * 4 and set(runs.seed) == {0, 1, 2, 3}
    packed_runs = runs[(runs.sweep == "scale_head_shared") & (runs.models_in_job > 2)]
    assert len(packed_runs) == 6                                           # 3 of its 4 jobs, in one pack
    prov = results.read_provenance(project.root / project.run_path("mlt_synthetic", "scale_head_shared", 1, 64))
    assert prov["pack"]["runs"] == 3 and prov["params"]["seeds"] == [0, 1]
    assert not list(project.root.glob("checkpoints/mlt_synthetic/finished/**/*.parquet"))
    again = project.snakemake("-n", table).stdout                          # no pack planned again
    assert "Nothing to be done" in again, again[-3000:]


def test_a_changed_why_rebuilds_what_shows_it_and_trains_nothing(restored):
    """A stand-in's `why` is in the runs table, the summary, the figures' titles and the scorecard: on
    the published results, taking Fig 4 left from quick again (its quick runs are still among the
    published runs) with a `why` plans the aggregate and all that reads it (not one run), and the plan
    carries the words. (Before, Snakemake saw nothing to do and the old words stayed.)"""
    restored.edit_params(lambda p: p["mlt_synthetic"]["published"]["sweeps"].update(
        scale_head={"from": "quick", "why": "my own reason"}))
    dry = restored.snakemake("-n", "all", env=ih.code_env(restored.root)).stdout
    assert "rule mlt_aggregate:" in dry and "my own reason" in dry, dry[-3000:]
    assert "rule mlt_figures:" in dry and "rule report_scorecard:" in dry
    assert "rule mlt_train" not in dry                       # no run retrains for a label


def test_a_dry_run_in_the_test_process_is_only_for_a_copy_of_this_code(project):
    """conftest.Project.snakemake answers `-n` in the test process (the same Snakemake entry, no new
    interpreter) only where a job would import this process's code: never for a copy whose src/ or
    schemas differ, or for a command given another environment (then it starts Snakemake)."""
    import infra_helpers

    assert project._runs_this_code(None) and project._runs_this_code(infra_helpers.code_env(project.root))
    assert not project._runs_this_code({"MEMCAP_PARAMS": "other.yaml"})
    module = project.root / "src/memcap/keys.py"
    module.write_text(module.read_text() + "\n# changed in the copy\n")
    assert not project._runs_this_code(None)
