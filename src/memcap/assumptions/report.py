"""Table 1 (ViT), Table 3 (GPT-2/BERT) as markdown and LaTeX, and Fig 1, from the checks Parquet.

Each row names what produced it (`weights`: random init, real checkpoint, stand-in, trained by the
pipeline, or skipped) and on which data, so a stand-in can never pass for the paper's model.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from memcap import results  # noqa: E402

COLUMNS = [("gp", "General Position"), ("asm1", "Asm 1"), ("asm2", "Asm 2"), ("asm3", "Asm 3")]


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


def _markdown(title: str, checks: pd.DataFrame, note: str) -> str:
    header, body = _rows(checks, latex=False)
    lines = [f"# {title}", "", note, "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c).replace("|", "/") for c in row) + " |" for row in body]
    reasons = checks.loc[checks["status"] != "ok", ["model", "layer", "status", "reason"]].drop_duplicates(["model", "reason"])
    if len(reasons):
        lines += ["", "Not run:"] + [f"- {r.model}: {r.status}, {r.reason}" for r in reasons.itertuples()]
    return "\n".join(lines) + "\n"


def _latex(title: str, checks: pd.DataFrame) -> str:
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


def write_tables(checks: pd.DataFrame, tabledir: str) -> None:
    d = Path(tabledir)
    vision = checks[checks["track"].isin(["photos", "digits"])]
    text = checks[checks["track"].isin(["gpt2", "bert"])]
    for name, title, df in (("table1", "Table 1: assumptions on ViT features", vision),
                            ("table3", "Table 3: assumptions on GPT-2 and BERT features (layers L0, L1)", text)):
        results.write_text(_markdown(title, df, _note(df)), d / f"{name}.md")
        results.write_text(_latex(title, df), d / f"{name}.tex")


def draw_fig1(curves: pd.DataFrame, figdir: str) -> None:
    """Fraction of full-rank k-subsets vs k; dashed lines at n (green) and d (red); one panel per track."""
    sns.set_theme(style="whitegrid", context="paper")
    tracks = list(dict.fromkeys(curves["track"])) if len(curves) else []
    fig, axes = plt.subplots(1, max(1, len(tracks)), figsize=(5 * max(1, len(tracks)), 3.8), squeeze=False)
    labels = {"photos": "ViT-B/16 geometry, package photos (code-path check)", "digits": "small ViT, sklearn digits"}
    for ax, track in zip(axes[0], tracks):
        c = curves[curves["track"] == track].sort_values("k")
        sns.lineplot(data=c, x="k", y="fraction", marker="o", markersize=3, ax=ax)
        ax.fill_between(c["k"], c["ci_low"], c["ci_high"], alpha=0.25)
        n, d = int(c["n"].iloc[0]), int(c["d"].iloc[0])
        ax.axvline(n, color="green", ls="--", label=f"n = {n}")
        ax.axvline(d, color="red", ls="--", label=f"d = {d}")
        ax.set(xlabel="Kruskal rank candidate k", ylabel="satisfied fraction", ylim=(-0.03, 1.03),
               title=f"{c['model'].iloc[0]}: {labels.get(track, track)}\nT = {int(c['T'].iloc[0])}, "
                     f"{int(c['trials'].iloc[0])} subsets per k")
        ax.legend(loc="lower left")
    if not tracks:
        axes[0][0].text(0.5, 0.5, "no Fig 1 curves in this preset", ha="center")
    fig.suptitle("Fig 1: fraction of full-rank random k-subsets of the [CLS] queries", fontsize=10)
    fig.tight_layout()
    Path(figdir).mkdir(parents=True, exist_ok=True)
    for ext in ("png", "pdf"):
        with results.atomic_path(Path(figdir) / f"mlt_fig1.{ext}") as tmp:
            fig.savefig(tmp, format=ext, dpi=150, metadata={"CreationDate": None} if ext == "pdf" else None)
    plt.close(fig)
