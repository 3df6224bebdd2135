"""The imagenet track (MLT Table 1 and Fig 1 on real ImageNet validation images): the sha256-checked fetch
script, the track on a tiny generated folder, SKIPPED rows when the folder is absent, the paper column."""

from __future__ import annotations

import copy
import hashlib
import os
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from PIL import Image

from memcap import params as memcap_params
from memcap.assumptions import aggregate, grid, images, suite, tracks

REPO = Path(__file__).resolve().parents[1]
FETCH = REPO / "tools" / "fetch-imagenet-sample.sh"
LABEL = "ImageNet val sample (1300 images, VeriSilicon/acuity-dataset)"


def jpegs(root: Path, count: int, size: int = 24, seed: int = 0) -> list[str]:
    """`count` small random RGB JPEGs named like the sample's, plus labels.txt in the sample's format."""
    root.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    names = [f"ILSVRC2012_val_{i:08d}.JPEG" for i in range(1, count + 1)]
    for name in names:
        Image.fromarray(rng.integers(0, 256, (size, size, 3), dtype=np.uint8)).save(root / name)
    (root / "labels.txt").write_text("".join(f"./data/{n}, {i % 3}\n" for i, n in enumerate(names)))
    return names


def manifest(folder: Path, src: Path, names: list[str]) -> Path:
    """A manifest folder like tools/imagenet-sample/: SHA256SUMS of the images, labels, class names."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SHA256SUMS").write_text(
        "".join(f"{hashlib.sha256((src / n).read_bytes()).hexdigest()}  {n}\n" for n in names))
    (folder / "labels.txt").write_text((src / "labels.txt").read_text())
    (folder / "synset_words.txt").write_text("n01440764 tench\nn01443537 goldfish\nn01484850 shark\n")
    return folder


def fetch(dest: Path, src: Path, sums: Path, url: str | None = None):
    env = {**os.environ, "MEMCAP_IMAGENET_SAMPLE_SRC": str(src), "MEMCAP_IMAGENET_SAMPLE_MANIFEST": str(sums)}
    if url:
        env["MEMCAP_IMAGENET_SAMPLE_URL"] = url
    return subprocess.run(["bash", str(FETCH), str(dest)], capture_output=True, text=True, env=env, timeout=60)


@pytest.fixture
def sample(tmp_path):
    src = tmp_path / "shared" / "imagenet-val"
    names = jpegs(src, 4)
    return src, manifest(tmp_path / "manifest", src, names), names


# ---------------------------------------------------------------------------------------- fetch script
def test_fetch_copies_checks_and_is_idempotent(sample, tmp_path):
    src, sums, names = sample
    dest = tmp_path / "data" / "imagenet-sample"
    r = fetch(dest, src, sums)
    assert r.returncode == 0, r.stderr
    assert "sha256 OK" in r.stdout and f"copying {len(names)} images" in r.stdout
    assert sorted(p.name for p in dest.glob("*.JPEG")) == names
    assert (dest / ".gitignore").read_text() == "*\n"
    assert (dest / "SHA256SUMS").read_text() == (sums / "SHA256SUMS").read_text()
    assert (dest / "labels.txt").read_text() == (src / "labels.txt").read_text()
    assert not list(dest.parent.glob("*.partial.*"))                      # the staging folder is gone
    start = time.perf_counter()
    again = fetch(dest, src, sums)
    assert again.returncode == 0 and "already holds" in again.stdout and time.perf_counter() - start < 5
    # a damaged image in DEST is fetched again
    (dest / names[1]).write_bytes(b"not a jpeg")
    repaired = fetch(dest, src, sums)
    assert repaired.returncode == 0 and "wrote" in repaired.stdout
    assert (dest / names[1]).read_bytes() == (src / names[1]).read_bytes()


def test_fetch_refuses_a_corrupted_source_with_a_clear_message(sample, tmp_path):
    src, sums, names = sample
    (src / names[2]).write_bytes((src / names[2]).read_bytes()[:-10])      # truncated
    (src / names[3]).unlink()                                              # missing
    dest = tmp_path / "data" / "imagenet-sample"
    r = fetch(dest, src, sums)
    assert r.returncode == 1
    assert "2 of 4 file(s)" in r.stderr and "sha256" in r.stderr
    assert names[2] in r.stderr and names[3] in r.stderr and "nothing was installed" in r.stderr
    assert not dest.exists() or not list(dest.glob("*.JPEG"))


def test_fetch_downloads_when_no_local_copy(sample, tmp_path):
    src, sums, names = sample
    dest = tmp_path / "dl"
    r = fetch(dest, tmp_path / "no-shared-copy", sums, url=src.as_uri())   # curl reads file:// like https://
    assert r.returncode == 0, r.stderr
    assert "downloading 4 images" in r.stdout and sorted(p.name for p in dest.glob("*.JPEG")) == names


def test_shipped_manifest_matches_the_sample_readme():
    sums = (REPO / "tools" / "imagenet-sample" / "SHA256SUMS").read_text().splitlines()
    labels = (REPO / "tools" / "imagenet-sample" / "labels.txt").read_text().splitlines()
    assert len(sums) == len(labels) == 1300
    assert [s.split()[1] for s in sums] == [Path(line.split(",")[0]).name for line in labels]
    assert len({line.split(",")[1] for line in labels}) == 725


# ---------------------------------------------------------------------------------------------- track
def tiny_preset(root: str, count: int = 8) -> dict:
    """The quick preset's imagenet track at a tiny geometry: 16² images, 8² patches -> n = 5, d = 16."""
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    preset = copy.deepcopy(params["assumptions"]["quick"])
    preset.update(trials=30, batch_size=4, budget_mb=64)
    preset["fig1"] = {"model": "Random Attention", "tracks": ["imagenet"], "step": 2}
    v = preset["vision"]["imagenet"]
    v["source"].update(root=root, count=count)
    v["geometry"].update(image_size=16, patch_size=8, hidden=16, heads=2, mlp=32)
    v["trained"]["cache_dir"] = str(Path(root).parent / "empty-hf-cache")
    for track in preset["vision"].values():   # the random models alone (the stand-in: test_assumptions_stand_ins)
        track.pop("stand_in", None)
    return preset


def test_imagenet_track_on_a_small_folder(tmp_path):
    root = tmp_path / "imagenet-sample"
    jpegs(root, 10, size=20)
    checks, curves, meta = tracks.run_vision(tiny_preset(str(root)), "imagenet", torch.device("cpu"), progress=False)
    assert set(checks["data_label"]) == {LABEL} and set(checks["data_source"]) == {"folder"}
    ran = checks[checks["status"] == "ok"]
    assert set(ran["model"]) == {"Embedding Layer", "Random Attention", "Random ViT"}
    assert (ran[["T", "n", "d"]].drop_duplicates().values.tolist() == [[8, 5, 16]])
    trained = checks[checks["model"] == "Trained ViT"]
    assert (trained["status"] == "SKIPPED").all() and trained["reason"].str.contains("no offline weights").all()
    emb = ran.set_index(["model", "check"]).loc[("Embedding Layer", "asm1")]
    assert emb["kruskal_rank_est"] == 1 and not emb["holds"]              # the [CLS] row is one vector
    assert meta["images"] == 8 and meta["classes"] == 3
    assert set(curves["model"]) == {"Random Attention"} and set(curves["track"]) == {"imagenet"}
    assert {5, 8} <= set(curves["k"]) and curves["fraction"].is_monotonic_decreasing


def test_imagenet_track_absent_folder_gives_skipped_rows(tmp_path):
    root = tmp_path / "not-fetched"
    checks, curves, meta = tracks.run_vision(tiny_preset(str(root)), "imagenet", torch.device("cpu"), progress=False)
    assert len(checks) == 16 and (checks["status"] == "SKIPPED").all() and curves.empty
    assert set(checks["model"]) == set(tracks.MODELS) and set(checks["data_label"]) == {LABEL}
    assert checks["reason"].str.contains(f"tools/fetch-imagenet-sample.sh {root}").all()
    assert "fetch-imagenet-sample.sh" in meta["source_absent"]


def test_flat_folder_reads_labels_and_keeps_rgb_only(tmp_path):
    root = tmp_path / "flat"
    names = jpegs(root, 3)
    Image.fromarray(np.zeros((24, 24), dtype=np.uint8)).save(root / "ILSVRC2012_val_00000099.JPEG")   # gray
    src = images.ImageFolder(str(root), count=10, size=16, label=LABEL)
    assert src.meta["source"].tolist() == names and src.meta["label"].tolist() == [0, 1, 2]
    assert src.label == LABEL and src.classes == 3 and src.batch(0, 3).shape == (3, 16, 16, 3)


def test_rule_input_is_the_folder_only_when_present(tmp_path):
    preset = tiny_preset(str(tmp_path / "imagenet-sample"))
    assert grid.data_inputs(preset, "imagenet") == [] and grid.data_inputs(preset, "photos") == []
    (tmp_path / "imagenet-sample").mkdir()
    assert grid.data_inputs(preset, "imagenet") == [str(tmp_path / "imagenet-sample")]
    (tmp_path / "imagenet-sample" / "SHA256SUMS").write_text("")
    assert grid.data_inputs(preset, "imagenet") == [str(tmp_path / "imagenet-sample" / "SHA256SUMS")]


@pytest.mark.parametrize("where, value, words", [
    ("source.kind", "zip", ["assumptions.quick.vision.imagenet.source.kind", "'zip'", "folder"]),
    ("source.label", "", ["assumptions.quick.vision.imagenet.source.label"]),
    ("geometry.patch_size", 15, ["assumptions.quick.vision.imagenet.geometry", "not a multiple"]),
])
def test_bad_imagenet_params_name_the_key(where, value, words):
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    node = params["assumptions"]["quick"]["vision"]["imagenet"]
    *parents, last = where.split(".")
    for key in parents:
        node = node[key]
    node[last] = value
    with pytest.raises(memcap_params.ParamsError) as err:
        memcap_params.validate(params)
    for word in words:
        assert word in str(err.value), str(err.value)


def test_both_presets_have_the_imagenet_track_and_its_fig1_panel():
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    for scale in ("quick", "paper"):
        p = params["assumptions"][scale]
        assert p["vision"]["imagenet"]["source"] == {"kind": "folder", "root": "data/imagenet-sample", "count": 1300,
                                                     "order": "first", "fit": "center_crop", "label": LABEL}
        assert "imagenet" in p["fig1"]["tracks"]
    assert params["assumptions"]["paper"]["trials"] == 5000


# ------------------------------------------------------------------------------------- paper column
def _rows(track: str, holds: dict) -> pd.DataFrame:
    rows = []
    for model, layer in (("Embedding Layer", "embedding layer"), ("Random Attention", "random attention"),
                         ("Random ViT", "first block"), ("Trained ViT", "first block")):
        for check in suite.CHECKS:
            skipped = model == "Trained ViT"
            rows.append({"track": track, "data_source": "folder", "data_label": LABEL if track == "imagenet" else track,
                         "model": model, "layer": layer, "weights": "skipped" if skipped else "random init",
                         "status": "SKIPPED" if skipped else "ok", "reason": "no offline weights" if skipped else "",
                         "check": check, "T": 1300, "n": 197, "d": 768, "k": 197, "trials": 1000,
                         "full_rank": 0, "fraction": 1.0 if holds.get((model, check), True) else 0.0,
                         "threshold": 0.99, "holds": holds.get((model, check), True), "kruskal_rank_est": 300})
    return suite.to_frame(rows)


def test_table1_prints_the_paper_beside_the_imagenet_rows():
    ours = {("Embedding Layer", "gp"): False, ("Embedding Layer", "asm1"): False,
            ("Random Attention", "gp"): False, ("Random Attention", "asm1"): False, ("Random ViT", "gp"): False}
    checks = pd.concat([_rows("photos", {}), _rows("imagenet", ours)])
    md = aggregate.render("table1", "md", checks)
    table = [line for line in md.splitlines() if line.startswith("|")]
    header = [c.strip() for c in table[0].strip("|").split("|")]
    assert header[3:11] == ["General Position", "paper", "Asm 1", "paper", "Asm 2", "paper", "Asm 3", "paper"]
    assert header[-1] == "vs paper" and "MLT Table 1 as its text states it" in md
    cells = {tuple(c.strip() for c in line.strip("|").split("|"))[1]: [c.strip() for c in line.strip("|").split("|")]
             for line in table[2:] if LABEL in line}
    emb, att, vit = cells["Embedding Layer"], cells["Random Attention"], cells["Random ViT"]
    assert emb[3:11] == ["✗ 0.000", "✗", "✗ 0.000", "✗", "✓ 1.000", "✓", "✓ 1.000", "✓"]
    assert att[4] == "✗" and att[6] == "✓" and att[10] == "–" and att[12] == "< d"
    assert emb[-1] == "agrees (4/4)" and vit[-1] == "agrees (3/3)"
    assert att[-1] == "differs: Asm 1 (✗ vs paper ✓)" and cells["Trained ViT"][-1] == "not run"
    photo_row = next(line for line in table[2:] if line.startswith("| photos"))
    assert [c.strip() for c in photo_row.strip("|").split("|")][4] == ""     # no paper entry for the crops
    tex = aggregate.render("table1", "tex", checks)
    assert r"paper & Asm 1" in tex and r"$\times$ vs paper \checkmark" in tex and "$< d$" in tex
    # without an imagenet row the table keeps its old columns
    assert "paper" not in aggregate.render("table1", "md", _rows("photos", {})).split("\n|")[1]


def test_center_crop_takes_the_middle_pixels_unresampled_and_refuses_a_small_image():
    """fit: center_crop (the 227-px sample): the central 224 x 224 pixels exactly as stored; an image
    smaller than the size is an error naming the way out, never a silent upscale."""
    from PIL import Image

    from memcap.assumptions.images import _fit

    pixels = np.arange(227 * 227 * 3, dtype=np.uint32).reshape(227, 227, 3) % 251
    im = Image.fromarray(pixels.astype(np.uint8))
    assert np.array_equal(_fit(im, 224, "center_crop"), pixels[1:225, 1:225].astype(np.uint8))
    assert _fit(im, 224, "resize").shape == (224, 224, 3)
    assert not np.array_equal(_fit(im, 224, "resize"), pixels[1:225, 1:225].astype(np.uint8))
    with pytest.raises(ValueError, match="use fit: resize"):
        _fit(Image.fromarray(pixels[:200, :200].astype(np.uint8)), 224, "center_crop")


def test_fig1_draws_the_papers_reading_on_the_imagenet_random_attention_panel():
    from memcap.assumptions import figures

    curve = pd.DataFrame({"track": "imagenet", "model": "Random Attention", "k": [1, 197, 241, 301], "fraction": [1, 1, .5, 0],
                          "ci_low": [1, 1, .4, 0], "ci_high": [1, 1, .6, 0], "n": 197, "d": 768, "T": 1300, "trials": 1000})
    fig = figures.draw_fig1(curve)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]   # the one legend, outside the panels
    assert any("paper's Fig 1 (authors)" in lab and "240–250" in lab for lab in labels)
    other = figures.draw_fig1(curve.assign(track="photos"))
    assert not any("paper's Fig 1" in t.get_text() for t in other.legends[0].get_texts())


def _text_rows(rows: list[tuple[str, str, str, dict]]) -> pd.DataFrame:
    out = []
    for track, model, layer, holds in rows:
        for check in suite.CHECKS:
            out.append({"track": track, "data_source": "gensim", "data_label": "gensim", "model": model,
                        "layer": layer, "weights": "random init", "status": "ok", "reason": "", "check": check,
                        "T": 2000, "n": 512, "d": 1024, "k": 512, "trials": 5000, "full_rank": 0,
                        "fraction": 1.0 if holds.get(check, True) else 0.0, "threshold": 0.99,
                        "holds": holds.get(check, True), "kruskal_rank_est": 300,
                        "drawn": f"2000 examples for {model}"})
    return suite.to_frame(out)


def test_table3_prints_the_papers_appendix_j_beside_its_rows():
    """App. J: GPT-2 meets Asm 1 after one layer; BERT's L1 queries have Kruskal rank 349 (random) < 512, Asm 1
    violated, Asm 2 holds; a row the paper has not (MiniLM-config random BERT) gets no paper entry."""
    checks = pd.concat([_text_rows([("gpt2", "GPT-2 random", "L1", {"asm1": False}),
                                    ("bert", "BERT-large random", "L1", {"asm1": False}),
                                    ("bert", "BERT random (MiniLM config)", "L1", {})])])
    md = aggregate.render("table3", "md", checks)
    assert "MLT Table 3 as App. J's text states it" in md
    rows = {line.split("|")[2].strip(): [c.strip() for c in line.strip("|").split("|")]
            for line in md.splitlines() if line.startswith("| gensim")}
    assert rows["GPT-2 random"][-1] == "differs: Asm 1 (✗ vs paper ✓)"
    bert = rows["BERT-large random"]
    assert bert[-1] == "agrees (2/2)" and bert[12] == "349" and bert[11] == "300"
    assert rows["BERT random (MiniLM config)"][-1] == "" and rows["BERT random (MiniLM config)"][6] == ""
    assert "Drawn:\n- GPT-2 random: 2000 examples for GPT-2 random" in md      # what each sample is made of
