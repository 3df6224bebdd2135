"""Loaders and model tracks on fixtures the tests build (cluster paths), and the embedded sources."""

import numpy as np
import pytest
import torch

from fixtures_assumptions import WNIDS, hf_cache, imagenet_folder, imagenet_parquet, wikipedia_forms
from memcap.assumptions import hf, images, text, wikitext
from memcap.assumptions.vision import RandomAttention, VitTracks, random_vit


def test_imagenet_folder_keeps_rgb_only_in_sorted_order(tmp_path):
    root = imagenet_folder(tmp_path / "imagenet")
    src = images.ImageFolder(str(root), count=10)
    assert len(src) == 6 and not src.meta["source"].str.contains("gray").any()
    assert src.meta["wnid"].tolist() == sorted(w for w in WNIDS for _ in range(2))
    assert src.batch(0, 4).shape == (4, 224, 224, 3)
    sample = images.ImageFolder(str(root), count=3, order="sample", seed=1)
    assert len(sample) == 3 and set(sample.meta["source"]) <= set(src.meta["source"])


def test_imagenet_parquet_first_rgb_rows(tmp_path):
    shard = imagenet_parquet(tmp_path / "imagenet-1k" / "data" / "train-00000-of-00001.parquet")
    src = images.ImageParquet(str(tmp_path / "imagenet-1k" / "data" / "train-*.parquet"), count=3)
    assert src.meta["source"].tolist() == [f"{shard.name}:0", f"{shard.name}:2", f"{shard.name}:3"]
    assert src.batch(0, 3).shape == (3, 224, 224, 3)


def test_package_photo_crops_are_seeded_and_labeled():
    a, b = images.PhotoCrops(6, seed=3), images.PhotoCrops(6, seed=3)
    assert len(a.photos) == 22 and "code-path" in a.label
    assert a.meta.equals(b.meta) and np.array_equal(a.batch(0, 6), b.batch(0, 6))
    assert not a.meta.equals(images.PhotoCrops(6, seed=4).meta)
    x = images.to_pixels(a.batch(0, 2))
    assert x.shape == (2, 3, 224, 224) and -1 <= x.min() and x.max() <= 1


def test_digits_split_is_a_partition():
    tr, te = images.Digits(split="train", seed=0), images.Digits(split="test", seed=0)
    assert len(tr) + len(te) == 1797 and not set(tr.meta["source"]) & set(te.meta["source"])


@pytest.mark.parametrize("form", ["save_to_disk", "parquet", "hub_cache"])
def test_wikipedia_three_forms_give_the_same_documents(tmp_path, form):
    made = wikipedia_forms(tmp_path)
    docs = wikitext.disk_dataset(str(made[form]), form)
    assert [t for t, _ in docs] == made["titles"] and all(len(x) > 0 for _, x in docs)


def test_embedded_wikipedia_sources():
    ovos = wikitext.load_documents({"kind": "ovos"})
    assert len(ovos) > 10000 - 100
    topics = wikitext.load_documents({"kind": "ovos", "concat_topic": True})
    assert 5 <= len(topics) <= 20 and min(len(x) for _, x in topics) > 10000


def test_fake_hf_cache_loads_by_repo_id_and_absent_is_unavailable(tmp_path):
    from transformers import BertModel, GPT2Model, ViTModel

    cache = str(hf_cache(tmp_path / "hub"))
    vit = hf.load_pretrained(ViTModel, "google/vit-base-patch16-224-in21k", cache, num_hidden_layers=1,
                             add_pooling_layer=False)
    assert vit.config.hidden_size == 32 and len(vit.encoder.layer if hasattr(vit, "encoder") else vit.layers) == 1
    assert hf.load_pretrained(BertModel, "bert-large-uncased", cache).config.hidden_size == 32
    assert hf.load_pretrained(GPT2Model, "gpt2-large", cache, n_layer=1).config.n_layer == 1
    with pytest.raises(hf.Unavailable, match="gpt2-xl"):
        hf.load_pretrained(GPT2Model, "gpt2-xl", cache)


def test_trained_vit_track_uses_cached_weights(tmp_path):
    from transformers import ViTModel

    cache = str(hf_cache(tmp_path / "hub"))
    trained = hf.load_pretrained(ViTModel, "google/vit-base-patch16-224-in21k", cache, num_hidden_layers=1,
                                 add_pooling_layer=False)
    geo = {"image_size": 224, "patch_size": 16, "channels": 3, "hidden": 32, "heads": 4, "mlp": 64}
    out = VitTracks(random_vit(geo, 0), trained)(images.to_pixels(images.PhotoCrops(2, 0).batch(0, 2)))
    assert set(out) == {"Embedding Layer", "Random Attention", "Random ViT", "Trained ViT"}
    assert all(t.shape == (2, 197, 32) for t in out.values())
    assert torch.equal(out["Embedding Layer"][0, 0], out["Embedding Layer"][1, 0])   # [CLS] row is constant


def test_random_attention_is_pre_ln_residual():
    att = RandomAttention(8, seed=0)
    x = torch.randn(3, 5, 8)
    h = torch.nn.functional.layer_norm(x, (8,))
    q, k, v = h @ att.w[0], h @ att.w[1], h @ att.w[2]
    ref = x + torch.softmax(q @ k.mT / 8 ** 0.5, -1) @ v @ att.w[3]
    assert torch.allclose(att(x), ref, atol=1e-6)


def test_gpt2_bpe_is_real_or_names_the_fetch_script(tmp_path):
    with pytest.raises(FileNotFoundError, match="fetch-gpt2-bpe.sh"):
        hf.gpt2_encoding(tmp_path)
    (tmp_path / "gpt2.tiktoken").write_text("bogus")
    with pytest.raises(ValueError, match="sha256"):
        hf.gpt2_encoding(tmp_path)
    from pathlib import Path

    real = Path(__file__).resolve().parents[1] / "data" / "gpt2-bpe"
    if not (real / "gpt2.tiktoken").exists():
        pytest.skip("data/gpt2-bpe not fetched (tools/fetch-gpt2-bpe.sh)")
    enc = hf.gpt2_encoding(real)
    assert enc.encode("Hello world") == [15496, 995] and enc.encode(" the") == [262]


def test_gpt2_one_layer_L1_equals_first_block_of_deeper_model():
    from transformers import GPT2Config, GPT2Model

    torch.manual_seed(0)
    deep = GPT2Model(GPT2Config(n_embd=32, n_head=4, n_layer=2, n_positions=64)).eval()
    one = text.random_gpt2({"hidden": 32, "heads": 4, "positions": 64}, seed=1)
    one.load_state_dict({k: v for k, v in deep.state_dict().items() if not k.startswith("h.1.")})
    ids = torch.randint(0, 1000, (2, 16))
    a, b = text.layers_L0_L1(one, ids), text.layers_L0_L1(deep, ids)
    assert torch.allclose(a["L1"], b["L1"]) and torch.allclose(a["L0"], b["L0"])   # no final ln_f on L1


def test_text_sampling_follows_the_reference_protocol():
    tokens = [np.arange(100, dtype=np.int32), np.arange(1000, 1030, dtype=np.int32), np.arange(5000, 5300, dtype=np.int32)]
    ids, docs, offs, repeats = text.gpt2_windows(tokens, 30, 24, seed=42)
    assert ids.shape == (30, 24) and set(docs) <= {0, 2}                      # doc 1 has < 1.5 n tokens
    assert all((row[1:] - row[:-1] == 1).all() for row in ids.numpy())       # contiguous windows
    pairs, is_next, len1, spans, _ = text.bert_pairs(tokens, 40, 32, seed=42, cls_id=101, sep_id=102)
    assert pairs.shape == (40, 32) and (pairs[:, 0] == 101).all()
    assert all(pairs[i, len1[i] + 1] == 102 for i in range(40)) and (pairs[:, -1] != 102).all()
    assert 0 < is_next.mean() < 1 and ((5 <= len1) & (len1 < 25)).all()
    assert torch.equal(ids, text.gpt2_windows(tokens, 30, 24, seed=42)[0])
    for i in range(40):                                                      # spans name the text drawn
        body = np.concatenate([tokens[j][s:s + L] for j, s, L in spans[i]])
        assert np.array_equal(body, np.delete(pairs[i].numpy(), [0, len1[i] + 1]))


def test_shared_token_fraction_counts_text_another_example_holds():
    lengths = [100, 50]
    # disjoint windows share nothing; a window half inside another shares half; one inside another all
    assert text.shared_token_fraction([[(0, 0, 10)], [(0, 10, 10)], [(1, 0, 10)]], lengths).tolist() == [0, 0, 0]
    assert text.shared_token_fraction([[(0, 0, 10)], [(0, 5, 10)]], lengths).tolist() == [0.5, 0.5]
    assert text.shared_token_fraction([[(0, 0, 20)], [(0, 5, 10)]], lengths).tolist() == [0.5, 1.0]
    # an example's own two pieces in one document are not "another example"
    assert text.shared_token_fraction([[(0, 0, 10), (0, 0, 5)], [(1, 0, 5)]], lengths).tolist() == [0, 0]
    tokens = [np.arange(100), np.arange(20), np.arange(300)]
    line = text.describe_draw("windows", [[(0, 0, 24)], [(2, 5, 24)]], tokens, 24)
    assert line.startswith("2 windows of n = 24 tokens from 2 of 2 eligible articles (>= 36 tokens)")
    assert line.endswith("another example 0%, 2 share none; 0 identical examples drawn again were not kept")


def test_an_example_drawn_twice_is_kept_once():
    """A short corpus repeats windows; a k-subset holding both copies is never independent, so the second
    copy is drawn again (the count says how many), and a corpus too small for `count` stops with why."""
    tokens = [np.arange(40, dtype=np.int32)]                                 # 40 - 24 + 1 = 17 windows
    ids, docs, offs, repeats = text.gpt2_windows(tokens, 15, 24, seed=0)
    assert len({tuple(r) for r in ids.tolist()}) == 15 == len(set(offs)) and repeats > 0
    with pytest.raises(ValueError, match="too few distinct examples"):
        text.gpt2_windows(tokens, 18, 24, seed=0)
