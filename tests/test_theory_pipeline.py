"""End to end: `snakemake theory` on a tiny config, through the real rules and CLI."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from memcap import results


def _tiny(p: dict) -> None:
    q = p["mlt_synthetic"]["quick"]
    q["seeds"] = [0, 1]
    q["defaults"].update(input_dim=8, context_size=4, min_steps=40, epochs=1, eval_every=20)
    q["sweeps"] = {name: {**sw, "dataset_sizes": [48], "min_steps": 40}
                   for name, sw in q["sweeps"].items() if sw.get("analysis")}
    t = p["theory"]["quick"]
    t["seeds"] = [0]
    t["construct"].update(input_dims=[8], context_sizes=[3, 5], head_dims=[2, 8], heads=[1, 3])
    t["gradient_descent"].update(input_dim=8, context_size=3, heads=[1, 2], dataset_size_factors=[1, 2],
                                 min_steps=60, eval_every=30)
    t["bounds"]["prop2"].update(input_dim=8, context_size=3, heads=[1, 2], dataset_size=30, weight_scales=[1.0])
    t["bounds"]["prop5"].update(input_dim=4, context_size=6, heads=[1, 2], dataset_size=30, weight_scales=[1.0])


@pytest.mark.e2e
def test_theory_target_end_to_end(pipeline, pipeline_left):
    """Reads the shared tiny run (conftest.pipeline), whose theory family is `_tiny`'s."""
    project = pipeline
    res = project.root / "results" / "theory" / "tables"

    con = results.read_parquet(res / "construct.parquet")
    assert len(con) == 2 * 2 * 2 * 2                     # (n, d_h, H, context), one seed
    assert (con["status"] == "ok").all(), con["reason"].tolist()
    assert (con["rank"] == con["bound"]).all() and (con["model_residual"] < 1e-8).all()
    assert results.read_provenance(res / "construct.parquet")["params"]["theory"]["construct"]["input_dims"] == [8]

    gd = results.read_parquet(res / "gd.parquet")
    assert set(gd["method"]) == {"construction", "gradient_descent"}
    exact = gd[(gd["method"] == "construction") & (gd["dataset_size_factor"] == 1)]
    assert (exact["memorized"] == exact["dataset_size"]).all()

    bounds = pd.concat([results.read_parquet(res / "rank_bounds.parquet"),
                        results.read_parquet(res / "trained_ranks.parquet")])
    assert set(bounds["weights"]) == {"random", "constructed", "trained"} and bounds["holds"].all()

    sat = results.read_parquet(res / "saturation.parquet")
    assert set(sat["heads"]) == {2, 4} and sat["stand_in"].all()
    assert sat["frac_examples_any_unsaturated"].between(0, 1).all()

    for name in ("construct", "capacity", "rank_bounds", "fig3"):
        for ext in ("png", "pdf"):
            assert (project.root / "figures" / "theory" / f"{name}.{ext}").stat().st_size > 1000
    summary = (res / "summary.md").read_text()
    # context shared: 8 cases, 8 ok, rank = bound in 8 (to_markdown pads the cells)
    assert "STAND-IN" in summary and re.search(r"\| shared\s*\|\s*8\s*\|\s*8\s*\|\s*8\s*\|", summary)

    # A second run has nothing to do (outputs are complete and up to date).
    assert "Nothing to be done" in pipeline_left
