"""One self-contained HTML report: scorecard, bits per parameter, capacity, every figure (base64 PNG).

Markup only where this module writes it: every value from params, run files or tables is escaped
(html.escape, pandas' to_html, tables_html). A small inline script counts the figures the browser
decoded (naturalWidth > 0) and writes the count into `#render-check`, so a headless browser's DOM
dump proves the figures render.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path

import pandas as pd

from memcap.scales import scale_note
from memcap.report import claims

# Which paper claim each figure checks, by figure "<family>/<name>" (figures/<family>/<name>.png); a key
# also captions the figures named "<name>_..." of that family. The scorecard's claim ids where one applies.
CAPTIONS = {
    "assumptions/fig1": "MLT Fig 1 / Table 1: Kruskal-rank satisfied fraction vs k (Asm 1 at n, GP at d).",
    "mlt_synthetic/fig2a": "MLT Fig 2a: memorization linear in H before saturation (claim mlt_fig2a_linear_H).",
    "mlt_synthetic/fig2b": "MLT Fig 2b: memorization grows with context size n (claim mlt_fig2b_grows_with_n).",
    "mlt_synthetic/fig2c": "MLT Fig 2c: no gain past d_h = n (claim mlt_fig2c_no_gain_past_n).",
    "theory/fig3": "MLT Fig 3: softmax saturation; not every head saturates "
                   "(claim mlt_fig3_not_all_heads_saturate).",
    "mlt_synthetic/fig4": "MLT Fig 4: random contexts; linear in H remains (claim mlt_fig4_linear_H_random), "
                          "growth in n weaker than linear (claim mlt_fig4_n_weaker_than_linear).",
    "mlt_synthetic/fig5": "MLT Fig 5: regression train MSE falls with H and n "
                          "(claims mlt_fig5_regression_H, mlt_fig5_regression_n).",
    "theory/construct": "MLT Theorem 1: the construction memorizes H(r−1)+1 exactly (claim theory_construction_exact).",
    "theory/capacity": "MLT Theorem 1: construction vs gradient descent vs the bound.",
    "theory/rank_bounds": "MLT Props 2, 5: rank(Z) below its upper bounds (claim theory_rank_bounds).",
    "dpc/exp1": "DPC Exp 1 (Fig 1a): linear in H, slope above the bound's (claim dpc_exp1_linear_H_above_bound).",
    "dpc/exp2": "DPC Exp 2 (Fig 1b): roughly quadratic in d_h (claim dpc_exp2_quadratic_dh).",
    "dpc/exp3": "DPC Exp 3 (Fig 2a): linear in d up to d_h, then flat (claim dpc_exp3_linear_then_flat_d).",
    "dpc/exp4": "DPC Exp 4 (Fig 2b): Exp 1 slopes between quadratic and cubic in d (claim dpc_exp4_slope_power).",
    "dpc/exp5": "DPC Exp 5 (Fig 3): MLP ahead at mid sizes, attention linear (claim dpc_exp5_mlp_mid_aot_linear).",
    "dpc/exp6": "DPC Exp 6 (Fig 4): slope ≈ 1.3–1.7× the bound's (claim dpc_exp6_slope_ratio).",
    "dpc/kl": "DPC Prop 3, Thm 2, LS vs WLS: KL next to its bound (claim dpc_theory_kl_bounds).",
    "capacity/capacity": "Capacity T₅₀, the dataset size half the trained models memorize (95% interval; dots: each "
                         "seed's threshold; open: a lower bound), against H per setting and against d_h, beside the "
                         "bound that applies (MLT Theorem 1 for one logit, DPC Corollary 1 for associations; none for "
                         "100 classes) and the fitted power law (claims capacity_above_mlt_bound, capacity_vs_dpc_bound, "
                         "capacity_linear_in_heads, capacity_no_gain_past_n).",
    "capacity/bits": "Bits per parameter: at T₅₀ (T₅₀·log2 C / params: every memorized example counts log2 C bits) "
                     "and without a threshold (Morris et al.: Σ max(0, log2 C − loss in bits) at the best T, which also "
                     "counts examples half-learned), beside the published capacities.",
    "capacity/sensitivity": "How much the paper's protocol limits T₅₀: its rise per doubling of the steps (paired "
                            "seeds; converged inside ±10%), and T₅₀ at lr × 1/3, × 3 or the best of the three over "
                            "T₅₀ at the paper's lr.",
    "capacity/transition": "The memorization transition: per architecture of each setting's H grid, the fraction "
                           "of seeds whose threshold lies above T, and the fitted P(memorized | T); T₅₀ is where "
                           "it crosses one half, its steepness the transition's width.",
    "report/forest": "Every claim's statistic with its 95% interval over its accepted region; X: the same test "
                     "on the DPC authors' published means.",
    "report/bits": "Bits per parameter of every trained model, beside ≈3.6 (LMs on random tokens) and ≈2 "
                   "(knowledge) bits/param.",
}
VERDICT_COLORS = {"reproduced": "#d4edda", "not reproduced": "#f8d7da", "inconclusive": "#d6e4f0",
                  "not run at this scale": "#e2e3e5"}
STYLE = """body{font-family:sans-serif;max-width:1100px;margin:auto;padding:1em}
table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top}
figure{margin:1.5em 0}figure img{max-width:100%}figcaption{font-size:13px;color:#333}
pre{background:#f6f6f6;padding:.5em;overflow-x:auto;font-size:11px}"""
RENDER_CHECK = """<script>
window.addEventListener('load', function () {
  var imgs = Array.from(document.querySelectorAll('img.figure'));
  var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0 && i.naturalHeight > 0; });
  var el = document.getElementById('render-check');
  el.textContent = ok.length + '/' + imgs.length;
  el.setAttribute('data-rendered', ok.length);
  el.setAttribute('data-total', imgs.length);
});
</script>"""


def figure_key(path: Path) -> str:
    """'<family>/<name>' of figures/<family>/<name>.png (names repeat across families: capacity)."""
    return f"{path.parent.name}/{path.stem}"


def caption(key: str) -> str:
    for k, text in CAPTIONS.items():
        if key == k or key.startswith(k + "_"):
            return text
    family, _, name = key.rpartition("/")
    return f"Figure {name} of the {family or 'unknown'} family (no scorecard claim of its own)."


def _img(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode()
    key = figure_key(path)
    name = html.escape(key)
    return (f'<figure id="fig-{html.escape(key.replace("/", "-"))}"><img class="figure" alt="{name}" '
            f'src="data:image/png;base64,{data}"><figcaption><b>{name}</b>: {html.escape(caption(key))}'
            f"</figcaption></figure>")


HEADERS = ["id", "source", "claim", "statistic [95% CI]", "accept", "verdict", "on the authors' means", "reading",
           "paper's number (source)", "test", "scale", "detail"]


def _scorecard_html(card: pd.DataFrame, kind: str, table_id: str) -> str:
    rows = []
    for r in card[card.kind == kind].itertuples():
        color = VERDICT_COLORS.get(r.verdict, "#fff3cd")          # skipped: yellow
        paper = f"{r.paper_value} ({r.paper_source})" if r.paper_value else ""
        theirs = f"{r.verdict_authors} ({r.statistic_authors:.4g})" if r.verdict_authors else ""
        cells = [r.claim_id, f"{r.paper} {r.source}", r.claim, claims.interval(r), r.accept, r.verdict, theirs,
                 r.reading, paper, r.test, r.scale, r.detail]
        rows.append(f'<tr style="background:{color}">' + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells)
                    + "</tr>")
    head = "".join(f"<th>{html.escape(h)}</th>" for h in HEADERS)
    return f'<table id="{table_id}"><tr>{head}</tr>{"".join(rows)}</table>'


def _counts(card: pd.DataFrame) -> str:
    counts = card.verdict.str.replace(r"^skipped:.*", "skipped", regex=True).value_counts()
    return "<p>" + html.escape(", ".join(f"{k}: {v}" for k, v in counts.items())) + "</p>"


def _compact(card: pd.DataFrame) -> str:
    """The first screen's table: claim, paper, scale, verdict on ours and on the authors' numbers."""
    rows = []
    for r in card.itertuples():
        color = VERDICT_COLORS.get(r.verdict, "#fff3cd")
        ours = r.verdict if not r.verdict.startswith("skipped") else "skipped"
        cells = [r.claim_id, f"{r.paper} {r.source}", r.scale, ours, r.verdict_authors or "–"]
        rows.append(f'<tr style="background:{color}">' + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells)
                    + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in ("claim", "paper", "scale", "verdict (ours)", "on the authors' numbers"))
    return f'<table id="compact"><tr>{head}</tr>{"".join(rows)}</table>'


# What each family table shows and how to read it: the sentence its section opens with.
TABLE_INTROS = {
    "MLT runs summary": "Per MLT sweep and grid point, the seeds' mean memorization (accuracy × T, or MSE) and "
                        "how many stopped early; each row names its preset and seeds.",
    "MLT theory summary": "Theorem 1's construction, gradient descent and the rank bounds per setting: exact "
                          "memorization is residual below its error bound.",
    "DPC fitted slopes": "Each DPC experiment's fitted curve (slope per unit of x, its fit and interval) beside "
                         "the bound's slope.",
    "Table 1": "MLT Table 1: the fraction of random k-subsets of real embeddings that are full rank, per model and "
               "check (✓: the assumption holds at the paper's k).",
    "Table 3": "MLT Table 3: the same checks on text models (BERT, GPT-2 geometry) over Wikipedia sentences.",
    "DPC fidelity (ours vs the authors)": "Our DPC means beside the authors' published ones, point by point, "
                                          "with the stated tolerance.",
    "Provenance": "Per family, the commits and package versions its results came from (clean, explained or "
                  "untraceable).",
    "How each result was made": "Per family, sweep and device, from the run files: seeds, jobs, job-hours "
                                "(each job's time) and wall-hours (a pack's time once), packs and commits.",
}


def tables_html(markdown_text: str) -> str:
    """A markdown page of tables (pandas' to_markdown) as HTML: its tables as <table>, headings and text
    as they read."""
    import re

    import markdown

    # Every value in these tables comes from params, run files or tables: escaped before the converter,
    # which would keep raw HTML (a preset's `why:` or a model name holding <script> stays text).
    body = markdown.markdown(html.escape(markdown_text, quote=False), extensions=["tables"])
    return re.sub(r"<(/?)h([1-3])>", lambda m: f"<{m[1]}h{int(m[2]) + 3}>", body)   # below the page's own


def build(card: pd.DataFrame, bits_md: str, capacity: pd.DataFrame | None, figures: list[Path],
          tables: dict[str, str], scale: str, forest: Path | None = None,
          capacity_laws: pd.DataFrame | None = None, capacity_scale: str | None = None) -> str:
    """The whole page as one string (figures inlined, no external resource). The first screen answers
    "did it reproduce?" (a compact table and the forest plot); the tests and details fold away."""
    notes = [f"rows at {s}: {scale_note(s)}" for s in sorted(set(card.scale)) if scale_note(s)]
    stand_in = f" — {'; '.join(notes)}" if notes else ""     # escaped below with the scale
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>memcap reproduction report</title>"
             f"<style>{STYLE}</style></head><body>",
             f"<h1>memcap: did it reproduce? (scale: {html.escape(scale + stand_in)})</h1>",
             "<p>Mahdavi, Liao, Thrampoulidis (ICLR 2024, “MLT”) and Dana, Pydi, Chevaleyre (AISTATS 2025, “DPC”). "
             "Every number below is computed from the pipeline's Parquet results; each verdict applies the test "
             "written next to its claim in <code>memcap.report.claims</code>.</p>",
             f"<p>Figures rendered: <span id='render-check'>not checked (scripts off)</span></p>",
             "<h2>Did it reproduce?</h2>",
             "<p>One row per claim of both papers: its verdict on our results at the scale shown (green "
             "reproduced, red not, blue inconclusive: the interval straddles the accepted region), and on the "
             "DPC authors' published means where they exist.</p>", _counts(card), _compact(card),
             *([_img(forest)] if forest else []),
             "<details><summary>How to read a verdict, the tests and the details of every claim</summary>",
             "<h2>Claims scorecard</h2>", f"<p>{html.escape(claims.HOW_TO_READ).replace('**', '')}</p>",
             "<h3>Paper claims</h3>", "<p>What the papers state, each with its written test, the region its "
             "95% interval must fall in, and the verdict.</p>", _counts(card[card.kind == claims.PAPER_CLAIM]),
             _scorecard_html(card, claims.PAPER_CLAIM, "scorecard"),
             "<h3>Verified properties</h3>", "<p>Properties of the theorems and of the trained layers that memcap "
             "checks directly (exactly, or against the capacity search's brackets).</p>",
             _counts(card[card.kind == claims.PROPERTY]),
             _scorecard_html(card, claims.PROPERTY, "properties"), "</details>",
             "<h2>Bits per parameter</h2>",
             "<p>Memorized bits (Σ over training examples of log2 C minus the example's loss in bits, floored at "
             "0) per parameter of every trained model, by family, beside the published capacities in bits per "
             "parameter.</p>", tables_html(bits_md)]
    if capacity is not None and len(capacity):
        from memcap.capacity import words as capacity_words

        parts += ["<h2>Capacity by search</h2>",
                  f"<p>{html.escape(capacity_words.T50)}: per architecture, with its 95% profile-likelihood "
                  "interval, T₉₀ and the transition's width T₁₀/T₉₀, fitted to every seed's bracket [T_pass, T_fail); "
                  "T₅₀·log2 C / params in bits per parameter beside both papers' counts; the rise of T₅₀ per doubling "
                  "of the training steps, converged when its 90% interval lies within ±10%.</p>",
                  f"<p>{html.escape(capacity_words.title(capacity, capacity_scale or str(capacity.scale.iloc[0])))}</p>",
                  "<ul>" + "".join(f"<li>{html.escape(t)}</li>" for t in capacity_words.sentences(
                      capacity, capacity_laws) + capacity_words.findings(capacity, capacity_laws)) + "</ul>",
                  capacity_words.shown(capacity).to_html(index=False, na_rep="–", table_id="capacity"),
                  f"<p>{html.escape(capacity_words.anchors_text())}</p>"]
        if capacity_laws is not None:
            parts += ["<h3>Laws</h3>", "<p>Exponents of T₅₀ ∝ x^α fitted over every architecture of a grid, lower "
                      "bounds as censored observations (profile-likelihood interval), and the ratio past n.</p>",
                      capacity_words.laws_shown(capacity_laws).to_html(
                index=False, na_rep="–", table_id="capacity-laws")]
    parts += ["<h2>Figures</h2>", "<p>Every family's figures, each captioned with the claim it checks; every "
              "title names its scale and settings.</p>"]
    parts += [_img(p) for p in figures]
    if tables:
        parts += ["<h2>Family tables</h2>", "<p>The families' own tables, as their markdown files hold them.</p>"]
        for name, text in tables.items():
            intro = TABLE_INTROS.get(name, "")
            parts += [f"<h3>{html.escape(name)}</h3>", *([f"<p>{html.escape(intro)}</p>"] if intro else []),
                      f'<div class="table">{tables_html(text)}</div>']
    parts += [RENDER_CHECK, "</body></html>"]
    return "\n".join(parts)
