"""End to end: `snakemake report` on a tiny config builds every family (capacity included), then the
scorecard, bits and the HTML page, which renders every figure in headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import Project, tiny_capacity
from infra_helpers import code_env
from memcap import results
from memcap.report import claims
from test_assumptions_pipeline import tiny_assumptions
from test_dpc_pipeline import tiny_dpc
from test_report_html import rendered
from test_theory_pipeline import _tiny as tiny_theory

pytestmark = pytest.mark.e2e


def tiny_report(p: dict, cache: str) -> None:
    """Every family on a tiny grid: what the shared pipeline (conftest.pipeline) trains once for the
    end-to-end tests of the report and of each family."""
    q = p["mlt_synthetic"]["quick"]
    sweeps = dict(q["sweeps"])
    tiny_theory(p)                                   # MLT saturation sweeps + the theory family, tiny
    for name in ("scale_head_shared", "regress_scale_head_shared"):   # Fig 2a and bits; Fig 5 (regression)
        q["sweeps"][name] = {**sweeps[name], "values": [1, 2], "dataset_sizes": [48], "min_steps": 40}
    tiny_dpc(p)
    # DPC's curves as one pack job (a tiny curve costs less than its process start; test_dpc_pipeline.py)
    p["resources"]["quick"]["families"] = {"dpc": {"train": {"pack_models": 16}}}
    tiny_assumptions(p, cache)
    tiny_capacity(p)


def test_report_target_end_to_end(pipeline, pipeline_left, tmp_path):
    """Reads the shared tiny run of every family (conftest.pipeline: `snakemake report`)."""
    project = pipeline
    env = code_env(project.root)
    rep = project.root / "results" / "report"
    tables = rep / "tables"

    card = results.read_parquet(tables / "scorecard.parquet")
    assert list(card.claim_id) == [c.claim_id for c in claims.CLAIMS] and set(card.scale) == {"quick"}
    allowed = {claims.REPRODUCED, claims.NOT_REPRODUCED, claims.INCONCLUSIVE, claims.NOT_RUN}
    assert all(v in allowed or v.startswith("skipped: ") for v in card.verdict)
    ran = card.set_index("claim_id").verdict
    # exact properties, inputs present at this scale: decided, never "not run" or inconclusive
    for cid in ("theory_construction_exact", "theory_rank_bounds", "dpc_theory_kl_bounds"):
        assert ran[cid] in (claims.REPRODUCED, claims.NOT_REPRODUCED), (cid, ran[cid])
    # inputs present, few runs: decided or inconclusive (their intervals are wide on a tiny preset)
    assert ran["mlt_thm1_trained_above_bound"] in (claims.REPRODUCED, claims.NOT_REPRODUCED, claims.INCONCLUSIVE)
    # Theorem 1's bound is judged on scalar-output rows only; the tiny capacity preset is C-way classification
    assert ran["capacity_above_mlt_bound"].startswith("skipped: no mlt/scalar rows"), ran["capacity_above_mlt_bound"]
    assert ran["dpc_exp6_slope_ratio"] != claims.NOT_RUN                 # exp6 ran (2 points: may be skipped)
    assert ran["dpc_exp2_quadratic_dh"] != claims.NOT_RUN                # every DPC experiment ran
    assert set(card.kind) == {claims.PAPER_CLAIM, claims.PROPERTY}
    metrics = json.loads((rep / "metrics.json").read_text())
    assert sum(metrics["all"].values()) == len(card)
    plot = pd.read_csv(tables / "scorecard_plot.csv")
    assert list(plot.columns) == ["claim_id", "statistic", "ci_low", "ci_high", "verdict"] and len(plot) == len(card)
    assert ran["mlt_fig2b_grows_with_n"] == claims.NOT_RUN          # its sweep is not in the tiny preset
    assert results.read_provenance(tables / "scorecard.parquet")["params"]["scale"] == "quick"
    assert "QUICK STAND-IN" in (tables / "scorecard.md").read_text()

    bits = results.read_parquet(tables / "bits.parquet")
    assert set(bits.family) == {"mlt_synthetic", "dpc"} and np.isfinite(bits.bits_per_param).all()
    assert (bits.bits_per_param >= 0).all()

    assert (project.root / "figures" / "report" / "bits.png").exists()
    cap = results.read_parquet(project.root / "results" / "capacity" / "tables" / "capacity.parquet")
    assert sorted(zip(cap.heads, cap.head_dim)) == [(1, 2), (2, 2)]
    assert (cap.capacity_ci_low.dropna() > 0).all() and (cap.probes <= 2 * 4 + 1).all()
    for lows, highs in zip(cap.seed_low, cap.seed_high):
        assert all(pd.isna(h) or pd.isna(lo) or h > lo for lo, h in zip(lows, highs))
    assert set(cap.family) == {"capacity"} and list(cap.mlt_bound) == [2, 3] and list(cap.dpc_bound) == [10, 12]
    assert results.read_provenance(project.root / project.run_path("capacity", 1, 2))["params"]["max_probes"] == 4
    probes = results.read_parquet(project.root / "results" / "capacity" / "tables" / "probes.parquet")
    assert set(probes.seed) == {0, 1} and probes.groupby(["heads", "seed"]).size().max() <= 5   # 4 + a check
    assert "Capacity by search (scale: quick, QUICK STAND-IN" in (
        project.root / "results" / "capacity" / "tables" / "capacity.md").read_text()

    page = rep / "index.html"
    pngs = sorted((project.root / "figures").glob("*/*.png"))
    assert len(re.findall(r'<img class="figure"', page.read_text())) == len(pngs) > 10
    assert rendered(page, tmp_path) == (len(pngs), len(pngs))
    assert "Nothing to be done" in pipeline_left

    # Snakemake's own report: the PNGs and markdown tables, captioned per family.
    project.snakemake("--report", str(tmp_path / "snakemake-report.zip"), env=env)
    import zipfile
    with zipfile.ZipFile(tmp_path / "snakemake-report.zip") as z:
        names = z.namelist()
    shown = [n for n in names if n.endswith(".png") and "/data/raw/" in n]
    assert len(shown) >= len(pngs), names[:20]

    # On a copy (the shared run is read by other tests), one plan for two families: a new capacity
    # architecture reruns only its own search (the rule's params leave the grids out), and a missing DPC
    # curve is the one output of the one pack job (tiny_report packs DPC): a curve that exists is in no pack.
    project = Project(Path(shutil.copytree(project.root, tmp_path / "copy", symlinks=True)))
    env = code_env(project.root)
    project.edit_params(lambda p: p["capacity"]["quick"].update(head_dim_grid=[2, 4]))
    curves = sorted(str(f.relative_to(project.root)) for f in project.root.glob("results/dpc/runs/quick/*/*.parquet"))
    (project.root / curves[0]).unlink()
    dry = project.snakemake("-n", "capacity", "dpc", env=env).stdout
    assert project.run_path("capacity", 1, 4) in dry and re.search(r"capacity_search\s+1\n", dry), dry
    pack = dry.split("rule dpc_train_pack:", 1)[1].split("\n[", 1)[0]            # up to the next job
    assert f"output: {curves[0]}\n" in pack and dry.count("rule dpc_train") == 1, dry[-3000:]
    assert not [c for c in curves[1:] if c in pack]


def test_how_each_result_was_made_matches_the_run_files(pipeline):
    """The report's how_made table (results/report/tables/how_made.*) is the run files' own record: per MLT
    sweep and DPC experiment, as many jobs and the same job-hours as their files hold, the seeds they
    trained and the commit in their provenance; the capacity probes likewise per architecture."""
    root = pipeline.root
    made = results.read_parquet(root / "results/report/tables/how_made.parquet").set_index(["family", "part"])
    for family, part, seed in (("mlt_synthetic", "sweep", "seed"), ("dpc", "experiment", "repetition")):
        files = sorted((root / "results" / family / "runs").rglob("*.parquet"))
        assert files
        per_part: dict = {}
        for f in files:
            df = pd.read_parquet(f)
            rec = per_part.setdefault(df[part].iloc[0], {"jobs": 0, "seconds": 0.0, "seeds": set(), "commits": set()})
            rec["jobs"] += 1
            rec["seconds"] += float(df.wall_time_s.max())
            rec["seeds"] |= set(df[seed])
            rec["commits"].add(results.read_provenance(f)["git_commit"][:7])
        for name, rec in per_part.items():
            row = made.loc[(family, name)]
            assert row.jobs == rec["jobs"] and row.job_hours == pytest.approx(rec["seconds"] / 3600), (family, name)
            assert row.device == "cpu" and row.packs == 0 and row.wall_hours == pytest.approx(row.job_hours)
            assert {c.removesuffix("-dirty") for c in row.commits.split(", ")} == rec["commits"]
            assert row.seeds.replace(" ", "") in {",".join(map(str, sorted(rec["seeds"]))),
                                                  f"{min(rec['seeds'])}-{max(rec['seeds'])}"}
    probes = list((root / "results/capacity/runs/probes").rglob("*.parquet"))
    cap = made.loc["capacity"]
    assert cap.jobs.sum() == len(probes) and len(cap) == 2                 # two architectures
    md = (root / "results/report/tables/how_made.md").read_text()
    assert md.startswith("# How each result was made") and "| mlt_synthetic" in md
    assert "How each result was made" in (root / "results/report/index.html").read_text()
