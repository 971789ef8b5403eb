"""Workflow entry points for the tables of Geirhos et al.'s data: typed settings in, files out.

One call per rule (``rules/humans.smk`` and its thin scripts):

=============================== ======================================== ===================================
function                        reads                                    writes
=============================== ======================================== ===================================
:func:`dnn_table`               conditions + curves of the Geirhos refs  ``results/tables/geirhos_dnn_vs_humans.csv``
:func:`conditions_table`        the shipped Geirhos data                 ``results/tables/geirhos_conditions.csv``
:func:`trained_table`           conditions + curves of the Geirhos refs  ``results/tables/geirhos_trained_vs_humans.csv``
:func:`error_consistency_table` conditions of the Geirhos refs           ``results/tables/geirhos_error_consistency.csv``
=============================== ======================================== ===================================

``references`` are the run's human references (``{name: HumanReference}``, from
:func:`vcrbench.plan.humans.references_of`); only the Geirhos ones
(:func:`~vcrbench.humans.references.geirhos_references`) enter a table, each with its conditions
file and curves folder (``conditions_paths``, ``estimates_dirs``: by reference name) and the
placement seed of its reference, so that the networks' bootstrap replicates pair with the humans'.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import pandas as pd

from vcrbench.estimation.storage import read_human_estimate
from vcrbench.files import io
from vcrbench.humans.curves import HumanFit
from vcrbench.humans.geirhos.networks import ExperimentHumans
from vcrbench.humans.references import HumanReference, geirhos_references
from vcrbench.humans.trial_schema import HumanDataError

Paths = Mapping[str, str | os.PathLike]


def _experiment_humans(
    ref: HumanReference, conditions_paths: Paths, seed: int, estimates_dirs: Paths | None
) -> ExperimentHumans:
    """Reference ``ref``'s experiment as the tables take it: its conditions, its seed, and its
    human estimate where ``estimates_dirs`` is given."""
    humans = read_human_estimate(estimates_dirs[ref.name]) if estimates_dirs is not None else None
    conditions = io.read_parquet(conditions_paths[ref.name])
    return ExperimentHumans(ref.experiment, conditions, ref.seed(seed), humans)


def dnn_table(
    references: Mapping[str, HumanReference],
    conditions_paths: Paths,
    estimates_dirs: Paths,
    out_path: str | os.PathLike,
    *,
    fit: HumanFit,
    seed: int,
    metric_range: str,
    scenario_level: float,
    dnn_aggregation: str = "mean",
) -> pd.DataFrame:
    """HMRI/MRSI of Geirhos' networks against the humans of every Geirhos reference
    (:func:`vcrbench.humans.geirhos.dnn.dnn_vs_humans`), over the reference's Δv support
    (``metric_range="support"``) or all of [0, 1] (``"full"``), each row's scenario labelled at
    ``scenario_level`` (``humans.scenario_level``). The humans' curve is the reference's own.
    Written as CSV with a ``reference`` column."""
    from vcrbench.humans.geirhos.dnn import TABLE_COLUMNS, dnn_vs_humans

    rows = []
    for ref in geirhos_references(references):
        humans = _experiment_humans(ref, conditions_paths, seed, estimates_dirs)
        table = dnn_vs_humans(
            [humans],
            fit,
            dnn_aggregation=dnn_aggregation,
            metric_range=metric_range,
            scenario_level=scenario_level,
        )
        rows.append(table.assign(reference=ref.name))
    if not rows:
        raise HumanDataError("no geirhos2018 reference in humans.references: no DNN table")
    out = pd.concat(rows, ignore_index=True)[["reference", *TABLE_COLUMNS]]
    io.write_csv(out, out_path)
    return out


def trained_table(
    references: Mapping[str, HumanReference],
    conditions_paths: Paths,
    estimates_dirs: Paths,
    out_path: str | os.PathLike,
    *,
    fit: HumanFit,
    seed: int,
    metric_range: str,
    scenario_level: float,
) -> pd.DataFrame:
    """The train x test table of Geirhos' trained networks against the humans (CSV):
    :func:`vcrbench.humans.geirhos.trained.trained_vs_humans` over the test experiments whose
    human experiment is among the Geirhos references."""
    from vcrbench.humans.geirhos.trained import trained_vs_humans

    humans = [
        _experiment_humans(ref, conditions_paths, seed, estimates_dirs)
        for ref in geirhos_references(references)
    ]
    table = trained_vs_humans(humans, fit, metric_range=metric_range, scenario_level=scenario_level)
    if table.empty:
        raise HumanDataError("no geirhos2018 reference of a trained-network test: no table")
    io.write_csv(table, out_path)
    return table


def error_consistency_table(
    references: Mapping[str, HumanReference],
    conditions_paths: Paths,
    out_path: str | os.PathLike,
    *,
    n_bins: int,
) -> pd.DataFrame:
    """Error consistency (Cohen's κ) of Geirhos' networks with the humans per condition, each
    condition at its median Δv on this run's images, in its bin of ``n_bins``
    (``estimation.bins``; :mod:`vcrbench.humans.geirhos.error_consistency`)."""
    from vcrbench.humans.geirhos.error_consistency import consistency_table

    conditions = {
        ref.experiment: io.read_parquet(conditions_paths[ref.name])
        for ref in geirhos_references(references)
    }
    table = consistency_table(conditions, n_bins=n_bins)
    io.write_csv(table, out_path)
    return table


def conditions_table(out_path: str | os.PathLike) -> pd.DataFrame:
    """Per-condition accuracies of every Geirhos experiment, observer and network (CSV).

    :func:`vcrbench.humans.geirhos.accuracy_table`: humans, the ImageNet networks under the
    publication's summed-probability rule and the project's mean rule, the trained networks.
    """
    from vcrbench.humans.geirhos import accuracy_table

    out = accuracy_table()
    io.write_csv(out, out_path)
    return out


__all__ = ["conditions_table", "dnn_table", "error_consistency_table", "trained_table"]
