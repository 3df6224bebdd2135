"""GPT-2 and BERT tracks of Table 3 (MLT App. J): input sampling and layers L0, L1.

GPT-2: each example is n contiguous BPE tokens of one document (no BOS); query = the last token. The
       trained causal-LM stand-in (SmolLM2-135M) is drawn the same way over its own BPE token ids.
BERT:  [CLS] s1 [SEP] s2 with exactly n tokens (no final [SEP], token types all 0, no mask);
       len1 ~ randint(5, n-7), len2 = n-2-len1; with probability 1/2 s1, s2 are prefixes of two
       random documents ("not next"), else consecutive slices of one n-2 window; query = [CLS].
Sampling follows the reference: np.random.RandomState(seed); a document is accepted only with
>= 1.5·n tokens; the window offset is uniform; an example identical to one already drawn is not kept
(a small corpus repeats windows, which the reference's Wikipedia never does: `_Distinct`). L0 = hidden_states[0] (embedding output),
L1 = hidden_states[1] (first block, before any final layernorm).
"""

from __future__ import annotations

import numpy as np
import torch


def tokenize_documents(docs: list[tuple[str, str]], encode) -> list[np.ndarray]:
    """Token ids of every document, without special tokens (int32 arrays)."""
    return [np.asarray(encode(text), dtype=np.int32) for _, text in docs]


def _accepting(tokens: list[np.ndarray], min_len: int) -> np.ndarray:
    ok = np.array([len(t) >= min_len for t in tokens])
    if not ok.any():
        raise ValueError(f"no document has >= {min_len} tokens (1.5 x context); use longer documents "
                         f"(gensim articles, ovos concat_topic) or a smaller context_size")
    return ok


class _Distinct:
    """The examples drawn before, by content: one drawn again is not kept. On the reference's Wikipedia
    (6M articles) a repeat never happens; 2,000 windows of 1,024 tokens from gensim's 85 long articles
    repeat 10 windows exactly, and a k-subset holding both copies is never of rank k: those 10 pairs alone
    held GPT-2's L1 Kruskal rank at 59 (P(a 60-subset holds a pair) ~ 1%)."""

    def __init__(self, count: int):
        self.seen: set[bytes] = set()
        self.redrawn, self.limit = 0, 10 * count

    def new(self, example: np.ndarray) -> bool:
        key = example.tobytes()
        if key in self.seen:
            self.redrawn += 1
            if self.redrawn > self.limit:
                raise ValueError(f"the corpus gives too few distinct examples ({len(self.seen)} after "
                                 f"{self.redrawn} repeats); lower count or context_size")
            return False
        self.seen.add(key)
        return True


def gpt2_windows(tokens: list[np.ndarray], count: int, context_size: int, seed: int):
    """(ids (T, n) int64, doc index (T,), offset (T,), repeats: identical windows drawn again, not kept)."""
    rs = np.random.RandomState(seed)
    ok = _accepting(tokens, int(1.5 * context_size))
    ids, docs, offs, distinct = [], [], [], _Distinct(count)
    while len(ids) < count:
        j = rs.randint(len(tokens))
        if not ok[j]:
            continue
        start = rs.randint(0, len(tokens[j]) - context_size + 1)
        window = tokens[j][start:start + context_size]
        if not distinct.new(window):
            continue
        ids.append(window)
        docs.append(j)
        offs.append(start)
    return torch.as_tensor(np.stack(ids), dtype=torch.int64), np.array(docs), np.array(offs), distinct.redrawn


def bert_pairs(tokens: list[np.ndarray], count: int, context_size: int, seed: int, cls_id: int, sep_id: int):
    """(ids (T, n) int64, is_next (T,) bool, len1 (T,), spans, repeats): spans[t] lists the (doc, start,
    length) pieces of documents example t is made of; repeats: identical examples drawn again, not kept."""
    rs = np.random.RandomState(seed)
    n, body = context_size, context_size - 2
    ok = np.flatnonzero(_accepting(tokens, int(1.5 * context_size)))
    ids, nexts, lens, spans, distinct = [], [], [], [], _Distinct(count)
    while len(ids) < count:
        len1 = rs.randint(5, n - 7)
        len2 = body - len1
        if rs.rand() < 0.5:                                             # not next: two documents' prefixes
            ja, jb = ok[rs.randint(len(ok))], ok[rs.randint(len(ok))]
            s1, s2, is_next = tokens[ja][:len1], tokens[jb][:len2], False
            span = [(ja, 0, len1), (jb, 0, len2)]
        else:                                                           # next: one window, cut in two
            j = ok[rs.randint(len(ok))]
            start = rs.randint(0, len(tokens[j]) - body + 1)
            window = tokens[j][start:start + body]
            s1, s2, is_next = window[:len1], window[len1:], True
            span = [(j, start, body)]
        example = np.concatenate([[cls_id], s1, [sep_id], s2])
        if not distinct.new(example):
            continue
        ids.append(example)
        spans.append(span)
        nexts.append(is_next)
        lens.append(len1)
    return (torch.as_tensor(np.stack(ids), dtype=torch.int64), np.array(nexts), np.array(lens), spans,
            distinct.redrawn)


def shared_token_fraction(spans: list[list[tuple[int, int, int]]], doc_lengths: list[int]) -> np.ndarray:
    """Per example, the fraction of its document tokens that another example also contains (same document,
    same position): 0 for examples drawn from disjoint text, 1 for one entirely inside others."""
    cover = {j: np.zeros(doc_lengths[j], dtype=np.int32) for j in {j for ex in spans for j, _, _ in ex}}
    own = []
    for ex in spans:                                  # each example counts once per position it holds
        marks = {}
        for j, s, L in ex:
            marks.setdefault(j, np.zeros(doc_lengths[j], dtype=bool))[s:s + L] = True
        for j, m in marks.items():
            cover[j] += m
        own.append(marks)
    return np.array([sum(int((cover[j][m] >= 2).sum()) for j, m in marks.items()) /
                     max(1, sum(int(m.sum()) for m in marks.values())) for marks in own])


def describe_draw(what: str, spans, tokens: list[np.ndarray], context_size: int, repeats: int = 0) -> str:
    """One sentence on what a text sample is made of: how many documents it used out of those eligible
    (>= 1.5 n tokens) and how much its examples share text (a small corpus cannot give 2,000 disjoint
    windows of 1,024 tokens)."""
    eligible = int(_accepting(tokens, int(1.5 * context_size)).sum())
    used = len({j for ex in spans for j, _, _ in ex})
    shared = shared_token_fraction(spans, [len(t) for t in tokens])
    return (f"{len(spans)} {what} of n = {context_size} tokens from {used} of {eligible} eligible articles "
            f"(>= {int(1.5 * context_size)} tokens); mean share of an example's text found in another example "
            f"{shared.mean():.0%}, {int((shared == 0).sum())} share none; {repeats} identical examples drawn "
            f"again were not kept")


def random_gpt2(config: dict, seed: int):
    """A random GPT2Model with the given width (only its first block is built: L0 and L1 are read)."""
    from transformers import GPT2Config, GPT2Model

    torch.manual_seed(int(seed))
    cfg = GPT2Config(n_embd=config["hidden"], n_head=config["heads"], n_positions=config["positions"],
                     n_layer=1, tie_last_hidden_states=False)
    return GPT2Model(cfg).eval()


def random_bert(config, seed: int):
    """A random BertModel: `config` is a BertConfig (matched control) or a dict of widths."""
    from transformers import BertConfig, BertModel

    torch.manual_seed(int(seed))
    if isinstance(config, dict):
        config = BertConfig(hidden_size=config["hidden"], num_attention_heads=config["heads"],
                            intermediate_size=config["mlp"], max_position_embeddings=config["positions"],
                            num_hidden_layers=1)
    else:
        config = BertConfig.from_dict({**config.to_dict(), "num_hidden_layers": 1})
    config._attn_implementation = "eager"
    return BertModel(config, add_pooling_layer=False).eval()


@torch.no_grad()
def layers_L0_L1(model, ids: torch.Tensor) -> dict[str, torch.Tensor]:
    """{'L0': (B, n, d), 'L1': (B, n, d)} of a GPT-2 or BERT model (GPT-2's final ln_f not applied)."""
    out = model(input_ids=ids, output_hidden_states=True)
    return {"L0": out.hidden_states[0], "L1": out.hidden_states[1]}


def load_smollm2(path):
    """The SmolLM2-135M stand-in's first two blocks (LlamaModel): hidden_states[1] of a one-block model would
    be taken after the final RMSNorm, which transformers applies to the last recorded state."""
    from transformers import AutoModel

    return AutoModel.from_pretrained(str(path), num_hidden_layers=2, attn_implementation="eager").eval()


def smollm2_encoder(path):
    """encode(text) -> token ids of the stand-in's own tokenizer (built from its GGUF), no special tokens."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(path))
    tok.model_max_length = 10**9                                        # whole documents, no warning
    return lambda s: tok(s, add_special_tokens=False)["input_ids"]


def l0_repeat_note(ids: torch.Tensor, ranks: torch.Tensor, n: int) -> str:
    """The rank deficit a RoPE model's L0 has by construction: its rows are token embeddings alone, so a
    window's L0 rank is at most its number of distinct tokens."""
    distinct = torch.tensor([len(torch.unique(row)) for row in ids], dtype=torch.float64)
    ranks = ranks.to(torch.float64)
    return (f". L0 is the token embedding alone (RoPE puts position into attention, not into L0): a repeated "
            f"token repeats its row, so a window's L0 rank is at most its distinct tokens, mean {distinct.mean():.1f} "
            f"of n = {n}; mean L0 rank {ranks.mean():.1f} (deficit {n - ranks.mean():.1f}), "
            f"{int((ranks == n).sum())} of {len(ranks)} windows at rank n, "
            f"{int((ranks == distinct).sum())} at exactly their distinct tokens")
