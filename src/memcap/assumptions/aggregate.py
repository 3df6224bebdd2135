"""The assumptions family's tables: every check in one Parquet, Table 1 (ViT) and Table 3 (GPT-2/BERT)
as markdown and LaTeX.

Each row names what produced it (`weights`: random init, real checkpoint, stand-in, trained by the
pipeline, or skipped) and on which data, so a stand-in can never pass for the paper's model.
TABLES names the tables -> their files in results/assumptions/tables/ (the rules list them from here).
"""

from __future__ import annotations

import re

import pandas as pd

from memcap.assumptions.grid import LM_STAND_IN, TEXT_TRACKS, VISION_TRACKS, VIT_STAND_IN

COLUMNS = [("gp", "General Position"), ("asm1", "Asm 1"), ("asm2", "Asm 2"), ("asm3", "Asm 3")]
# name -> (title, tracks); each is written as markdown and LaTeX
PAPER_TABLES = {
    "table1": ("Table 1: assumptions on ViT features", VISION_TRACKS),
    "table3": ("Table 3: assumptions on GPT-2 and BERT features (layers L0, L1)", TEXT_TRACKS),
}
FORMATS = ("md", "tex")

# Table 1 of the paper, as its text states it (MLT §5.1): ViT-B/16 features
# of 2000 ImageNet images, 5000 random subsets per k. General Position fails in all cases; only Asm 1 is
# violated, at the Embedding layer; Asm 2 holds for all; Asm 3 "already holds for the Embedding layer"
# (None: the text says nothing). Printed beside the rows of the tracks in PAPER_TRACKS.
PAPER_TABLE1 = {
    "Embedding Layer": {"gp": False, "asm1": False, "asm2": True, "asm3": True},
    "Random Attention": {"gp": False, "asm1": True, "asm2": True, "asm3": None},
    "Random ViT": {"gp": False, "asm1": True, "asm2": True, "asm3": None},
    "Trained ViT": {"gp": False, "asm1": True, "asm2": True, "asm3": None},
}
PAPER_KRUSKAL = "< d"          # "the Kruskal Rank is typically much less than d, as shown by Figure 1"

# Table 3 of the paper as App. J's text states it (its ✓/✗ cells are not in the
# text): Asm 2 holds for BERT "for all cases" and fails for pre-trained GPT-2 (learned positions); GPT-2
# satisfies Asm 1 "after one layer" (so not at L0); BERT's L1 queries have Kruskal rank 291 (trained) and
# 349 (random) < n = 512, Asm 1 violated. (model, layer) -> (checks, Kruskal rank); None: not stated. The
# MiniLM stand-in is set beside the paper's trained BERT (its `weights` says stand-in).
_GPT2_TRAINED = {"gp": None, "asm1": None, "asm2": False, "asm3": None}
PAPER_TABLE3 = {
    ("GPT-2 random", "L0"): ({"gp": None, "asm1": False, "asm2": None, "asm3": None}, ""),
    ("GPT-2 random", "L1"): ({"gp": None, "asm1": True, "asm2": None, "asm3": None}, ""),
    ("GPT-2 trained", "L0"): ({**_GPT2_TRAINED, "asm1": False}, ""),
    ("GPT-2 trained", "L1"): ({**_GPT2_TRAINED, "asm1": True}, ""),
    **{(m, "L0"): ({"gp": None, "asm1": None, "asm2": True, "asm3": None}, "")
       for m in ("BERT-large random", "BERT-large trained", "BERT trained (MiniLM stand-in)")},
    ("BERT-large random", "L1"): ({"gp": None, "asm1": False, "asm2": True, "asm3": None}, "349"),
    ("BERT-large trained", "L1"): ({"gp": None, "asm1": False, "asm2": True, "asm3": None}, "291"),
    ("BERT trained (MiniLM stand-in)", "L1"): ({"gp": None, "asm1": False, "asm2": True, "asm3": None}, "291"),
}
# The trained stand-ins are set beside the paper's trained models (their `weights` says stand-in): the DINOv2
# ViT's embedding layer beside the Embedding Layer, its first block beside the Trained ViT; the SmolLM2 causal
# LM beside trained GPT-2.
PAPER_TABLE1_STAND_IN = {"embedding layer": PAPER_TABLE1["Embedding Layer"], "first block": PAPER_TABLE1["Trained ViT"]}
PAPER_TABLE3.update({(LM_STAND_IN, layer): PAPER_TABLE3[("GPT-2 trained", layer)] for layer in ("L0", "L1")})
PAPER_TRACKS = ("imagenet", *TEXT_TRACKS)


def _paper_ref(track: str, model: str, layer: str) -> tuple[dict, str] | None:
    """The paper's statement for one row (checks, Kruskal rank), or None where the paper has no such row."""
    if track == "imagenet" and model in PAPER_TABLE1:
        return PAPER_TABLE1[model], PAPER_KRUSKAL
    if track == "imagenet" and model == VIT_STAND_IN:
        return PAPER_TABLE1_STAND_IN[layer], PAPER_KRUSKAL
    if track in TEXT_TRACKS:
        return PAPER_TABLE3.get((model, layer))
    return None
TABLES = {"checks": "checks.parquet", **{f"{name}_{ext}": f"{name}.{ext}" for name in PAPER_TABLES for ext in FORMATS}}


def _cell(r: pd.Series, latex: bool) -> str:
    if r["status"] == "SKIPPED":
        return "SKIPPED"
    if r["status"] != "ok":
        return "n/a"
    mark = (r"\checkmark" if latex else "✓") if r["holds"] else (r"$\times$" if latex else "✗")
    return f"{mark} {r['fraction']:.3f}"


def _mark(holds: bool | None, latex: bool) -> str:
    if holds is None:
        return "--" if latex else "–"
    return (r"\checkmark" if latex else "✓") if holds else (r"$\times$" if latex else "✗")


def _vs_paper(by: pd.DataFrame, paper: dict, latex: bool) -> str:
    """'agrees (k/k)' or 'differs: Asm 1 (✗ vs paper ✓)' over the checks that ran and the paper states."""
    ran = [(c, name) for c, name in COLUMNS if paper.get(c) is not None and c in by.index
           and by.loc[c, "status"] == "ok"]
    if not ran:
        return "not run"
    diff = [f"{name} ({_mark(bool(by.loc[c, 'holds']), latex)} vs paper {_mark(paper[c], latex)})"
            for c, name in ran if bool(by.loc[c, "holds"]) != paper[c]]
    return f"agrees ({len(ran)}/{len(ran)})" if not diff else "differs: " + "; ".join(diff)


def _rows(checks: pd.DataFrame, latex: bool, paper: bool = False) -> tuple[list[str], list[list[str]]]:
    """Header and cells; with `paper`, a paper column after each check (filled on PAPER_TRACKS rows)."""
    checks_header = [h for c, name in COLUMNS for h in ((name, "paper") if paper else (name,))]
    header = ["data", "model", "layer", *checks_header, "Kruskal rank (est.)", *(["paper"] if paper else []),
              "T, n, d", "weights", *(["vs paper"] if paper else [])]
    body = []
    keys = ["track", "model", "layer"]
    for (track, model, layer), g in checks.groupby(keys, sort=False):
        by = g.set_index("check")
        first = g.iloc[0]
        ok = first["status"] == "ok" or (g["status"] == "ok").any()
        shape = (f"{int(first['T'])}, {int(first['n'])}, {int(first['d'])}" if ok else "")
        est = str(int(first["kruskal_rank_est"])) if ok and pd.notna(first["kruskal_rank_est"]) else ""
        found = _paper_ref(track, model, layer) if paper else None
        ref, kruskal = found if found else (None, "")
        cells = []
        for c, _ in COLUMNS:
            cells.append(_cell(by.loc[c], latex))
            if paper:
                cells.append(_mark(ref[c], latex) if ref else "")
        body.append([first["data_label"], model, layer, *cells, est,
                     *([(f"${kruskal}$" if latex and kruskal.startswith("<") else kruskal) if ref else ""]
                       if paper else []),
                     shape, first["weights"],
                     *([_vs_paper(by, ref, latex) if ref else ""] if paper else [])])
    return header, body


def _with_paper(checks: pd.DataFrame) -> bool:
    return any(_paper_ref(t, m, lay) for t, m, lay in checks[["track", "model", "layer"]].itertuples(index=False))


def _paper_note(checks: pd.DataFrame) -> str:
    return PAPER_NOTE_TABLE3 if checks["track"].isin(TEXT_TRACKS).any() else PAPER_NOTE


def markdown(title: str, checks: pd.DataFrame) -> str:
    paper = _with_paper(checks)
    header, body = _rows(checks, latex=False, paper=paper)
    cells = pd.DataFrame([[str(c).replace("|", "/") for c in row] for row in body], columns=header)
    lines = [f"# {title}", "", _note(checks), *(["", _paper_note(checks)] if paper else []), "",
             cells.to_markdown(index=False, disable_numparse=True)]
    drawn = (checks.loc[checks["drawn"].notna() & (checks["drawn"] != ""), ["model", "drawn"]].drop_duplicates()
             if "drawn" in checks else checks.iloc[:0])
    if len(drawn):
        lines += ["", "Drawn:"] + [f"- {r.model}: {r.drawn}" for r in drawn.itertuples()]
    reasons = (checks.loc[checks["status"] != "ok", ["model", "layer", "status", "reason"]]
               .drop_duplicates(["model", "reason"]))
    if len(reasons):
        lines += ["", "Not run:"] + [f"- {r.model}: {r.status}, {in_words(r.reason)}" for r in reasons.itertuples()]
    return "\n".join(lines) + "\n"


def in_words(reason: str) -> str:
    """A SKIPPED row's reason for a reader: a checkpoint absent from the local Hugging Face cache (the run
    file keeps the library's own error) becomes what to do, since memcap never downloads at run time."""
    missing = re.match(r"no offline weights for (\S+) in (.+?) \((?:OSError|ValueError)\b", reason or "")
    if not missing:
        return reason
    repo, where = missing.groups()
    return (f"no offline weights for {repo} in {where}; memcap never downloads at run time: on a machine with "
            f"internet run `huggingface-cli download {repo}` and copy its Hugging Face cache here (or set the "
            f"track's cache_dir in params.yaml)")


def latex(title: str, checks: pd.DataFrame) -> str:
    paper = _with_paper(checks)
    header, body = _rows(checks, latex=True, paper=paper)
    if paper:
        title += (" (paper: MLT Table 3 as stated in its Appendix J)" if checks["track"].isin(TEXT_TRACKS).any()
                  else " (paper: MLT Table 1 as stated in its Section 5.1)")
    esc = lambda s: str(s).replace("_", r"\_").replace("&", r"\&").replace("%", r"\%").replace("#", r"\#")  # noqa: E731
    lines = [r"\begin{table}[t]", r"\centering\small", rf"\caption{{{esc(title)}}}",
             r"\begin{tabular}{" + "l" * len(header) + "}", r"\toprule", " & ".join(map(esc, header)) + r" \\",
             r"\midrule"]
    lines += [" & ".join(c if c.startswith(("\\", "$")) else esc(c) for c in map(str, row)) + r" \\" for row in body]
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


PAPER_NOTE = ("`paper`: MLT Table 1 as its text states it (§5.1: ViT-B/16 features of 2000 ImageNet images, 5000 "
              "random subsets per k), beside the rows on real ImageNet images: General Position fails for every "
              "model, Asm 1 fails only at the Embedding layer, Asm 2 holds for all, Asm 3 already holds at the "
              "Embedding layer (– : not stated). The trained DINOv2-S/14 stand-in's embedding layer and first block "
              "are set beside the paper's Embedding Layer and Trained ViT. `vs paper` compares our ✓/✗ with it.")


PAPER_NOTE_TABLE3 = ("`paper`: MLT Table 3 as App. J's text states it (Wikipedia, 2000 texts; gpt2-large d = 1280, "
                     "n = 1024; bert-large d = 1024, n = 512): Asm 2 holds for BERT in every case and fails for "
                     "pre-trained GPT-2 (learned positions); GPT-2 meets Asm 1 after one layer (L1), not before; "
                     "BERT's L1 queries have Kruskal rank 291 (trained) and 349 (random) < 512, Asm 1 violated "
                     "(– : not stated). The MiniLM stand-in is set beside the paper's trained BERT, the SmolLM2-135M "
                     "stand-in (RoPE: its L0 is the token embedding alone) beside trained GPT-2; `vs paper` "
                     "compares our ✓/✗ with it.")


def _note(checks: pd.DataFrame) -> str:
    ok = checks[checks["status"] == "ok"]
    thr = ok["threshold"].iloc[0] if len(ok) else float("nan")
    trials = ok.loc[ok["check"] != "asm2", "trials"]
    t = int(trials.iloc[0]) if len(trials) else 0
    return (f"✓ = the fraction of full-rank random k-subsets is >= {thr} ({t} nested random subsets per k; "
            f"GP: k = min(T, d), Asm 1 and Asm 3: k = n on the query / e + mean(E)); Asm 2: fraction of "
            f"contexts of rank n (✓ only if all). Estimated Kruskal rank: largest k with fraction >= {thr}. "
            f"`weights` says what each row is; SKIPPED rows are never substituted.")


def render(name: str, fmt: str, checks: pd.DataFrame) -> str:
    """Paper table `name` (table1 | table3) in format `fmt` (md | tex) from the family's checks."""
    if name not in PAPER_TABLES or fmt not in FORMATS:
        raise ValueError(f"unknown table {name}.{fmt}; the family writes {list(PAPER_TABLES)} as {FORMATS}")
    title, tracks = PAPER_TABLES[name]
    rows = checks[checks["track"].isin(tracks)]
    return markdown(title, rows) if fmt == "md" else latex(title, rows)
