"""Geirhos et al.'s networks trained on distortions, against the humans: a train x test matrix.

The release's ``fine-tuning`` data (``trained.parquet``) hold 8 test experiments answered by
ResNet-50s trained from scratch on 16-class-ImageNet: the baseline on undistorted colour images
(``sixteen01v4``, the paper's A1) and one network per training distortion (A2-A9). For every
network and every test experiment that can be placed on the Δv axis, the network's accuracy
curve is estimated exactly as the humans' (same per-condition Δv distribution, same placement
seed, same estimator) and compared with the humans' curve: HMRI_a/MRSI_a with paired bootstrap
intervals. The change against the baseline on the same test is paired too: replicate b of the
trained network, of the baseline and of the humans share the placement draws, so the difference
of their replicate HMRIs is one draw of the change.

Human reference of each test experiment: the lab experiment with the same manipulation and
conditions (Figure 4's "human observers" column: the JPEG contrast experiment for contrast).
Rotation (not on the Δv axis) and salt-and-pepper noise (no human data) are left out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pandas as pd

from vcrbench.humans import geirhos as gd
from vcrbench.humans.curves import HumanFit, dv_support
from vcrbench.humans.geirhos.networks import ExperimentHumans, network_anchor
from vcrbench.humans.trial_schema import HumanDataError, validate_trials

#: Test experiment of the trained networks -> the lab experiment whose humans it is compared with.
HUMAN_EXPERIMENT = {
    "colour-png": "colour",
    "contrast-png": "contrast",
    "highpass": "highpass",
    "lowpass": "lowpass",
    "noise-png": "noise",
    "phase-scrambling": "phase-scrambling",
}
#: Test experiments without a place on the Δv axis, and why.
LEFT_OUT = {
    "rotation": "rotation is not a visual degradation in the VIF sense",
    "salt-and-pepper-png": "no human data",
}
#: The baseline (undistorted colour images) and the networks trained on one distortion (A1-A9).
BASELINE = "sixteen01v4"
NETWORKS = gd.TRAINED_NETWORKS[:9]
#: What each network was trained on (the paper's Figure 4).
TRAINING = {
    "sixteen01v4": "none (colour)",
    "sixteen26--grayscale": "greyscale",
    "sixteen07--grayscale-contrast-multiple": "contrast",
    "sixteen08--low-pass-multiple": "low-pass",
    "sixteen11--high-pass-multiple": "high-pass",
    "sixteen16--phase-scrambling-multiple": "phase noise",
    "sixteen09--rotation-multiple": "rotation",
    "sixteen21--salt-and-pepper-noise-multiple": "salt-and-pepper",
    "sixteen03--uniform-noise-multiple": "uniform noise",
}
#: The test experiment of each network's own training distortion.
OWN_TEST = {
    "sixteen26--grayscale": "colour-png",
    "sixteen07--grayscale-contrast-multiple": "contrast-png",
    "sixteen08--low-pass-multiple": "lowpass",
    "sixteen11--high-pass-multiple": "highpass",
    "sixteen16--phase-scrambling-multiple": "phase-scrambling",
    "sixteen09--rotation-multiple": "rotation",
    "sixteen21--salt-and-pepper-noise-multiple": "salt-and-pepper-png",
    "sixteen03--uniform-noise-multiple": "noise-png",
}
TABLE_COLUMNS = (
    "network", "model", "trained_on", "test", "human_experiment", "own_distortion", "A_h", "R",
    "R_lo", "R_hi", "HMRI", "HMRI_lo", "HMRI_hi", "MRSI", "MRSI_lo", "MRSI_hi",
    "baseline_HMRI", "baseline_MRSI", "dHMRI", "dHMRI_lo", "dHMRI_hi", "dMRSI", "dMRSI_lo",
    "dMRSI_hi", "dv_lo", "dv_hi", "n_trials", "n_boot", "level",
)  # fmt: skip


def read_trained(test: str, networks: list[str] | None = None) -> pd.DataFrame:
    """Trials of the trained networks on one test experiment, in the trials schema.

    ``corruption`` and ``param.*`` are those of the human experiment (:data:`HUMAN_EXPERIMENT`),
    ``condition`` its condition string (the release's ``specialised`` copies print ``1.0`` for
    ``1``: canonical labels here), so the trials are placed through the humans' conditions.
    """
    from vcrbench.humans.geirhos import reader

    if test not in HUMAN_EXPERIMENT:
        why = LEFT_OUT.get(test, "not a test experiment of the trained networks")
        raise HumanDataError(f"trained-network test {test!r} cannot be placed: {why}")
    human = reader.experiment(HUMAN_EXPERIMENT[test])
    df = gd.load("trained", test, networks)
    info = gd.experiment_info(test, "trained")
    labels = df["condition_label"].astype(str)
    values = {c: info.parameter_values(c)[human.parameter] for c in labels.unique()}
    raw = pd.DataFrame(
        {
            "participant": df["subj"].astype(str),
            "image_id": df["image_id"],
            "label": df["category"].astype(str),
            "response": df["object_response"].astype(str),
            "corruption": human.corruption,
            "condition": labels,
            f"param.{human.parameter}": labels.map(values).astype(float),
            "session": df["session"].astype(str),
            "trial": df["trial"].astype(str),
        }
    )
    return validate_trials(raw, f"trained/{test}")


def trained_vs_humans(
    references: Sequence[ExperimentHumans],
    fit: HumanFit,
    *,
    metric_range: str,
    scenario_level: float,
) -> pd.DataFrame:
    """The train x test table (:data:`TABLE_COLUMNS`), one row per network and test experiment.

    ``references``: per human experiment (``noise``, …) its
    :func:`~vcrbench.humans.mapping.condition_dv` table, the placement seed of its reference and
    the humans' estimate (its accuracy curve); test experiments whose human experiment is missing
    are skipped. ``fit``: settings, anchor (resolved for networks that never saw unmanipulated
    images, :func:`~vcrbench.humans.geirhos.networks.network_anchor`) and placement.
    ``metric_range`` (``humans.metric_range``): ``"support"`` integrates over the Δv range of the
    test's conditions, ``"full"`` over [0, 1]. ``scenario_level`` (``humans.scenario_level``):
    what :func:`~vcrbench.estimation.metrics.compare` labels a scenario with (the table keeps
    no scenario column).
    """
    from vcrbench.estimation.bootstrap import percentile_interval
    from vcrbench.estimation.metrics import compare

    fit = dataclasses.replace(fit, anchor=network_anchor(fit.anchor, full_signal=False))
    level = float(fit.settings["level"])
    weighting = fit.settings.get("weighting")
    by_experiment = {ref.experiment: ref for ref in references}
    rows = []
    for test, human_exp in HUMAN_EXPERIMENT.items():
        if human_exp not in by_experiment:
            continue
        ref = by_experiment[human_exp]
        if ref.humans is None:
            raise HumanDataError(
                f"trained networks on {test!r}: no human estimate of experiment {human_exp!r}"
            )
        est_h, cdv = ref.humans.curves["accuracy"], ref.conditions
        trials = read_trained(test, list(NETWORKS))
        # The trained networks never answered unmanipulated images: their curves are anchored by
        # the least-manipulated condition, so HMRI/MRSI integrate only where the test's
        # conditions lie on the Δv axis (no extrapolation on either side).
        lo, hi, _ = dv_support(trials, cdv, from_zero=False)
        if metric_range == "full":
            lo, hi = 0.0, 1.0
        results = {}
        for net in NETWORKS:
            t = trials[trials["participant"] == net].reset_index(drop=True)
            est_m = fit.estimate(
                t, cdv, ref.seed, groups=None, properties=("accuracy",),
                name=f"geirhos-trained-{test}-{net}",
            ).curves["accuracy"]  # fmt: skip
            results[net] = compare(
                est_h, est_m, level=level, weighting=weighting, support=(lo, hi),
                scenario_level=scenario_level,
            )  # fmt: skip
        # (B, 2) HMRI and MRSI of the paired replicates, for the change against the baseline
        reps = {
            net: np.column_stack([res["replicates"]["HMRI"], res["replicates"]["MRSI"]])
            for net, res in results.items()
        }
        base = results[BASELINE]
        for k, net in enumerate(NETWORKS):
            res = results[net]
            B = min(len(reps[net]), len(reps[BASELINE]))
            delta = reps[net][:B] - reps[BASELINE][:B]
            (dh_lo, dm_lo), (dh_hi, dm_hi) = percentile_interval(delta, level)
            rows.append(
                {
                    "network": net, "model": f"A{k + 1}", "trained_on": TRAINING[net],
                    "test": test, "human_experiment": human_exp,
                    "own_distortion": OWN_TEST.get(net) == test,
                    **{c: res[c] for c in ("A_h", "R", "R_lo", "R_hi", "HMRI", "HMRI_lo",
                                           "HMRI_hi", "MRSI", "MRSI_lo", "MRSI_hi")},
                    "baseline_HMRI": base["HMRI"], "baseline_MRSI": base["MRSI"],
                    "dHMRI": res["HMRI"] - base["HMRI"], "dHMRI_lo": float(dh_lo),
                    "dHMRI_hi": float(dh_hi), "dMRSI": res["MRSI"] - base["MRSI"],
                    "dMRSI_lo": float(dm_lo), "dMRSI_hi": float(dm_hi), "dv_lo": lo, "dv_hi": hi,
                    "n_trials": int((trials["participant"] == net).sum()),
                    "n_boot": res["n_boot"], "level": level,
                }
            )  # fmt: skip
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
