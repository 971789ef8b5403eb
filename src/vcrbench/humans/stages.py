"""Workflow entry points for human references: plain arguments in, files out.

One call per rule (``rules/humans.smk`` and its thin scripts):

=========================== ============================================ ===================================
function                    reads                                        writes
=========================== ============================================ ===================================
:func:`ingest_reference`    the reference's data (config entry)          ``results/humans/{ref}/trials.parquet``
:func:`map_conditions`      trials, the clean set                        ``results/humans/{ref}/conditions.parquet``
:func:`estimate_reference`  trials, conditions                           ``results/humans/{ref}/{bins,curves,summary,replicates}.parquet``
:func:`geirhos_dnn_table`   conditions + curves of the Geirhos refs      ``results/tables/geirhos_dnn_vs_humans.csv``
:func:`geirhos_conditions`  the shipped Geirhos data                     ``results/tables/geirhos_conditions.csv``
:func:`geirhos_trained`     conditions + curves of the Geirhos refs      ``results/tables/geirhos_trained_vs_humans.csv``
:func:`geirhos_consistency` conditions of the Geirhos refs               ``results/tables/geirhos_error_consistency.csv``
=========================== ============================================ ===================================

Seeds: every random draw derives from the config's root seed; the placement of trials on the Δv
axis uses ``derive_seed(seed, "humans", reference)`` for a reference's humans and, in the DNN
table, for that experiment's networks, so that their bootstrap replicates pair.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import pandas as pd

from vcrbench import io, seeding
from vcrbench.estimation.storage import (
    HumanEstimate,
    read_human_estimate,
    write_human_estimate,
)
from vcrbench.humans import curves, mapping, trial_schema
from vcrbench.humans.geirhos import reader
from vcrbench.humans.transfer import reference_corruption
from vcrbench.humans.trial_schema import HumanDataError
from vcrbench.vocab import N_BINS, param_columns_of


def reference_seed(seed: int, reference: str) -> int:
    """The placement/estimation seed of one reference."""
    return seeding.derive_seed(seed, "humans", reference)


def ingest_reference(
    name: str, ref_cfg: Mapping, out_path: str | os.PathLike | None = None
) -> pd.DataFrame:
    """Trials of one configured human reference (``humans.references.<name>``).

    ``kind: geirhos2018`` (``experiment: noise|lowpass``, optional ``root``) reads the shipped
    Geirhos humans; ``kind: trials`` (``path``, ``corruption``) reads a user's file
    (:func:`~vcrbench.humans.trial_schema.read_trials`), whose trials must all be of the configured
    corruption. Written to ``out_path`` (Parquet) if given, with the entry as metadata.
    """
    corruption = reference_corruption(name, ref_cfg)
    if ref_cfg["kind"] == "geirhos2018":
        trials = reader.read_geirhos(ref_cfg["experiment"], "humans", ref_cfg.get("root"))
    else:
        trials = trial_schema.read_trials(ref_cfg["path"])
        other = sorted(set(trials["corruption"]) - {corruption})
        if other:
            raise HumanDataError(
                f"{ref_cfg['path']}: trials of {other} in human reference {name!r}, whose config "
                f"(humans.references.{name}.corruption) says {corruption!r}; "
                "split the file per corruption"
            )
    if out_path is not None:
        io.write_parquet(trials, out_path, metadata={"reference": name, "config": dict(ref_cfg)})
    return trials


def map_conditions(
    trials_path: str | os.PathLike,
    images_path: str | os.PathLike,
    index_path: str | os.PathLike,
    out_path: str | os.PathLike,
    *,
    reference_name: str,
    seed: int,
    vif_variant: str = "kumar",
    reference: str = "original",
    n_images: int | None = 500,
    draws: int = 4,
    lowpass_sigma_scale: float = 1.0,
    jpeg_quality: int | None = None,
    corruptions_config: Mapping | None = None,
) -> pd.DataFrame:
    """Δv distribution of every fixed condition of a reference's trials on the clean set.

    Trials that carry their own Δv need none: if no trial needs placing, an empty table with
    the same columns is written. ``draws`` applies to random manipulations (the noise); a
    deterministic one (``geirhos_lowpass``) is measured once per image. ``corruptions_config`` is
    the config's ``corruptions`` block (a user corruption's ``function`` and domain).
    """
    from vcrbench.datasets import CleanSet

    trials = io.read_parquet(trials_path)
    conds = mapping.conditions_of(trials)
    cols = ["corruption", "condition", *param_columns_of(conds)]
    cols += ["image_id", "draw", "seed", "vif", "dv"]
    settings = {
        "vif_variant": vif_variant,
        "seed": reference_seed(seed, reference_name),
        "reference": reference,
        "n_images": n_images,
        "lowpass_sigma_scale": lowpass_sigma_scale,
        "jpeg_quality": jpeg_quality,
    }
    if conds.empty:
        out = pd.DataFrame({c: pd.Series(dtype="float64") for c in cols})
    else:
        clean = CleanSet.open(images_path, index_path)
        parts = []
        for corruption, sub in conds.groupby("corruption", sort=True):
            n_draws = 1 if corruption in mapping.LOCAL_MANIPULATIONS else draws
            parts.append(
                mapping.condition_dv(
                    sub, clean, draws=n_draws, corruptions_config=corruptions_config, **settings
                )
            )
        out = pd.concat(parts, ignore_index=True)
    io.write_parquet(
        out, out_path, metadata={**settings, "draws": draws, "reference_name": reference_name}
    )
    return out


def full_signal_trials(ref_cfg: Mapping | None) -> pd.DataFrame | None:
    """The lab's trials on unmanipulated images for a reference, or None (not a ``geirhos2018``
    reference): :func:`vcrbench.humans.geirhos.reader.full_signal_trials`."""
    if not ref_cfg or ref_cfg.get("kind") != "geirhos2018":
        return None
    return reader.full_signal_trials("humans", ref_cfg.get("root"))


def _read_conditions(path) -> pd.DataFrame | None:
    cdv = io.read_parquet(path)
    return cdv if len(cdv) else None


def estimate_reference(
    trials_path: str | os.PathLike,
    conditions_path: str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    reference_name: str,
    settings: Mapping,
    seed: int,
    anchor: float | str = "auto",
    placement: str = "draw",
    ref_cfg: Mapping | None = None,
) -> HumanEstimate:
    """Human curves of one reference (:func:`~vcrbench.humans.curves.human_estimates`), written
    as ``{bins,curves,summary,replicates}.parquet`` in ``out_dir``. A ``geirhos2018`` reference
    (``ref_cfg``) is anchored by the lab's full-signal data (:func:`full_signal_trials`)."""
    trials = io.read_parquet(trials_path)
    est = curves.human_estimates(
        trials, _read_conditions(conditions_path), settings, reference_seed(seed, reference_name),
        anchor=anchor, placement=placement, name=reference_name,
        full_signal=full_signal_trials(ref_cfg),
    )  # fmt: skip
    meta = {"reference": reference_name, "anchor": est.anchor, "placement": placement}
    write_human_estimate(est, out_dir, metadata=meta)
    return est


def network_anchor(anchor: float | str, *, full_signal: bool) -> float | str:
    """The anchor of Geirhos' networks' curves for the references' ``anchor``.

    The networks never answered the clean image of a trial, so ``auto`` (and ``clean``) resolve
    as ``auto`` does for any trials without clean answers
    (:func:`~vcrbench.humans.curves.accuracy_anchor`): the lab's full-signal condition where the
    networks answered it (``full_signal``: the ImageNet networks, on the colour experiment), else
    the least-manipulated condition (the trained networks never saw unmanipulated images). A
    number, ``full-signal`` or ``zero-condition`` passes through.
    """
    if anchor in ("auto", "clean"):
        return "full-signal" if full_signal else "zero-condition"
    return anchor


def _geirhos_experiments(references: Mapping[str, Mapping]) -> list[tuple[str, str]]:
    """``(reference name, experiment)`` of every ``geirhos2018`` reference, in name order."""
    return [
        (name, cfg["experiment"])
        for name, cfg in sorted(references.items())
        if cfg.get("kind") == "geirhos2018"
    ]


def geirhos_dnn_table(
    references: Mapping[str, Mapping],
    conditions_paths: Mapping[str, str | os.PathLike],
    estimates_dirs: Mapping[str, str | os.PathLike],
    out_path: str | os.PathLike,
    *,
    settings: Mapping,
    seed: int,
    anchor: float | str = "auto",
    placement: str = "draw",
    dnn_aggregation: str = "mean",
    metric_range: str = "support",
) -> pd.DataFrame:
    """HMRI/MRSI of Geirhos' networks against the humans of every ``geirhos2018`` reference,
    over the reference's Δv support (``metric_range="support"``) or all of [0, 1] (``"full"``).

    ``references`` is ``humans.references``; ``conditions_paths`` / ``estimates_dirs`` map each
    geirhos2018 reference name to its conditions file and curves folder. The humans' curve is the
    reference's own; the networks are placed with the reference's seed. Written as CSV with a
    ``reference`` column.
    """
    from vcrbench.humans.geirhos.dnn import TABLE_COLUMNS, dnn_vs_humans

    # Geirhos' trials have no clean answers: "auto"/"clean" anchor humans and networks alike by
    # their answers on the unmanipulated colour images (full signal).
    dnn_anchor = network_anchor(anchor, full_signal=True)
    rows = []
    for name, exp in _geirhos_experiments(references):
        estimates = read_human_estimate(estimates_dirs[name])
        table = dnn_vs_humans(
            {exp: io.read_parquet(conditions_paths[name])}, settings, reference_seed(seed, name),
            anchor=dnn_anchor, placement=placement, dnn_aggregation=dnn_aggregation,
            humans={exp: estimates.curves["accuracy"]},
            supports={exp: estimates.support.get("accuracy")},
            metric_range=metric_range,
        )  # fmt: skip
        rows.append(table.assign(reference=name))
    if not rows:
        raise HumanDataError("no geirhos2018 reference in humans.references: no DNN table")
    out = pd.concat(rows, ignore_index=True)[["reference", *TABLE_COLUMNS]]
    io.write_csv(out, out_path)
    return out


def geirhos_trained(
    references: Mapping[str, Mapping],
    conditions_paths: Mapping[str, str | os.PathLike],
    estimates_dirs: Mapping[str, str | os.PathLike],
    out_path: str | os.PathLike,
    *,
    settings: Mapping,
    seed: int,
    anchor: float | str = "auto",
    placement: str = "draw",
    metric_range: str = "support",
) -> pd.DataFrame:
    """The train x test table of Geirhos' trained networks against the humans (CSV).

    :func:`vcrbench.humans.geirhos.trained.trained_vs_humans` over the test experiments whose human
    experiment is among the ``geirhos2018`` references; each is placed with that reference's
    seed, so the networks' replicates pair with the humans'.
    """
    from vcrbench.humans.geirhos.trained import trained_vs_humans

    conditions, humans, seeds = {}, {}, {}
    for name, exp in _geirhos_experiments(references):
        conditions[exp] = io.read_parquet(conditions_paths[name])
        humans[exp] = read_human_estimate(estimates_dirs[name]).curves["accuracy"]
        seeds[exp] = reference_seed(seed, name)
    table = trained_vs_humans(
        conditions, humans, settings, seeds,
        anchor=network_anchor(anchor, full_signal=False), placement=placement,
        metric_range=metric_range,
    )  # fmt: skip
    if table.empty:
        raise HumanDataError("no geirhos2018 reference of a trained-network test: no table")
    io.write_csv(table, out_path)
    return table


def geirhos_consistency(
    references: Mapping[str, Mapping],
    conditions_paths: Mapping[str, str | os.PathLike],
    out_path: str | os.PathLike,
    *,
    n_bins: int = N_BINS,
) -> pd.DataFrame:
    """Error consistency (Cohen's κ) of Geirhos' networks with the humans per condition, each
    condition at its median Δv on this run's images (:mod:`vcrbench.humans.geirhos.error_consistency`)."""
    from vcrbench.humans.geirhos.error_consistency import consistency_table

    conditions = {
        exp: io.read_parquet(conditions_paths[name])
        for name, exp in _geirhos_experiments(references)
    }
    table = consistency_table(conditions, n_bins=n_bins)
    io.write_csv(table, out_path)
    return table


def geirhos_conditions(out_path: str | os.PathLike) -> pd.DataFrame:
    """Per-condition accuracies of every Geirhos experiment, observer and network (CSV).

    :func:`vcrbench.humans.geirhos.accuracy_table`: humans, the ImageNet networks under the
    publication's summed-probability rule and the project's mean rule, the trained networks.
    """
    from vcrbench.humans.geirhos import accuracy_table

    out = accuracy_table()
    io.write_csv(out, out_path)
    return out


__all__ = [
    "estimate_reference",
    "geirhos_conditions",
    "geirhos_consistency",
    "geirhos_trained",
    "geirhos_dnn_table",
    "ingest_reference",
    "map_conditions",
    "network_anchor",
    "reference_seed",
]
