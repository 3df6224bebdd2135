"""A track job's peak host memory, estimated before any model is loaded (torch-free).

The same kind of estimate as the trainers' (memcap.training.memory): an upper bound of the order of
magnitude. A track's job holds its models' float32 weights (each truncated to the layers the checks
read), one batch through the largest of them without gradients (every hidden state it returns, a
layer's queries, keys, values and output, one copy of its attention scores, its MLP's hidden layer),
the rank checks' float64 copies of a batch (at most `budget_mb`, memcap.assumptions.rank), and 1 GB
for torch, transformers, sklearn, scipy and the data source. A model whose size is not in params.yaml (a checkpoint named by its repo) is sized by
its published configuration (CONFIGS); one not listed there is left out of the estimate and named.
"""

from __future__ import annotations

from memcap import memory_limit
from memcap.assumptions.grid import TEXT_TRACKS, VISION_TRACKS

RUNTIME_BYTES = 2 ** 30   # torch, transformers, sklearn and scipy (their imports: 480 MB measured), the data source
GPT2_VOCAB, BERT_VOCAB = 50257, 30522
DIGITS = 1797   # sklearn's digits: a digits source without a count reads them all
# The published configurations of the checkpoints params.yaml names by repo or stand-in (their
# config.json): hidden size, heads, MLP width, vocabulary, positions, and the layers the checks load.
CONFIGS = {
    "gpt2-large": {"hidden": 1280, "heads": 20, "mlp": 5120, "vocab": GPT2_VOCAB, "positions": 1024, "layers": 1},
    "bert-large-uncased": {"hidden": 1024, "heads": 16, "mlp": 4096, "vocab": BERT_VOCAB, "positions": 512, "layers": 1},
    "smollm2": {"hidden": 576, "heads": 9, "mlp": 1536, "vocab": 49152, "positions": 0, "layers": 2},
    "minilm": {"hidden": 384, "heads": 12, "mlp": 1536, "vocab": BERT_VOCAB, "positions": 512, "layers": 6},
    "dinov2": {"hidden": 384, "heads": 6, "mlp": 1536, "patch_size": 14, "layers": 1},
    "google/vit-base-patch16-224-in21k": {"hidden": 768, "heads": 12, "mlp": 3072, "patch_size": 16, "layers": 1},
}


def model_params(m: dict, tokens_in: int) -> int:
    """A transformer's parameters: its input map (a vocabulary's embeddings, or a patch projection of
    tokens_in numbers), positions, and per layer attention (4h² + 4h), MLP (2hm + m + h) and two norms."""
    h, w = m["hidden"], m["mlp"]
    layer = 4 * h * h + 4 * h + 2 * h * w + w + h + 4 * h
    return tokens_in * h + m.get("positions", 0) * h + m["layers"] * layer


def batch_bytes(m: dict, batch: int, n: int) -> int:
    """One batch of n tokens through the model without gradients (float32): every hidden state it
    returns, one layer's queries, keys, values and output, its attention scores (one copy: torch's
    scaled_dot_product_attention), its MLP's hidden layer. Measured: a GPT-2 layer of width 1280 at
    B = 32, n = 1024 adds 3.7 GB to the process; this counts 4.4 GB."""
    h = m["hidden"]
    return 4 * batch * n * ((m["layers"] + 1) * h + 4 * h + m["heads"] * n + m["mlp"])


def rank_bytes(budget_mb: float, batch: int, n: int, hidden: int) -> int:
    """The rank checks of a batch's (n, d) matrices in float64, a copy and the SVD's workspace: at most
    budget_mb (memcap.assumptions.rank chunks them to it)."""
    return int(min(budget_mb * 2 ** 20, 2 * 8 * batch * n * hidden))


def _vision_models(v: dict) -> tuple[list[tuple[str, dict, int, int]], list[str]]:
    g = v["geometry"]
    n = (g["image_size"] // g["patch_size"]) ** 2 + 1
    patch = g["channels"] * g["patch_size"] ** 2
    own = {**g, "positions": n, "layers": g.get("layers", 1)}
    models, unknown = [("random", own, patch, n)], []
    trained = v["trained"]
    if trained["kind"] == "pipeline":
        models.append(("trained", own, patch, n))
    elif trained.get("repo_id") in CONFIGS:
        models.append((trained["repo_id"], {**CONFIGS[trained["repo_id"]], "positions": n}, patch, n))
    else:
        unknown.append(str(trained.get("repo_id")))
    if v.get("stand_in"):
        s = CONFIGS[v["stand_in"]["name"]]
        ns = (g["image_size"] // s["patch_size"]) ** 2 + 1
        models.append((v["stand_in"]["name"], {**s, "positions": ns}, g["channels"] * s["patch_size"] ** 2, ns))
    return models, unknown


def _text_models(t: dict, track: str) -> tuple[list[tuple[str, dict, int, int]], list[str]]:
    models, unknown = [], []
    for spec in t["models"]:
        n = spec.get("context_size", t["context_size"])
        w = spec["weights"]
        if w == "random":
            c = spec["config"]
            vocab = GPT2_VOCAB if track == "gpt2" else BERT_VOCAB
            m = {"hidden": c["hidden"], "heads": c["heads"], "mlp": c.get("mlp", 4 * c["hidden"]),
                 "positions": c["positions"], "layers": 1}
            models.append((spec["name"], m, vocab, n))
        elif w in ("minilm", "random_minilm", "smollm2"):
            m = CONFIGS["minilm" if w != "smollm2" else "smollm2"]
            models.append((spec["name"], m, m["vocab"], n))
        elif spec.get("repo_id") in CONFIGS:
            m = CONFIGS[spec["repo_id"]]
            models.append((spec["name"], m, m["vocab"], n))
        else:
            unknown.append(str(spec.get("repo_id")))
    return models, unknown


def track_bytes(preset: dict, track: str) -> tuple[dict[str, int], list[str]]:
    """(the estimate's parts, the models it could not size) of one track's job at this preset."""
    if track in VISION_TRACKS:
        models, unknown = _vision_models(preset["vision"][track])
        count = preset["vision"][track]["source"].get("count") or DIGITS
        weights = sum(model_params(m, tokens_in) for _, m, tokens_in, _ in models)   # a track's models live together
    elif track in TEXT_TRACKS:
        models, unknown = _text_models(preset["text"][track], track)
        count = preset["text"][track]["count"]
        weights = 2 * max((model_params(m, vocab) for _, m, vocab, _ in models), default=0)   # one at a time, the next loading
    else:
        raise KeyError(f"no assumptions track {track!r}; tracks: {VISION_TRACKS + TEXT_TRACKS}")
    B = min(preset["batch_size"], count)   # a batch holds at most the track's examples
    batch = max((batch_bytes(m, B, n) for _, m, _, n in models), default=0)
    ranks = max((rank_bytes(preset["budget_mb"], B, n, m["hidden"]) for _, m, _, n in models), default=0)
    return {"models": 4 * weights, "activations": batch, "rank checks": ranks, "torch": RUNTIME_BYTES}, unknown


KNOBS = "batch_size, budget_mb, context_size, count or the models' sizes"


def problem(key: str, preset: dict, track: str, limit: tuple[int, str] | None = None) -> str | None:
    """None when the track's estimate fits what a job may use; else the one line that says by how much."""
    parts, unknown = track_bytes(preset, track)
    said = memory_limit.problem(key, parts, KNOBS, limit)
    return said and said + (f" (not counted: {', '.join(unknown)}, sizes unknown before loading)" if unknown else "")
