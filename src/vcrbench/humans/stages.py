"""Workflow entry points for human references: typed settings in, files out.

One call per rule (``rules/humans.smk`` and its thin scripts; the Geirhos tables' are in
:mod:`vcrbench.humans.geirhos.stages`):

=========================== ============================================ ===================================
function                    reads                                        writes
=========================== ============================================ ===================================
:func:`ingest_reference`    the reference's data                         ``results/humans/{ref}/trials.parquet``
:func:`map_conditions`      trials, the clean set                        ``results/humans/{ref}/conditions.parquet``
:func:`estimate_reference`  trials, conditions                           ``results/humans/{ref}/{bins,curves,summary,replicates}.parquet``
=========================== ============================================ ===================================

A reference comes as a :class:`~vcrbench.humans.references.HumanReference`, the fitting
settings as a :class:`~vcrbench.humans.curves.HumanFit` and the mapping's as a
:class:`~vcrbench.settings.HumanMappingSettings` (with the ``vif`` block's
:class:`~vcrbench.settings.VifSettings`), all made by the plan layer
(:mod:`vcrbench.plan.humans`) from the config, or by a job from its rule's params. Seeds: every
random draw derives from the config's root seed; the placement of trials on the Δv axis uses
:func:`~vcrbench.humans.references.reference_seed` of the reference.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

import pandas as pd

from vcrbench.files import io
from vcrbench.humans import mapping, trial_schema
from vcrbench.humans.geirhos import reader
from vcrbench.humans.references import HumanReference, reference_seed
from vcrbench.humans.trial_schema import HumanDataError
from vcrbench.settings import HumanMappingSettings, VifSettings
from vcrbench.vocab import param_columns_of

if TYPE_CHECKING:  # the estimator's imports take a second or two; ingesting and mapping need none
    from vcrbench.estimation.storage import HumanEstimate
    from vcrbench.humans.curves import HumanFit


def ingest_reference(
    reference: HumanReference, out_path: str | os.PathLike | None = None
) -> pd.DataFrame:
    """Trials of one human reference.

    A Geirhos reference (``experiment``, ``root``) reads the shipped Geirhos humans; a ``trials``
    reference reads a user's file (:func:`~vcrbench.humans.trial_schema.read_trials`), whose
    trials must all be of the reference's corruption. Written to ``out_path`` (Parquet) if given,
    with the reference's config entry as metadata.
    """
    name, corruption = reference.name, reference.corruption
    if reference.is_geirhos:
        trials = reader.read_geirhos(reference.experiment, "humans", reference.root)
    else:
        trials = trial_schema.read_trials(reference.path)
        other = sorted(set(trials["corruption"]) - {corruption})
        if other:
            raise HumanDataError(
                f"{reference.path}: trials of {other} in human reference {name!r}, whose config "
                f"(humans.references.{name}.corruption) says {corruption!r}; "
                "split the file per corruption"
            )
    if out_path is not None:
        metadata = {"reference": name, "config": dict(reference.entry)}
        io.write_parquet(trials, out_path, metadata=metadata)
    return trials


def map_conditions(
    trials_path: str | os.PathLike,
    images_path: str | os.PathLike,
    index_path: str | os.PathLike,
    out_path: str | os.PathLike,
    *,
    reference_name: str,
    seed: int,
    settings: HumanMappingSettings,
    vif_settings: VifSettings,
    corruptions_config: Mapping | None = None,
) -> pd.DataFrame:
    """Δv distribution of every fixed condition of a reference's trials on the clean set
    (:func:`~vcrbench.humans.mapping.condition_dv` with ``settings``, the reference's merged
    ``humans.mapping`` options, measured as ``vif_settings`` say).

    Trials that carry their own Δv need none: if no trial needs placing, an empty table with
    the same columns is written. ``settings.draws`` applies to random manipulations (the noise);
    a deterministic one (``geirhos_lowpass``) is measured once per image. ``corruptions_config``
    is the config's ``corruptions`` block (a user corruption's ``function`` and domain).
    """
    from vcrbench.datasets.loading import CleanSet

    trials = io.read_parquet(trials_path)
    conds = mapping.conditions_of(trials)
    cols = ["corruption", "condition", *param_columns_of(conds)]
    cols += ["image_id", "draw", "seed", "vif", "dv"]
    ref_seed = reference_seed(seed, reference_name)
    if conds.empty:
        out = pd.DataFrame({c: pd.Series(dtype="float64") for c in cols})
    else:
        clean = CleanSet.open(images_path, index_path)
        once = dataclasses.replace(settings, draws=1)  # for a deterministic manipulation
        parts = []
        for corruption, sub in conds.groupby("corruption", sort=True):
            use = once if corruption in mapping.LOCAL_MANIPULATIONS else settings
            parts.append(
                mapping.condition_dv(
                    sub, clean, ref_seed, use, vif_settings, corruptions_config=corruptions_config
                )
            )
        out = pd.concat(parts, ignore_index=True)
    metadata = {
        "vif_variant": vif_settings.variant,
        **vif_settings.metadata(),
        "seed": ref_seed,
        "reference": settings.reference,
        "n_images": settings.n_images,
        "lowpass_sigma_scale": settings.lowpass_sigma_scale,
        "jpeg_quality": settings.jpeg_quality,
        "draws": settings.draws,
        "reference_name": reference_name,
    }
    io.write_parquet(out, out_path, metadata=metadata)
    return out


def full_signal_trials(reference: HumanReference) -> pd.DataFrame | None:
    """The lab's trials on unmanipulated images for a reference, or None (not a Geirhos
    reference): :func:`vcrbench.humans.geirhos.reader.full_signal_trials`."""
    if not reference.is_geirhos:
        return None
    return reader.full_signal_trials("humans", reference.root)


def _read_conditions(path) -> pd.DataFrame | None:
    cdv = io.read_parquet(path)
    return cdv if len(cdv) else None


def estimate_reference(
    trials_path: str | os.PathLike,
    conditions_path: str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    reference: HumanReference,
    fit: HumanFit,
    seed: int,
) -> HumanEstimate:
    """Human curves of one reference (:func:`~vcrbench.humans.curves.human_estimates` with
    ``fit``, seeded by the reference's seed from the root ``seed``), written as
    ``{bins,curves,summary,replicates}.parquet`` in ``out_dir``. A Geirhos reference is anchored
    by the lab's full-signal data (:func:`full_signal_trials`)."""
    from vcrbench.estimation.storage import write_human_estimate

    trials = io.read_parquet(trials_path)
    est = fit.estimate(
        trials, _read_conditions(conditions_path), reference.seed(seed), name=reference.name,
        full_signal=full_signal_trials(reference),
    )  # fmt: skip
    meta = {"reference": reference.name, "anchor": est.anchor, "placement": fit.placement}
    write_human_estimate(est, out_dir, metadata=meta)
    return est


__all__ = [
    "estimate_reference",
    "full_signal_trials",
    "ingest_reference",
    "map_conditions",
    "reference_seed",
]
