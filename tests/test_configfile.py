"""A job runs exactly the settings its DAG was built from: --configfile and --config overrides reach it."""

import pandas as pd
import pytest
import yaml

from conftest import tiny_mlt
from memcap import results

pytestmark = pytest.mark.e2e
RUN = "results/mlt_synthetic/runs/scale_head_shared/2/T64.parquet"


def test_configfile_seeds_and_steps_reach_the_job(project):
    project.edit_params(tiny_mlt)                  # params.yaml: seeds [0, 1], min_steps 40
    other = project.params()
    q = other["mlt_synthetic"]["quick"]
    q["seeds"] = [7]
    q["defaults"].update(min_steps=20, eval_every=10)
    (project.root / "tiny.yaml").write_text(yaml.safe_dump(other))

    project.snakemake(RUN, extra=("--configfile", "tiny.yaml", "--"))
    runs = pd.read_parquet(project.root / RUN)
    assert list(runs["seed"]) == [7]
    assert set(runs["min_steps"]) == {20} and set(runs["steps_planned"]) == {20}
    assert results.read_provenance(project.root / RUN)["params"]["seeds"] == [7]

    # The same target under params.yaml's own settings is a different job: it reruns with them.
    project.snakemake(RUN)
    runs = pd.read_parquet(project.root / RUN)
    assert list(runs["seed"]) == [0, 1] and set(runs["steps_planned"]) == {40}


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="needs a machine without a GPU")
def test_config_override_reaches_the_job(project):
    """`--config key=value` reaches the job: device=cuda on this CPU-only machine makes the job itself
    fail with torch's own check (params.yaml says auto, which would have run on the CPU)."""
    project.edit_params(tiny_mlt)
    proc = project.snakemake(RUN, extra=("--config", "device=cuda", "--"), check=False)
    assert proc.returncode != 0
    log = (project.root / "logs/mlt_synthetic/scale_head_shared/2/T64.log").read_text()
    assert "device='cuda' was requested but no CUDA device is visible" in log
    resolved = list((project.root / ".snakemake" / "memcap").glob("params-*.yaml"))
    assert [yaml.safe_load(f.read_text())["device"] for f in resolved] == ["cuda"]
