"""Evaluate one model on one corruption: outcomes per label space, curves, R̂, HMRI and MRSI.

This joins what the earlier stages wrote (predictions on the test set and on the clean images, and
the human reference's curves) and runs the estimator (:mod:`vcrbench.estimation`) once per label
space and property on the model's outcomes (:mod:`vcrbench.evaluation.outcomes`: accuracy, anchored
at the clean accuracy, and consistency, anchored at 1). HMRI/MRSI are computed where a human
reference exists, in the reference's label space (the human data are 16-class forced choice), over
all of Δv ∈ [0, 1] as the paper (``HMRI_a``, …) and over the reference's Δv support
(``HMRI_a_support``, …: outside it the human curve is extrapolation), and every row names the
reference it used and how (own data, or a member of the corruption's similarity class).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from vcrbench import estimation, seeding
from vcrbench.errors import EvaluationError
from vcrbench.estimation import metrics, zeroshot
from vcrbench.estimation.status import (
    ShortProperties,
    check_short_label_space,
    with_status,
)
from vcrbench.estimation.storage import HumanEstimate, read_human_estimate, write_estimates
from vcrbench.evaluation.differences import replicate_rows
from vcrbench.evaluation.outcomes import (
    STORED_DECISION16,
    Outcomes,
    decisions,
    extra_columns,
    outcomes,
    read_prediction_file,
    read_predictions,
)
from vcrbench.files import io
from vcrbench.labels import DEFAULT_DECISION16, check_decision16
from vcrbench.vocab import (
    DATASET_DECISION,
    DATASET_LABEL_SPACE,
    HUMAN_DECISION,
    HUMAN_LABEL_SPACE,
    IMAGENET1K,
    IMAGENET_C_COLUMNS,
    METRIC_COLUMNS,
    PROPERTIES,
    ZERO_SHOT_METRIC_COLUMNS,
    ZERO_SHOT_PROPERTIES,
    resolve_label_spaces,
)

#: Replicate metrics of an estimate folder, for paired differences
#: (vcrbench.evaluation.differences).
REPLICATES_FILE = "replicate_metrics.parquet"
#: Where HMRI/MRSI integrate (:func:`human_range`).
METRIC_RANGES = ("support", "full")
#: Suffix of the vcr_metrics.csv columns integrated over the human reference's Δv support.
SUPPORT_SUFFIX = "_support"
#: The label spaces of the ImageNet-C tables (``imagenet_c_accuracy``,
#: ``imagenet_c_clean_correct``): both, whatever ``estimation.label_spaces`` says (their rules do
#: not read the estimation block).
IMAGENET_C_LABEL_SPACES = (DATASET_LABEL_SPACE, HUMAN_LABEL_SPACE)

log = logging.getLogger(__name__)


def evaluate(
    prediction_paths: Sequence[str | os.PathLike],
    clean_path: str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    model: str,
    corruption: str,
    settings: Mapping,
    seed: int,
    dataset_label_space: str = IMAGENET1K,
    label_spaces: Sequence[str],
    reference: str | None = None,
    reference_how: str | None = None,
    reference_dir: str | os.PathLike | None = None,
    scenario_level: float,
    progress: bool = False,
    zero_shot: Mapping | None = None,
    short_label_space: str,
) -> pd.DataFrame:
    """Curves and metrics of ``model`` on ``corruption``; writes ``bins``, ``curves``, ``metrics``.

    ``zero_shot`` (a dataset with its own classes): ``{"seen": [class …] or None, "unseen": …}``
    adds the zero-shot properties (:mod:`vcrbench.estimation.zeroshot`: per-class mean accuracy, and
    with a split seen, unseen and H) in the dataset's label space, as curves and ``R_cm``, ``R_s``,
    ``R_u``, ``R_H``.

    ``settings`` is the config's ``estimation`` block; ``label_spaces`` and ``short_label_space``
    are its keys of those names (``"dataset"`` is ``dataset_label_space``), ``scenario_level``
    is ``humans.scenario_level``. ``reference_dir`` holds the human
    reference's estimates (``results/humans/{reference}``) when the corruption has one; HMRI and
    MRSI then integrate over all of [0, 1] as the paper (``HMRI_a``, ``MRSI_a``, …, extrapolated
    human curve included) and over the Δv range where the reference has data (columns
    ``human_dv_lo_*``/``human_dv_hi_*``): ``HMRI_a_support``, ``MRSI_a_support``, …, with their
    intervals. The scenario labels are those of the [0, 1] metrics. A scenario label is reported
    where at least ``scenario_level`` of the bootstrap replicates agree with it (else
    ``"undetermined"``).

    A property whose samples in a label space fill no Δv bin to ``min_count``
    (:class:`~vcrbench.errors.ShortSampleError`): with ``short_label_space="status"`` its metrics
    are left empty and the row gets ``status`` (``vocab.STATUS_SHORT``) and a ``status_reason``
    naming the property and the counts (the columns appear only where a row is short), the other
    label spaces and properties are estimated as usual; with ``"error"`` an
    :class:`~vcrbench.errors.EvaluationError` naming the label space. Nothing estimated at all is
    an error either way. Returns the metrics table (one row per label space).
    """
    check_short_label_space(short_label_space)
    decision16 = check_decision16(settings.get("decision16", DEFAULT_DECISION16))
    extra = extra_columns(decision16)
    preds = read_predictions(prediction_paths, extra)
    clean = read_prediction_file(clean_path, extra)
    human = None
    if reference_dir is not None:
        human = read_human_estimate(Path(reference_dir))
    est_settings = estimation.EstimationSettings.of_config(settings)
    setup = _Setup(model, corruption, settings, est_settings, seed, human, scenario_level, progress)

    estimates: dict[tuple[str, str], estimation.Estimate] = {}
    metric_rows = []
    replicate_frames: list[pd.DataFrame] = []
    for space in resolve_label_spaces(label_spaces, dataset_label_space):
        obs = outcomes(preds, clean, space, dataset_label_space, decision16=decision16)
        if obs is None:
            log.info("%s: no %s decisions; label space skipped", model, space)
            continue
        row = _counts_row(model, corruption, space, preds, obs)
        short = ShortProperties(
            f"{model} on {corruption}, label space {space!r}", short_label_space
        )
        for key, prop in PROPERTIES.items():
            if key not in obs:
                row.update({f"R_{key}": np.nan, f"R_{key}_lo": np.nan, f"R_{key}_hi": np.nan})
                continue
            with short(prop):
                est, values, frames = _property(setup, space, key, prop, obs[key])
                estimates[(space, prop)] = est
                row.update(values)
                replicate_frames += frames
            if short.failed(prop):
                row.update({f"R_{key}": np.nan, f"R_{key}_lo": np.nan, f"R_{key}_hi": np.nan})
        row.update({"human_reference": reference, "reference_how": reference_how})
        if zero_shot is not None and space == dataset_label_space:
            with short("zero-shot properties"):
                replicate_frames += _zero_shot(
                    preds, clean, zero_shot, row, estimates, model, corruption, space, settings,
                    seed, progress,
                )  # fmt: skip
        row.update(short.columns())
        metric_rows.append(row)

    if not metric_rows:
        raise EvaluationError(f"{model} on {corruption}: no label space could be evaluated")
    if not estimates:
        reasons = "; ".join(r["status_reason"] for r in metric_rows if "status_reason" in r)
        raise EvaluationError(f"{model} on {corruption}: nothing could be estimated: {reasons}")
    meta = {"model": model, "corruption": corruption, "settings": dict(settings), "seed": seed}
    return _write(Path(out_dir), estimates, metric_rows, replicate_frames, meta)


def _counts_row(model: str, corruption: str, space: str, preds: pd.DataFrame, obs) -> dict:
    """The head of a label space's metrics row: what was evaluated, on how many samples."""
    return {
        "model": model,
        "corruption": corruption,
        "label_space": space,
        "n_samples": len(preds),
        "n_images": int(preds["image_id"].nunique()),
        "n_labelled": len(obs["a"].dv) if "a" in obs else 0,
        "clean_accuracy": float(np.mean(obs["a"].anchor)) if "a" in obs else np.nan,
    }


class _Setup(NamedTuple):
    """What every estimate of one :func:`evaluate` call shares."""

    model: str
    corruption: str
    settings: Mapping
    #: the estimator's keys of ``settings``, typed once for every estimate of the call
    est_settings: estimation.EstimationSettings
    seed: int
    human: HumanEstimate | None
    scenario_level: float
    progress: bool


def _property(setup: _Setup, space: str, key: str, prop: str, o: Outcomes):
    """One property's estimate in one label space: ``(estimate, its metrics-row values, its
    replicate rows and those of its HMRI/MRSI)``."""
    # The seed leaves the model out: every model's replicate b resamples the same images,
    # so differences between models are paired (vcrbench.evaluation.differences).
    est_seed = seeding.derive_seed(setup.seed, "estimate", setup.corruption, space, prop)
    est = estimation.estimate(
        o.dv,
        o.y,
        o.anchor,
        setup.est_settings.for_label_space(space, o.anchor),
        groups=o.groups,
        anchor_groups=o.anchor_groups,
        seed=est_seed,
        progress=setup.progress,
    )
    values = {f"R_{key}": est.area, f"R_{key}_lo": est.area_lo, f"R_{key}_hi": est.area_hi}
    human_row, human_reps = _human_aware(
        key, prop, est, setup.human, space, setup.settings,
        setup.scenario_level,
    )  # fmt: skip
    values.update(human_row)
    unit = {"n": est.n, "n_units": est.n_groups or est.n, "seed": est_seed, "level": est.level}
    frames = [
        replicate_rows(
            setup.model, setup.corruption, space, f"R_{key}", est.area,
            est.replicate_areas(setup.settings.get("weighting")), **unit,
        )
    ]  # fmt: skip
    for name, reps in human_reps.items():
        frames.append(
            replicate_rows(
                setup.model, setup.corruption, space, f"{name}_{key}", human_row[f"{name}_{key}"],
                reps, **unit,
            )
        )  # fmt: skip
    return est, values, frames


def _write(out_dir: Path, estimates, metric_rows, replicate_frames, meta) -> pd.DataFrame:
    """Write one evaluation's bins, curves, replicate metrics and metrics; the metrics table."""
    write_estimates(
        estimates,
        out_dir,
        keys=["label_space", "property"],
        tables=["bins", "curves"],
        metadata=meta,
    )
    table = with_status(pd.DataFrame(metric_rows), only_if_short=True)
    table = table[[c for c in METRIC_COLUMNS + ZERO_SHOT_METRIC_COLUMNS if c in table.columns]]
    io.write_parquet(
        pd.concat(replicate_frames, ignore_index=True), out_dir / REPLICATES_FILE, meta
    )
    io.write_parquet(table, out_dir / "metrics.parquet", meta)
    return table


def _zero_shot(preds, clean, split, row, estimates, model, corruption, space, settings, seed,
               progress) -> list[pd.DataFrame]:  # fmt: skip
    """The zero-shot estimates of one model and corruption: into ``estimates`` and ``row``;
    returns their replicate rows (for paired differences)."""
    found = zeroshot.zero_shot_estimates(
        preds,
        clean,
        seen=split.get("seen"),
        unseen=split.get("unseen"),
        settings=settings,
        seed_of=lambda name: seeding.derive_seed(seed, "estimate", corruption, space, name),
        progress=progress,
    )
    frames = []
    for key, name in ZERO_SHOT_PROPERTIES.items():
        est = found.get(name)
        if est is None:
            continue
        estimates[(space, name)] = est
        row.update({f"R_{key}": est.area, f"R_{key}_lo": est.area_lo, f"R_{key}_hi": est.area_hi})
        frames.append(
            replicate_rows(
                model, corruption, space, f"R_{key}", est.area,
                est.replicate_areas(settings.get("weighting")), n=est.n,
                n_units=est.n_groups or est.n, seed=est.seed, level=est.level,
            )
        )  # fmt: skip
    return frames


def human_range(human: HumanEstimate, prop: str, metric_range: str) -> tuple[float, float] | None:
    """The Δv range HMRI/MRSI integrate over: the reference's support for ``"support"``
    (references written before supports existed: [0, 1]), None (all of [0, 1]) for ``"full"``."""
    if metric_range not in METRIC_RANGES:
        raise EvaluationError(f"metric range must be one of {METRIC_RANGES}, not {metric_range!r}")
    if metric_range == "full":
        return None
    return human.support_range(prop)


def _human_aware(key, prop, est, human, space, settings, scenario_level) -> dict:
    """HMRI/MRSI of one property over [0, 1] (the paper's) and over the reference's support
    (``*_support`` columns); returns the row's cells and the [0, 1] replicates."""
    names = ("HMRI", "MRSI")
    cells = [
        f"{n}_{key}{r}{s}" for n in names for r in ("", SUPPORT_SUFFIX) for s in ("", "_lo", "_hi")
    ]
    empty = dict.fromkeys(cells, np.nan)
    empty[f"scenario_{key}"] = None
    empty[f"scenario_{key}_share"] = np.nan
    if human is None or space != HUMAN_LABEL_SPACE or prop not in human.curves:
        return empty, {}
    support = human_range(human, prop, "support")

    def compare(rng):
        return metrics.compare(
            human.curves[prop], est, level=est.level, weighting=settings.get("weighting"), support=rng,
            scenario_level=scenario_level,
        )  # fmt: skip

    res, res_support = compare(None), compare(support)
    out = {f"{n}_{key}{s}": res[f"{n}{s}"] for n in names for s in ("", "_lo", "_hi")}
    out |= {
        f"{n}_{key}{SUPPORT_SUFFIX}{s}": res_support[f"{n}{s}"]
        for n in names
        for s in ("", "_lo", "_hi")
    }
    out[f"scenario_{key}"] = res["scenario_label"]
    out[f"scenario_{key}_share"] = res["scenario_support"]
    out[f"A_h_{key}"] = res["A_h"]
    out[f"human_dv_lo_{key}"], out[f"human_dv_hi_{key}"] = support
    return out, res["replicates"]


def collect_metrics(
    paths: Sequence[str | os.PathLike], out_path: str | os.PathLike
) -> pd.DataFrame:
    """Concatenate per-(model, corruption) metrics into the metrics table (CSV); every row has a
    ``status`` (:data:`STATUS_OK`, or :data:`STATUS_SHORT` with its ``status_reason``)."""
    frames = [io.read_parquet(p) for p in paths]
    table = with_status(pd.concat(frames, ignore_index=True))
    for col in METRIC_COLUMNS:
        if col not in table.columns:
            table[col] = np.nan
    # The zero-shot columns only where some model has them (datasets with their own classes).
    columns = METRIC_COLUMNS + [c for c in ZERO_SHOT_METRIC_COLUMNS if c in table.columns]
    table = table[columns].sort_values(["model", "corruption", "label_space"], kind="stable")
    io.write_csv(table, out_path)
    return table


# --------------------------------------------------------------------------- ImageNet-C


def imagenet_c_accuracy(
    predictions: Mapping[tuple[str, str], str | os.PathLike | Sequence[str | os.PathLike]],
    clean: Mapping[str, str | os.PathLike],
    *,
    dataset_label_space: str = IMAGENET1K,
    label_spaces: Sequence[str],
) -> pd.DataFrame:
    """Accuracy and consistency of every model on every ImageNet-C set, per severity and mean.

    ``predictions``: ``{(model, corruption): path or paths}`` of ImageNet-C prediction files
    (the prediction schema plus ``severity``; the groups of one set are read together);
    ``clean``: ``{model: path}`` of clean predictions.
    Per label space of ``label_spaces`` (``"dataset"`` = ``dataset_label_space``; ``geirhos16``
    for models with 16-class decisions, by the stored ``pred16``, :data:`STORED_DECISION16`; the
    workflow passes :data:`IMAGENET_C_LABEL_SPACES`): ``accuracy`` over labelled images (``n`` of
    them), ``consistency`` = share of images whose prediction equals the clean one (``n_images``),
    the outcomes of :func:`decisions` as the curves use them. Severity ``"mean"`` is the mean over
    the five severities (ImageNet-C's convention), with summed counts.
    """
    rows = []
    for (model, corruption), path in sorted(predictions.items()):
        if model not in clean:
            raise EvaluationError(f"ImageNet-C accuracy: no clean predictions for model {model!r}")
        files = [path] if isinstance(path, str | os.PathLike) else list(path)
        if not files:
            raise EvaluationError(
                f"ImageNet-C accuracy: no prediction files for {model!r} on {corruption!r}"
            )
        parts = [read_prediction_file(f, ["severity"]) for f in files]
        for f, part in zip(files, parts, strict=True):
            missing = sorted(
                {"image_id", *DATASET_DECISION, *HUMAN_DECISION, "severity"} - set(part.columns)
            )
            if missing:
                raise EvaluationError(f"{f}: lacks column(s) {missing}")
        parts = [part for part in parts if len(part)] or parts[:1]  # empty groups: no rows
        preds = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
        path = files[0] if len(files) == 1 else f"{files[0]} (+{len(files) - 1} more)"
        ref = read_prediction_file(clean[model])
        for space in resolve_label_spaces(label_spaces, dataset_label_space):
            found = decisions(
                preds, ref, space, dataset_label_space, decision16=STORED_DECISION16,
                where=str(path),
            )  # fmt: skip
            if found is None:
                continue
            pred, label, clean_pred = found
            same = pred == clean_pred
            labelled = label >= 0
            correct = pred == label
            per = []
            for sev in sorted(preds["severity"].unique()):
                at = preds["severity"].to_numpy() == sev
                n = int((at & labelled).sum())
                acc = float(correct[at & labelled].mean()) if n else np.nan
                cons = float(same[at].mean()) if at.any() else np.nan
                per.append((acc, cons, n, int(at.sum())))
                rows.append((model, corruption, space, str(int(sev)), acc, cons, n, int(at.sum())))
            accs = [p[0] for p in per]
            rows.append(
                (
                    model,
                    corruption,
                    space,
                    "mean",
                    float(np.mean(accs)) if accs and not np.isnan(accs).any() else np.nan,
                    float(np.mean([p[1] for p in per])) if per else np.nan,
                    sum(p[2] for p in per),
                    sum(p[3] for p in per),
                )
            )
    return pd.DataFrame(rows, columns=IMAGENET_C_COLUMNS)
