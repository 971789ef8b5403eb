"""What a run computes where the project can differ from the VCR paper: one row per choice, from
the config alone (``results/tables/definitions.csv``; docs/fidelity.md explains every row).

Columns :data:`COLUMNS`: ``definition`` (the choice), ``paper`` (what the paper does), ``this_run``
(what this config does), ``config_key`` (where to change it; empty: not configurable),
``matches_paper`` (``yes``, ``no``, or ``unstated`` where the paper does not say) and ``note``
(why a row cannot match, or what the difference means). Every value comes from the validated
config (the schema fills every key). A row is made by :func:`vcrbench.plan.definition_row.row`;
the rows on the corruption functions are :mod:`vcrbench.plan.definitions_functions`'.
"""

from __future__ import annotations

from collections.abc import Mapping

from vcrbench.plan.definition_row import NO, UNSTATED, YES, row
from vcrbench.plan.definitions_functions import function_rows, paired_set_rows

COLUMNS = ["definition", "paper", "this_run", "config_key", "matches_paper", "note"]


def _get(config: Mapping, key: str):
    """``config`` at the dotted ``key``."""
    node = config
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            raise KeyError(f"config has no key {key!r} (a validated config has every key)")
        node = node[part]
    return node


def definitions(config: Mapping) -> list[dict]:
    """The rows of ``definitions.csv`` for a validated ``config`` (no data read)."""
    return [
        *_sampling_rows(config),
        *_measurement_rows(config),
        *_cast_rows(config),
        *function_rows(_get(config, "corruptions")),
        *_curve_rows(config),
        *_comparison_rows(config),
        *_human_data_rows(config),
    ]


def _sampling_rows(config: Mapping) -> list[dict]:
    """How the test sets are drawn: the parameter domains and the sampling mode."""
    domains = _get(config, "sampling.domain_set")
    mode = _get(config, "sampling.mode")
    return [
        *paired_set_rows(_get(config, "corruptions")),
        row(
            "parameter domains C of the corruptions",
            "the authors' code (HuakunShen/VCR)",
            domains,
            "sampling.domain_set",
            domains == "paper",
            "" if domains == "paper" else "domains calibrated by the project to reach Δv ≈ 0.975",
        ),
        row(
            "sampling of the test sets",
            "c ~ U(C) (parameter-uniform)",
            mode,
            "sampling.mode",
            mode in ("parameter-uniform", "dv-stratified"),
            {
                "parameter-uniform": "",
                "dv-stratified": "draws c ~ U(C) and keeps per-bin quotas: every kept sample is "
                "a draw of U(C) restricted to its Δv bin, the paper's P(c | Δv), with the Δv range "
                "covered; only the Δv histogram differs from the paper's, whose coverage and "
                "histogram (of the first N draws) coverage.csv gives as vcr-parameter-uniform",
                "dv-uniform": "moves all parameters of a corruption along one path: changes "
                "P(c | Δv) for multi-parameter corruptions",
            }.get(mode, ""),
        ),
    ]


def _measurement_rows(config: Mapping) -> list[dict]:
    """Where Δv is measured: the resolution, the grey conversion and the VIF implementation."""
    from vcrbench.plan import config as cfg

    dataset = cfg.dataset_settings(config)
    resize, crop = dataset.view
    variant = _get(config, "vif.variant")
    if dataset.stored:
        side = dataset.stored_max_side
        where = (
            f"each image at its stored resolution (longer side at most {side}), corrupted and "
            f"measured there, then resized to {resize} and centre-cropped to {crop}x{crop} for "
            "the models (the authors' generator)"
        )
        note = (
            "Δv depends on the resolution; docs/fidelity.md compares Table 2's coverage at both "
            f"resolutions; images over {side} px are scaled down, as the toolbox does not"
        )
    else:
        where = (
            f"{crop}x{crop} centre crops (shorter side resized to {resize}), corrupted and "
            "measured there and shown to the models as they are (ImageNet-C's convention)"
        )
        note = (
            "Δv depends on the resolution; dataset.resolution: stored corrupts and measures at "
            "the stored resolution, as the authors' pipeline does (docs/fidelity.md)"
        )
    uint8 = cfg.grey(config) == "uint8"
    return [
        row(
            "resolution of corruption and Δv",
            "not stated; the authors' generator corrupts the stored full-resolution image and "
            "computes VIF on it, the model's preprocessing resizes and crops afterwards",
            where,
            "dataset.resolution",
            UNSTATED,
            note,
        ),
        row(
            "grey conversion before VIF",
            "not stated; the authors' generator uses OpenCV's RGB-to-grey (luma rounded to uint8)",
            "OpenCV's RGB-to-grey, luma rounded to uint8 (the authors' generator)"
            if uint8
            else "BT.601 luma in float, on the 0-255 scale",
            "vif.grey",
            UNSTATED,
            "rounding luma to uint8 moves Δv by up to about 0.02 (docs/vif.md)"
            + ("" if uint8 else "; vif.grey: uint8 rounds it as the authors' generator does"),
        ),
        row(
            "VIF implementation",
            "Kumar's Python port of wavelet VIF (the paper's reference)",
            variant,
            "vif.variant",
            variant == "kumar",
        ),
    ]


def _cast_rows(config: Mapping) -> list[dict]:
    """How a corrupted image's float pixels become uint8 (``sampling.cast``)."""
    from vcrbench.plan import config as cfg

    cast = cfg.cast(config)
    return [
        row(
            "cast of corrupted images to uint8",
            "not stated; the authors' toolbox truncates every corrupted image with np.uint8 "
            "(transformations.py, generator.py), as ImageNet-C's generator does before saving "
            "its files (make_imagenet_c.py)",
            "truncated (np.uint8), as the authors' and ImageNet-C's code"
            if cast == "truncate"
            else "rounded to the nearest level",
            "sampling.cast",
            cast == "truncate",
            "truncation lowers a pixel by 0.5 on average and makes the identity a visible "
            "change; Table 2 on real photographs under both casts: docs/fidelity.md"
            if cast == "truncate"
            else "at most one grey level from the authors' truncation; sampling.cast: truncate "
            "casts as they did (Table 2 under both: docs/fidelity.md)",
        )
    ]


def _curve_rows(config: Mapping) -> list[dict]:
    """How a curve is fitted: the spline, its bins, its anchors and the weighting of Δv."""
    spline = _get(config, "estimation.spline")
    anchor1 = _get(config, "estimation.anchor1")
    empty_bins = _get(config, "estimation.empty_bins")
    n_boot, level, penalty = (
        _get(config, f"estimation.{k}") for k in ("n_boot", "level", "bootstrap_penalty")
    )
    bins, min_count, weighting = (
        _get(config, f"estimation.{k}") for k in ("bins", "min_count", "weighting")
    )
    return [
        row(
            "curve fit",
            "'monotonic smoothing splines' (§3.2), citing Koenker, Ng & Portnoy (1994), "
            "'Quantile smoothing splines': the quantile (L1) reading is the citation's, the "
            "text names no loss",
            spline,
            "estimation.spline",
            spline == "quantile",
            "the cited reference's fit; penalty by SIC as R's cobs (the paper does not give its "
            "choice)"
            if spline == "quantile"
            else "a monotone smoothing spline as the text says, but least squares (a P-spline, "
            "penalty by cross-validation: a mean rate), not the cited quantile fit",
        ),
        row("Δv bins M", "40", bins, "estimation.bins", bins == 40),
        row(
            "minimum samples per fitted bin L",
            "not given",
            min_count,
            "estimation.min_count",
            UNSTATED,
        ),
        row(
            "bins with fewer than L samples",
            "missing: P_j = -1, bridged by the spline fitted over the whole Δv range (Alg. 1, "
            "Appendix C); the authors' toolbox (utils/metric.py, calculate_accs) sets an empty "
            "bin's rate to 0 (its comment says the previous bin's rate, but that variable is "
            "never updated)",
            {
                "skip": "missing, bridged by the fit",
                "zero": "rate 0, weighted as the mean used bin, at the bin's centre",
            }[empty_bins],
            "estimation.empty_bins",
            empty_bins == "skip",
            "zero is the toolbox's rule (exactly so with min_count 1): an empty bin at low Δv "
            "(shot noise below about .6) pulls the monotone curve to 0 from there on, and bin "
            "M - 1 (v = 1 only) is nearly always empty (docs/estimation.md)"
            if empty_bins == "zero"
            else "",
        ),
        row(
            "anchor s(0)",
            "clean accuracy (s_a); 1 for a deterministic model's s_p",
            "clean accuracy (resampled with its images); 1 for models' s_p",
            "",
            YES,
        ),
        row(
            "humans' anchor s_p(0)",
            "not given (the human s_p lies below the models' at small Δv)",
            "the humans' consistency on the clean image shown again; no s_p without such trials",
            "",
            UNSTATED,
            "people are not deterministic: s_p(0) is not pinned at 1",
        ),
        _anchor1row(anchor1),
        row(
            "confidence intervals and bands",
            "not described (Fig. 8 shows 83% bands without their method)",
            f"bootstrap over images (observers for humans), {n_boot} replicates, level "
            f"{level:g}; λ of a replicate: {penalty}"
            + (" (the full data's λ)" if penalty == "fixed" else " (selected again)"),
            "estimation.n_boot",
            UNSTATED,
            "percentile intervals, widened for few images (estimation.small_sample)",
        ),
        row(
            "analysis code of the authors' toolbox",
            "the text: 40 bins, monotone quantile smoothing spline anchored at the first and last "
            "bins; the toolbox's code: scipy UnivariateSpline(s=0.04) on 20 bins, empty bins set "
            "to 0, made monotone by a cumulative minimum, no anchors; its notebook maps the "
            "1,000-class top-1 to the 16 classes",
            f"the text's definition: {spline} spline on {bins} bins, anchored at Δv = 0",
            "estimation.spline",
            spline == "quantile" and bins == 40,
            "the paper's text is the definition; its toolbox's analysis code is not followed",
        ),
        row(
            "weighting of Δv in R̂",
            "uniform",
            weighting or "uniform",
            "estimation.weighting",
            weighting in (None, "uniform"),
        ),
    ]


#: This run's column of the 1000 -> 16 row, by ``estimation.decision16``.
_DECISION16 = {
    "mean": "argmax of the mean probability of each class's ImageNet classes",
    "sum": "argmax of the summed probability of each class's ImageNet classes",
    "top1": "the 1,000-class top-1 mapped to its class (none: wrong, and not consistent)",
}


def _anchor1row(anchor1) -> dict:
    """The row of s(1): free, a number, or chance level (1/K of each curve's label space)."""
    if anchor1 == "chance":
        this_run, matches = "chance: 1/1000 on ImageNet-1k, 1/16 in the 16 classes", YES
        note = (
            "the one value known at Δv = 1: VIF = 0 leaves no information, so any answer is a "
            "guess, and on class-balanced images (ImageNet's validation set; Geirhos et al.'s "
            "trials) any answer that ignores the image is right 1/K of the time; in the 16 "
            "classes ImageNet's images are not balanced (dog 109 and bird 49 of the 207 classes), "
            "so a model's image-independent answer scores its class's share, not 1/16 "
            "(s(0) where that is lower; docs/estimation.md)"
        )
    elif anchor1 is None:
        this_run, matches = "free (s(1) >= 0)", NO
        note = (
            "not anchored: the paper's 'known value' at Δv = 1 reads as chance (1/K: VIF = 0 "
            "leaves only guessing), exact for accuracy on class-balanced images, not for a "
            "model's 16-class answers on ImageNet (dog is 109 of the 207 classes) nor for "
            "consistency; estimation.anchor1: chance pins it, as config/paper.yaml does "
            "(docs/estimation.md)"
        )
    else:
        this_run, matches = f"pinned at {anchor1:g}", UNSTATED
        note = "the config's value; the paper's known value at Δv = 1 reads as chance (1/K)"
    return row(
        "anchor s(1)",
        "the first and last bins are anchored 'with known values' (Appendix C); the last value "
        "is not given",
        this_run,
        "estimation.anchor1",
        matches,
        note,
    )


def _comparison_rows(config: Mapping) -> list[dict]:
    """How models are compared with humans: HMRI/MRSI, the similarity test, the 16 classes and
    coverage."""
    band = _get(config, "estimation.similarity_band")
    level = _get(config, "estimation.similarity_level")
    decision16 = _get(config, "estimation.decision16")
    cov = {
        k: _get(config, f"coverage.{k}")
        for k in ("bins", "min_count", "reference_n", "denominator")
    }
    return [
        row(
            "integration range of HMRI and MRSI",
            "[0, 1]",
            "[0, 1] (vcr_metrics.csv HMRI_*, MRSI_*)",
            "",
            YES,
            "HMRI_*_support, MRSI_*_support: over the human reference's Δv support, outside which "
            "the human curve is extrapolated",
        ),
        row(
            "similarity test of human curves",
            "83% pointwise confidence bands overlap everywhere (§4.4 and Fig. 8; §4.4's sentence "
            "and Fig. 12's caption cite Koenker, Ng & Portnoy 1994, the spline's reference)",
            f"{level:g} {band} bands overlap everywhere",
            "estimation.similarity_band",
            band == "pointwise" and level == 0.83,
            "the 83% overlap rule is Payton, Greenstone & Schenker (2003), which the paper does "
            "not cite; its reference there is its spline's",
        ),
        row(
            "1000 -> 16 class decision",
            "'the 1,000-class decision vector was mapped to the same 16 classes using the "
            "WordNet hierarchy' (§4), citing Geirhos et al. (2018), whose main text sums each "
            "class's ImageNet probabilities and whose appendix derives their mean; the authors' "
            "notebook (snippets/analysis.ipynb) maps the 1,000-class top-1 instead",
            _DECISION16[decision16],
            "estimation.decision16",
            UNSTATED,
            "the paper names no rule: mean (Geirhos et al.'s principled rule, model-vs-human's), "
            "sum (their main text) and top1 (the toolbox: its evaluation keeps only the top-1) "
            "are the three readings; a vector mapped with Geirhos et al.'s mapping reads as theirs, "
            "so config/paper.yaml keeps the mean (docs/humans.md)",
        ),
        row(
            "coverage threshold",
            "§4.1's text: 40 equal bins, a bin covered with >= 20 images, coverage = covered "
            "bins / 40; Table 2's printed values are all k/39",
            f">= {cov['min_count']} images at {cov['reference_n']} samples (scaled), "
            f"{cov['bins']} bins, divided by {cov['denominator']}",
            "coverage.min_count",
            cov["min_count"] == 20 and cov["bins"] == 40 and cov["denominator"] in (39, 40),
            {
                39: "divided by 39 as Table 2's printed values are (j = floor(v (M - 1)) leaves "
                "bin 39 only v = 1); the text divides by 40 (coverage.denominator: 40)",
                40: "divided by 40 as §4.1's text says; Table 2's printed values are k/39 "
                "(coverage.denominator: 39)",
            }.get(cov["denominator"], ""),
        ),
    ]


def _human_data_rows(config: Mapping) -> list[dict]:
    """What stands for the humans: error consistency, the label space of R̂ and the data."""
    label_space = _get(config, "figures.label_space")
    references = _get(config, "humans.references")
    return [
        row(
            "error consistency over observers",
            "not reported; Geirhos et al. (2020) average κ over human-network pairs",
            "both: kappa_pair_mean (the published mean over pairs), kappa_pooled (trials pooled)",
            "",
            YES,
            "geirhos_error_consistency.csv has both columns; pooling is the more stable estimate "
            "where a pair shares 1-12 trials (docs/humans.md)",
        ),
        row(
            "label space of R̂ in Table 3 and the leaderboards",
            "the humans' 16 classes beside HMRI (Table 3 implies one human area per corruption)",
            f"geirhos16 beside HMRI/MRSI; {label_space} elsewhere and in its own R̂ columns",
            "figures.label_space",
            YES,
            "R̂ on ImageNet-1k is not the paper's Table 3 quantity; it is kept as extra columns",
        ),
        row(
            "human reference data",
            "the VCR human experiments (7,718 participants)",
            ", ".join(sorted(references)) or "none",
            "humans.references",
            NO,
            "no VCR human data were released: Geirhos et al. (2018) stand in where they match a "
            "corruption",
        ),
    ]
