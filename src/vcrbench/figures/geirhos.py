"""Geirhos et al.'s networks against Geirhos et al.'s humans: HMRI and MRSI per experiment."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from vcrbench.figures.style import Style, new_figure
from vcrbench.vocab import table_label_space

#: Display names of the release's networks.
NETWORK_LABELS = {"googlenet": "GoogLeNet", "resnet152": "ResNet-152", "vgg19": "VGG-19"}
_MARKERS = ("o", "s", "^", "D", "v")


def dnn_vs_humans_figure(table: pd.DataFrame, style: Style) -> Figure:
    """HMRI_a (left) and MRSI_a (right) of every network on every experiment, with intervals.

    ``table`` is ``results/tables/geirhos_dnn_vs_humans.csv`` (one row per network x
    experiment); experiments are rows of the figure in the table's order, networks are markers
    offset around each row. HMRI = 1 (dashed) means as robust as the humans; MRSI = 0 means never
    more robust.
    """
    experiments = list(dict.fromkeys(table["experiment"]))
    networks = list(dict.fromkeys(table["network"]))
    height = 1.2 + 0.35 * len(experiments)
    fig = new_figure(style.width, height)
    axes = fig.subplots(1, 2, sharey=True)
    y = {e: i for i, e in enumerate(experiments)}
    offsets = np.linspace(-0.25, 0.25, len(networks)) if len(networks) > 1 else [0.0]
    for ax, metric, ref in ((axes[0], "HMRI", 1.0), (axes[1], "MRSI", 0.0)):
        for k, (net, off) in enumerate(zip(networks, offsets, strict=True)):
            rows = table[table["network"] == net]
            ys = rows["experiment"].map(y).to_numpy(dtype=float) + off
            value = rows[metric].to_numpy(dtype=float)
            err = np.vstack([value - rows[f"{metric}_lo"], rows[f"{metric}_hi"] - value])
            ax.errorbar(
                value, ys, xerr=np.abs(err), fmt=_MARKERS[k % len(_MARKERS)], ms=4, capsize=2,
                lw=1, label=NETWORK_LABELS.get(net, net),
            )  # fmt: skip
        ax.axvline(ref, color="0.5", ls="--", lw=0.8)
        ax.set_xlabel(f"{metric}$_a$ (vs. humans)")
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(range(len(experiments)), experiments)
    axes[0].invert_yaxis()
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), frameon=False)
    return fig


def trained_heatmap(table: pd.DataFrame, style: Style) -> Figure:
    """HMRI_a (left) and its change against the baseline (right): networks x test experiments.

    Rows are the networks in the table's order (labelled by model and training distortion),
    columns the test experiments; every cell is annotated, the network's own training distortion
    is boxed, and a change whose paired interval excludes 0 is printed in bold.
    """
    rows = list(dict.fromkeys(table["model"]))
    cols = list(dict.fromkeys(table["test"]))
    trained_on = dict(zip(table["model"], table["trained_on"], strict=False))
    fig = new_figure(style.width, 1.4 + 0.32 * len(rows))
    axes = fig.subplots(1, 2, sharey=True)
    panels = (
        ("HMRI", "HMRI$_a$ vs. humans", "viridis", (0.0, 1.0)),
        ("dHMRI", "change vs. baseline A1", "RdBu", (-1.0, 1.0)),
    )
    for ax, (metric, title, cmap, (vmin, vmax)) in zip(axes, panels, strict=True):
        grid = table.pivot(index="model", columns="test", values=metric).loc[rows, cols]
        image = ax.imshow(grid.to_numpy(float), cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
        for (i, model), (j, test) in itertools.product(enumerate(rows), enumerate(cols)):
            cell = table[(table["model"] == model) & (table["test"] == test)].iloc[0]
            value = cell[metric]
            bold = metric == "dHMRI" and (cell["dHMRI_lo"] > 0 or cell["dHMRI_hi"] < 0)
            dark = value < 0.45 if metric == "HMRI" else abs(value) > 0.6
            ax.text(
                j, i, f"{value:.2f}", ha="center", va="center", fontsize="x-small",
                color="white" if dark else "black", fontweight="bold" if bold else "normal",
            )  # fmt: skip
            if bool(cell["own_distortion"]):
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, lw=1.5, ec="k"))
        ax.set_xticks(range(len(cols)), cols, rotation=35, ha="right")
        ax.set_title(title, fontsize="medium")
        ax.grid(False)
        fig.colorbar(image, ax=ax, shrink=0.8)
    axes[0].set_yticks(range(len(rows)), [f"{m}: {trained_on[m]}" for m in rows])
    return fig


def consistency_figure(table: pd.DataFrame, style: Style) -> Figure:
    """Error consistency κ (pooled over the humans) of each network with the humans against Δv, one
    panel per experiment.

    ``table`` is ``results/tables/geirhos_error_consistency.csv``; every condition is a marker
    at its median Δv, its area proportional to the number of shared trials (``n_pairs``).
    """
    experiments = list(dict.fromkeys(table["experiment"]))
    ncols = min(4, len(experiments))
    nrows = -(-len(experiments) // ncols)
    fig = new_figure(style.width, 1.2 + 1.9 * nrows)
    axes = np.atleast_1d(fig.subplots(nrows, ncols, sharex=True, sharey=True)).ravel()
    for ax, exp in zip(axes, experiments, strict=False):
        rows = table[table["experiment"] == exp]
        for k, (net, g) in enumerate(rows.groupby("network", sort=True)):
            g = g.sort_values("dv_median")
            ax.plot(
                g["dv_median"], g["kappa_pooled"], marker=_MARKERS[k % len(_MARKERS)], lw=0.8,
                ms=0, label=NETWORK_LABELS.get(net, net), color=f"C{k}",
            )  # fmt: skip
            ax.scatter(g["dv_median"], g["kappa_pooled"], s=g["n_pairs"] * 0.6, color=f"C{k}", alpha=0.7)
        ax.axhline(0.0, color="0.5", ls="--", lw=0.8)
        ax.set_title(f"{exp} ({int(rows.groupby('network')['n_pairs'].sum().max())} pairs)",
                     fontsize="small")  # fmt: skip
        ax.set_xlim(-0.02, 1.02)
    for ax in axes[len(experiments) :]:
        ax.set_visible(False)
    for ax in axes[(nrows - 1) * ncols :]:
        ax.set_xlabel("Δv (median of the condition)")
    for ax in axes[::ncols]:
        ax.set_ylabel("error consistency κ")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), frameon=False)
    return fig


def model_consistency_figure(table: pd.DataFrame, style: Style) -> Figure:
    """Error consistency κ of every two models on the workflow's own test samples against Δv,
    one panel per corruption (the dataset's label space, else the first one present).

    ``table`` is ``results/tables/model_error_consistency.csv``; each Δv bin is a marker at its
    centre, its area proportional to the number of shared samples (``n``).
    """
    space = table_label_space(table["label_space"])
    table = table[(table["label_space"] == space) & table["kappa"].notna()]
    corruptions = list(dict.fromkeys(sorted(table["corruption"])))
    ncols = min(3, max(1, len(corruptions)))
    nrows = max(1, -(-len(corruptions) // ncols))
    fig = new_figure(style.width, 1.2 + 1.9 * nrows)
    axes = np.atleast_1d(fig.subplots(nrows, ncols, sharex=True, sharey=True)).ravel()
    for ax, corruption in zip(axes, corruptions, strict=False):
        rows = table[table["corruption"] == corruption]
        for k, ((a, b), g) in enumerate(rows.groupby(["model_a", "model_b"], sort=True)):
            g = g.sort_values("bin")
            v = (g["v_lo"] + g["v_hi"]) / 2
            ax.plot(v, g["kappa"], lw=0.8, color=f"C{k}", label=f"{a} vs {b}")
            ax.scatter(v, g["kappa"], s=g["n"] * 2.0, color=f"C{k}", alpha=0.6)
        ax.axhline(0.0, color="0.5", ls="--", lw=0.8)
        ax.set_title(f"{corruption} ({int(rows.groupby(['model_a', 'model_b'])['n'].sum().max())} "
                     "samples)", fontsize="small")  # fmt: skip
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-1.05, 1.05)
    for ax in axes[len(corruptions) :]:
        ax.set_visible(False)
    for ax in axes[(nrows - 1) * ncols :]:
        ax.set_xlabel("Δv (bin centre)")
    for ax in axes[::ncols]:
        ax.set_ylabel("error consistency κ")
    fig.suptitle(f"error consistency between models ({space} labels; marker area = samples)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(
        handles, labels, loc="outside lower center", ncols=min(2, len(labels)), frameon=False
    )
    return fig
