"""The rows of ``definitions.csv`` (:mod:`vcrbench.plan.definitions`) on the corruption functions:
per corruption of the run whose paper sets were made with a function other than this project's
default, which function makes its ImageNet-C and VCR sets here (the paired VCR sets of
:data:`vcrbench.vocab.PAIRED_VCR_SETS`, the authors' toolbox's own functions as the variant
``toolbox``, and the functions that differ from the toolbox's and need not).
"""

from __future__ import annotations

from collections.abc import Mapping

from vcrbench.plan.definition_row import YES, row
from vcrbench.vocab import PAIRED_VCR_SETS

#: The paper's column of each pair of :data:`vcrbench.vocab.PAIRED_VCR_SETS`, by ImageNet-C's name.
_PAIRED_PAPER = {
    "motion_blur": "Albumentations' line-kernel MotionBlur (blur_limit 50), the authors' generator",
    "glass_blur": "the authors' generator's glass blur: pixel moves in a 32 px corner, two "
    "Gaussian blurs",
}


def paired_set_rows(corruptions: Mapping) -> list[dict]:
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
            row(
                f"{what} of the VCR sets",
                _PAIRED_PAPER[imagenet_c_name],
                this_run or "none",
                "corruptions",
                toolbox or not imagenet_c,
                note,
            )
        )
    return rows


#: The config's value of a corruption's ``variant`` that is the authors' toolbox's own function and
#: draw (vcrbench.corruptions, ``register_variant``).
TOOLBOX = "toolbox"

_IC_SETS, _VCR_SETS = "ImageNet-C sets", "VCR sets"

# The corruptions whose paper sets were made with a function other than this project's default:
# (what made the paper's sets, this run's function without the variant, with `variant: toolbox`,
# the note without it). The paper's VCR sets are the authors' toolbox's c ~ U(C) draws
# (HuakunShen/VCR, transformations.py; docs/corruptions.md); its ImageNet-C sets are ImageNet-C's.
_TOOLBOX_VARIANTS = {
    "defocus_blur": (
        f"{_IC_SETS}: ImageNet-C's defocus blur; {_VCR_SETS}: the authors' toolbox's: the disk at "
        "the drawn radius, alias σ from linspace(0, 1) (σ = 0: OpenCV's 'from the kernel size')",
        "ImageNet-C's for both: the disk interpolated between integer radii, alias σ never 0 "
        "(from 0.01 in the paper's domains)",
        f"{_IC_SETS}: ImageNet-C's; {_VCR_SETS}: the toolbox's disk at the drawn radius, alias σ "
        "on its grid k/999 from 0",
        "variant: toolbox is the toolbox's function for the VCR sets",
    ),
    "frost": (
        f"{_IC_SETS}: ImageNet-C's frost (the photograph cropped); {_VCR_SETS}: the authors' "
        "toolbox's (one of the first five photographs resized to the image)",
        "the photograph cropped, as ImageNet-C, for both",
        f"{_IC_SETS}: the photograph cropped (ImageNet-C's); {_VCR_SETS}: resized (the toolbox's)",
        "variant: toolbox is the toolbox's function for the VCR sets",
    ),
    "blur": (
        "the authors' toolbox: Blur(blur_limit=15), odd kernel sizes 3-15, each equally likely",
        "continuous size: between odd sizes, the blend of the two blurred images",
        "odd kernel sizes only, each equally likely",
        "equal at odd sizes; variant: toolbox draws odd sizes only",
    ),
    "median_blur": (
        "the authors' toolbox: MedianBlur(blur_limit=21), odd kernel sizes 3-21, each equally "
        "likely",
        "continuous size: between odd sizes, the blend of the two blurred images",
        "odd kernel sizes only, each equally likely",
        "equal at odd sizes; variant: toolbox draws odd sizes only",
    ),
    "motion_blur_line": (
        "the authors' toolbox: MotionBlur(blur_limit=50) of Albumentations 0.5, odd kernel sizes "
        "3-49, each equally likely",
        "the same line kernel, continuous size",
        "the same line kernel, odd kernel sizes only, each equally likely",
        "equal at odd sizes; variant: toolbox draws odd sizes only",
    ),
    "glass_blur_toolbox": (
        "the authors' toolbox: max_delta from np.random.randint(1, 10), each of 1-9 with "
        "probability 1/9",
        "max_delta continuous, by randomised rounding (on [1, 9], 1 and 9 have 1/16 each)",
        "max_delta an integer, each equally likely",
        "variant: toolbox draws max_delta as the toolbox does",
    ),
}

# Corruptions whose function is not the toolbox's and need not be: (the paper's, this run's, note).
_OTHER_FUNCTIONS = {
    "color_jitter": (
        "the authors' toolbox: ColorJitter(1, 1, 1, hue=1)",
        "hue shift U(-0.5, 0.5)",
        "hue = 1 is rejected by the Albumentations of the time and wraps around the circle in "
        "2.x: U(-0.5, 0.5) is the same hue distribution",
    ),
    "uniform_noise": (
        "Geirhos et al. (2018)'s uniform noise, which the paper names ('Uniform Noise from [8]', "
        "§3 and Fig. 3d)",
        "Geirhos et al.'s: greyscale, contrast 30%, add U[-w, w], clip",
        "the function the paper names, whose human data stand in here; the toolbox's "
        "apply_uniform_noise (colour noise on [low, high]) is another function, and its generator "
        "(utils/transform.py) does not call it",
    ),
}


def function_rows(corruptions: Mapping) -> list[dict]:
    """One row per corruption of the run whose paper sets' function is not this project's
    default: per set (ImageNet-C's, VCR), which function the run uses."""
    rows = []
    for name, (paper, ours, toolbox, note) in _TOOLBOX_VARIANTS.items():
        if name not in corruptions:
            continue
        chosen = (corruptions[name] or {}).get("variant") == TOOLBOX
        rows.append(
            row(
                f"corruption function: {name}",
                paper,
                f"{toolbox} (variant: toolbox)" if chosen else ours,
                f"corruptions.{name}.variant",
                chosen,
                "" if chosen else note,
            )
        )
    if "glass_blur" in corruptions:
        toolbox = PAIRED_VCR_SETS["glass_blur"]
        paired = toolbox in corruptions
        rows.append(
            row(
                "corruption function: glass_blur",
                f"{_IC_SETS}: ImageNet-C's glass blur (pixel moves over the whole image); "
                f"{_VCR_SETS}: the authors' toolbox's (moves in a 32 px corner)",
                f"{_IC_SETS}: glass_blur (ImageNet-C's); {_VCR_SETS}: {toolbox} (glass_blur's own "
                "VCR set besides)"
                if paired
                else "ImageNet-C's glass blur for the VCR sets too",
                "corruptions",
                paired,
                ""
                if paired
                else f"{toolbox} is the toolbox's (its loop, written for 32 px "
                "CIFAR images, moves pixels in a corner only)",
            )
        )
    rows.extend(
        row(f"corruption function: {name}", paper, ours, "", YES, note)
        for name, (paper, ours, note) in _OTHER_FUNCTIONS.items()
        if name in corruptions
    )
    return rows
