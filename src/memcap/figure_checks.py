"""What a reader needs of a figure, checked on the drawn matplotlib Figure (matplotlib's own extents):

  panels     at most MAX_PANELS axes with data, or a facet grid whose one legend is the figure's own
  legends    no legend box over a data point (a line's vertices, a scatter's points, a bar); no legend
             title or entry that is a DataFrame column name (lower_case_with_underscores, or seaborn's
             headers such as "arm"); no number of five significant digits or more in an entry
  ticks      tick labels of one axis do not overlap each other; an axis whose data are whole numbers
             (heads, sizes) has no fractional tick labels
  labels     every axis with data says in words what it shows: a label with a word in it (a symbol
             alone, λ, is not one), not a column name

`problems(fig)` lists what fails, one string each; tests/test_figures.py runs it on every family's
figures. A check reads the figure as saved (after its layout), so it must run before the figure is closed.
"""

from __future__ import annotations

import re

import numpy as np

MAX_PANELS = 4
NUMBER = re.compile(r"\d+\.\d+")
WORD = re.compile(r"[A-Za-z]{3,}")


def unrounded(text: str) -> bool:
    """A number printed with five significant digits or more (a fit coefficient as it came)."""
    return any(len(n.replace(".", "").lstrip("0")) >= 5 for n in NUMBER.findall(text))
COLUMN_NAME = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)+$|^(arm|metric|kind|variable|hue|style|value|setting|scale)$")


def _data_axes(fig) -> list:
    return [ax for ax in fig.axes if ax.get_visible() and ax.axison and (ax.lines or ax.collections or ax.patches)]


def _points(ax, renderer) -> np.ndarray:
    """Display coordinates of the axes' data: line vertices, scatter offsets, bar rectangles' corners."""
    out = []
    for line in ax.lines:
        xy = np.column_stack(line.get_data()).astype(float)
        if len(xy) and line.get_visible() and (line.get_linestyle() not in ("None", "") or line.get_marker() not in ("None", "", None)):
            out.append(line.get_transform().transform(xy))
    for coll in ax.collections:
        offsets = np.asarray(coll.get_offsets(), float)
        if coll.get_visible() and offsets.size:
            out.append(coll.get_offset_transform().transform(offsets))
    for patch in ax.patches:
        if patch.get_visible():
            bb = patch.get_window_extent(renderer)
            out.append(np.array([[bb.x0, bb.y0], [bb.x1, bb.y1], [(bb.x0 + bb.x1) / 2, (bb.y0 + bb.y1) / 2]]))
    pts = np.concatenate(out) if out else np.empty((0, 2))
    return pts[np.isfinite(pts).all(axis=1)]


FRACTION = re.compile(r"^-?\d+\.\d*[1-9]\d*$")


def _data_values(ax, which: str) -> np.ndarray:
    """The x (or y) data of the axes' lines and scatters (not reference lines spanning the axes)."""
    i = 0 if which == "x" else 1
    out = [np.asarray(line.get_data()[i], float) for line in ax.lines
           if line.get_transform() == ax.transData and len(line.get_data()[i]) > 2]
    out += [np.asarray(c.get_offsets(), float)[:, i] for c in ax.collections
            if c.get_offset_transform() == ax.transData and len(np.asarray(c.get_offsets()))]
    v = np.concatenate(out) if out else np.empty(0)
    return np.unique(v[np.isfinite(v)])


def _legends(fig) -> list:
    return [lg for lg in [*(ax.get_legend() for ax in fig.axes), *fig.legends] if lg is not None and lg.get_visible()]


def problems(fig) -> list[str]:
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    out = []
    axes = _data_axes(fig)
    if len(axes) > MAX_PANELS and not fig.legends:
        out.append(f"{len(axes)} panels with data (at most {MAX_PANELS}, or a facet grid with one figure legend)")
    for lg in _legends(fig):
        title = lg.get_title().get_text()
        if title and COLUMN_NAME.match(title.strip()):
            out.append(f"legend title {title!r} is a column name, not words")
        for text in (t.get_text().strip() for t in lg.get_texts()):
            if COLUMN_NAME.match(text):
                out.append(f"legend entry {text!r} is a column name, not words")
            if unrounded(text):
                out.append(f"legend entry {text!r} has an unrounded number")
        box = lg.get_window_extent(renderer)
        for ax in axes:
            pts = _points(ax, renderer)
            inside = (pts[:, 0] > box.x0) & (pts[:, 0] < box.x1) & (pts[:, 1] > box.y0) & (pts[:, 1] < box.y1)
            if inside.any():
                out.append(f"the legend {title or '(untitled)'!r} covers {int(inside.sum())} data points of "
                           f"the panel {ax.get_title() or '(untitled)'!r}")
    for ax in axes:
        for which, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            label = axis.get_label().get_text().strip()
            if not WORD.search(label) or COLUMN_NAME.match(label):
                out.append(f"panel {ax.get_title() or '(untitled)'!r}: {which} axis label {label!r} is not words")
            ticks = [t for t in [*axis.get_ticklabels(), *axis.get_ticklabels(minor=True)] if t.get_visible() and t.get_text()]
            ticks.sort(key=lambda t: t.get_window_extent(renderer).x0 if which == "x" else t.get_window_extent(renderer).y0)
            values = _data_values(ax, which)
            if (len(values) > 1 and np.all(values == np.round(values)) and axis.get_scale() == "linear"
                    and any(FRACTION.match(t.get_text().replace("−", "-")) for t in ticks)):
                out.append(f"panel {ax.get_title() or '(untitled)'!r}: {which} axis counts whole numbers but its "
                           f"ticks are fractional ({', '.join(t.get_text() for t in ticks)})")
            boxes = [t.get_window_extent(renderer) for t in ticks]
            for a, b in zip(boxes, boxes[1:]):
                if a.overlaps(b):
                    out.append(f"panel {ax.get_title() or '(untitled)'!r}: {which} tick labels overlap")
                    break
    return out
