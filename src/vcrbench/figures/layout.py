"""Layout helpers: figure sizes that grow with the content, and non-overlapping point labels
(the readability checks of the tests are in ``tests/support/figure_checks.py``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import Bbox

#: Height of one model row in a bar chart, in inches (fits a label at up to ~9 pt).
ROW_HEIGHT_IN = 0.19


def row_height(font_size: float) -> float:
    """Height (inches) of one labelled row (a bar with its model name) at ``font_size``."""
    return max(ROW_HEIGHT_IN, 1.6 * font_size / 72)


def grow_to_fit_rows(fig: Figure, ax: Axes, n_rows: int, font_size: float, rounds: int = 3) -> None:
    """Make ``fig`` taller until ``ax`` has :func:`row_height` per row: titles, legends and notes
    take what they need whatever the fonts, and the rows get the rest."""
    need = n_rows * row_height(font_size)
    for _ in range(rounds):
        fig.draw_without_rendering()
        have = ax.get_window_extent().height / fig.dpi
        if have >= need - 0.01:
            return
        fig.set_figheight(fig.get_figheight() + (need - have))
        strip = getattr(fig, "_vcrbench_note_strip", None)
        if strip is not None:  # the note strip keeps its height; the rows get the growth
            gridspec, strip_in = strip
            gridspec.set_height_ratios([fig.get_figheight() - strip_in, strip_in])


def suptitle(fig, text: str, width_in: float, font_size: float) -> None:
    """A left-aligned figure title, wrapped to the figure's width."""
    fig.suptitle(wrap([text], width_in - 0.25, font_size), x=0.01, ha="left", fontsize=font_size)


def text_width_in(text: str, font_size: float) -> float:
    """Width (inches) of one line of ``text`` at ``font_size`` in the current rcParams font
    (mathtext included), measured from the glyphs."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    ismath = text.count("$") >= 2 and text.count("$") % 2 == 0
    width, _, _ = TextToPath().get_text_width_height_descent(
        text, FontProperties(size=font_size), ismath=ismath
    )
    return float(width) / 72


def wrap(lines: Sequence[str], width_in: float, font_size: float) -> str:
    """Join ``lines`` with newlines, each broken at spaces into lines that fit ``width_in``
    inches at ``font_size`` (measured; a mathtext span is never broken)."""
    out = []
    for line in lines:
        words, current = _math_safe_words(line), ""
        for word in words:
            trial = f"{current} {word}" if current else word
            if current and text_width_in(trial, font_size) > width_in:
                out.append(current)
                current = word
            else:
                current = trial
        out.append(current)
    return "\n".join(out)


def _math_safe_words(line: str) -> list[str]:
    """Split at spaces outside $...$ (so that mathtext stays whole)."""
    words, current, in_math = [], "", False
    for ch in line:
        if ch == "$":
            in_math = not in_math
        if ch == " " and not in_math:
            if current:
                words.append(current)
            current = ""
        else:
            current += ch
    if current:
        words.append(current)
    return words


def with_notes(fig: Figure, notes: Sequence[str], width_in: float, font_size: float):
    """Reserve a strip at the bottom of ``fig`` for ``notes`` (wrapped) and return the part to
    draw the figure into: a subfigure above the strip, or ``fig`` itself without notes. A strip
    of its own keeps the notes clear of axes, labels and legends whatever the layout does."""
    if not notes:
        return fig
    text = wrap(notes, width_in - 0.25, font_size)
    n_lines = text.count("\n") + 1
    strip = (n_lines * 1.35 * font_size + 8) / 72
    total = fig.get_figheight()
    fig.set_figheight(total + strip)
    grid = fig.add_gridspec(2, 1, height_ratios=[total, strip], hspace=0)
    top, bottom = fig.add_subfigure(grid[0]), fig.add_subfigure(grid[1])
    fig._vcrbench_note_strip = (grid, strip)
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
    """Legend columns that fit ``width_in`` inches: the widest label plus the handle and
    spacing (about 5 em) per column."""
    widest = max((text_width_in(s, font_size) for s in labels), default=0.0)
    col_in = widest + 5.0 * font_size / 72
    return int(max(1, min(max_cols, (width_in - 0.15) // col_in)))


def label_points(
    ax: Axes,
    xs,
    ys,
    names: Sequence[str],
    *,
    offset_pt: float = 4.0,
    pad_px: float = 1.0,
    **text_kw,
) -> list:
    """Label scatter points with ``names`` so that no two labels overlap; return the annotations.

    Call it last, once everything that changes the layout (titles, legends) is in place: the
    labels are kept out of the layout and placed in display space. Deterministic greedy
    placement: labels are taken from the lowest point up; each takes the nearest free spot
    inside the axes, trying heights in half-label steps (alternately up and down) and at each
    height the right of its point, then the left; it must not cover a placed label or any
    point. If no spot is free it stays beside its point. A label that moved vertically gets a
    thin grey leader line.
    """
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    fig.draw_without_rendering()  # settle the layout first
    axes_box = ax.get_window_extent(renderer)
    common = {"textcoords": "offset points", "va": "center", "annotation_clip": False}
    px_to_pt = 72.0 / fig.dpi
    gap_px = offset_pt / px_to_pt
    right_boxes = []
    for x, y, n in zip(xs, ys, names, strict=True):
        probe = ax.annotate(n, (x, y), xytext=(offset_pt, 0), ha="left", **common, **text_kw)
        probe.update_positions(renderer)  # place the text at its offset (done at draw time)
        right_boxes.append(Text.get_window_extent(probe, renderer))
        probe.remove()
    if not right_boxes:
        return []
    chosen = _place_labels(ax, xs, ys, names, right_boxes, axes_box, gap_px, pad_px)
    out = []
    for k, (x, y, name) in enumerate(zip(xs, ys, names, strict=True)):
        side, dy = chosen[k]
        kw = dict(common, ha=side, **text_kw)
        if abs(dy) > 0:
            kw["arrowprops"] = {
                "arrowstyle": "-",
                "color": "#999999",
                "lw": 0.5,
                "shrinkA": 0,
                "shrinkB": 2,
                "relpos": (0.0, 0.5) if side == "left" else (1.0, 0.5),
            }
        dx = offset_pt if side == "left" else -offset_pt
        label = ax.annotate(name, (x, y), xytext=(dx, dy * px_to_pt), **kw)
        label.set_in_layout(False)
        out.append(label)
    return out


def _place_labels(
    ax: Axes,
    xs,
    ys,
    names: Sequence[str],
    right_boxes: list[Bbox],
    axes_box: Bbox,
    gap_px: float,
    pad_px: float,
) -> dict[int, tuple[str, float]]:
    """Label index -> (text anchor, vertical shift in pixels) of every label, placed greedily from
    the lowest up (``right_boxes``: each label's box right of its point)."""
    # the points are obstacles too: a label must not hide another model's point
    r_px = 3.0
    placed: list[Bbox] = [
        Bbox.from_extents(px - r_px, py - r_px, px + r_px, py + r_px)
        for px, py in ax.transData.transform(np.column_stack([xs, ys]))
        if np.isfinite(px) and np.isfinite(py)
    ]
    order = sorted(
        range(len(right_boxes)), key=lambda k: (right_boxes[k].y0, right_boxes[k].x0, names[k])
    )
    chosen: dict[int, tuple[str, float]] = {}
    for k in order:
        right = right_boxes[k]
        sides = {"left": right, "right": right.translated(-(right.width + 2 * gap_px), 0)}
        # "left"/"right" is the text's anchor: ha="left" puts the label right of the point
        prefer = ["left", "right"]
        if right.x1 > axes_box.x1:
            prefer.reverse()
        side, dy = _free_spot(sides, prefer, axes_box, placed, pad_px)
        placed.append(sides[side].translated(0, dy))
        chosen[k] = (side, dy)
    return chosen


def _free_spot(
    sides: dict[str, Bbox], prefer: list[str], axes_box: Bbox, placed: list[Bbox], pad_px: float
) -> tuple[str, float]:
    """The nearest free spot of one label inside the axes: heights in half-label steps,
    alternately up and down, at each the sides in ``prefer``'s order; none free: beside its point
    on the first side."""
    step = sides["left"].height / 2
    reach = int(axes_box.height / step) + 1
    for dy in [0.0] + [d * step * sign for d in range(1, reach) for sign in (1, -1)]:
        for side in prefer:
            cur = sides[side].translated(0, dy)
            if not _inside(cur, axes_box):
                continue
            if not any(_overlap(cur, p, pad_px) for p in placed):
                return side, dy
    return prefer[0], 0.0


def _inside(box: Bbox, frame: Bbox) -> bool:
    return box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0 and box.y1 <= frame.y1


def _overlap(a: Bbox, b: Bbox, pad: float) -> bool:
    return min(a.x1, b.x1) - max(a.x0, b.x0) > 0 and min(a.y1, b.y1) - max(a.y0, b.y0) > -pad
