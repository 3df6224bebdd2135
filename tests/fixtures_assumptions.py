"""Builders of small on-disk fixtures for the assumption-check loaders (the cluster path).

- an ImageNet-style folder of real package photos (root/<wnid>/*.JPEG), plus one grayscale image
- an HF imagenet-1k-style parquet shard (column image = {bytes, path}, label)
- a Wikipedia dataset of real ovos extracts in the three on-disk forms
- a fake HF hub cache holding tiny random save_pretrained checkpoints, loadable by repo id
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from PIL import Image

SNAPSHOT = "0123456789abcdef0123456789abcdef01234567"
WNIDS = {"n02123045": "chelsea", "n03063599": "coffee", "n04266014": "rocket"}  # tabby, coffee mug, space shuttle


def _photo(name: str) -> np.ndarray:
    import skimage.data

    return getattr(skimage.data, name)()


def imagenet_folder(root: Path) -> Path:
    """3 wnid folders × 2 RGB JPEGs, plus a grayscale JPEG that an RGB-only loader must drop."""
    for wnid, name in WNIDS.items():
        (root / wnid).mkdir(parents=True, exist_ok=True)
        img = _photo(name)
        for i in range(2):
            Image.fromarray(img[i * 20:, i * 30:]).save(root / wnid / f"{wnid}_{i}.JPEG")
    Image.fromarray(_photo("camera")).save(root / "n02123045" / "n02123045_9_gray.JPEG")
    return root


def imagenet_parquet(path: Path) -> Path:
    """One shard with 4 images (the second grayscale) in imagenet-1k's column layout."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = []
    for i, name in enumerate(["chelsea", "camera", "coffee", "rocket"]):
        buf = io.BytesIO()
        Image.fromarray(_photo(name)).save(buf, format="JPEG")
        rows.append({"image": {"bytes": buf.getvalue(), "path": f"{name}.JPEG"}, "label": i})
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def wikipedia_forms(root: Path, rows: int = 50) -> dict[str, Path]:
    """Real ovos extracts as a wikimedia/wikipedia-like dataset (id, url, title, text) in three forms."""
    import datasets

    from memcap.assumptions.wikitext import ovos_extracts

    docs = ovos_extracts()[:rows]
    ds = datasets.Dataset.from_list([{"id": str(i), "url": "", "title": t, "text": x}
                                     for i, (t, x) in enumerate(docs)])
    save = root / "saved"
    ds.save_to_disk(str(save))
    shards = root / "parquet" / "20231101.en"
    shards.mkdir(parents=True)
    ds.to_parquet(str(shards / "train-00000-of-00001.parquet"))
    hub = root / "hub"
    snap = hub / "datasets--wikimedia--wikipedia" / "snapshots" / SNAPSHOT / "20231101.en"
    snap.mkdir(parents=True)
    ds.to_parquet(str(snap / "train-00000-of-00001.parquet"))
    (hub / "datasets--wikimedia--wikipedia" / "refs").mkdir()
    (hub / "datasets--wikimedia--wikipedia" / "refs" / "main").write_text(SNAPSHOT)
    return {"save_to_disk": save, "parquet": root / "parquet", "hub_cache": hub, "titles": [t for t, _ in docs]}


def _into_cache(cache: Path, repo_id: str, save) -> None:
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    snap = repo / "snapshots" / SNAPSHOT
    snap.mkdir(parents=True)
    save(str(snap))
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(SNAPSHOT)


def hf_cache(cache: Path) -> Path:
    """Tiny random ViT, BERT and GPT-2 (hidden 32, 2 layers) under the reference repo ids."""
    import torch
    from transformers import BertConfig, BertModel, GPT2Config, GPT2Model, ViTConfig, ViTModel

    torch.manual_seed(0)
    vit = ViTModel(ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                             image_size=224, patch_size=16), add_pooling_layer=False)
    bert = BertModel(BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64))
    gpt2 = GPT2Model(GPT2Config(n_embd=32, n_layer=2, n_head=4))
    _into_cache(cache, "google/vit-base-patch16-224-in21k", vit.save_pretrained)
    _into_cache(cache, "bert-large-uncased", bert.save_pretrained)
    _into_cache(cache, "gpt2-large", gpt2.save_pretrained)
    return cache
