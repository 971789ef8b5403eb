"""Example grids (the paper's Fig. 3 and 10): one clean image and its corrupted versions at
increasing Δv, each panel titled with its Δv and parameters, from the run's own shards.

:func:`pick_examples` chooses the samples from the shards' Δv columns alone: target Δv at the
centres of every ``step``-th bin (0, 5, …, 35 of 40), and the image whose samples come nearest to
all of them (sum of distances; ties: the smaller image id), one sample per target, each used once.
Where no image holds two samples (a set of as many images as samples, one draw each), every
panel takes the sample nearest its target from any image, and says which image it shows.
:func:`read_examples` reads only those rows' pixels; :func:`examples_figure` draws the grid.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from matplotlib.figure import Figure

from vcrbench import io
from vcrbench.bins import bin_edges
from vcrbench.figures import layout
from vcrbench.figures.style import Style, new_figure
from vcrbench.tables import display_corruption

#: Columns of a shard that :func:`pick_examples` reads (with every ``param.*``).
META_COLUMNS = ["sample_id", "image_id", "dv"]
#: Panels per row of the grid.
COLUMNS = 3


def targets(n_bins: int, step: int = 5) -> np.ndarray:
    """Δv at the centres of bins 0, ``step``, 2·``step``, … of ``n_bins``."""
    return bin_edges(n_bins)[2][::step]


def pick_examples(meta: pd.DataFrame, target_dv: Sequence[float]) -> tuple[pd.DataFrame, bool]:
    """The rows of ``meta`` (``sample_id, image_id, dv`` …) to show, ordered by Δv, and whether
    they are all of one image."""
    meta = meta.dropna(subset=["dv"]).sort_values(["image_id", "sample_id"], kind="stable")
    if meta.empty:
        raise ValueError("example grid: the shards hold no sample with a Δv")
    target_dv = np.asarray(target_dv, dtype=float)
    sizes = meta.groupby("image_id", sort=True).size()
    candidates = sizes.index[sizes >= min(2, len(target_dv))]
    if len(candidates):
        cost = {
            image: float(np.abs(_dv(meta, image)[:, None] - target_dv[None, :]).min(0).sum())
            for image in candidates
        }
        best = min(cost, key=lambda image: (cost[image], image))
        pool, same = meta[meta["image_id"] == best], True
    else:
        pool, same = meta, False
    chosen: list[int] = []
    for t in target_dv:
        free = pool[~pool.index.isin(chosen)]
        if free.empty:
            break
        distance = (free["dv"] - t).abs()
        chosen.append(free.index[int(np.argmin(distance.to_numpy()))])
    picked = pool.loc[chosen].sort_values(["dv", "sample_id"], kind="stable")
    return picked.reset_index(drop=True), same


def _dv(meta: pd.DataFrame, image: str) -> np.ndarray:
    return meta.loc[meta["image_id"] == image, "dv"].to_numpy(dtype=float)


def read_examples(
    shard_paths: Sequence[str | os.PathLike], target_dv: Sequence[float]
) -> tuple[pd.DataFrame, np.ndarray, bool]:
    """The picked rows (:func:`pick_examples`) with their parameters, their pixels
    ((N, H, W, 3) uint8, in the rows' order) and whether they are of one image."""
    metas = []
    for path in shard_paths:
        names = io.parquet_file(path).schema_arrow.names
        columns = META_COLUMNS + [n for n in names if n.startswith("param.")]
        metas.append(io.read_columns(path, columns).assign(_shard=str(path)))
    picked, same = pick_examples(pd.concat(metas, ignore_index=True), target_dv)
    images = {}
    for path, rows in picked.groupby("_shard", sort=True):
        table = io.read_table(path, ["sample_id", "height", "width", "image"])
        wanted = pa.array(rows["sample_id"].to_numpy(dtype=np.int64))
        table = table.filter(pc.is_in(table["sample_id"], value_set=wanted))
        ids = table["sample_id"].to_numpy()
        for sample_id, pixels in zip(ids, io.images_from_table(table, str(path)), strict=True):
            images[int(sample_id)] = pixels
    pixels = np.stack([images[int(s)] for s in picked["sample_id"]])
    return picked.drop(columns="_shard"), pixels, same


def panel_title(row: pd.Series, with_image: bool = False) -> str:
    """``Δv = 0.43`` and its parameters, two to a line (and the image id when asked)."""
    params = [
        f"{name.removeprefix('param.')} {_number(row[name])}"
        for name in row.index
        if name.startswith("param.") and pd.notna(row[name])
    ]
    lines = [f"$\\Delta_v$ = {float(row['dv']):.2f}"]
    lines += [", ".join(params[i : i + 2]) for i in range(0, len(params), 2)]
    if with_image:
        lines.append(str(row["image_id"]))
    return "\n".join(lines)


def _number(value) -> str:
    return f"{float(value):.3g}"


def examples_figure(
    rows: pd.DataFrame,
    images: np.ndarray,
    clean: np.ndarray,
    corruption: str,
    style: Style,
    same_image: bool = True,
) -> Figure:
    """The clean image, then ``images`` (with ``rows``' Δv and parameters as titles), in a grid
    of :data:`COLUMNS` panels a row. ``clean``: the clean image of the panels when they are of one
    image (None: no clean panel)."""
    panels = [] if clean is None else [(clean, "clean, $\\Delta_v$ = 0")]
    panels += [
        (image, panel_title(row, with_image=not same_image))
        for (_, row), image in zip(rows.iterrows(), images, strict=True)
    ]
    n_rows = -(-len(panels) // COLUMNS)
    lines = max(t.count("\n") + 1 for _, t in panels)
    panel_in = style.width / COLUMNS
    title_in = lines * 1.3 * style.font_size / 72
    fig = new_figure(style.width, n_rows * (panel_in + title_in) + 0.5)
    axes = fig.subplots(n_rows, COLUMNS, squeeze=False).ravel()
    for ax in axes[len(panels) :]:
        ax.set_axis_off()
    for ax, (image, title) in zip(axes, panels, strict=False):
        ax.imshow(image, interpolation="nearest")
        ax.set_xticks([]), ax.set_yticks([])
        ax.spines[:].set_visible(False)
        ax.set_title(title, loc="center", fontsize=style.font_size - 1)
    what = "one image" if same_image else "the sample nearest each Δv (images differ)"
    layout.suptitle(
        fig,
        f"{display_corruption(corruption)}: {what} at increasing $\\Delta_v$",
        fig.get_figwidth(),
        style.font_size + 1.5,
    )
    return fig
