"""Example figures (the paper's Fig. 3 and 10): clean images and their corrupted versions at
increasing Δv, each panel titled with its Δv, from the run's own shards (nothing is generated).

Per corruption (:func:`examples_figure`, Fig. 10) a grid of the clean image and
:data:`GRID_PANELS` corrupted panels, titled with their parameters too; for the whole run
(:func:`overview_figure`, Fig. 3) a row per corruption of the clean image and
:data:`OVERVIEW_PANELS` corrupted panels.

Both pick their samples alike (:func:`select_examples`), from the shards' Δv columns alone: target
Δv evenly spaced from the centre of the first Δv bin up to the highest Δv the corruption's shards
reach (:func:`targets`), and the image whose samples come nearest to all of them (sum of
distances; ties: the smaller image id) among the images that reach the top (a sample within half a
bin of it, :func:`reach`), one sample per target, each used once: the last panel is at the top of
the set, within half a bin. Where no image holds two samples and reaches the top (a set of as
many images as samples, one draw each), every panel takes the sample nearest its target from any
image, and says which image it shows; the last is then the top sample itself.
:func:`read_examples` reads only the picked rows' pixels.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from matplotlib.figure import Figure

from vcrbench.bins import bin_edges
from vcrbench.figures import layout
from vcrbench.figures.style import Style, new_figure
from vcrbench.files import io
from vcrbench.tables import display_corruption

#: Columns of a shard that :func:`pick_examples` reads (with every ``param.*``).
META_COLUMNS = ["sample_id", "image_id", "dv"]
#: Panels per row of a corruption's grid.
COLUMNS = 3
#: Corrupted panels of a corruption's grid (Fig. 10; with the clean one, three rows of three).
GRID_PANELS = 8
#: Corrupted panels of each row of the overview (Fig. 3), after the clean one.
OVERVIEW_PANELS = 5


def targets(n_bins: int, top: float, panels: int = GRID_PANELS) -> np.ndarray:
    """``panels`` Δv evenly spaced from the centre of the first of ``n_bins`` bins up to ``top``,
    the highest Δv of the shards (a ``top`` below that centre counts as the centre)."""
    first = float(bin_edges(n_bins)[2][0])
    return np.linspace(first, max(float(top), first), panels)


def reach(n_bins: int, top: float) -> float:
    """The Δv an image must reach to show the top of a set: half a bin (of ``n_bins``) below
    ``top``."""
    return float(top) - 0.5 / (n_bins - 1)


def pick_examples(
    meta: pd.DataFrame, target_dv: Sequence[float], least_top: float | None = None
) -> tuple[pd.DataFrame, bool]:
    """The rows of ``meta`` (``sample_id, image_id, dv`` …) to show, ordered by Δv, and whether
    they are all of one image: that whose samples come nearest to ``target_dv``, among those that
    hold two samples and reach ``least_top`` (None: any)."""
    meta = meta.dropna(subset=["dv"]).sort_values(["image_id", "sample_id"], kind="stable")
    if meta.empty:
        raise ValueError("example grid: the shards hold no sample with a Δv")
    target_dv = np.asarray(target_dv, dtype=float)
    per_image = meta.groupby("image_id", sort=True)["dv"].agg(["size", "max"])
    keep = per_image["size"] >= min(2, len(target_dv))
    if least_top is not None:
        keep &= per_image["max"] >= least_top
    candidates = per_image.index[keep]
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


def select_examples(
    meta: pd.DataFrame, n_bins: int, panels: int = GRID_PANELS
) -> tuple[pd.DataFrame, bool]:
    """The ``panels`` rows of one corruption's shards (``meta``: their Δv columns) to show, and
    whether they are of one image: :func:`targets` up to the highest Δv of ``meta``, the image
    among those that reach it (:func:`reach`)."""
    dv = meta["dv"].dropna()
    if dv.empty:
        raise ValueError("example grid: the shards hold no sample with a Δv")
    top = float(dv.max())
    return pick_examples(meta, targets(n_bins, top, panels), reach(n_bins, top))


def _dv(meta: pd.DataFrame, image: str) -> np.ndarray:
    return meta.loc[meta["image_id"] == image, "dv"].to_numpy(dtype=float)


def read_meta(shard_paths: Sequence[str | os.PathLike]) -> pd.DataFrame:
    """The Δv and parameter columns of every shard (:data:`META_COLUMNS`, ``param.*``), each row
    with its shard (``_shard``)."""
    metas = []
    for path in shard_paths:
        names = io.parquet_file(path).schema_arrow.names
        columns = META_COLUMNS + [n for n in names if n.startswith("param.")]
        metas.append(io.read_columns(path, columns).assign(_shard=str(path)))
    return pd.concat(metas, ignore_index=True)


def read_examples(
    shard_paths: Sequence[str | os.PathLike], n_bins: int, panels: int = GRID_PANELS
) -> tuple[pd.DataFrame, np.ndarray, bool]:
    """The picked rows (:func:`select_examples`) with their parameters, their pixels
    ((N, H, W, 3) uint8, in the rows' order) and whether they are of one image."""
    picked, same = select_examples(read_meta(shard_paths), n_bins, panels)
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


def overview_figure(
    examples: Mapping[str, tuple[pd.DataFrame, np.ndarray, np.ndarray | None]], style: Style
) -> Figure:
    """Fig. 3: a row per corruption (``examples``: ``{corruption: (rows, images, clean)}`` in the
    run's order, ``clean`` None where the row's panels are of several images), its clean image
    and then its corrupted versions at increasing Δv, each titled with its Δv."""
    if not examples:
        raise ValueError("example overview: no corruption to show")
    n_cols = 1 + max(len(rows) for rows, _, _ in examples.values())
    panel_in = style.width / n_cols
    title_in = 1.3 * style.font_size / 72
    fig = new_figure(style.width, len(examples) * (panel_in + title_in) + 0.5)
    axes = fig.subplots(len(examples), n_cols, squeeze=False)
    for line, (corruption, (rows, images, clean)) in zip(axes, examples.items(), strict=True):
        for ax in line:
            ax.set_xticks([]), ax.set_yticks([])
            ax.spines[:].set_visible(False)
        label = display_corruption(corruption)
        if clean is None:
            label += " (images differ)"
        else:
            line[0].imshow(clean, interpolation="nearest")
            line[0].set_title("clean", fontsize=style.font_size - 1)
        line[0].set_ylabel(
            layout.wrap([label], panel_in, style.font_size), fontsize=style.font_size
        )
        for ax, (_, row), image in zip(line[1:], rows.iterrows(), images, strict=False):
            ax.imshow(image, interpolation="nearest")
            ax.set_title(f"$\\Delta_v$ = {float(row['dv']):.2f}", fontsize=style.font_size - 1)
    layout.suptitle(
        fig,
        "Every corruption of the run at increasing $\\Delta_v$, up to the highest its test set "
        "reaches",
        fig.get_figwidth(),
        style.font_size + 1.5,
    )
    return fig
