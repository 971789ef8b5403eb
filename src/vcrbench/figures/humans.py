"""Human curves of similar and dissimilar corruptions with their similarity bands (the paper's
Fig. 8 and 12), and the table of pairwise similarity tests behind them."""

from __future__ import annotations

import itertools
from collections.abc import Mapping

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from vcrbench.estimation import Estimate, similarity
from vcrbench.figures import layout
from vcrbench.figures.style import Style, new_figure
from vcrbench.tables import display_corruption as corruption_title
from vcrbench.vocab import PROPERTY_NAMES, SIMILARITY_COLUMNS

#: Colours of the references (one per reference, in sorted order; Okabe-Ito).
REFERENCE_COLORS = (
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#000000",
    "#F0E442",
)
UNCLASSIFIED = "no class"


def similarity_table(
    estimates: Mapping[str, Mapping[str, Estimate]],
    info: Mapping[str, Mapping],
    *,
    level: float,
    band: str,
) -> pd.DataFrame:
    """The paper's similarity test (:func:`vcrbench.estimation.similarity.similar`) for every pair
    of human references and every property both have, at ``level`` with bands of kind ``band``
    (``estimation.similarity_level``, ``estimation.similarity_band``): one row per pair and
    property.

    ``estimates``: ``{reference: {property: Estimate}}`` (as :func:`read_estimates` gives);
    ``info``: ``{reference: {"corruption": ..., "similarity_class": ...}}``. A pair whose
    estimates have no bootstrap replicates (no band) gets ``similar`` = NaN."""
    rows = []
    for prop in PROPERTY_NAMES:
        refs = sorted(r for r in estimates if isinstance(estimates[r].get(prop), Estimate))
        for a, b in itertools.combinations(refs, 2):
            row = {
                "property": prop,
                "reference_a": a,
                "reference_b": b,
                "corruption_a": info.get(a, {}).get("corruption"),
                "corruption_b": info.get(b, {}).get("corruption"),
                "class_a": info.get(a, {}).get("similarity_class"),
                "class_b": info.get(b, {}).get("similarity_class"),
                "level": level,
                "band": band,
            }
            ea, eb = estimates[a][prop], estimates[b][prop]
            if ea.n_boot == 0 or eb.n_boot == 0:
                row.update(
                    similar=np.nan, overlap_fraction=np.nan, max_gap=np.nan, first_gap_v=np.nan
                )
            else:
                res = similarity.similar(ea, eb, level=level, band=band)
                row.update(
                    similar=res["similar"],
                    overlap_fraction=res["overlap_fraction"],
                    max_gap=res["max_gap"],
                    first_gap_v=np.nan if res["first_gap_v"] is None else res["first_gap_v"],
                )
            rows.append(row)
    return pd.DataFrame(rows, columns=SIMILARITY_COLUMNS)


def human_similarity_figure(
    estimates: Mapping[str, Mapping[str, Estimate]],
    info: Mapping[str, Mapping],
    style: Style,
    *,
    level: float,
    band: str,
    table: pd.DataFrame | None = None,
) -> Figure:
    """Human curves with their ``level`` bands (``band`` kind), one row of panels per property
    that any reference has, one panel per similarity class (members overlaid) and, when there
    are several classes, a last panel with every reference: where two bands separate, the two
    human curves differ (the paper's test) and their data cannot stand in for each other."""
    if not estimates:
        raise ValueError("human similarity figure: no human references given")
    if table is None:
        table = similarity_table(estimates, info, level=level, band=band)
    refs = sorted(estimates)
    ref_color = {r: REFERENCE_COLORS[i % len(REFERENCE_COLORS)] for i, r in enumerate(refs)}
    props = [
        p for p in PROPERTY_NAMES if any(isinstance(estimates[r].get(p), Estimate) for r in refs)
    ]
    panels = _panels(refs, info)

    ncols = len(panels)
    width = max(style.width, 2.4 * ncols)
    height = (2.6 * len(props) + 0.5 + 0.18 * -(-len(refs) // 2)) * style.scale
    fig = new_figure(width, height)
    axes = fig.subplots(len(props), ncols, squeeze=False, sharex=True, sharey=True)
    for i, prop in enumerate(props):
        for j, (name, members) in enumerate(panels):
            ax = axes[i, j]
            drawn = _draw_references(ax, estimates, prop, members, ref_color, level, band, style)
            panel_w = width / ncols
            ax.set_title(
                layout.wrap([name, _verdict(table, prop, drawn)], panel_w, style.font_size + 1),
                loc="left",
            )
            _panel_axes(ax, prop, bool(drawn), xlabel=i == len(props) - 1, ylabel=j == 0)
    _legend(fig, refs, ref_color, info, width, style, level, band)
    layout.suptitle(
        fig,
        "Human curves of similar and dissimilar corruptions",
        fig.get_figwidth(),
        style.font_size + 1.5,
    )
    return fig


def _panels(refs: list[str], info: Mapping[str, Mapping]) -> list[tuple[str, list[str]]]:
    """(title, references) of each column of panels: one per similarity class (sorted; the
    references without a class together) and, when there are several, one with every reference."""
    groups: dict[str, list[str]] = {}
    for r in refs:
        groups.setdefault(info.get(r, {}).get("similarity_class") or UNCLASSIFIED, []).append(r)
    panels = [
        (f"{g} class" if g != UNCLASSIFIED else UNCLASSIFIED, groups[g]) for g in sorted(groups)
    ]
    if len(panels) > 1:
        panels.append(("all references", refs))
    return panels


def _draw_references(
    ax, estimates, prop: str, members: list[str], ref_color, level: float, band: str, style: Style
) -> list[str]:
    """The ``prop`` curves of ``members`` (with their bands where they have replicates) and,
    for two, where their bands separate; returns the members drawn."""
    drawn = [r for r in members if isinstance(estimates[r].get(prop), Estimate)]
    for r in drawn:
        est = estimates[r][prop]
        if est.n_boot > 0:
            lo, hi = est.band(level, band)
            ax.fill_between(est.grid, lo, hi, color=ref_color[r], alpha=style.band_alpha, lw=0)
        ax.plot(est.grid, est.values, color=ref_color[r], lw=1.6)
    if len(drawn) == 2:
        _mark_separation(ax, estimates[drawn[0]][prop], estimates[drawn[1]][prop], level, band)
    return drawn


def _panel_axes(ax, prop: str, drawn: bool, *, xlabel: bool, ylabel: bool) -> None:
    """Limits and axis labels of a panel of ``prop`` (``xlabel``: bottom row, ``ylabel``: first
    column), and a note in a panel without any curve."""
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.02, 1.03)
    if xlabel:
        ax.set_xlabel("visual change $\\Delta_v$")
    if ylabel:
        ax.set_ylabel(f"human {prop} $s^h_{prop[0]}(\\Delta_v)$")
    if not drawn:
        ax.text(
            0.5,
            0.5,
            f"no human {prop} curve",
            transform=ax.transAxes,
            ha="center",
            va="center",
            color="#555555",
        )


def _legend(fig: Figure, refs, ref_color, info, width: float, style: Style, level, band) -> None:
    """The legend below the panels: each reference's curve and band, and the shade of
    separated bands."""
    handles = [
        (
            (
                Patch(color=ref_color[r], alpha=style.band_alpha),
                Line2D([], [], color=ref_color[r], lw=1.6),
            ),
            f"{r} ({corruption_title(str(info.get(r, {}).get('corruption') or '?'))})",
        )
        for r in refs
    ]
    handles.append((Patch(color="#000000", alpha=0.08), "bands do not overlap"))
    fig.legend(
        [h for h, _ in handles],
        [lab for _, lab in handles],
        loc="outside lower center",
        ncols=layout.legend_columns(
            [label for _, label in handles], width, style.font_size - 0.5, max_cols=2
        ),
        frameon=False,
        title=f"human references, {level:.0%} {band} bands",
    )


def _mark_separation(ax, a: Estimate, b: Estimate, level: float, band: str) -> None:
    """Shade the Δv where the two curves' bands do not overlap."""
    if a.n_boot == 0 or b.n_boot == 0 or not np.array_equal(a.grid, b.grid):
        return
    lo_a, hi_a = a.band(level, band)
    lo_b, hi_b = b.band(level, band)
    apart = ~similarity.bands_overlap(lo_a, hi_a, lo_b, hi_b)
    if apart.any():
        ax.fill_between(
            a.grid,
            0,
            1,
            where=apart,
            color="#000000",
            alpha=0.08,
            lw=0,
            transform=ax.get_xaxis_transform(),
            step="mid",
        )


def _verdict(table: pd.DataFrame, prop: str, members: list[str]) -> str:
    """Panel subtitle: the outcome of the pairwise tests among ``members``."""
    if len(members) < 2:
        return "one reference"
    sub = table[
        (table["property"] == prop)
        & table["reference_a"].isin(members)
        & table["reference_b"].isin(members)
    ]
    tested = sub[sub["similar"].notna()]
    if tested.empty:
        return "not tested (n_boot = 0)"
    n_sim = int(tested["similar"].astype(bool).sum())
    if len(tested) == 1:
        row = tested.iloc[0]
        if bool(row["similar"]):
            return "similar (overlap everywhere)"
        return f"dissimilar (apart from Δv = {row['first_gap_v']:.2f})"
    return f"{n_sim} of {len(tested)} pairs similar"
