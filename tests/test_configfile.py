"""A job runs exactly the settings its DAG was built from: --configfile and --config overrides reach it."""

import pandas as pd
import pytest
import yaml

from conftest import log_of, tiny_mlt
from memcap import results

pytestmark = pytest.mark.e2e
POINT = ("scale_head_shared", 2, 64)


def test_configfile_seeds_and_steps_reach_the_job_and_never_overwrite(project):
    """--configfile settings reach the job, under a name of their own: the params.yaml run of the same
    grid point is another file, and neither run touches the other's."""
    project.edit_params(tiny_mlt)                  # params.yaml: seeds [0, 1], min_steps 40
    own = project.run_path("mlt_synthetic", *POINT)
    other = project.params()
    q = other["mlt_synthetic"]["quick"]
    q["seeds"] = [7]
    q["defaults"].update(min_steps=20, eval_every=10)
    (project.root / "tiny.yaml").write_text(yaml.safe_dump(other))
    # what the merged config resolves to (tiny.yaml is a full copy here)
    tiny_run = project.run_path("mlt_synthetic", *POINT, params_file=project.root / "tiny.yaml")
    assert tiny_run != own

    project.snakemake(tiny_run, extra=("--configfile", "tiny.yaml", "--"))
    runs = pd.read_parquet(project.root / tiny_run)
    assert list(runs["seed"]) == [7]
    assert set(runs["min_steps"]) == {20} and set(runs["steps_planned"]) == {20}
    assert results.read_provenance(project.root / tiny_run)["params"]["seeds"] == [7]
    tiny_bytes = (project.root / tiny_run).read_bytes()

    # params.yaml's own settings: a different file; the --configfile result stays byte for byte.
    project.snakemake(own)
    runs = pd.read_parquet(project.root / own)
    assert list(runs["seed"]) == [0, 1] and set(runs["steps_planned"]) == {40}
    assert (project.root / tiny_run).read_bytes() == tiny_bytes

    # The job's log names the params file it read and a command that reruns it by hand: pasted into a
    # shell without Snakemake's environment, it trains the --configfile settings again, to the same numbers.
    log = (project.root / log_of(tiny_run)).read_text()
    rerun = next(line for line in log.splitlines() if line.startswith("memcap: rerun this job with: "))
    pasted_run = "pasted/" + tiny_run.split("results/mlt_synthetic/")[1]   # a run's path elsewhere: runs/<preset>/...
    command = rerun.removeprefix("memcap: rerun this job with: ").replace(tiny_run, pasted_run)
    assert "--params " in command and "tiny" not in command.split("--params ")[1]   # the resolved file
    env = {k: v for k, v in __import__("os").environ.items() if k != "MEMCAP_PARAMS"}
    project.run("bash", "-c", command, env=env)
    pasted = pd.read_parquet(project.root / pasted_run)
    assert list(pasted["seed"]) == [7] and set(pasted["steps_planned"]) == {20}
    timing = ["wall_time_s", "segments"]
    pd.testing.assert_frame_equal(pasted.drop(columns=timing), pd.read_parquet(project.root / tiny_run).drop(columns=timing))

    # A job asked to write under the other settings' name refuses, naming why.
    proc = project.run("memcap", "mlt_synthetic", "train", "--sweep", POINT[0], "--value", "2", "--dataset-size", "64",
                       "--settings-key", tiny_run.split("-")[-1].removesuffix(".parquet"), "--out", "x.parquet",
                       check=False)
    assert proc.returncode == 2 and "stands for other settings" in proc.stderr, proc.stderr
    assert not (project.root / "x.parquet").exists()


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="needs a machine without a GPU")
def test_config_override_reaches_the_job(project):
    """`--config key=value` reaches the job: device=cuda on this CPU-only machine makes the job itself
    fail with torch's own check (params.yaml says auto, which would have run on the CPU)."""
    project.edit_params(tiny_mlt)
    proc = project.snakemake(project.run_path("mlt_synthetic", *POINT), extra=("--config", "device=cuda", "--"),
                             check=False)
    assert proc.returncode != 0
    log = (project.root / log_of(project.run_path("mlt_synthetic", *POINT))).read_text()
    assert "device='cuda' was requested but no CUDA device is usable" in log
    resolved = list((project.root / ".snakemake" / "memcap").glob("params-*.yaml"))
    assert [yaml.safe_load(f.read_text())["device"] for f in resolved] == ["cuda"]


def test_replace_workflow_config_leaves_params_yaml_out(project):
    """`--replace-workflow-config`: the config is the --configfile alone, as with Snakemake's own
    `configfile:` (the Snakefile merges params.yaml itself); validation then names what is missing."""
    (project.root / "only.yaml").write_text("scale: quick\n")
    proc = project.snakemake("mlt_synthetic", check=False,
                             extra=("-n", "--replace-workflow-config", "--configfile", "only.yaml", "--"))
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "invalid params" in out and "dpc has no preset 'quick'" in out, out[-3000:]
    # (without the flag the file is merged over params.yaml: the first test of this file)
