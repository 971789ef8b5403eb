"""File-level entry points of the figures stage: read the workflow's result files, draw, save.

Each function takes plain paths and settings (what a workflow script unpacks from ``snakemake``)
and writes one figure in every format listed in ``out_paths``. Each imports only the figure
module it needs: a job's start-up time is most of its run time.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from vcrbench.estimation.storage import read_human_estimate
from vcrbench.figures import style as style_mod
from vcrbench.figures.style import Style
from vcrbench.files import io
from vcrbench.vocab import HUMAN_LABEL_SPACE, IMAGENET1K, resolve_label_space

PathLike = str | os.PathLike


def _style(style: Style | Mapping | None) -> Style:
    return style if isinstance(style, Style) else Style.from_config(style)


def _read_csv(path: PathLike) -> pd.DataFrame:
    try:
        return pd.read_csv(path, keep_default_na=True)
    except (OSError, pd.errors.ParserError) as exc:
        raise OSError(f"cannot read table {path}: {exc}") from exc


def _save(fig, out_paths: Sequence[PathLike], style: Style) -> list[Path]:
    return style_mod.save(fig, out_paths, style)


def plot_hmri_mrsi(
    metrics_csv: PathLike,
    out_paths: Sequence[PathLike],
    *,
    corruption: str,
    families: Mapping[str, str],
    style: Style | Mapping | None = None,
) -> list[Path]:
    """HMRI/MRSI bars of one corruption from ``results/tables/vcr_metrics.csv``."""
    from vcrbench.figures.bars import hmri_mrsi_figure

    style = _style(style)
    metrics = _read_csv(metrics_csv)
    with style.context():
        fig = hmri_mrsi_figure(metrics, corruption, families, style)
        return _save(fig, out_paths, style)


def _plot_geirhos(
    figure: str, table_csv: PathLike, out_paths: Sequence[PathLike], style
) -> list[Path]:
    from vcrbench.figures import geirhos

    style = _style(style)
    table = _read_csv(table_csv)
    with style.context():
        return _save(getattr(geirhos, figure)(table, style), out_paths, style)


def plot_geirhos_dnn(
    table_csv: PathLike, out_paths: Sequence[PathLike], *, style: Style | Mapping | None = None
) -> list[Path]:
    """HMRI/MRSI of Geirhos et al.'s networks against their humans, from
    ``results/tables/geirhos_dnn_vs_humans.csv``."""
    return _plot_geirhos("dnn_vs_humans_figure", table_csv, out_paths, style)


def plot_geirhos_trained(
    table_csv: PathLike, out_paths: Sequence[PathLike], *, style: Style | Mapping | None = None
) -> list[Path]:
    """Heat map of ``results/tables/geirhos_trained_vs_humans.csv`` (HMRI and its change)."""
    return _plot_geirhos("trained_heatmap", table_csv, out_paths, style)


def plot_geirhos_consistency(
    table_csv: PathLike, out_paths: Sequence[PathLike], *, style: Style | Mapping | None = None
) -> list[Path]:
    """κ of Geirhos' networks with the humans against Δv, from
    ``results/tables/geirhos_error_consistency.csv``."""
    return _plot_geirhos("consistency_figure", table_csv, out_paths, style)


def plot_model_consistency(
    table_csv: PathLike, out_paths: Sequence[PathLike], *, style: Style | Mapping | None = None
) -> list[Path]:
    """κ of every two models against Δv, from ``results/tables/model_error_consistency.csv``."""
    return _plot_geirhos("model_consistency_figure", table_csv, out_paths, style)


def plot_defenses(
    table_csv: PathLike, out_paths: Sequence[PathLike], *, style: Style | Mapping | None = None
) -> list[Path]:
    """What each defense changes, per corruption, from ``results/tables/defenses.csv``."""
    from vcrbench.figures.defenses import defense_figure

    style = _style(style)
    table = _read_csv(table_csv)
    with style.context():
        return _save(defense_figure(table, style), out_paths, style)


def curves_label_space(style: Style, dataset_label_space: str, has_human: bool) -> str:
    """Label space of a curves figure: ``auto`` = the human one when the corruption has a
    human reference (human data are 16-class), else the dataset's."""
    mode = style.curves_label_space
    if mode == "auto":
        return HUMAN_LABEL_SPACE if has_human else dataset_label_space
    return resolve_label_space(mode, dataset_label_space)


def read_model_curves(curve_paths: Sequence[PathLike]) -> pd.DataFrame:
    """Concatenate ``results/estimates/{model}/{corruption}/curves.parquet`` files, adding the
    ``model`` column (from the file's provenance metadata, else the folder name)."""
    frames = []
    for path in curve_paths:
        model = io.read_metadata(path).get("model") or Path(path).parent.parent.name
        frames.append(io.read_parquet(path).assign(model=str(model)))
    if not frames:
        return pd.DataFrame(columns=["model", "label_space", "property", "v", "s", "lo", "hi"])
    return pd.concat(frames, ignore_index=True)


def read_human_curves(reference_dir: PathLike) -> tuple[dict[str, pd.DataFrame], float | None]:
    """``({property: curve table v, s, lo, hi}, band level)`` of a human reference folder."""
    human = read_human_estimate(reference_dir)
    curves = {}
    for p, est in sorted(human.curves.items()):
        frame = est.curve_frame()
        lo, hi = human.support_range(p)
        curves[p] = frame.assign(in_support=(frame["v"] >= lo) & (frame["v"] <= hi))
    levels = [est.level for p, est in sorted(human.curves.items())]
    return curves, (levels[0] if levels else None)


def plot_curves(
    curve_paths: Sequence[PathLike],
    out_paths: Sequence[PathLike],
    *,
    corruption: str,
    families: Mapping[str, str],
    style: Style | Mapping | None = None,
    dataset_label_space: str = IMAGENET1K,
    reference_dir: PathLike | None = None,
    reference_name: str | None = None,
) -> list[Path]:
    """s_a and s_p of every model on one corruption, with the human curve and its band."""
    from vcrbench.figures.curves import curves_figure

    style = _style(style)
    space = curves_label_space(style, dataset_label_space, reference_dir is not None)
    human, level = ({}, None)
    if reference_dir is not None and space == HUMAN_LABEL_SPACE:
        human, level = read_human_curves(reference_dir)
    with style.context():
        fig = curves_figure(
            read_model_curves(curve_paths),
            families,
            style,
            corruption=corruption,
            label_space=space,
            human=human,
            human_name=reference_name,
            human_level=level,
        )
        return _save(fig, out_paths, style)


def plot_dv_histograms(
    histograms_csv: PathLike,
    out_paths: Sequence[PathLike],
    *,
    corruption: str,
    coverage_csv: PathLike | None = None,
    style: Style | Mapping | None = None,
) -> list[Path]:
    """Δv histograms (ImageNet-C and VCR) of one corruption."""
    from vcrbench.figures.histograms import dv_histogram_figure

    style = _style(style)
    hist = _read_csv(histograms_csv)
    coverage = _read_csv(coverage_csv) if coverage_csv is not None else None
    with style.context():
        fig = dv_histogram_figure(hist, corruption, style, coverage=coverage)
        return _save(fig, out_paths, style)


def plot_examples(
    shard_paths: Sequence[PathLike],
    clean_images: PathLike,
    clean_index: PathLike,
    out_paths: Sequence[PathLike],
    *,
    corruption: str,
    n_bins: int,
    style: Style | Mapping | None = None,
) -> list[Path]:
    """One clean image at increasing Δv, up to the highest Δv of the test set's shards (Fig. 10;
    :mod:`vcrbench.figures.examples`); the clean panel from the clean set."""
    from vcrbench.datasets.loading import CleanSet
    from vcrbench.figures.examples import examples_figure, read_examples

    style = _style(style)
    rows, images, same = read_examples(shard_paths, n_bins)
    clean = None
    if same:
        clean = CleanSet.open(clean_images, clean_index).images([rows["image_id"].iloc[0]])[0]
    with style.context():
        fig = examples_figure(rows, images, clean, corruption, style, same_image=same)
        return _save(fig, out_paths, style)


def plot_examples_overview(
    shard_paths: Mapping[str, Sequence[PathLike]],
    clean_images: PathLike,
    clean_index: PathLike,
    out_paths: Sequence[PathLike],
    *,
    n_bins: int,
    style: Style | Mapping | None = None,
) -> list[Path]:
    """Every corruption of the run as a row (``shard_paths``: ``{corruption: its shards}``, in
    the run's order): one clean image at increasing Δv, up to the highest Δv of its shards
    (Fig. 3; :mod:`vcrbench.figures.examples`)."""
    from vcrbench.datasets.loading import CleanSet
    from vcrbench.figures.examples import OVERVIEW_PANELS, overview_figure, read_examples

    style = _style(style)
    clean_set = CleanSet.open(clean_images, clean_index)
    examples = {}
    for corruption, paths in shard_paths.items():
        rows, images, same = read_examples(paths, n_bins, OVERVIEW_PANELS)
        clean = clean_set.images([rows["image_id"].iloc[0]])[0] if same else None
        examples[corruption] = (rows, images, clean)
    with style.context():
        fig = overview_figure(examples, style)
        return _save(fig, out_paths, style)


def plot_imagenet_c_vs_vcr(
    imagenet_c_csv: PathLike,
    metrics_csv: PathLike,
    out_paths: Sequence[PathLike],
    *,
    corruption: str,
    families: Mapping[str, str],
    style: Style | Mapping | None = None,
    dataset_label_space: str = IMAGENET1K,
) -> list[Path]:
    """ImageNet-C accuracy against R̂_a and R̂_p of one corruption."""
    from vcrbench.figures.scatter import imagenet_c_scatter_figure

    style = _style(style)
    space = resolve_label_space(style.label_space, dataset_label_space)
    with style.context():
        fig = imagenet_c_scatter_figure(
            _read_csv(imagenet_c_csv),
            _read_csv(metrics_csv),
            corruption,
            families,
            style,
            label_space=space,
        )
        return _save(fig, out_paths, style)


def read_reference_estimates(reference_dirs: Mapping[str, PathLike]) -> dict[str, dict]:
    """``{reference: {property: Estimate}}`` from ``results/humans/{reference}`` folders."""
    out = {}
    for name, folder in sorted(reference_dirs.items()):
        out[name] = dict(read_human_estimate(folder).curves)
    return out


def write_similarity_table(
    reference_dirs: Mapping[str, PathLike],
    out_csv: PathLike,
    *,
    info: Mapping[str, Mapping],
    level: float,
    band: str,
    classes_csv: PathLike | None = None,
) -> pd.DataFrame:
    """The pairwise similarity tests of the human references, as CSV; with ``classes_csv``, the
    classes those tests find beside the classes in use (:func:`similarity_classes`)."""
    from vcrbench.figures.humans import similarity_table

    table = similarity_table(read_reference_estimates(reference_dirs), info, level=level, band=band)
    io.write_csv(table, out_csv)
    if classes_csv is not None:
        io.write_csv(similarity_classes(table, info), classes_csv)
    return table


def similarity_classes(table: pd.DataFrame, info: Mapping[str, Mapping]) -> pd.DataFrame:
    """The classes the similarity test finds among the references (greedy cliques of mutually
    similar curves, :func:`vcrbench.estimation.similarity.classes_from_pairs`), per property, beside
    the class each reference's corruption is given in the registry or config (``class_used``: the
    one the workflow uses to share human data)."""
    from vcrbench.estimation.similarity import classes_from_pairs

    rows = []
    for prop, sub in table.groupby("property", sort=True):
        names = sorted(set(sub["reference_a"]) | set(sub["reference_b"]))
        pairs = sub.loc[sub["similar"].astype(bool), ["reference_a", "reference_b"]]
        found = classes_from_pairs(names, list(pairs.itertuples(index=False, name=None)))
        for k, members in enumerate(found, start=1):
            for ref in members:
                rows.append(
                    {
                        "property": prop,
                        "class_found": k,
                        "members": " ".join(members),
                        "reference": ref,
                        "corruption": info.get(ref, {}).get("corruption"),
                        "class_used": info.get(ref, {}).get("similarity_class"),
                    }
                )
    columns = ["property", "class_found", "members", "reference", "corruption", "class_used"]
    return pd.DataFrame(rows, columns=columns)


def plot_human_similarity(
    reference_dirs: Mapping[str, PathLike],
    out_paths: Sequence[PathLike],
    *,
    info: Mapping[str, Mapping],
    level: float,
    band: str,
    style: Style | Mapping | None = None,
) -> list[Path]:
    """Human curves with their similarity bands, grouped by similarity class."""
    from vcrbench.figures.humans import human_similarity_figure

    style = _style(style)
    estimates = read_reference_estimates(reference_dirs)
    with style.context():
        fig = human_similarity_figure(estimates, info, style, level=level, band=band)
        return _save(fig, out_paths, style)
