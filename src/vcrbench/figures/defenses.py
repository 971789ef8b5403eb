"""The defenses figure: what each defense changes, per corruption, with paired intervals.

Two panels over the corruptions (rows): left, Yucel et al.'s figure of merit (the change of the
corrupted accuracy as a share of the undefended clean accuracy, in %), with the clean images' own
change in the top row; right, ΔR̂_a (defended − undefended R̂ of accuracy along Δv). One marker per
defended model, its paired bootstrap interval as a bar; a dashed line at 0 (no effect).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from vcrbench.figures.layout import legend_columns, with_notes
from vcrbench.figures.style import Style, new_figure
from vcrbench.vocab import table_label_space

CLEAN_ROW = "clean images"


def defense_figure(table: pd.DataFrame, style: Style) -> Figure:
    """The figure of ``results/tables/defenses.csv`` in the dataset's label space (the first
    label space that is not the 16 human classes, else the first one)."""
    space = table_label_space(table["label_space"])
    table = table[table["label_space"] == space]
    corruptions = sorted(table["corruption"].unique())
    models = list(dict.fromkeys(table.sort_values(["undefended", "model"])["model"]))
    rows = [CLEAN_ROW, *corruptions]
    height = 1.3 + 0.32 * len(rows) * max(1.0, len(models) / 2)
    fig = new_figure(style.width, height)
    n_images = int(table["n_images"].max()) if len(table) else 0
    level = float(table["level"].iloc[0]) if len(table) else 0.95
    notes = [
        f"Left: (acc defended − acc undefended) / clean acc undefended, over every labelled sample "
        f"of a corruption (Yucel et al.'s figure of merit); top row: the same on clean images. "
        f"Right: ΔR̂_a = R̂_a defended − R̂_a undefended. Bars: paired bootstrap {level:.0%} "
        f"intervals over {n_images} images; label space {space}.",
    ]
    body = with_notes(fig, notes, style.width, style.font_size - 1)
    ax_rel, ax_r = body.subplots(1, 2, sharey=True)
    span = 0.6
    offsets = np.linspace(span / 2, -span / 2, len(models)) if len(models) > 1 else np.zeros(1)
    y_of = {row: len(rows) - 1 - i for i, row in enumerate(rows)}
    for k, model in enumerate(models):
        g = table[table["model"] == model].set_index("corruption")
        color = f"C{k}"
        first = g.iloc[0]
        label = f"{model} ({first['defense']}) vs {first['undefended']}"
        ys = np.array([y_of[c] for c in g.index]) + offsets[k]
        rel = 100 * g["relative_change"].to_numpy(float)
        err = _errors(rel, 100 * g["relative_change_lo"], 100 * g["relative_change_hi"])
        ax_rel.errorbar(rel, ys, xerr=err, fmt="o", color=color, ms=4, capsize=2, label=label)
        clean = 100 * float(first["clean_relative_change"])
        ax_rel.plot([clean], [y_of[CLEAN_ROW] + offsets[k]], "D", color=color, ms=4)
        delta = g["delta_R_a"].to_numpy(float)
        err = _errors(delta, g["delta_R_a_lo"], g["delta_R_a_hi"])
        ax_r.errorbar(delta, ys, xerr=err, fmt="o", color=color, ms=4, capsize=2)
    for ax in (ax_rel, ax_r):
        ax.axvline(0.0, color="0.4", ls="--", lw=0.8)
        ax.grid(axis="x", color="0.9", lw=0.6)
        ax.set_ylim(-0.7, len(rows) - 0.3)
    ax_rel.set_yticks([y_of[r] for r in rows], rows)
    ax_rel.set_xlabel("relative change of accuracy (% of clean accuracy)")
    ax_r.set_xlabel("ΔR̂_a (defended − undefended)")
    ax_rel.set_title("figure of merit (Yucel et al.)", fontsize="medium")
    ax_r.set_title("change of R̂_a along Δv", fontsize="medium")
    body.suptitle("Defenses: change against the undefended model")
    handles, labels = ax_rel.get_legend_handles_labels()
    if labels:
        body.legend(
            handles,
            labels,
            loc="outside lower center",
            ncols=legend_columns(labels, style.width, style.font_size),
            frameon=False,
        )
    return fig


def _errors(center: np.ndarray, lo, hi) -> np.ndarray:
    """Error-bar lengths below and above ``center`` (0 where an end is missing)."""
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    below = np.where(np.isfinite(lo), center - lo, 0.0)
    above = np.where(np.isfinite(hi), hi - center, 0.0)
    return np.clip(np.vstack([below, above]), 0.0, None)
