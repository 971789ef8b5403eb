"""Geirhos et al.'s networks against Geirhos et al.'s humans: HMRI and MRSI per experiment."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from vcrbench.figures.style import Style, new_figure

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
