"""What a run computes where the project can differ from the VCR paper: one row per choice, from
the config alone (``results/tables/definitions.csv``; docs/fidelity.md explains every row).

Columns :data:`COLUMNS`: ``definition`` (the choice), ``paper`` (what the paper does), ``this_run``
(what this config does), ``config_key`` (where to change it; empty: not configurable),
``matches_paper`` (``yes``, ``no``, or ``unstated`` where the paper does not say) and ``note``
(why a row cannot match, or what the difference means). Every value comes from the validated
config (the schema fills every key).
"""

from __future__ import annotations

from collections.abc import Mapping

from vcrbench.vocab import PAIRED_VCR_SETS

COLUMNS = ["definition", "paper", "this_run", "config_key", "matches_paper", "note"]

YES, NO, UNSTATED = "yes", "no", "unstated"


def _get(config: Mapping, key: str):
    """``config`` at the dotted ``key``."""
    node = config
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            raise KeyError(f"config has no key {key!r} (a validated config has every key)")
        node = node[part]
    return node


def _row(definition, paper, this_run, key, matches, note="") -> dict:
    return {
        "definition": definition,
        "paper": paper,
        "this_run": str(this_run),
        "config_key": key,
        "matches_paper": matches if isinstance(matches, str) else (YES if matches else NO),
        "note": note,
    }


def definitions(config: Mapping) -> list[dict]:
    """The rows of ``definitions.csv`` for a validated ``config`` (no data read)."""
    return [
        *_sampling_rows(config),
        *_measurement_rows(config),
        *_cast_rows(config),
        *_function_rows(_get(config, "corruptions")),
        *_curve_rows(config),
        *_comparison_rows(config),
        *_human_data_rows(config),
    ]


def _sampling_rows(config: Mapping) -> list[dict]:
    """How the test sets are drawn: the parameter domains and the sampling mode."""
    domains = _get(config, "sampling.domain_set")
    mode = _get(config, "sampling.mode")
    return [
        *_paired_set_rows(_get(config, "corruptions")),
        _row(
            "parameter domains C of the corruptions",
            "the authors' code (HuakunShen/VCR)",
            domains,
            "sampling.domain_set",
            domains == "paper",
            "" if domains == "paper" else "domains calibrated by the project to reach Δv ≈ 0.975",
        ),
        _row(
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


#: The paper's column of each pair of :data:`vcrbench.vocab.PAIRED_VCR_SETS`, by ImageNet-C's name.
_PAIRED_PAPER = {
    "motion_blur": "Albumentations' line-kernel MotionBlur (blur_limit 50), the authors' generator",
    "glass_blur": "the authors' generator's glass blur: pixel moves in a 32 px corner, two "
    "Gaussian blurs",
}


def _paired_set_rows(corruptions: Mapping) -> list[dict]:
    """Which function a paired corruption's VCR sets use: the authors' toolbox generated motion
    blur with Albumentations 0.5's line kernel (``motion_blur_line``) and glass blur with its
    corner-only pixel loop (``glass_blur_toolbox``); ``motion_blur`` and ``glass_blur`` are
    ImageNet-C's (their ImageNet-C sets)."""
    rows = []
    for imagenet_c_name, toolbox_name in PAIRED_VCR_SETS.items():
        what = imagenet_c_name.replace("_", " ")  # "motion blur"
        toolbox, imagenet_c = toolbox_name in corruptions, imagenet_c_name in corruptions
        this_run = ", ".join(n for n in (toolbox_name, imagenet_c_name) if n in corruptions)
        if toolbox:
            note = (
                f"{imagenet_c_name} too: its ImageNet-C sets (and a VCR set of its own)"
                if imagenet_c
                else ""
            )
        elif imagenet_c:
            note = f"ImageNet-C's {what} for the VCR sets too; the authors' is {toolbox_name}"
        else:
            note = f"no {what} in this run"
        rows.append(
            _row(
                f"{what} of the VCR sets",
                _PAIRED_PAPER[imagenet_c_name],
                this_run or "none",
                "corruptions",
                toolbox or not imagenet_c,
                note,
            )
        )
    return rows


def _measurement_rows(config: Mapping) -> list[dict]:
    """Where Δv is measured: the resolution, the grey conversion and the VIF implementation."""
    from vcrbench.plan import config as cfg

    resize, crop = _get(config, "dataset.resize"), _get(config, "dataset.crop")
    variant = _get(config, "vif.variant")
    if cfg.resolution(config) == "stored":
        side = cfg.stored_max_side(config)
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
        _row(
            "resolution of corruption and Δv",
            "not stated; the authors' generator corrupts the stored full-resolution image and "
            "computes VIF on it, the model's preprocessing resizes and crops afterwards",
            where,
            "dataset.resolution",
            UNSTATED,
            note,
        ),
        _row(
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
        _row(
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
        _row(
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


# Where this project's corruption function differs from the one in the authors' toolbox
# (HuakunShen/VCR, transformations.py; docs/corruptions.md): the toolbox's, this project's,
# whether it matches what the paper's sets were made with, and why not.
_FUNCTIONS = {
    "defocus_blur": (
        "alias σ drawn from linspace(0, 1): σ = 0 is OpenCV's 'from the kernel size' (0.8)",
        "alias σ never 0 (from 0.01 in the paper's domains), so the low end is a light blur",
        NO,
        "σ = 0 is one grid value of the toolbox's 1000; its meaning in OpenCV is not a "
        "continuation of the range",
    ),
    "color_jitter": (
        "ColorJitter(1, 1, 1, hue=1)",
        "hue shift U(-0.5, 0.5)",
        YES,
        "hue = 1 is rejected by the Albumentations of the time and wraps around the circle in "
        "2.x: U(-0.5, 0.5) is the same hue distribution",
    ),
    "uniform_noise": (
        "apply_uniform_noise: noise on [low, high], low and high from linspace(0.01, 1), colour",
        "Geirhos et al.'s: greyscale, contrast 30%, add U[-w, w], clip",
        NO,
        "the paper names Geirhos et al.'s function (Fig. 3d), whose human data stand in here; "
        "the toolbox's is another function",
    ),
    "glass_blur": (
        "its pixel loop (written for 32 px CIFAR images) moves pixels in a 32 px corner only",
        "ImageNet-C's glass blur over the whole image",
        NO,
        "a defect of the toolbox's code: most of a 224 px image would be Gaussian-blurred only; "
        "glass_blur_toolbox is the toolbox's (the paper's VCR sets)",
    ),
    "blur": (
        "Blur(blur_limit=15): odd kernel sizes 3-15",
        "continuous size: between odd sizes, the blend of the two blurred images",
        NO,
        "a continuous parameter for Δv-driven sampling; equal at odd sizes",
    ),
    "median_blur": (
        "MedianBlur(blur_limit=21): odd kernel sizes 3-21",
        "continuous size: between odd sizes, the blend of the two blurred images",
        NO,
        "a continuous parameter for Δv-driven sampling; equal at odd sizes",
    ),
    "motion_blur_line": (
        "MotionBlur(blur_limit=50) of Albumentations 0.5: odd kernel sizes 3-49",
        "the same line kernel, continuous size",
        NO,
        "a continuous parameter for Δv-driven sampling; equal at odd sizes",
    ),
    "frost": (
        "the frost photograph resized to the image",
        "the frost photograph cropped to the image (as ImageNet-C)",
        NO,
        "ImageNet-C's frost crops; the ImageNet-C sets need it",
    ),
}


def _function_rows(corruptions: Mapping) -> list[dict]:
    """One row per corruption of the run whose function differs from the authors' toolbox's."""
    return [
        _row(
            f"corruption function: {name}",
            f"the authors' toolbox: {toolbox}",
            ours,
            "",
            matches,
            note,
        )
        for name, (toolbox, ours, matches, note) in _FUNCTIONS.items()
        if name in corruptions
    ]


def _curve_rows(config: Mapping) -> list[dict]:
    """How a curve is fitted: the spline, its bins, its anchors and the weighting of Δv."""
    spline = _get(config, "estimation.spline")
    anchor1 = _get(config, "estimation.anchor1")
    n_boot, level, penalty = (
        _get(config, f"estimation.{k}") for k in ("n_boot", "level", "bootstrap_penalty")
    )
    bins, min_count, weighting = (
        _get(config, f"estimation.{k}") for k in ("bins", "min_count", "weighting")
    )
    return [
        _row(
            "curve fit",
            "monotone quantile smoothing spline (Koenker, Ng & Portnoy 1994)",
            spline,
            "estimation.spline",
            spline == "quantile",
            "penalty by SIC as R's cobs (the paper does not give its choice)"
            if spline == "quantile"
            else "least-squares P-spline, penalty by cross-validation: estimates a mean rate",
        ),
        _row("Δv bins M", "40", bins, "estimation.bins", bins == 40),
        _row(
            "minimum samples per fitted bin L",
            "not given",
            min_count,
            "estimation.min_count",
            UNSTATED,
        ),
        _row(
            "anchor s(0)",
            "clean accuracy (s_a); 1 for a deterministic model's s_p",
            "clean accuracy (resampled with its images); 1 for models' s_p",
            "",
            YES,
        ),
        _row(
            "humans' anchor s_p(0)",
            "not given (the human s_p lies below the models' at small Δv)",
            "the humans' consistency on the clean image shown again; no s_p without such trials",
            "",
            UNSTATED,
            "people are not deterministic: s_p(0) is not pinned at 1",
        ),
        _row(
            "anchor s(1)",
            "the first and last bins are anchored (Appendix C); the last value is not given",
            "free (s(1) >= 0)" if anchor1 is None else f"pinned at {anchor1:g}",
            "estimation.anchor1",
            anchor1 is not None,
            "not anchored: no value at Δv = 1 holds for every model (docs/estimation.md)"
            if anchor1 is None
            else "the paper gives no value; this one is the config's",
        ),
        _row(
            "confidence intervals and bands",
            "not described (Fig. 8 shows 83% bands without their method)",
            f"bootstrap over images (observers for humans), {n_boot} replicates, level "
            f"{level:g}; λ of a replicate: {penalty}"
            + (" (the full data's λ)" if penalty == "fixed" else " (selected again)"),
            "estimation.n_boot",
            UNSTATED,
            "percentile intervals, widened for few images (estimation.small_sample)",
        ),
        _row(
            "analysis code of the authors' toolbox",
            "the text: 40 bins, monotone quantile smoothing spline anchored at the first and last "
            "bins; the toolbox's code: scipy UnivariateSpline(s=0.04) on 20 bins, made monotone "
            "by a cumulative minimum, no anchors",
            f"the text's definition: {spline} spline on {bins} bins, anchored at Δv = 0",
            "estimation.spline",
            spline == "quantile" and bins == 40,
            "the paper's text is the definition; its toolbox's analysis code is not followed",
        ),
        _row(
            "weighting of Δv in R̂",
            "uniform",
            weighting or "uniform",
            "estimation.weighting",
            weighting in (None, "uniform"),
        ),
    ]


def _comparison_rows(config: Mapping) -> list[dict]:
    """How models are compared with humans: HMRI/MRSI, the similarity test, the 16 classes and
    coverage."""
    band = _get(config, "estimation.similarity_band")
    level = _get(config, "estimation.similarity_level")
    cov = {
        k: _get(config, f"coverage.{k}")
        for k in ("bins", "min_count", "reference_n", "denominator")
    }
    return [
        _row(
            "integration range of HMRI and MRSI",
            "[0, 1]",
            "[0, 1] (vcr_metrics.csv HMRI_*, MRSI_*)",
            "",
            YES,
            "HMRI_*_support, MRSI_*_support: over the human reference's Δv support, outside which "
            "the human curve is extrapolated",
        ),
        _row(
            "similarity test of human curves",
            "83% pointwise confidence bands overlap everywhere (§4.4, citing Koenker et al. 1994)",
            f"{level:g} {band} bands overlap everywhere",
            "estimation.similarity_band",
            band == "pointwise" and level == 0.83,
            "the 83% overlap rule is Payton, Greenstone & Schenker (2003), which the paper does "
            "not cite; its reference there is its spline's",
        ),
        _row(
            "1000 -> 16 class decision",
            "mapped 'using the WordNet hierarchy', citing Geirhos et al. (2018), whose main text "
            "sums each class's ImageNet probabilities and whose appendix derives their mean",
            "argmax of the mean probability of each class's ImageNet classes",
            "",
            UNSTATED,
            "the VCR paper does not say sum or mean; the mean is the rule Geirhos et al. derive "
            "as the principled one",
        ),
        _row(
            "coverage threshold",
            "a bin of 40 is covered with >= 20 images; Table 2 divides by 39",
            f">= {cov['min_count']} images at {cov['reference_n']} samples (scaled), "
            f"{cov['bins']} bins, divided by {cov['denominator']}",
            "coverage.min_count",
            cov["min_count"] == 20 and cov["bins"] == 40 and cov["denominator"] == 39,
        ),
    ]


def _human_data_rows(config: Mapping) -> list[dict]:
    """What stands for the humans: error consistency, the label space of R̂ and the data."""
    label_space = _get(config, "figures.label_space")
    references = _get(config, "humans.references")
    return [
        _row(
            "error consistency over observers",
            "not reported; Geirhos et al. (2020) average κ over human-network pairs",
            "both: kappa_pair_mean (the published mean over pairs), kappa_pooled (trials pooled)",
            "",
            YES,
            "geirhos_error_consistency.csv has both columns; pooling is the more stable estimate "
            "where a pair shares 1-12 trials (docs/humans.md)",
        ),
        _row(
            "label space of R̂ in Table 3 and the leaderboards",
            "the humans' 16 classes beside HMRI (Table 3 implies one human area per corruption)",
            f"geirhos16 beside HMRI/MRSI; {label_space} elsewhere and in its own R̂ columns",
            "figures.label_space",
            YES,
            "R̂ on ImageNet-1k is not the paper's Table 3 quantity; it is kept as extra columns",
        ),
        _row(
            "human reference data",
            "the VCR human experiments (7,718 participants)",
            ", ".join(sorted(references)) or "none",
            "humans.references",
            NO,
            "no VCR human data were released: Geirhos et al. (2018) stand in where they match a "
            "corruption",
        ),
    ]
