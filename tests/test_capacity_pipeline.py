"""End to end: `snakemake capacity` on a tiny preset, through the real rules and CLI."""

from __future__ import annotations

import re

import pytest

from memcap import results

pytestmark = pytest.mark.e2e
TINY_TRAINING = {"lr": 1.0e-2, "batch_size": 64, "epochs": 1, "min_steps": 40, "eval_every": 20, "early_stop": True}


def tiny_capacity(p: dict) -> None:
    p["capacity"]["quick"].update(heads=1, head_dim=2, heads_grid=[1, 2], head_dim_grid=[2], start=8, max_evals=3,
                                  training=TINY_TRAINING)


def test_capacity_target_end_to_end(project):
    project.edit_params(tiny_capacity)
    env = {"PYTHONPATH": str(project.root / "src"), "OMP_NUM_THREADS": "1"}   # this copy's code and schemas
    project.snakemake("capacity", env=env)
    root = project.root

    assert sorted(p.name for p in (root / "results/capacity/runs").iterdir()) == ["H1_dh2.parquet", "H2_dh2.parquet"]
    cap = results.read_parquet(root / "results/capacity/tables/capacity.parquet")
    assert sorted(zip(cap.heads, cap.head_dim)) == [(1, 2), (2, 2)] and set(cap.family) == {"capacity"}
    assert (cap.capacity_low >= 0).all() and (cap.evaluations <= 3).all()
    assert ((cap.capacity_high.isna()) | (cap.capacity_high > cap.capacity_low)).all()
    assert list(cap.mlt_bound) == [2, 3] and list(cap.dpc_bound) == [1 * 2 + 8, 2 * 2 + 8]
    assert results.read_provenance(root / "results/capacity/runs/H1_dh2.parquet")["params"]["max_evals"] == 3
    for ext in ("png", "pdf"):
        assert (root / f"figures/capacity/capacity.{ext}").stat().st_size > 0

    # A new architecture reruns only its own search (the rule's params leave the grids out).
    project.edit_params(lambda p: p["capacity"]["quick"].update(head_dim_grid=[2, 4]))
    dry = project.snakemake("-n", "capacity", env=env).stdout
    assert "results/capacity/runs/H1_dh4.parquet" in dry and re.search(r"capacity_search\s+1\n", dry), dry
