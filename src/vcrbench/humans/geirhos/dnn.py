"""HMRI/MRSI of Geirhos et al.'s networks (ResNet-152, VGG-19, GoogLeNet) against their humans.

Both sets of trials come from the same experiments (uniform noise, low-pass) at the same fixed
conditions, so both are placed on the Δv axis through the same per-condition Δv distribution
(:mod:`~vcrbench.humans.mapping`) and fitted by the same estimator; the human curve is
bootstrapped over participants, each network's over trials, and replicate b of both shares the
same resample of the Δv distribution, so :func:`vcrbench.metrics.compare` pairs like with like.
A result that needs no GPU: the networks' answers ship with the data. Humans and networks are
anchored alike by their answers on the unmanipulated colour images (the lab's full-signal
condition), and HMRI/MRSI integrate over the humans' Δv support.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from vcrbench import schema as config_schema
from vcrbench.humans.curves import human_estimates
from vcrbench.humans.geirhos import reader

TABLE_COLUMNS = (
    "experiment", "corruption", "network", "A_h", "A_h_lo", "A_h_hi", "R", "R_lo", "R_hi",
    "HMRI", "HMRI_lo", "HMRI_hi", "MRSI", "MRSI_lo", "MRSI_hi", "scenario", "scenario_support",
    "human_dv_lo", "human_dv_hi", "metric_range", "n_boot", "level",
)  # fmt: skip


def dnn_vs_humans(
    conditions: Mapping[str, pd.DataFrame],
    settings: Mapping | None = None,
    seed: int = 0,
    *,
    networks: Sequence[str] = reader.DNN_OBSERVERS,
    anchor: float | str = "full-signal",
    placement: str = "draw",
    dnn_aggregation: str = "mean",
    humans: Mapping | None = None,
    supports: Mapping | None = None,
    metric_range: str = "support",
) -> pd.DataFrame:
    """The table of HMRI/MRSI (with bootstrap intervals) of each network against the humans.

    Parameters
    ----------
    conditions : mapping
        Experiment name (``noise``, ``lowpass``) -> its
        :func:`~vcrbench.humans.mapping.condition_dv` table.
    settings : mapping
        The config's ``estimation`` block (see :func:`~vcrbench.humans.curves.human_estimates`).
    seed : int
        Root seed (placement draws are shared by humans and networks of one experiment).
    networks : sequence
        Which of :data:`~vcrbench.humans.geirhos.reader.DNN_OBSERVERS`.
    anchor, placement
        As for :func:`~vcrbench.humans.curves.human_estimates`, for humans and networks alike;
        ``"full-signal"`` (default) anchors each by its own answers on the unmanipulated colour
        images (:func:`~vcrbench.humans.geirhos.reader.full_signal_trials`).
    dnn_aggregation : {'mean', 'sum'}
        The networks' 16-class decision rule (:func:`~vcrbench.humans.geirhos.reader.read_geirhos`).
    humans : mapping, optional
        Experiment -> the human accuracy :class:`~vcrbench.estimation.Estimate` already fitted
        (the workflow's reference curve, made with the same ``seed``, settings, anchor and
        placement); estimated here where missing.
    supports : mapping, optional
        Experiment -> the human reference's ``(lo, hi, rule)`` Δv support (from its curves
        folder); computed here where missing.
    metric_range : {'support', 'full'}
        HMRI/MRSI over the humans' support (default) or all of [0, 1].

    Returns
    -------
    DataFrame
        :data:`TABLE_COLUMNS`, one row per experiment x network; ``R`` is the network's R̂_a.
    """
    settings = config_schema.validate_block("estimation", settings)
    full = anchor == "full-signal"
    nets_full = (
        reader.full_signal_trials("dnns", subjects=list(networks), dnn_aggregation=dnn_aggregation)
        if full
        else None
    )
    fit = {"settings": settings, "seed": seed, "anchor": anchor, "placement": placement}
    rows = []
    for experiment, cdv in conditions.items():
        exp = reader.experiment(experiment)
        est_h, support = _human_reference(experiment, cdv, fit, humans, supports)
        dv_range = None if metric_range == "full" else (support[0], support[1])
        all_nets = reader.read_geirhos(
            experiment, "dnns", subjects=list(networks), dnn_aggregation=dnn_aggregation
        )
        for net in networks:
            est_m = _network_curve(
                all_nets, nets_full, net, f"geirhos-{experiment}-{net}", cdv, fit
            )
            rows.append(_table_row(exp, net, est_h, est_m, settings, dv_range, metric_range))
    return pd.DataFrame(rows)[list(TABLE_COLUMNS)]


def _human_reference(
    experiment: str,
    cdv: pd.DataFrame,
    fit: Mapping,
    humans: Mapping | None,
    supports: Mapping | None,
) -> tuple:
    """The humans' accuracy curve of ``experiment`` and its Δv support ``(lo, hi, rule)``: as
    given in ``humans`` and ``supports``, else fitted here (``fit``: settings, seed, anchor and
    placement)."""
    est_h = (humans or {}).get(experiment)
    support = (supports or {}).get(experiment)
    if est_h is None or support is None:
        full = fit["anchor"] == "full-signal"
        fitted = human_estimates(
            reader.read_geirhos(experiment, "humans"), cdv, fit["settings"], fit["seed"],
            anchor=fit["anchor"], placement=fit["placement"], properties=("accuracy",),
            name=f"geirhos-{experiment}-humans",
            full_signal=reader.full_signal_trials("humans") if full else None,
        )  # fmt: skip
        est_h = fitted.curves["accuracy"] if est_h is None else est_h
        support = fitted.support["accuracy"] if support is None else support
    return est_h, support


def _network_curve(
    all_nets: pd.DataFrame,
    nets_full: pd.DataFrame | None,
    net: str,
    name: str,
    cdv: pd.DataFrame,
    fit: Mapping,
):
    """Network ``net``'s accuracy curve, fitted from its trials in ``all_nets`` (anchored by its
    trials in ``nets_full`` where given) as the humans' is."""
    trials = all_nets[all_nets["participant"] == net].reset_index(drop=True)
    net_full = None
    if nets_full is not None:
        net_full = nets_full[nets_full["participant"] == net].reset_index(drop=True)
    return human_estimates(
        trials, cdv, fit["settings"], fit["seed"], anchor=fit["anchor"],
        placement=fit["placement"], groups=None, properties=("accuracy",), name=name,
        full_signal=net_full,
    ).curves["accuracy"]  # fmt: skip


def _table_row(
    exp: reader.Experiment, net: str, est_h, est_m, settings: Mapping, dv_range, metric_range: str
) -> dict:
    """The row of network ``net`` on ``exp``: :func:`vcrbench.metrics.compare` of its curve
    ``est_m`` against the humans' ``est_h`` over ``dv_range`` (None: all of [0, 1])."""
    from vcrbench.metrics import compare

    level = float(settings["level"])
    res = compare(est_h, est_m, level=level, weighting=settings.get("weighting"), support=dv_range)
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


def format_table(table: pd.DataFrame, digits: int = 3) -> str:
    """Markdown table: value [lo, hi] for A_h, R̂_a, HMRI and MRSI."""

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
