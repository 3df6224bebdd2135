"""End to end: the `assumptions` target through the real snakemake on a tiny config."""

import json
import re
import sys
from pathlib import Path

import pandas as pd
import pytest

from memcap import results

BPE = Path(__file__).resolve().parents[1] / "data" / "gpt2-bpe"


def tiny_assumptions(params: dict, cache: str) -> None:
    q = params["assumptions"]["quick"]
    q.update(trials=40, batch_size=8, budget_mb=64)
    q["fig1"]["step"] = 4
    q["vision"]["photos"]["source"]["count"] = 6
    q["vision"]["photos"]["geometry"].update(patch_size=32, hidden=64, heads=4, mlp=128)   # n = 50, d = 64
    q["vision"]["photos"]["trained"]["cache_dir"] = cache                 # the fake cache: a real checkpoint row
    q["vision"]["digits"]["source"]["count"] = 80
    q["vision"]["digits"]["train"]["epochs"] = 2
    g, b = q["text"]["gpt2"], q["text"]["bert"]
    g.update(count=12, context_size=32, bpe_dir=str(BPE))
    g["models"][0]["config"] = {"hidden": 64, "heads": 4, "positions": 64}
    b.update(count=12, context_size=32)
    b["models"] = b["models"][:2] + [{"name": "BERT-large trained", "weights": "hf_cache",
                                      "repo_id": "bert-large-uncased-absent", "cache_dir": cache}]
    # the trained stand-ins (fetched, hundreds of MB) are tested on their own: test_assumptions_stand_ins
    for track in q["vision"].values():
        track.pop("stand_in", None)
    q["fig1"]["stand_in"] = False
    g["models"] = [m for m in g["models"] if m["weights"] != "smollm2"]


@pytest.mark.e2e
def test_assumptions_target_end_to_end(pipeline, pipeline_left):
    """Reads the shared tiny run (conftest.pipeline), whose assumptions family is `tiny_assumptions`'s."""
    project = pipeline
    root = project.root
    res = root / "results/assumptions"
    checks = results.read_parquet(res / "tables/checks.parquet")
    assert set(checks["track"]) == {"photos", "digits", "imagenet", "gpt2", "bert"}
    assert results.read_provenance(res / "tables/checks.parquet")["params"]["trials"] == 40

    by = checks.set_index(["track", "model", "layer", "check"])
    # the cached ViT is a real checkpoint row; absent weights are SKIPPED with the reason, never substituted
    assert by.loc[("photos", "Trained ViT", "first block", "asm2"), "weights"].startswith("real checkpoint")
    # the copy has no data/imagenet-sample: every imagenet row is SKIPPED and names the fetch script
    imagenet = checks[checks["track"] == "imagenet"]
    assert len(imagenet) == 16 and (imagenet["status"] == "SKIPPED").all()
    assert imagenet["reason"].str.contains("tools/fetch-imagenet-sample.sh data/imagenet-sample").all()
    assert set(imagenet["data_label"]) == {"ImageNet val sample (1300 images, VeriSilicon/acuity-dataset)"}
    skipped = checks[(checks["status"] == "SKIPPED") & (checks["track"] != "imagenet")]
    assert set(skipped["model"]) == {"GPT-2 trained", "BERT-large trained"}
    assert skipped["reason"].str.contains("no offline weights").all()
    # the digits ViT is trained by the pipeline, and its accuracy is on the row
    assert by.loc[("digits", "Trained ViT", "first block", "gp"), "weights"].startswith("trained by pipeline")
    # the [CLS] embedding is the same vector for every example: Kruskal rank 1, Asm 1 fails (paper's ✗)
    emb = by.loc[("digits", "Embedding Layer", "embedding layer", "asm1")]
    assert emb["kruskal_rank_est"] == 1 and not emb["holds"]
    # BERT L0 [CLS] is constant too
    assert by.loc[("bert", "BERT trained (MiniLM stand-in)", "L0", "gp"), "kruskal_rank_est"] == 1
    # photos: T = 6 < n = 50, so Asm 1 cannot be tested and says so
    assert by.loc[("photos", "Random ViT", "first block", "asm1"), "status"] == "n/a"

    t1 = (res / "tables/table1.md").read_text()
    t3 = (res / "tables/table3.md").read_text()
    # to_markdown pads the cells: "| SKIPPED" / "| SKIPPED |" up to spaces
    photo_rows = [line for line in t1.splitlines() if "code-path check" in line]
    assert photo_rows and not any(re.search(r"\|\s*SKIPPED", line) for line in photo_rows)
    assert "trained by pipeline" in t1 and "vs paper" in t1 and "fetch-imagenet-sample.sh" in t1
    assert "stand-in" in t3 and re.search(r"\|\s*SKIPPED\s*\|", t3) and "gensim enwiki" in t3
    assert "\\checkmark" in (res / "tables/table3.tex").read_text()
    curves = pd.read_parquet(res / "runs/curves/digits.parquet")
    assert {17, 64} <= set(curves["k"]) and curves["fraction"].is_monotonic_decreasing
    assert (res / "runs/digits_vit.pt").exists()
    metrics = json.loads((res / "metrics.json").read_text())
    assert 0 <= metrics["test_accuracy"] <= 1
    for ext in ("png", "pdf"):
        assert (root / f"figures/assumptions/fig1.{ext}").stat().st_size > 1000
    assert "Nothing to be done" in pipeline_left


def test_minilm_context_size_is_checked(project):
    project.edit_params(lambda p: p["assumptions"]["quick"]["text"]["bert"].update(context_size=512))
    r = project.run(sys.executable, "-m", "memcap", "params", "check", check=False)
    assert r.returncode == 2 and "context_size <= 383" in r.stderr
