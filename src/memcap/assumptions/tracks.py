"""One track = one data source through its models: vision (photos / digits / imagenet) or text.

Every model of a track sees the same examples and the same random subsets (paired comparison). A
model whose weights are absent offline gives SKIPPED rows with the reason, never a substitute.
`weights` says what each row is: random init (as in the paper), real checkpoint, real checkpoint
used as a stand-in (MiniLM for bert-large), trained by the pipeline (digits ViT), or skipped. A fetched
image source that is absent (the ImageNet sample of tools/fetch-imagenet-sample.sh) gives SKIPPED rows
for every model, naming the script.
"""

from __future__ import annotations

import pandas as pd
import torch
from tqdm import tqdm

from memcap.assumptions import hf, images, stand_ins, suite, text, wikitext
from memcap.assumptions.grid import VIT_STAND_IN as STAND_IN_MODEL
from memcap.assumptions.grid import VIT_STAND_IN_LAYERS as STAND_IN_LAYERS
from memcap.assumptions.vision import VitTracks, dinov2_layers, load_dinov2, random_vit


def _settings(preset: dict) -> dict:
    return {k: preset[k] for k in ("threshold", "trials", "seed", "budget_mb")}


def image_source(src: dict, seed: int, size: int):
    kind = src["kind"]
    if kind == "photos":
        return images.PhotoCrops(src["count"], seed, size)
    if kind == "digits":
        return images.Digits(src.get("count"))
    if kind == "folder":
        return images.ImageFolder(src["root"], src["count"], src.get("order", "first"), seed, size, src.get("label"),
                                  src.get("fit", "resize"))
    if kind == "parquet":
        return images.ImageParquet(src["pattern"], src["count"], size, src.get("label"))
    raise ValueError(f"unknown image source kind {kind!r}")


def _absent_source_reason(src: dict, error: Exception) -> str:
    """The SKIPPED reason of a folder / parquet source that is not on this machine, with how to get it."""
    where = src.get("root") or src.get("pattern")
    return (f"no images at {where} ({error}); fetch the ImageNet validation sample with "
            f"`{images.FETCH_SCRIPT} {where}`" if src["kind"] == "folder" else
            f"no images at {where} ({error}); point the source at the imagenet-1k parquet shards")


MODELS = ("Embedding Layer", "Random Attention", "Random ViT", "Trained ViT")


def _model_base(base: dict, name: str, weights: str) -> dict:
    return {**base, "model": name, "layer": "first block" if "ViT" in name else name.lower(), "weights": weights}


def _trained_vit(spec: dict, digits_checkpoint: str | None):
    """(model or None, weights label, SKIPPED reason, extra metadata)."""
    from transformers import ViTModel

    if spec["kind"] == "pipeline":
        from memcap.assumptions.digits_vit import load_encoder

        model, metrics = load_encoder(digits_checkpoint)
        return model, f"trained by pipeline (test acc {metrics['test_accuracy']:.3f})", "", metrics
    try:
        model = hf.load_pretrained(ViTModel, spec["repo_id"], spec.get("cache_dir"), num_hidden_layers=1,
                                   add_pooling_layer=False)
        return model, f"real checkpoint ({spec['repo_id']})", "", {}
    except hf.Unavailable as e:
        return None, "skipped", str(e), {}


def _stand_in_vit(spec: dict | None):
    """(model or None, SKIPPED reason) of the track's trained ViT stand-in; a corrupted folder is an error."""
    if not spec:
        return None, ""
    try:
        return load_dinov2(stand_ins.checkpoint(spec["name"], spec.get("dir"))), ""
    except hf.Unavailable as e:
        return None, str(e)


def run_vision(preset: dict, track: str, device: torch.device, digits_checkpoint: str | None = None,
               progress: bool = True):
    """Table 1 rows (and Fig 1 curves) of one vision track; returns (checks df, curves df, metadata)."""
    cfg, settings = preset["vision"][track], _settings(preset)
    geo = cfg["geometry"]
    try:
        source = image_source(cfg["source"], preset["seed"], geo["image_size"])
    except FileNotFoundError as e:
        if cfg["source"]["kind"] not in ("folder", "parquet"):
            raise
        # Data that is fetched, not shipped (ImageNet): every row says SKIPPED and why, nothing is substituted.
        reason = _absent_source_reason(cfg["source"], e)
        base = {"track": track, "data_source": cfg["source"]["kind"],
                "data_label": cfg["source"].get("label") or f"ImageNet {cfg['source']['kind']}"}
        rows = [r for name in MODELS for r in suite.skipped_rows(_model_base(base, name, "skipped"), reason)]
        if cfg.get("stand_in"):
            rows += [r for layer in STAND_IN_LAYERS
                     for r in suite.skipped_rows({**base, "model": STAND_IN_MODEL, "layer": layer,
                                                  "weights": "skipped"}, reason)]
        return suite.to_frame(rows), pd.DataFrame(), {"source_absent": reason}
    trained, trained_label, reason, extra = _trained_vit(cfg["trained"], digits_checkpoint)
    net = VitTracks(random_vit(geo, preset["seed"]), trained, attention_seed=preset["seed"]).to(device)
    stand_in, stand_in_reason = _stand_in_vit(cfg.get("stand_in"))
    stand_in = stand_in.to(device) if stand_in is not None else None
    feats = {}
    bs = preset["batch_size"]
    for s in tqdm(range(0, len(source), bs), desc=f"ViT features ({track})", disable=not progress):
        batch = source.batch(s, s + bs)
        layers = net(images.to_pixels(batch).to(device))
        if stand_in is not None:
            pixels = images.to_pixels(batch, images.IMAGENET_MEAN, images.IMAGENET_STD).to(device)
            layers |= {(STAND_IN_MODEL, layer): t for layer, t in dinov2_layers(stand_in, pixels).items()}
        for name, tokens in layers.items():
            feats.setdefault(name, suite.Features(query_index=0, capacity=len(source))).add(tokens, preset["budget_mb"])

    base = {"track": track, "data_source": cfg["source"]["kind"], "data_label": source.label,
            "distinct_sources": source.distinct_sources}
    fig1 = preset["fig1"]
    rows, curves = [], []
    for name in MODELS:
        b = _model_base(base, name, trained_label if name == "Trained ViT" else "random init")
        if name not in feats:
            rows += suite.skipped_rows(b, reason)
            continue
        f = feats[name]
        ks = (suite.curve_grid(min(len(source), f.d), fig1["step"], [f.n, f.d])
              if name == fig1["model"] and track in fig1["tracks"] else None)
        r, curve = suite.check_rows(f, b, settings, device, ks)
        rows += r
        if curve is not None:
            curves.append(curve)
    if cfg.get("stand_in"):
        label = stand_ins.STAND_INS[cfg["stand_in"]["name"]].label
        for layer in STAND_IN_LAYERS:
            b = {**base, "model": STAND_IN_MODEL, "layer": layer,
                 "weights": "skipped" if stand_in is None else f"real checkpoint, {label}"}
            if stand_in is None:
                rows += suite.skipped_rows(b, stand_in_reason)
                continue
            f = feats[(STAND_IN_MODEL, layer)]
            ks = (suite.curve_grid(min(len(source), f.d), fig1["step"], [f.n, f.d])
                  if fig1.get("stand_in") and layer == "first block" and track in fig1["tracks"] else None)
            r, curve = suite.check_rows(f, b, settings, device, ks)
            rows += r
            if curve is not None:
                curves.append(curve)
    meta = {"source_meta": source.meta.head(50).to_dict("list"), "images": len(source),
            **({"classes": source.classes} if hasattr(source, "classes") else {}),
            **({"digits_vit": extra} if extra else {})}
    return suite.to_frame(rows), pd.concat(curves) if curves else pd.DataFrame(), meta


def _text_models(track: str, models: list[dict], bpe_dir: str | None):
    """Yield (spec, model or None, weights label, SKIPPED reason, tokenizer kind)."""
    from transformers import BertModel, GPT2Model

    for spec in models:
        w = spec["weights"]
        try:
            if track == "gpt2":
                if w == "smollm2":
                    path = stand_ins.checkpoint("smollm2", spec.get("dir"))
                    yield spec, text.load_smollm2(path), f"real checkpoint, {stand_ins.STAND_INS['smollm2'].label}", ""
                elif w == "random":
                    yield spec, text.random_gpt2(spec["config"], spec.get("seed", 0)), "random init", ""
                else:
                    m = hf.load_pretrained(GPT2Model, spec["repo_id"], spec.get("cache_dir"), n_layer=1,
                                           tie_last_hidden_states=False)
                    yield spec, m, f"real checkpoint ({spec['repo_id']})", ""
            else:
                if w in ("minilm", "random_minilm"):
                    trained = hf.load_pretrained(BertModel, str(hf.minilm_path()), None, add_pooling_layer=False)
                    if w == "minilm":
                        yield spec, trained, "real checkpoint, stand-in for bert-large (all-MiniLM-L6-v2)", ""
                    else:
                        yield spec, text.random_bert(trained.config, spec.get("seed", 0)), "random init (MiniLM config)", ""
                elif w == "random":
                    yield spec, text.random_bert(spec["config"], spec.get("seed", 0)), "random init", ""
                else:
                    m = hf.load_pretrained(BertModel, spec["repo_id"], spec.get("cache_dir"), num_hidden_layers=1,
                                           add_pooling_layer=False)
                    yield spec, m, f"real checkpoint ({spec['repo_id']})", ""
        except hf.Unavailable as e:
            yield spec, None, "skipped", str(e)


def run_text(preset: dict, track: str, device: torch.device, progress: bool = True):
    """Table 3 rows of one text track (gpt2 or bert); returns (checks df, curves df, metadata)."""
    cfg, settings = preset["text"][track], _settings(preset)
    docs = wikitext.load_documents(cfg["source"])
    if track == "gpt2":
        enc = hf.gpt2_encoding(cfg["bpe_dir"])
        tokens = text.tokenize_documents(docs, enc.encode_ordinary)
        def make(n, tokens=tokens):
            ids, docs, offs, repeats = text.gpt2_windows(tokens, cfg["count"], n, preset["seed"])
            spans = [[(j, s, n)] for j, s in zip(docs, offs)]
            return ids, text.describe_draw("windows at uniform random offsets", spans, tokens, n, repeats)
        query_index = -1
    else:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(str(hf.minilm_path()))          # uncased WordPiece, 30,522
        tok.model_max_length = 10**9                                        # whole documents, no warning
        tokens = text.tokenize_documents(docs, lambda s: tok(s, add_special_tokens=False)["input_ids"])
        def make(n):
            ids, is_next, _, spans, repeats = text.bert_pairs(tokens, cfg["count"], n, preset["seed"],
                                                              tok.cls_token_id, tok.sep_token_id)
            what = f"sentence pairs ({is_next.mean():.0%} consecutive slices, the rest two article prefixes)"
            return ids, text.describe_draw(what, spans, tokens, n, repeats)
        query_index = 0

    label = {"gensim": "gensim enwiki articles (real Wikipedia)", "ovos": "ovos Wikipedia extracts (real)",
             "disk": "Wikipedia on disk"}[cfg["source"]["kind"]]
    base = {"track": track, "data_source": cfg["source"]["kind"], "data_label": label,
            "distinct_sources": len(docs)}
    rows, bs = [], preset["batch_size"]
    for spec, model, weights, reason in _text_models(track, cfg["models"], cfg.get("bpe_dir")):
        n = spec.get("context_size", cfg["context_size"])
        if model is None:
            for layer in ("L0", "L1"):
                rows += suite.skipped_rows({**base, "model": spec["name"], "layer": layer, "weights": weights}, reason)
            continue
        model = model.to(device)
        if spec["weights"] == "smollm2":            # its own BPE: the same draw over its own token ids
            ids, drawn = make(n, text.tokenize_documents(docs, text.smollm2_encoder(model.name_or_path)))
        else:
            ids, drawn = make(n)
        feats = {"L0": suite.Features(query_index, len(ids)), "L1": suite.Features(query_index, len(ids))}
        for s in tqdm(range(0, len(ids), bs), desc=f"{spec['name']} n={n}", disable=not progress):
            for layer, t in text.layers_L0_L1(model, ids[s:s + bs].to(device)).items():
                feats[layer].add(t, preset["budget_mb"])
        for layer, f in feats.items():
            # RoPE models: L0 is the token embedding alone, so a repeated token repeats its row (said, not hidden)
            note = (text.l0_repeat_note(ids, f.tensors()[2], n) if layer == "L0" and spec["weights"] == "smollm2"
                    else "")
            rows += suite.check_rows(f, {**base, "model": spec["name"], "layer": layer, "weights": weights,
                                         "drawn": drawn + note}, settings, device)[0]
    return suite.to_frame(rows), pd.DataFrame(), {"documents": len(docs)}
