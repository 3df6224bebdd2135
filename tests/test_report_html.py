"""The HTML report renders its figures in headless Chromium (Debian's `chromium`)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from memcap.report import claims, html  # noqa: E402

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--virtual-time-budget=5000"]


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("SKIPPED: Debian chromium not installed (run tools/install-chromium.sh; `make test` does)")
    return exe


def rendered(page: Path, tmp_path: Path) -> tuple[int, int]:
    """(figures decoded with nonzero natural size, figures) as the page's own script counted them."""
    out = subprocess.run([chromium(), *FLAGS, f"--user-data-dir={tmp_path / 'chromium-profile'}", "--dump-dom",
                          page.resolve().as_uri()], capture_output=True, text=True, timeout=90)
    m = re.search(r'id="render-check"[^>]*data-rendered="(\d+)"[^>]*data-total="(\d+)"', out.stdout)
    assert m, f"render check missing from the DOM dump:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}"
    return int(m.group(1)), int(m.group(2))


def small_png(path: Path) -> Path:
    """A PNG at figures/<family>/<name>.png (the family folder picks the caption)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(2, 1.5))
    ax.plot([0, 1], [0, 1])
    fig.savefig(path)
    plt.close(fig)
    return path


def page(tmp_path: Path, figures: list[Path]) -> Path:
    card = claims.scorecard({}, "quick")
    out = tmp_path / "index.html"
    out.write_text(html.build(card, "# bits\n", None, figures, {"t": "| a |"}, "quick"))
    return out


@pytest.mark.chromium
def test_report_figures_render_in_chromium(tmp_path):
    figs = [small_png(tmp_path / "mlt_synthetic" / "fig2a.png"), small_png(tmp_path / "report" / "bits.png")]
    assert rendered(page(tmp_path, figs), tmp_path) == (2, 2)


def test_a_broken_figure_is_detected(tmp_path):
    broken = tmp_path / "dpc" / "exp1.png"
    broken.parent.mkdir()
    broken.write_bytes(b"not a png")
    assert rendered(page(tmp_path, [small_png(tmp_path / "mlt_synthetic" / "fig2a.png"), broken]), tmp_path) == (1, 2)


def test_page_is_self_contained_with_captions(tmp_path):
    figs = [small_png(tmp_path / "mlt_synthetic" / "fig2c.png"), small_png(tmp_path / "theory" / "capacity.png"),
            small_png(tmp_path / "capacity" / "capacity.png")]
    text = page(tmp_path, figs).read_text()
    assert "data:image/png;base64," in text and "src=\"http" not in text and "<link" not in text
    assert "no gain past d_h = n" in text                    # the figure's caption names its claim
    # the same name in two families: two captions, two ids
    assert "construction vs gradient descent" in text and "Capacity T₅₀, the dataset size half the trained models memorize" in text
    assert 'id="fig-theory-capacity"' in text and 'id="fig-capacity-capacity"' in text
    assert all(c.claim_id in text for c in claims.CLAIMS)
    assert "QUICK STAND-IN" in text


def test_every_table_is_an_html_table_and_every_section_opens_with_a_sentence(tmp_path):
    """The markdown tables (bits, the families' tables) are HTML tables, never text in a <pre>; each
    <h2>/<h3> section's first element is a sentence saying what it shows."""
    bits = pd.DataFrame({"family": ["mlt_synthetic"], "bits/param mean": [0.1]}).to_markdown(index=False)
    fam = "# A title\n\n" + pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}).to_markdown(index=False)
    text = html.build(claims.scorecard({}, "quick"), f"# bits\n\n{bits}\n", None, [], {"Provenance": fam}, "quick")
    assert "<pre>" not in text and text.count("<table") >= 5, text[-3000:]
    assert re.search(r"<td[^>]*>x</td>", text) and re.search(r"<th[^>]*>bits/param mean</th>", text)
    assert "<h4>A title</h4>" in text
    for head in re.finditer(r"<h([23])>(.*?)</h\1>\s*(\S{0,9})", text):
        assert head.group(3).startswith("<p>"), (head.group(2), head.group(3))
    broken = html.tables_html("| a |\n|---|\n| 1 |")
    assert "<table>" in broken and "<pre>" not in html.tables_html("plain text")


SCRIPT, IMG = "<script>alert(1)</script>", '<img src=x onerror="alert(2)">'


def test_values_from_params_run_files_and_tables_are_escaped_markup_only_where_the_report_writes_it(tmp_path):
    """A composite preset's `why:` (in a sweep's label), a model name (Tables 1/3) and a data label carry
    <script> and <img onerror>: each reaches index.html as text; the only script and images on the page
    are the report's own (its render check, its figures)."""
    import markdown

    label = f"QUICK STAND-IN ({SCRIPT} why {IMG})"      # settings_label of a composite preset's sweep
    runs = pd.DataFrame({"sweep": ["scale_head_shared"], "label": [label], "mem": [0.5]}).to_markdown(index=False)
    table1 = pd.DataFrame({"model": [f"bert{IMG}"], "k": [4], "satisfied": ["✓"]}).to_markdown(index=False)
    bits = pd.DataFrame({"family": ["mlt_synthetic"], "data": [f"wiki{SCRIPT}"], "bits/param": [0.1]})
    card = claims.scorecard({}, "quick")
    card.loc[card.index[0], ["detail", "reading"]] = [label, IMG]
    figs = [small_png(tmp_path / "mlt_synthetic" / "fig2a.png")]
    text = html.build(card, f"# bits\n\n{bits.to_markdown(index=False)}\n", None, figs,
                      {"MLT runs summary": runs, "Table 1": table1}, "quick")
    assert "<script>alert" not in text and "<img src=x" not in text, text
    assert text.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 3        # detail, table, data label
    assert text.count("&lt;img src=x onerror=") >= 3                        # reading, table, model name
    assert text.count("<script") == 1 and text.count("<img") == len(figs)   # the report's own only
    # the converter alone keeps raw HTML: without the escaping this test fails
    assert SCRIPT in markdown.markdown(runs, extensions=["tables"])


def layout(page: Path, tmp_path: Path) -> dict[str, float]:
    """The page's own measurements in a 1280 x 900 window: height, horizontal overflow, where the answers end."""
    out = subprocess.run([chromium(), *FLAGS, "--window-size=1280,900", f"--user-data-dir={tmp_path / 'chromium-layout'}",
                          "--dump-dom", page.resolve().as_uri()], capture_output=True, text=True, timeout=90)
    tag = re.search(r'<span id="render-check"[^>]*>', out.stdout)
    assert tag, out.stdout[-2000:]
    return {k: float(v) for k, v in re.findall(r'data-([a-z-]+)="([0-9.]+)"', tag.group(0))}


def wide_page(tmp_path: Path) -> Path:
    """A page whose family table is 4,000 px wide (one unbreakable cell) and whose scorecard is real."""
    card = claims.scorecard({}, "quick")
    out = tmp_path / "wide.html"
    wide = "| " + " | ".join("x" * 60 for _ in range(40)) + " |\n|" + "---|" * 40 + "\n"
    out.write_text(html.build(card, "# bits\n", None, [small_png(tmp_path / "mlt_synthetic" / "fig2a.png")],
                              {"t": wide + wide.splitlines()[0] + "\n"}, "quick"))
    return out


@pytest.mark.chromium
def test_the_first_screen_answers_and_nothing_is_wider_than_the_page(tmp_path, monkeypatch):
    m = layout(wide_page(tmp_path), tmp_path)
    assert m["overflow"] == 0 and m["answers-bottom"] <= 900 and m["rendered"] == m["total"] == 1, m
    folded = html._details
    monkeypatch.setattr(html, "_details", lambda summary, *body, open_=False: folded(summary, *body, open_=True))
    assert layout(wide_page(tmp_path), tmp_path)["overflow"] == 0        # unfolded, the wide table scrolls in its box
    monkeypatch.setattr(html, "STYLE", html.STYLE.replace(".wide{overflow-x:auto;max-width:100%}", ""))
    assert layout(wide_page(tmp_path), tmp_path)["overflow"] == 1        # without the box it would widen the page


@pytest.mark.chromium
@pytest.mark.e2e
def test_the_published_report_answers_on_its_first_screen(published_clone, tmp_path):
    """The report a fresh clone restores: every figure decodes, the answers end within the first
    1280 x 900 screen, nothing is wider than the page, and the whole page is at most 15,000 px tall."""
    m = layout(published_clone / "results" / "report" / "index.html", tmp_path)
    assert m["rendered"] == m["total"] > 0, m
    assert m["answers-bottom"] <= 900 and m["overflow"] == 0 and m["height"] <= 15000, m
