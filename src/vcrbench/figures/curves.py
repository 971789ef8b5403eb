"""Estimated curves s_a(Δv) and s_p(Δv) of every model, with the human curve and its band
(the paper's Fig. 6/7 c, f)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from vcrbench.figures import layout
from vcrbench.figures.bars import PROPERTY_NAMES
from vcrbench.figures.style import DEFAULT_FAMILY, Style, family_label, family_order, new_figure
from vcrbench.tables import display_corruption as corruption_title
from vcrbench.vocab import PROPERTIES

LINESTYLES = ("-", "--", "-.", ":")
#: A panel without any model's curve: the label space had too few samples for one (its rows in
#: vcr_metrics.csv say so in ``status``) or no labelled sample.
NO_CURVE_NOTE = (
    "no model curve $s_{key}$ in this label space: too few samples for a curve (vcr_metrics.csv, "
    "status) or none labelled"
)
Y_LABEL = {
    "a": "accuracy $s_a(\\Delta_v)$  (fraction correct)",
    "p": "consistency $s_p(\\Delta_v)$  (fraction unchanged)",
}


def curves_figure(
    model_curves: pd.DataFrame,
    families: Mapping[str, str],
    style: Style,
    *,
    corruption: str,
    label_space: str,
    human: Mapping[str, pd.DataFrame] | None = None,
    human_name: str | None = None,
    human_level: float | None = None,
) -> Figure:
    """s_a and s_p of every model in ``model_curves`` (columns ``model, label_space, property,
    v, s, lo, hi``; rows of ``label_space`` are used), coloured by family (shades within a
    family, and line styles cycling, tell its members apart). ``human`` maps a property
    (``accuracy``/``consistency``) to the human curve (``v, s, lo, hi``), drawn in the human
    colour with its band (``human_level`` names the band's level in the legend).
    Model bands are drawn when ``style.model_bands``."""
    data = model_curves[model_curves["label_space"] == label_space]
    models = sorted(data["model"].astype(str).unique())
    missing = sorted(set(model_curves["model"].astype(str)) - set(models))
    fams = {m: families.get(m, DEFAULT_FAMILY) for m in models}
    colors = style.model_colors(fams)
    styles = _line_styles(models, fams)
    human = human or {}
    human_color = style.family_color("human")

    n_entries = len(models) + (1 if human else 0)
    labels = [*models, f"human ({human_name or 'reference'}, 95% band)"]
    ncols = layout.legend_columns(labels, style.width, style.font_size - 0.5, max_cols=4)
    legend_rows = -(-n_entries // ncols)
    height = (2.9 + 0.17 * legend_rows) * style.scale
    fig = new_figure(style.width, height)
    axes = fig.subplots(1, 2, sharey=False)
    extrapolated = False
    for ax, (key, prop) in zip(axes, PROPERTIES.items(), strict=True):
        extrapolated |= _draw_panel(
            ax, key, data[data["property"] == prop], models, (colors, styles), human.get(prop),
            bool(human), human_color, style,
        )  # fmt: skip

    title = f"{corruption_title(corruption)}: estimated curves ({label_space} labels)"
    layout.suptitle(fig, title, style.width, style.font_size + 1.5)
    band = f", {human_level:.0%} band" if human_level else ", band"
    human_label = f"human ({human_name or 'reference'}{band})" if human else None
    handles = _legend_handles(models, fams, colors, styles, style, human_color, human_label)
    if extrapolated:
        handles.insert(
            1,
            (
                Line2D([], [], color=human_color, lw=1.2, ls=":"),
                "human curve outside its data's Δv range (extrapolated; not in HMRI/MRSI)",
            ),
        )
    if handles:
        _legend(fig, handles, ncols, set(fams.values()), style)
    if missing:
        fig.text(
            0.99,
            0.002,
            f"not shown (no {label_space} curve): {', '.join(missing[:5])}",
            ha="right",
            fontsize=style.font_size - 1.5,
            color="#555555",
        )
    return fig


def _draw_panel(
    ax, key: str, sub: pd.DataFrame, models, looks, hum, any_human: bool, human_color, style: Style
) -> bool:
    """The panel of property ``key``: every model's curve in ``sub`` (``looks``: their colours
    and line styles), then the human curve ``hum`` where there is one, else (``any_human``: the
    other property has one) a title that says so. Returns whether the human curve was
    extrapolated anywhere."""
    colors, styles = looks
    panel_w = style.width / 2 - 0.6  # minus the y label and ticks
    _panel_axes(ax, key, panel_w, style)
    for model in models:
        cur = sub[sub["model"] == model].sort_values("v")
        if not cur.empty:
            _draw_model(ax, cur, colors[model], styles[model], style)
    if models and sub.empty:
        # a label space whose samples fill no Δv bin to estimation.min_count (or none labelled)
        ax.text(
            0.5,
            0.5,
            layout.wrap([NO_CURVE_NOTE.format(key=key)], panel_w * 0.9, style.font_size - 1),
            transform=ax.transAxes,
            ha="center",
            va="center",
            fontsize=style.font_size - 1,
            color="#555555",
        )
    if hum is not None and not hum.empty:
        return _draw_human(ax, hum.sort_values("v"), human_color, style)
    if any_human:
        ax.set_title(
            layout.wrap(
                [f"$s_{key}$: {PROPERTY_NAMES[key]} (no human curve)"],
                panel_w,
                style.font_size + 1,
            ),
            loc="left",
        )
    return False


def _legend(fig: Figure, handles: list, ncols: int, families: set[str], style: Style) -> None:
    """The figure's legend below the panels, titled with the families' colours."""
    fig.legend(
        [h for h, _ in handles],
        [label for _, label in handles],
        loc="outside lower center",
        ncols=min(ncols, len(handles)),
        frameon=False,
        title=layout.wrap(
            ["colour = family: " + ", ".join(family_label(f) for f in family_order(families))],
            style.width - 0.4,
            style.font_size,
        ),
    )


def _line_styles(models: list[str], fams: Mapping[str, str]) -> dict[str, str]:
    """A line style per model, cycling within each family (colours tell families apart)."""
    styles = {}
    for fam in set(fams.values()):
        for i, m in enumerate(sorted(x for x in models if fams[x] == fam)):
            styles[m] = LINESTYLES[i % len(LINESTYLES)]
    return styles


def _panel_axes(ax, key: str, panel_w: float, style: Style) -> None:
    """Title, axis labels and limits of the panel of property ``key`` (``a`` or ``p``)."""
    ax.set_title(f"$s_{key}$: {PROPERTY_NAMES[key]}", loc="left")
    ax.set_xlabel(
        layout.wrap(["visual change $\\Delta_v$ (0 = none, 1 = total)"], panel_w, style.font_size)
    )
    ax.set_ylabel(Y_LABEL[key])
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.02, 1.03)


def _draw_model(ax, cur: pd.DataFrame, color, ls: str, style: Style) -> None:
    """One model's curve (``v, s, lo, hi`` sorted by ``v``), with its band when
    ``style.model_bands``."""
    if style.model_bands:
        ax.fill_between(
            cur["v"],
            cur["lo"],
            cur["hi"],
            color=color,
            alpha=style.band_alpha * 0.6,
            lw=0,
            zorder=1,
        )
    ax.plot(cur["v"], cur["s"], color=color, ls=ls, lw=1.1, zorder=2)


def _draw_human(ax, hum: pd.DataFrame, human_color, style: Style) -> bool:
    """The human curve (sorted by ``v``) with its band; outside the reference's Δv support
    (``in_support`` false) the curve is dotted. Returns whether any of it was."""
    inside = hum["in_support"].to_numpy(bool) if "in_support" in hum else None
    ax.fill_between(
        hum["v"],
        hum["lo"],
        hum["hi"],
        where=inside,
        color=human_color,
        alpha=style.band_alpha,
        lw=0,
        zorder=3,
    )
    if inside is None or inside.all():
        ax.plot(hum["v"], hum["s"], color=human_color, lw=2.2, zorder=4)
        return False
    # Outside the reference's Δv support the curve is extrapolation, not data.
    outside = np.where(inside, np.nan, hum["s"].to_numpy())
    ax.plot(hum["v"], outside, color=human_color, lw=1.2, ls=":", zorder=4)
    ax.plot(
        hum["v"],
        np.where(inside, hum["s"].to_numpy(), np.nan),
        color=human_color,
        lw=2.2,
        zorder=4,
    )
    return True


def _legend_handles(models, fams, colors, styles, style, human_color, human):
    """The legend's (handle, label) pairs: the human curve and band first (``human``: its label,
    None without one), then the models by family."""
    handles = []
    if human:
        handles.append((Line2D([], [], color=human_color, lw=2.2), human))
    for fam in family_order(set(fams.values())):
        for m in sorted(x for x in models if fams[x] == fam):
            handles.append((Line2D([], [], color=colors[m], ls=styles[m], lw=1.3), m))
    if human:
        handles[0] = (
            (handles[0][0], Patch(color=human_color, alpha=style.band_alpha)),
            handles[0][1],
        )
    return handles
