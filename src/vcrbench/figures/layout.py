"""Layout helpers: figure sizes that grow with the content, non-overlapping point labels, and the
overlap checks the tests use to keep figures readable."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import Bbox

#: Height of one model row in a bar chart, in inches (fits a label at up to ~9 pt).
ROW_HEIGHT_IN = 0.19


def rows_height(n_rows: int, base: float = 0.9) -> float:
    """Height (inches) of an axes that lists ``n_rows`` labelled rows (bars), with margins."""
    return base + ROW_HEIGHT_IN * max(n_rows, 1)


def wrap(lines: Sequence[str], width_in: float, font_size: float) -> str:
    """Join ``lines`` with newlines, each wrapped to fit ``width_in`` inches at ``font_size``
    (an average glyph is about 0.55 em wide in DejaVu Sans)."""
    chars = max(20, int(width_in * 72 / (0.55 * font_size)) - 2)
    return "\n".join(textwrap.fill(line, chars) for line in lines)


def with_notes(fig: Figure, notes: Sequence[str], width_in: float, font_size: float):
    """Reserve a strip at the bottom of ``fig`` for ``notes`` (wrapped) and return the part to
    draw the figure into: a subfigure above the strip, or ``fig`` itself without notes. A strip
    of its own keeps the notes clear of axes, labels and legends whatever the layout does."""
    if not notes:
        return fig
    text = wrap(notes, width_in, font_size)
    n_lines = text.count("\n") + 1
    strip = (n_lines * 1.35 * font_size + 8) / 72
    total = fig.get_figheight()
    fig.set_figheight(total + strip)
    top, bottom = fig.subfigures(2, 1, height_ratios=[total, strip])
    bottom.text(
        0.01,
        0.5,
        text,
        ha="left",
        va="center",
        fontsize=font_size,
        color="#444444",
        transform=bottom.transSubfigure,
    )
    return top


def legend_columns(
    labels: Sequence[str], width_in: float, font_size: float, max_cols: int = 4
) -> int:
    """Legend columns that fit ``width_in`` inches: the longest label plus the handle (about
    4 em) per column."""
    longest = max((len(s) for s in labels), default=1)
    col_pt = (0.55 * longest + 4.0) * font_size
    return int(max(1, min(max_cols, (width_in * 72 - 10) // col_pt)))


def text_bboxes(fig: Figure, texts: Sequence[Text]) -> list[Bbox]:
    """Display-space bounding boxes of the visible, non-empty ``texts`` (draws the figure)."""
    renderer = fig.canvas.get_renderer()
    fig.draw_without_rendering()
    # Text.get_window_extent: an annotation's own extent would include its leader line
    return [
        Text.get_window_extent(t, renderer)
        for t in texts
        if t.get_visible() and t.get_text().strip()
    ]


def drawn_texts(fig: Figure) -> list[Text]:
    """Every text that drawing ``fig`` shows: visible, non-empty, and for tick labels only those
    of ticks inside the axis' view (matplotlib keeps, but does not draw, the others)."""
    fig.draw_without_rendering()
    hidden = set()
    for ax in fig.get_axes():
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not lo - 1e-9 <= tick.get_loc() <= hi + 1e-9:
                    hidden.update({id(tick.label1), id(tick.label2)})
                if not tick.label2.get_visible() or not axis.get_tick_params().get("label2On", False):
                    hidden.add(id(tick.label2))
    return [
        t
        for t in fig.findobj(Text)
        if t.get_visible() and t.get_text().strip() and id(t) not in hidden
    ]


def overlapping_pairs(boxes: Sequence[Bbox], tol: float = 0.5) -> list[tuple[int, int]]:
    """Index pairs of boxes that overlap by more than ``tol`` display pixels in both directions."""
    pairs = []
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            a, b = boxes[i], boxes[j]
            dx = min(a.x1, b.x1) - max(a.x0, b.x0)
            dy = min(a.y1, b.y1) - max(a.y0, b.y0)
            if dx > tol and dy > tol:
                pairs.append((i, j))
    return pairs


def tick_labels(ax: Axes, axis: str = "y") -> list[Text]:
    ticks = ax.get_yticklabels() if axis == "y" else ax.get_xticklabels()
    return [t for t in ticks if t.get_text()]


def label_points(
    ax: Axes,
    xs,
    ys,
    names: Sequence[str],
    *,
    offset_pt: float = 4.0,
    pad_px: float = 1.0,
    max_steps: int = 40,
    **text_kw,
) -> list:
    """Label scatter points with ``names`` so that no two labels overlap; return the annotations.

    Call it last, once everything that changes the layout (titles, legends) is in place: the
    labels are kept out of the layout and placed in display space. Deterministic greedy
    placement: a label sits right of its point (left when it would leave the axes); labels are
    taken from the lowest point up, and each moves to the nearest free height (tried in
    half-label steps, alternately up and down). A label that moved gets a thin grey leader line.
    """
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    fig.draw_without_rendering()  # settle the layout first
    axes_box = ax.get_window_extent(renderer)
    common = {"textcoords": "offset points", "va": "center", "annotation_clip": False}
    px_to_pt = 72.0 / fig.dpi
    probes = []
    for x, y, n in zip(xs, ys, names, strict=True):
        ann = ax.annotate(n, (x, y), xytext=(offset_pt, 0), ha="left", **common, **text_kw)
        ann.set_in_layout(False)
        probes.append(ann)
    if not probes:
        return []
    boxes = []
    sides = []
    for ann in probes:
        right = ann.get_window_extent(renderer)
        left = right.translated(-(right.width + 2 * offset_pt / px_to_pt), 0)
        over_right = max(0.0, right.x1 - axes_box.x1)
        over_left = max(0.0, axes_box.x0 - left.x0)
        if over_right > 0 and over_left < over_right:  # flip to the left of the point
            boxes.append(left)
            sides.append("right")  # the text's anchor: its right end at the point
        else:
            boxes.append(right)
            sides.append("left")
        ann.remove()
    order = sorted(range(len(probes)), key=lambda k: (boxes[k].y0, boxes[k].x0, names[k]))
    # the points are obstacles too: a label must not hide another model's point
    r_px = 3.0
    placed: list[Bbox] = [
        Bbox.from_extents(px - r_px, py - r_px, px + r_px, py + r_px)
        for px, py in ax.transData.transform(np.column_stack([xs, ys]))
        if np.isfinite(px) and np.isfinite(py)
    ]
    shifts = [0.0] * len(probes)
    for k in order:
        box = boxes[k]
        step = box.height / 2
        candidates = [0.0] + [d * step * sign for d in range(1, max_steps) for sign in (1, -1)]
        for dy in candidates:
            cur = box.translated(0, dy)
            clash = any(
                min(cur.x1, p.x1) - max(cur.x0, p.x0) > 0
                and min(cur.y1, p.y1) - max(cur.y0, p.y0) > -pad_px
                for p in placed
            )
            if not clash:
                break
        placed.append(box.translated(0, dy))
        shifts[k] = dy
    out = []
    for k, ann in enumerate(probes):
        dx = offset_pt if sides[k] == "left" else -offset_pt
        kw = dict(common, ha=sides[k], **text_kw)
        if abs(shifts[k]) > 0:
            kw["arrowprops"] = {
                "arrowstyle": "-",
                "color": "#999999",
                "lw": 0.5,
                "shrinkA": 0,
                "shrinkB": 2,
                "relpos": (0.0, 0.5) if sides[k] == "left" else (1.0, 0.5),
            }
        label = ax.annotate(ann.get_text(), ann.xy, xytext=(dx, shifts[k] * px_to_pt), **kw)
        label.set_in_layout(False)
        out.append(label)
    return out
