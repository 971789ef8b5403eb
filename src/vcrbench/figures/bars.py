"""HMRI and MRSI bar charts over models (the paper's Fig. 6/7 a, b, d, e).

One row of panels (HMRI_a, MRSI_a, HMRI_p, MRSI_p) shares one model axis: model names are
printed once, at the left, so that 20+ models with long names stay legible at paper width, and a
model's four values are read along one line. Models are sorted by the first metric that has
values (HMRI_a unless it is missing), best on top.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from vcrbench.figures import layout
from vcrbench.figures.style import (
    DEFAULT_FAMILY,
    Style,
    family_label,
    family_order,
    new_figure,
)
from vcrbench.tables import display_corruption as corruption_title
from vcrbench.vocab import HUMAN_LABEL_SPACE, PROPERTIES

PROPERTY_NAMES = {"a": "accuracy", "p": "prediction consistency"}
METRIC_AXIS = {"HMRI": "1 = human level", "MRSI": "0 = never better"}
LEGEND_NOTE = (
    "HMRI: share of human robustness a model reaches (1 = human level everywhere); "
    "MRSI: how much it exceeds humans (0 = nowhere); {props}; sorted by {key}; "
    "error bars: 95% intervals"
)
PANELS = (("HMRI", "a"), ("MRSI", "a"), ("HMRI", "p"), ("MRSI", "p"))


def sort_models(table: pd.DataFrame, value: str) -> list[str]:
    """Model names, highest ``value`` first (ties and missing values: by name, missing last)."""
    df = table[["model", value]].copy()
    df["model"] = df["model"].astype(str)
    df = df.sort_values(
        [value, "model"], ascending=[False, True], na_position="last", kind="stable"
    )
    return list(df["model"])


def metric_bars(
    ax: Axes,
    table: pd.DataFrame,
    value: str,
    colors: Mapping[str, str],
    *,
    order: Sequence[str] | None = None,
    xlabel: str = "",
    title: str = "",
    xlim: tuple[float, float] = (0.0, 1.05),
    model_names: bool = True,
) -> list[str]:
    """Horizontal bars of ``table[value]`` per ``table.model`` in ``order`` (first on top;
    default: sorted by the value, best on top), with the ``{value}_lo``/``{value}_hi``
    interval as error bars. A model with a missing value gets "n/a" in place of a bar; returns
    the names of those models. ``model_names=False`` leaves the model names off (a shared axis)."""
    table = table.assign(model=table["model"].astype(str)).set_index("model")
    order = list(order) if order is not None else sort_models(table.reset_index(), value)
    data = table.reindex(order)
    y = np.arange(len(order))[::-1]  # first model on top
    vals = data[value].to_numpy(float)
    ok = np.isfinite(vals)
    lo_col, hi_col = f"{value}_lo", f"{value}_hi"
    xerr = None
    if lo_col in data and hi_col in data:
        lo = data[lo_col].to_numpy(float)
        hi = data[hi_col].to_numpy(float)
        has = ok & np.isfinite(lo) & np.isfinite(hi)
        xerr = np.vstack([np.where(has, vals - lo, 0.0), np.where(has, hi - vals, 0.0)])
        xerr = np.clip(xerr, 0.0, None)[:, ok]
    ax.barh(
        y[ok],
        vals[ok],
        height=0.72,
        color=[colors[m] for m, k in zip(order, ok, strict=True) if k],
        xerr=xerr,
        error_kw={"elinewidth": 0.7, "capsize": 1.5, "ecolor": "#333333"},
        zorder=2,
    )
    for yi in y[~ok]:
        ax.text(
            xlim[0] + 0.02 * (xlim[1] - xlim[0]),
            yi,
            "n/a",
            va="center",
            fontsize="small",
            color="#777777",
        )
    ax.set_yticks(y, labels=order)
    if not model_names:  # a shared axis: its formatter is shared too, so hide rather than clear
        ax.tick_params(axis="y", labelleft=False)
    ax.set_ylim(-0.6, len(order) - 0.4)
    ax.set_xlim(*xlim)
    ax.grid(axis="y", visible=False)
    ax.tick_params(axis="y", length=0)
    if title:
        ax.set_title(title, loc="left")
    if xlabel:
        ax.set_xlabel(xlabel)
    return [m for m, k in zip(order, ok, strict=True) if not k]


def hmri_mrsi_figure(
    metrics: pd.DataFrame,
    corruption: str,
    families: Mapping[str, str],
    style: Style,
) -> Figure:
    """HMRI and MRSI for accuracy and consistency of every model on ``corruption`` (the
    geirhos16 rows of the metrics table: HMRI/MRSI exist only there), bars coloured by model
    family, 95% intervals as error bars, the human level (HMRI = 1) dashed. A property without
    any value (consistency against Geirhos' trials, which record no clean answers) is left out
    with a note; a corruption without a human reference gives a figure that says so."""
    rows = _human_rows(metrics, corruption)
    fams = {m: families.get(m, DEFAULT_FAMILY) for m in rows["model"]}
    fam_colors = {f: style.family_color(f, list(fams.values())) for f in set(fams.values())}
    colors = {m: fam_colors[f] for m, f in fams.items()}
    reference, how = _reference(rows)
    keys, notes = _shown_properties(rows, reference)
    panels = [(m, k) for m, k in PANELS if k in keys]

    n_rows = max(len(rows), 1)
    height = n_rows * layout.row_height(style.font_size) + 1.6 if panels else 0.7
    fig = new_figure(style.width, height)
    main = layout.with_notes(fig, notes, style.width, style.font_size - 0.5)
    title = f"{corruption_title(corruption)}: models against humans"
    if reference:
        title += f"  (human reference: {reference}, {how})"
    layout.suptitle(main, title, style.width, style.font_size + 1.5)
    if not panels:
        return fig

    order = sort_models(rows, f"{panels[0][0]}_{panels[0][1]}")
    axes = main.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    for i, (ax, (metric, key)) in enumerate(zip(axes, panels, strict=True)):
        col = f"{metric}_{key}"
        metric_bars(
            ax,
            rows,
            col,
            colors,
            order=order,
            xlabel=METRIC_AXIS[metric],
            title=f"{metric}$_{key}$",
            model_names=i == 0,
        )
        if metric == "HMRI":
            ax.axvline(1.0, color=style.family_color("human"), ls="--", lw=1.0, zorder=3)
        ax.set_xticks([0, 0.5, 1])
    _legend(main, fam_colors, keys, panels, style)
    layout.grow_to_fit_rows(fig, axes[0], n_rows, style.font_size)
    return fig


def _human_rows(metrics: pd.DataFrame, corruption: str) -> pd.DataFrame:
    """The geirhos16 rows of ``corruption``, with every HMRI/MRSI column (NaN where missing)."""
    rows = metrics[
        (metrics["corruption"] == corruption) & (metrics["label_space"] == HUMAN_LABEL_SPACE)
    ].copy()
    rows["model"] = rows["model"].astype(str)
    for metric, key in PANELS:
        for suffix in ("", "_lo", "_hi"):
            if f"{metric}_{key}{suffix}" not in rows:
                rows[f"{metric}_{key}{suffix}"] = np.nan
    return rows


def _shown_properties(rows: pd.DataFrame, reference: str | None) -> tuple[list[str], list[str]]:
    """The properties (``a``, ``p``) with any HMRI/MRSI value to show, and the notes on those
    left out (or on the missing human reference)."""
    keys = [k for k in ("a", "p") if rows[[f"HMRI_{k}", f"MRSI_{k}"]].notna().any().any()]
    short = _short_properties(rows)
    if reference is None or not keys:
        if reference is not None and short:
            return [], [_short_note(k) for k in ("a", "p") if k in short]
        return [], [_empty_note(reference, "a" if reference is None else "")]
    return keys, [
        _short_note(k) if k in short else _empty_note(reference, k)
        for k in ("a", "p")
        if k not in keys
    ]


def _short_properties(rows: pd.DataFrame) -> set[str]:
    """The properties (``a``, ``p``) that some row could not estimate for too few samples (its
    ``status_reason`` names them: vcrbench.evaluation.evaluate)."""
    if "status_reason" not in rows:
        return set()
    reasons = " ".join(rows["status_reason"].dropna().astype(str))
    return {k for k, name in PROPERTIES.items() if f"{name}:" in reasons}


def _short_note(key: str) -> str:
    return (
        f"HMRI$_{key}$ and MRSI$_{key}$ are not shown: the 16 classes hold too few samples for "
        f"the {PROPERTY_NAMES[key]} curve (vcr_metrics.csv, status_reason)."
    )


def _legend(main, fam_colors: Mapping[str, str], keys: list[str], panels, style: Style) -> None:
    """The legend below the panels: the families' colours and the human level, titled with what
    the metrics mean."""
    handles = [Patch(color=fam_colors[f], label=family_label(f)) for f in family_order(fam_colors)]
    handles.append(
        Line2D([], [], color=style.family_color("human"), ls="--", label="human level (HMRI = 1)")
    )
    main.legend(
        handles=handles,
        loc="outside lower center",
        ncols=layout.legend_columns(
            [h.get_label() for h in handles], style.width, style.font_size - 0.5, max_cols=4
        ),
        frameon=False,
        title=layout.wrap(
            [
                LEGEND_NOTE.format(
                    props=", ".join(f"{k} = {PROPERTY_NAMES[k]}" for k in keys),
                    key=f"{panels[0][0]}$_{panels[0][1]}$",
                )
            ],
            style.width - 0.4,  # the legend's frame and padding
            style.font_size,
        ),
    )


def _reference(rows: pd.DataFrame) -> tuple[str | None, str | None]:
    if "human_reference" not in rows:
        return None, None
    refs = rows["human_reference"].dropna().astype(str).unique()
    if len(refs) == 0:
        return None, None
    hows = rows.loc[rows["human_reference"] == refs[0], "reference_how"].dropna().astype(str)
    return str(refs[0]), (str(hows.iloc[0]) if len(hows) else "")


def _empty_note(reference: str | None, key: str) -> str:
    if reference is None:
        return "No human reference for this corruption: no HMRI or MRSI."
    if key == "p":
        return (
            f"HMRI$_p$ and MRSI$_p$ are not shown: the human reference {reference!r} has no "
            "consistency curve (its trials record no answers to the clean image)."
        )
    if key == "a":
        return "HMRI$_a$ and MRSI$_a$ are not shown: no model has 16-class decisions."
    return f"No HMRI or MRSI against {reference!r}: no model has 16-class decisions."
