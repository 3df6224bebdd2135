"""The assumptions family's tables: every check in one Parquet, Table 1 (ViT) and Table 3 (GPT-2/BERT)
as markdown and LaTeX.

Each row names what produced it (`weights`: random init, real checkpoint, stand-in, trained by the
pipeline, or skipped) and on which data, so a stand-in can never pass for the paper's model.
TABLES names the tables -> their files in results/assumptions/tables/ (the rules list them from here).
"""

from __future__ import annotations

import pandas as pd

from memcap.assumptions.grid import TEXT_TRACKS, VISION_TRACKS

COLUMNS = [("gp", "General Position"), ("asm1", "Asm 1"), ("asm2", "Asm 2"), ("asm3", "Asm 3")]
# name -> (title, tracks); each is written as markdown and LaTeX
PAPER_TABLES = {
    "table1": ("Table 1: assumptions on ViT features", VISION_TRACKS),
    "table3": ("Table 3: assumptions on GPT-2 and BERT features (layers L0, L1)", TEXT_TRACKS),
}
FORMATS = ("md", "tex")
TABLES = {"checks": "checks.parquet", **{f"{name}_{ext}": f"{name}.{ext}" for name in PAPER_TABLES for ext in FORMATS}}


def _cell(r: pd.Series, latex: bool) -> str:
    if r["status"] == "SKIPPED":
        return "SKIPPED"
    if r["status"] != "ok":
        return "n/a"
    mark = (r"\checkmark" if latex else "✓") if r["holds"] else (r"$\times$" if latex else "✗")
    return f"{mark} {r['fraction']:.3f}"


def _rows(checks: pd.DataFrame, latex: bool) -> tuple[list[str], list[list[str]]]:
    header = ["data", "model", "layer", *[c for _, c in COLUMNS], "Kruskal rank (est.)", "T, n, d", "weights"]
    body = []
    keys = ["track", "model", "layer"]
    for (_, model, layer), g in checks.groupby(keys, sort=False):
        by = g.set_index("check")
        first = g.iloc[0]
        ok = first["status"] == "ok" or (g["status"] == "ok").any()
        shape = (f"{int(first['T'])}, {int(first['n'])}, {int(first['d'])}" if ok else "")
        est = str(int(first["kruskal_rank_est"])) if ok and pd.notna(first["kruskal_rank_est"]) else ""
        body.append([first["data_label"], model, layer, *[_cell(by.loc[c], latex) for c, _ in COLUMNS],
                     est, shape, first["weights"]])
    return header, body


def markdown(title: str, checks: pd.DataFrame) -> str:
    header, body = _rows(checks, latex=False)
    cells = pd.DataFrame([[str(c).replace("|", "/") for c in row] for row in body], columns=header)
    lines = [f"# {title}", "", _note(checks), "", cells.to_markdown(index=False, disable_numparse=True)]
    reasons = (checks.loc[checks["status"] != "ok", ["model", "layer", "status", "reason"]]
               .drop_duplicates(["model", "reason"]))
    if len(reasons):
        lines += ["", "Not run:"] + [f"- {r.model}: {r.status}, {r.reason}" for r in reasons.itertuples()]
    return "\n".join(lines) + "\n"


def latex(title: str, checks: pd.DataFrame) -> str:
    header, body = _rows(checks, latex=True)
    esc = lambda s: str(s).replace("_", r"\_").replace("&", r"\&").replace("%", r"\%").replace("#", r"\#")  # noqa: E731
    lines = [r"\begin{table}[t]", r"\centering\small", rf"\caption{{{esc(title)}}}",
             r"\begin{tabular}{" + "l" * len(header) + "}", r"\toprule", " & ".join(map(esc, header)) + r" \\",
             r"\midrule"]
    lines += [" & ".join(c if c.startswith(("\\", "$")) else esc(c) for c in map(str, row)) + r" \\" for row in body]
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


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
