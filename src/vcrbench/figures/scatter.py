"""ImageNet-C accuracy against VCR's R̂_a and R̂_p, one point per model (the paper's Fig. 5)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from vcrbench.figures import layout
from vcrbench.figures.style import DEFAULT_FAMILY, Style, family_label, family_order, new_figure
from vcrbench.tables import display_corruption as corruption_title

Y_LABEL = {
    "a": "VCR $\\hat{R}_a$\n(mean accuracy over $\\Delta_v$)",
    "p": "VCR $\\hat{R}_p$\n(mean consistency over $\\Delta_v$)",
}


def scatter_data(
    imagenet_c: pd.DataFrame, metrics: pd.DataFrame, corruption: str, label_space: str
) -> pd.DataFrame:
    """One row per model with ImageNet-C mean accuracy and R̂_a, R̂_p (with intervals)."""
    inc = imagenet_c[
        (imagenet_c["corruption"] == corruption)
        & (imagenet_c["label_space"] == label_space)
        & (imagenet_c["severity"].astype(str) == "mean")
    ][["model", "accuracy"]]
    met = metrics[(metrics["corruption"] == corruption) & (metrics["label_space"] == label_space)]
    cols = ["model", "R_a", "R_a_lo", "R_a_hi", "R_p", "R_p_lo", "R_p_hi"]
    out = inc.merge(met[cols], on="model", how="inner")
    out["model"] = out["model"].astype(str)
    return out.sort_values("model", kind="stable").reset_index(drop=True)


def imagenet_c_scatter_figure(
    imagenet_c: pd.DataFrame,
    metrics: pd.DataFrame,
    corruption: str,
    families: Mapping[str, str],
    style: Style,
    *,
    label_space: str,
) -> Figure:
    """Two panels: ImageNet-C accuracy (mean over the five severities) on x against R̂_a and
    R̂_p on y (95% intervals as error bars), points coloured by family and labelled with the
    model name; Spearman's ρ of the two rankings in each panel's title."""
    data = scatter_data(imagenet_c, metrics, corruption, label_space)
    fams = {m: families.get(m, DEFAULT_FAMILY) for m in data["model"]}
    fam_colors = {f: style.family_color(f, list(fams.values())) for f in set(fams.values())}
    # many models: one panel per row, so that the labels get the full width
    stacked = len(data) > 12
    height = ((2 * 3.4 + 0.8) if stacked else 3.4) * style.scale
    fig = new_figure(style.width, height)
    axes = fig.subplots(2, 1) if stacked else fig.subplots(1, 2)
    x = data["accuracy"].to_numpy(float)
    for ax, key in zip(axes, ("a", "p"), strict=True):
        y = data[f"R_{key}"].to_numpy(float)
        lo = data[f"R_{key}_lo"].to_numpy(float)
        hi = data[f"R_{key}_hi"].to_numpy(float)
        ok = np.isfinite(lo) & np.isfinite(hi)
        yerr = np.clip(np.vstack([np.where(ok, y - lo, 0), np.where(ok, hi - y, 0)]), 0, None)
        colors = [fam_colors[fams[m]] for m in data["model"]]
        ax.errorbar(x, y, yerr=yerr, fmt="none", ecolor="#999999", elinewidth=0.6, zorder=1)
        ax.scatter(x, y, c=colors, s=22, zorder=2, edgecolors="white", linewidths=0.4)
        ax.set_xlabel("ImageNet-C accuracy\n(mean over severities 1–5)")
        ax.set_ylabel(Y_LABEL[key])
        title = "accuracy" if key == "a" else "consistency"
        ax.set_title(f"$\\hat{{R}}_{key}$ ({title}){_rho_text(x, y)}", loc="left")
        _limits(ax, x, np.concatenate([y, lo[ok], hi[ok]]), label_room=0.2 if stacked else 0.35)
        empty = None
        if len(data) == 0:
            empty = "no models with both results"
        elif not np.isfinite(y).any():
            empty = f"no $\\hat{{R}}_{key}$: too few samples for a curve\n(vcr_metrics.csv, status)"
        if empty:
            ax.text(
                0.5,
                0.5,
                empty,
                transform=ax.transAxes,
                ha="center",
                va="center",
                color="#555555",
            )
    layout.suptitle(
        fig,
        f"{corruption_title(corruption)}: ImageNet-C against VCR ({label_space} labels)",
        fig.get_figwidth(),
        style.font_size + 1.5,
    )
    handles = [Patch(color=fam_colors[f], label=family_label(f)) for f in family_order(fam_colors)]
    if handles:
        fig.legend(
            handles=handles,
            loc="outside lower center",
            ncols=layout.legend_columns(
                [h.get_label() for h in handles], style.width, style.font_size - 0.5, max_cols=6
            ),
            frameon=False,
        )
    # labels after the layout is settled (they are kept out of it)
    for ax, key in zip(axes, ("a", "p"), strict=True):
        y = data[f"R_{key}"].to_numpy(float)
        shown = np.isfinite(x) & np.isfinite(y)  # a label space short of samples has no R̂
        layout.label_points(
            ax,
            x[shown],
            y[shown],
            [m for m, s in zip(data["model"], shown, strict=True) if s],
            fontsize=style.font_size - 1.5,
            color="#333333",
        )
    return fig


def _rho_text(x: np.ndarray, y: np.ndarray) -> str:
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 3 or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
        return ""
    # Spearman's rho: Pearson's r of the (average) ranks; spelled out to spare a scipy import
    rx = pd.Series(x[ok]).rank().to_numpy()
    ry = pd.Series(y[ok]).rank().to_numpy()
    rho = float(np.corrcoef(rx, ry)[0, 1])
    return f"\nSpearman ρ = {rho:.2f}"


def _limits(ax, x: np.ndarray, y: np.ndarray, label_room: float = 0.35) -> None:
    """Axis limits around the data, with ``label_room`` (a share of the axes' width) free right
    of the rightmost point, so that its label fits beside it."""
    x = x[np.isfinite(x)]
    y = y[np.isfinite(y)]
    if len(x) == 0 or len(y) == 0:
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        return
    xr = max(float(np.ptp(x)), 0.05)
    yr = max(float(np.ptp(y)), 0.05)
    x_lo = max(0.0, x.min() - 0.08 * xr)
    x_hi = (x.max() - label_room * x_lo) / (1 - label_room)  # (x_hi - max) / (x_hi - x_lo) = room
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(max(0.0, y.min() - 0.1 * yr), min(1.02, y.max() + 0.25 * yr))
