"""HMRI/MRSI of Geirhos et al.'s networks (ResNet-152, VGG-19, GoogLeNet) against their humans.

Both sets of trials come from the same experiments (uniform noise, low-pass) at the same fixed
conditions, so both are placed on the Δv axis through the same per-condition Δv distribution
(:mod:`~vcrbench.humans.mapping`) and fitted by the same estimator; the human curve is
bootstrapped over participants, each network's over trials, and replicate b of both shares the
same resample of the Δv distribution, so :func:`vcrbench.estimation.metrics.compare` pairs like with
like. A result that needs no GPU: the networks' answers ship with the data. Humans and networks are
anchored alike by their answers on the unmanipulated colour images (the lab's full-signal
condition), and HMRI/MRSI integrate over the humans' Δv support.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import pandas as pd

from vcrbench.humans.curves import HumanFit
from vcrbench.humans.geirhos import reader
from vcrbench.humans.geirhos.networks import ExperimentHumans, network_anchor

TABLE_COLUMNS = (
    "experiment", "corruption", "network", "A_h", "A_h_lo", "A_h_hi", "R", "R_lo", "R_hi",
    "HMRI", "HMRI_lo", "HMRI_hi", "MRSI", "MRSI_lo", "MRSI_hi", "scenario", "scenario_support",
    "human_dv_lo", "human_dv_hi", "metric_range", "n_boot", "level",
)  # fmt: skip


def dnn_vs_humans(
    references: Sequence[ExperimentHumans],
    fit: HumanFit,
    *,
    metric_range: str,
    scenario_level: float,
    networks: Sequence[str] = reader.DNN_OBSERVERS,
    dnn_aggregation: str = "mean",
) -> pd.DataFrame:
    """The table of HMRI/MRSI (with bootstrap intervals) of each network against the humans.

    Parameters
    ----------
    references : sequence of ExperimentHumans
        Per experiment (``noise``, ``lowpass``, …) its per-condition Δv table, the reference's
        placement seed (shared by humans and networks) and the humans' estimate (fitted here
        where None, or where it records no Δv support).
    fit : HumanFit
        Settings, anchor and placement of every curve, humans and networks alike; the anchor is
        resolved for networks by :func:`~vcrbench.humans.geirhos.networks.network_anchor`
        (``auto``: each by its own answers on the unmanipulated colour images,
        :func:`~vcrbench.humans.geirhos.reader.full_signal_trials`).
    networks : sequence
        Which of :data:`~vcrbench.humans.geirhos.reader.DNN_OBSERVERS`.
    dnn_aggregation : {'mean', 'sum'}
        The networks' 16-class decision rule (:func:`~vcrbench.humans.geirhos.reader.read_geirhos`).
    metric_range : {'support', 'full'}
        HMRI/MRSI over the humans' support or all of [0, 1] (``humans.metric_range``).
    scenario_level : float
        Share of the bootstrap replicates that must agree with a row's scenario for it to be
        reported, else ``"undetermined"`` (``humans.scenario_level``).

    Returns
    -------
    DataFrame
        :data:`TABLE_COLUMNS`, one row per experiment x network; ``R`` is the network's R̂_a.
    """
    fit = dataclasses.replace(fit, anchor=network_anchor(fit.anchor, full_signal=True))
    nets_full = (
        reader.full_signal_trials("dnns", subjects=list(networks), dnn_aggregation=dnn_aggregation)
        if fit.anchor == "full-signal"
        else None
    )
    rows = []
    for ref in references:
        exp = reader.experiment(ref.experiment)
        est_h, support = _human_reference(ref, fit)
        dv_range = None if metric_range == "full" else (support[0], support[1])
        all_nets = reader.read_geirhos(
            ref.experiment, "dnns", subjects=list(networks), dnn_aggregation=dnn_aggregation
        )
        for net in networks:
            est_m = _network_curve(all_nets, nets_full, net, ref, fit)
            rows.append(
                _table_row(exp, net, est_h, est_m, fit.settings, dv_range, metric_range,
                           scenario_level)
            )  # fmt: skip
    return pd.DataFrame(rows)[list(TABLE_COLUMNS)]


def _human_reference(ref: ExperimentHumans, fit: HumanFit) -> tuple:
    """The humans' accuracy curve of ``ref``'s experiment and its Δv support ``(lo, hi, rule)``:
    those of ``ref.humans``, else fitted here with ``fit``."""
    est_h = ref.humans.curves["accuracy"] if ref.humans is not None else None
    support = ref.humans.support.get("accuracy") if ref.humans is not None else None
    if est_h is None or support is None:
        full = fit.anchor == "full-signal"
        fitted = fit.estimate(
            reader.read_geirhos(ref.experiment, "humans"), ref.conditions, ref.seed,
            properties=("accuracy",), name=f"geirhos-{ref.experiment}-humans",
            full_signal=reader.full_signal_trials("humans") if full else None,
        )  # fmt: skip
        est_h = fitted.curves["accuracy"] if est_h is None else est_h
        support = fitted.support["accuracy"] if support is None else support
    return est_h, support


def _network_curve(
    all_nets: pd.DataFrame,
    nets_full: pd.DataFrame | None,
    net: str,
    ref: ExperimentHumans,
    fit: HumanFit,
):
    """Network ``net``'s accuracy curve, fitted from its trials in ``all_nets`` (anchored by its
    trials in ``nets_full`` where given) as the humans' is."""
    trials = all_nets[all_nets["participant"] == net].reset_index(drop=True)
    net_full = None
    if nets_full is not None:
        net_full = nets_full[nets_full["participant"] == net].reset_index(drop=True)
    return fit.estimate(
        trials, ref.conditions, ref.seed, groups=None, properties=("accuracy",),
        name=f"geirhos-{ref.experiment}-{net}", full_signal=net_full,
    ).curves["accuracy"]  # fmt: skip


def _table_row(
    exp: reader.Experiment,
    net: str,
    est_h,
    est_m,
    settings: Mapping,
    dv_range,
    metric_range: str,
    scenario_level: float,
) -> dict:
    """The row of network ``net`` on ``exp``: :func:`vcrbench.estimation.metrics.compare` of its
    curve ``est_m`` against the humans' ``est_h`` over ``dv_range`` (None: all of [0, 1])."""
    from vcrbench.estimation.metrics import compare

    level = float(settings["level"])
    res = compare(
        est_h, est_m, level=level, weighting=settings.get("weighting"), support=dv_range,
        scenario_level=scenario_level,
    )  # fmt: skip
    lo, hi = dv_range if dv_range is not None else (0.0, 1.0)
    return {
        "experiment": exp.name,
        "corruption": exp.corruption,
        "network": net,
        **res,
        "scenario": res["scenario_label"],
        "human_dv_lo": lo,
        "human_dv_hi": hi,
        "metric_range": metric_range,
    }


def format_table(table: pd.DataFrame, digits: int) -> str:
    """Markdown table: value [lo, hi] for A_h, R̂_a, HMRI and MRSI, with ``digits`` decimals
    (``figures.digits``)."""

    def cell(row, name):
        return f"{row[name]:.{digits}f} [{row[name + '_lo']:.{digits}f}, {row[name + '_hi']:.{digits}f}]"

    lines = [
        "| experiment | network | A_h | R̂_a (network) | HMRI_a | MRSI_a | scenario (support) |",
        "|---|---|---|---|---|---|---|",
    ]
    for _, r in table.iterrows():
        lines.append(
            f"| {r['experiment']} | {r['network']} | {cell(r, 'A_h')} | {cell(r, 'R')} | "
            f"{cell(r, 'HMRI')} | {cell(r, 'MRSI')} | {r['scenario']} ({r['scenario_support']:.2f}) |"
        )
    return "\n".join(lines)
