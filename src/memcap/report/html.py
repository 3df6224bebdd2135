"""One self-contained HTML report: scorecard, bits per parameter, capacity, every figure (base64 PNG).

Markup only where this module writes it: every value from params, run files or tables is escaped
(html.escape, pandas' to_html, tables_html). A small inline script counts the figures the browser
decoded (naturalWidth > 0) and writes the count into `#render-check`, with the page's height, whether
anything is wider than the window and where the first screen's answers end, so a headless browser's DOM
dump proves the figures render and the page fits.
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
    "report/bits": "Bits per parameter of every trained model, beside ≈3.6 (LMs on random tokens) and ≈2 "
                   "(knowledge) bits/param.",
}
VERDICT_COLORS = {"reproduced": "#d4edda", "not reproduced": "#f8d7da", "inconclusive": "#d6e4f0",
                  "not run at this scale": "#e2e3e5"}
STYLE = """body{font-family:sans-serif;max-width:1100px;margin:auto;padding:1em}
h1{font-size:22px;margin:.3em 0}h2{font-size:18px;margin-top:1.2em}.small{font-size:12px;color:#555}
.answer{font-size:14px;line-height:1.4;margin:.5em 0}.wide{overflow-x:auto;max-width:100%}
details{margin:.4em 0}summary{cursor:pointer;font-weight:bold}ul.checks{list-style:none;padding-left:.5em}
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
  // the page's layout as this browser draws it: its height, whether anything is wider than the window,
  // and where the answers end (the first screen)
  var doc = document.documentElement;
  var answers = Array.from(document.querySelectorAll('.answer'));
  el.setAttribute('data-height', doc.scrollHeight);
  el.setAttribute('data-overflow', doc.scrollWidth > doc.clientWidth ? 1 : 0);
  el.setAttribute('data-answers-bottom', Math.max.apply(null, answers.map(function (a) {
    return a.getBoundingClientRect().bottom + window.scrollY; }).concat([0])));
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


def _png_256(path: Path) -> bytes:
    """The figure as a 256-colour PNG: a plot's few colours survive, and the page is a third the size. A file
    that is no image goes in as it is, for the page's render check to count."""
    import io

    from PIL import Image

    out = io.BytesIO()
    try:
        Image.open(path).convert("RGB").quantize(256, method=Image.Quantize.MEDIANCUT).save(out, "PNG", optimize=True)
    except OSError:            # PIL's UnidentifiedImageError and a truncated file are both OSErrors
        return path.read_bytes()
    return out.getvalue()


def _img(path: Path) -> str:
    data = base64.b64encode(_png_256(path)).decode()
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
    "DPC fidelity (ours vs the authors)": "Our DPC means beside the authors' published ones, point by point: "
                                          "equivalent when the difference's 90% interval lies within ±0.05 "
                                          "accuracy, and the points the repetitions cannot judge.",
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


def _claims_html(table: pd.DataFrame, table_id: str) -> str:
    rows = []
    for r in table.itertuples(index=False):
        color = VERDICT_COLORS.get(r.verdict, "#fff3cd")
        cells = "".join(f"<td>{html.escape(str(c))}</td>" for c in r)
        rows.append(f'<tr style="background:{color}">{cells}</tr>')
    head = "".join(f"<th>{html.escape(h)}</th>" for h in table.columns)
    return f'<div class="wide"><table id="{table_id}"><tr>{head}</tr>{"".join(rows)}</table></div>'


def _checks_html(checks: list[tuple[bool, str]]) -> str:
    return '<ul class="checks">' + "".join(f"<li>{'✓' if ok else '✗'} {html.escape(text)}</li>"
                                             for ok, text in checks) + "</ul>"


def _details(summary: str, *body: str, open_: bool = False) -> list[str]:
    return [f"<details{' open' if open_ else ''}><summary>{html.escape(summary)}</summary>", *body, "</details>"]


def _figures_html(figures: list[Path]) -> list[str]:
    """Every family's figures, the capacity family's open, the others folded (each still loads)."""
    by_family: dict[str, list[Path]] = {}
    for p in figures:
        by_family.setdefault(p.parent.name, []).append(p)
    out = []
    for family in sorted(by_family, key=lambda f: (f != "capacity", f)):
        out += _details(f"{FAMILY_WORDS.get(family, family)}: {len(by_family[family])} figures",
                        *[_img(p) for p in by_family[family]], open_=family == "capacity")
    return out


FAMILY_WORDS = {"capacity": "Capacity", "mlt_synthetic": "MLT synthetic sweeps (Figs 2, 4, 5)",
                "theory": "MLT theory (Theorem 1, Props 2 and 5, Fig 3)", "assumptions": "MLT assumptions (Fig 1)",
                "dpc": "DPC experiments (Figs 1-10) and theory", "report": "Both papers: bits per parameter"}


def build(card: pd.DataFrame, bits_md: str, capacity: pd.DataFrame | None, figures: list[Path],
          tables: dict[str, str], scale: str,
          capacity_laws: pd.DataFrame | None = None, capacity_scale: str | None = None) -> str:
    """The whole page as one string (figures inlined, no external resource). The first screen answers:
    per paper what reproduced, what did not and why, the capacity in one sentence, each paper's claims
    and the exact checks; the scorecard's tests, the capacity table, figures and family tables follow,
    long ones folded (memcap.report.headline writes the words)."""
    from memcap.report import headline

    notes = [f"rows at {s}: {scale_note(s)}" for s in sorted(set(card.scale)) if scale_note(s)]
    stand_in = f" — {'; '.join(notes)}" if notes else ""     # escaped below with the scale
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>memcap reproduction report</title>"
             f"<style>{STYLE}</style></head><body>",
             "<h1>memcap: did the two papers on attention memorization reproduce?</h1>",
             f"<p class='small'>Scale: {html.escape(scale + stand_in)}. Mahdavi, Liao, Thrampoulidis (ICLR 2024, “MLT”) "
             "and Dana, Pydi, Chevaleyre (AISTATS 2025, “DPC”); every number is computed from the pipeline's "
             "Parquet results.</p>",
             *[f"<p class='answer' id='answer-{p.lower()}'>{html.escape(' '.join(headline.paper_sentences(card, p)))}</p>"
               for p in headline.PAPERS],
             f"<p class='answer' id='answer-capacity'>{html.escape(headline.capacity_sentence(capacity, capacity_laws))}</p>"]
    for paper, name in headline.PAPERS.items():
        parts += [f"<h2>{html.escape(name)}: the paper's claims</h2>",
                  "<p>Each claim as the paper states it, our statistic with its 95% interval, the paper's own value "
                  "and the verdict; why, where it is not reproduced.</p>",
                  _claims_html(headline.claims_table(card, paper), f"claims-{paper.lower()}")]
    parts += ["<h2>Exact checks</h2>", "<p>Theorems' bounds and constructions, checked on every run.</p>",
              _checks_html(headline.exact_checks(card)),
              f"<p class='small'>Figures rendered: <span id='render-check'>not checked (scripts off)</span></p>"]
    parts += _details("How to read a verdict, the test of every claim and its detail (the scorecard)",
                      f"<p>{html.escape(claims.HOW_TO_READ).replace('**', '')}</p>", _counts(card),
                      "<h3>Paper claims</h3>", "<p>What the papers state, each with its written test, the region its "
                      "95% interval must fall in, and the verdict.</p>",
                      f'<div class="wide">{_scorecard_html(card, claims.PAPER_CLAIM, "scorecard")}</div>',
                      "<h3>Verified properties</h3>", "<p>Properties of the theorems and of the trained layers that "
                      "memcap checks directly.</p>",
                      f'<div class="wide">{_scorecard_html(card, claims.PROPERTY, "properties")}</div>')
    if capacity is not None and len(capacity):
        parts += _capacity_html(capacity, capacity_laws, capacity_scale)
    parts += ["<h2>Figures</h2>", "<p>Every family's figures, each captioned with what to see in it and the claim "
              "it checks; every title names its scale and settings.</p>", *_figures_html(figures)]
    parts += ["<h2>Tables</h2>", "<p>Bits per parameter and every family's own tables, each folded.</p>"]
    parts += _details("Bits per parameter of every trained model",
                      "<p>Memorized bits (Σ over training examples of log2 C minus the example's loss in bits, floored "
                      "at 0) per parameter of every trained model, by family, beside the published capacities in "
                      f"bits per parameter.</p>", f'<div class="wide">{tables_html(bits_md)}</div>')
    for name, text in tables.items():
        intro = TABLE_INTROS.get(name, "")
        parts += _details(name, *([f"<p>{html.escape(intro)}</p>"] if intro else []),
                          f'<div class="wide">{tables_html(text)}</div>')
    parts += [RENDER_CHECK, "</body></html>"]
    return "\n".join(parts)


def _capacity_html(capacity: pd.DataFrame, laws: pd.DataFrame | None, scale: str | None) -> list[str]:
    """The capacity table at ten columns (the full one linked as Parquet and CSV), its sentences and laws."""
    from memcap.capacity import words as capacity_words

    out = ["<h2>Capacity</h2>",
           f"<p>{html.escape(capacity_words.T50)}: per architecture, with its 95% profile-likelihood interval, "
           "fitted to every seed's bracket [T_pass, T_fail); bits per parameter T₅₀·log2 C / params beside the bound "
           "that applies. The full table (T₉₀, the transition's width, every seed's bracket, the budget curve, the "
           "tuned and lr rows, Morris et al.'s bits): <a href='../capacity/tables/capacity.parquet'>capacity.parquet</a>, "
           "<a href='../capacity/tables/capacity.csv'>capacity.csv</a>.</p>",
           "<ul>" + "".join(f"<li>{html.escape(t)}</li>" for t in capacity_words.sentences(capacity, laws)) + "</ul>",
           f'<div class="wide">{capacity_words.compact(capacity).to_html(index=False, na_rep="–", table_id="capacity")}</div>']
    out += _details("The budget curve, the tuned and lr rows, bits without a threshold, values per head",
                    "<ul>" + "".join(f"<li>{html.escape(t)}</li>" for t in capacity_words.findings(capacity, laws)) + "</ul>")
    if laws is not None:
        out += _details("The laws (exponents over every architecture of a grid, lower bounds censored)",
                        f'<div class="wide">{capacity_words.laws_shown(laws).to_html(index=False, na_rep="–", table_id="capacity-laws")}</div>')
    return out
