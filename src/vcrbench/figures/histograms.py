"""Δv histograms of the VCR test set against ImageNet-C (the paper's Fig. 4 and 11)."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from vcrbench.figures import layout
from vcrbench.figures.style import Style, new_figure
from vcrbench.tables import display_corruption as corruption_title

SOURCES = {
    "imagenet-c": "ImageNet-C (5 severities)",
    "vcr-parameter-uniform": "VCR, first N draws c ~ U(C)",
    "vcr": "VCR test set",
}
SOURCE_COLORS = {"imagenet-c": "#7F7F7F", "vcr-parameter-uniform": "#56B4E9", "vcr": "#0072B2"}


def dv_histogram_figure(
    histograms: pd.DataFrame,
    corruption: str,
    style: Style,
    coverage: pd.DataFrame | None = None,
) -> Figure:
    """Share of images per Δv bin, one panel per source (ImageNet-C left, VCR right; a
    Δv-stratified set's first N draws c ~ U(C), the paper's sampling, between them), same
    y scale. ``histograms``: the rows of ``results/tables/dv_histograms.csv``; ``coverage``:
    ``results/tables/coverage.csv`` (its coverage goes into the panel titles)."""
    rows = histograms[histograms["corruption"] == corruption]
    if rows.empty:
        raise ValueError(f"dv histograms: no rows for corruption {corruption!r}")
    sources = [s for s in SOURCES if s in set(rows["source"])]
    sources += sorted(set(rows["source"]) - set(sources))
    fig = new_figure(style.width, 2.7 * style.scale)
    axes = fig.subplots(1, len(sources), sharey=True, squeeze=False)[0]
    ymax = 100 * float(rows["fraction"].max())
    for ax, source in zip(axes, sources, strict=True):
        sub = rows[rows["source"] == source].sort_values("bin")
        ax.bar(
            sub["dv_low"],
            100 * sub["fraction"],
            width=sub["dv_high"] - sub["dv_low"],
            align="edge",
            color=SOURCE_COLORS.get(source, "#444444"),
            edgecolor="white",
            linewidth=0.4,
            zorder=2,
        )
        title = SOURCES.get(source, source)
        n = int(sub["count"].sum())
        cov = _coverage(coverage, corruption, source)
        title += f"\n{n:,} images" + (f", coverage {cov:.3f}" if cov is not None else "")
        ax.set_title(title, loc="left")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, max(ymax * 1.08, 1.0))
        ax.set_xlabel("visual change $\\Delta_v$")
        ax.grid(axis="x", visible=False)
    axes[0].set_ylabel("images (% of the set)")
    layout.suptitle(
        fig,
        f"{corruption_title(corruption)}: distribution of $\\Delta_v$",
        fig.get_figwidth(),
        style.font_size + 1.5,
    )
    return fig


def _coverage(coverage: pd.DataFrame | None, corruption: str, source: str) -> float | None:
    if coverage is None:
        return None
    hit = coverage[(coverage["corruption"] == corruption) & (coverage["source"] == source)]
    return float(hit["coverage"].iloc[0]) if len(hit) else None
