"""Placing trials of fixed conditions on the Δv axis.

Experiments such as Geirhos et al. (2018) record a *condition* (noise width w, filter σ), not a Δv,
and their stimulus images are not ours to use. :func:`condition_dv` applies each condition's
manipulation to images of the clean set and measures Δv, giving the distribution of Δv that the
condition produces on natural images. :func:`assign_dv` then gives every trial a Δv drawn from its
condition's distribution (seeded per replicate), so that human accuracy enters the same binned
estimator as the models' test samples, and the bootstrap, which redraws these values in every
replicate, carries the uncertainty of where a condition lies on the Δv axis.

The choices are the config's ``humans.mapping`` block, one
:class:`~vcrbench.settings.HumanMappingSettings` (see docs/humans.md for their measured effect);
Δv is measured as the ``vif`` block's :class:`~vcrbench.settings.VifSettings` say.

- *reference image* of Δv: ``"original"`` (default), the clean colour image, as for every model
  test sample (``Δv(x, T(x, c))``); or ``"zero-condition"``, the same manipulation at the
  experiment's least-manipulated condition (parameters nearest the corruption's identity; for
  Geirhos w = 0, greyscale at 30% contrast, σ = 0, plain greyscale, contrast c100, greyscale).
- *image size*: the clean set's (224x224 centre crop by default). ``lowpass_sigma_scale`` rescales
  σ from Geirhos' pixel grid to the clean set's: their low-pass stimuli were the whole centre
  square downsampled to 224 px, while the clean set shows the centre 224 of a 256-px resize, so the
  same blur relative to image content is σ·256/224 of our pixels.
- ``jpeg_quality``: the noise stimuli were saved as JPEG (skimage/PIL default quality 75); give a
  quality to measure Δv on the compressed stimulus.
"""

from __future__ import annotations

import io as _io
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from PIL import Image
from tqdm.auto import tqdm

from vcrbench import seeding
from vcrbench.humans.manipulation import geirhos_lowpass
from vcrbench.humans.trial_schema import HumanDataError
from vcrbench.settings import HUMAN_MAPPING_REFERENCES, HumanMappingSettings, VifSettings
from vcrbench.testsets import measure
from vcrbench.vocab import PARAM_PREFIX, param_columns_of

REFERENCES = HUMAN_MAPPING_REFERENCES
#: The ``humans.mapping`` and ``vif`` blocks' defaults (the schema's).
DEFAULT = HumanMappingSettings()
DEFAULT_VIF = VifSettings()
#: Clean images measured per step of :func:`condition_dv` (memory only: no Δv depends on it).
IMAGES_PER_STEP = 64
#: Our own manipulations; every other corruption name goes through the corruptions registry.
LOCAL_MANIPULATIONS = ("geirhos_lowpass",)


def conditions_of(trials: pd.DataFrame) -> pd.DataFrame:
    """The distinct ``(corruption, condition, param.*)`` of trials that have no Δv.

    Raises :class:`HumanDataError` if one condition has different parameters in different rows.
    """
    need = trials[np.isnan(trials["dv"].to_numpy())]
    cols = ["corruption", "condition", *param_columns_of(trials)]
    conds = need[cols].drop_duplicates().reset_index(drop=True)
    dup = conds.duplicated(["corruption", "condition"], keep=False)
    if dup.any():
        bad = conds[dup].iloc[0]
        raise HumanDataError(
            f"condition {bad['condition']!r} of {bad['corruption']!r} has differing parameters "
            f"in different trials:\n{conds[dup].to_string(index=False)}"
        )
    return conds.sort_values(["corruption", "condition"], kind="stable").reset_index(drop=True)


def manipulate(
    corruption: str,
    image: np.ndarray,
    params: dict,
    seed: int,
    settings: HumanMappingSettings = DEFAULT,
    corruption_options: Mapping | None = None,
) -> np.ndarray:
    """Apply a trial's manipulation to one HxWx3 uint8 image (low-pass σ scaled by
    ``settings.lowpass_sigma_scale``, JPEG-compressed at ``settings.jpeg_quality`` if given).

    ``corruption_options`` is the config's entry for the corruption (needed for a user corruption
    given by ``function``).
    """
    if corruption == "geirhos_lowpass":
        if "sigma" not in params:
            raise HumanDataError("geirhos_lowpass trials need a param.sigma column")
        out = geirhos_lowpass(image, float(params["sigma"]) * settings.lowpass_sigma_scale)
    else:
        from vcrbench.corruptions import get_corruption

        # Fixed experimental conditions may lie outside the domain VCR-Bench samples from; they
        # only need to be where the function is defined.
        corr = get_corruption(corruption, corruption_options)
        out = corr.apply(image, params, seed, within="limits")
    if settings.jpeg_quality is not None:
        out = jpeg_roundtrip(out, settings.jpeg_quality)
    return out


def jpeg_roundtrip(image: np.ndarray, quality: int) -> np.ndarray:
    """Encode as JPEG (PIL, 4:2:0 as PIL's default) and decode; grey images stay single-channel."""
    grey = bool((image[..., 0] == image[..., 1]).all() and (image[..., 0] == image[..., 2]).all())
    pil = Image.fromarray(image[..., 0] if grey else image)
    buf = _io.BytesIO()
    pil.save(buf, format="JPEG", quality=int(quality))
    buf.seek(0)
    dec = np.asarray(Image.open(buf))
    return np.repeat(dec[..., None], 3, axis=2) if dec.ndim == 2 else np.ascontiguousarray(dec)


def _stimuli(images, params, seeds, corruption, options, settings):
    """The manipulated batch: one image per clean image and seed."""
    return np.stack(
        [
            manipulate(corruption, img, params, s, settings, options)
            for img, s in zip(images, seeds, strict=True)
        ]
    )


def identity_distance(conditions: pd.DataFrame, column: str) -> np.ndarray:
    """How far each row's ``column`` (a ``param.<name>``) is from its corruption's identity.

    A sort key for "least manipulated first": ``|value - identity|`` for a registered corruption
    (Geirhos' contrast: 1.0 is the undistorted condition, so c100 comes first), ``-value`` for an
    identity at +∞ (shot noise's photons), the value itself where the corruption or its identity
    is unknown (smallest first, e.g. w = 0, σ = 0).
    """
    from vcrbench.corruptions import get_corruption
    from vcrbench.errors import CorruptionError

    name = column[len(PARAM_PREFIX) :]
    values = conditions[column].to_numpy(dtype=np.float64)
    out = values.copy()
    for corruption in pd.unique(conditions["corruption"]):
        if corruption in LOCAL_MANIPULATIONS:
            continue  # geirhos_lowpass: σ = 0 is the identity
        try:
            params = {p.name: p.identity for p in get_corruption(corruption).params}
        except CorruptionError:
            continue
        if name not in params:
            continue
        rows = (conditions["corruption"] == corruption).to_numpy()
        identity = params[name]
        if np.isposinf(identity):
            out[rows] = -values[rows]
        elif np.isneginf(identity):
            out[rows] = values[rows]
        else:
            out[rows] = np.abs(values[rows] - identity)
    return out


def _params(rec: Mapping, pcols: list[str]) -> dict[str, float]:
    return {c[len(PARAM_PREFIX) :]: float(rec[c]) for c in pcols if pd.notna(rec[c])}


def sample_image_ids(image_ids: Sequence[str], n_images: int | None, seed: int) -> list[str]:
    """``n_images`` ids drawn without replacement (seeded), in sorted order; all if None."""
    ids = sorted(image_ids)
    if n_images is None or n_images >= len(ids):
        return ids
    if n_images < 1:
        raise ValueError(f"n_images must be at least 1, got {n_images}")
    pick = seeding.rng(seed, "humans", "images").choice(len(ids), size=n_images, replace=False)
    return [ids[i] for i in sorted(pick)]


def condition_dv(
    conditions: pd.DataFrame,
    clean_set,
    seed: int,
    settings: HumanMappingSettings = DEFAULT,
    vif_settings: VifSettings = DEFAULT_VIF,
    *,
    images_per_step: int = IMAGES_PER_STEP,
    corruptions_config: Mapping | None = None,
) -> pd.DataFrame:
    """Δv of every condition on clean-set images: the distribution that places its trials.

    Parameters
    ----------
    conditions : DataFrame
        ``corruption, condition, param.*`` (e.g. :func:`conditions_of`); trials work too.
    clean_set : vcrbench.datasets.loading.CleanSet
        Images to manipulate (``image_ids``, ``images(ids)``).
    seed : int
        Root seed; each (corruption, condition, image, draw) gets
        ``derive_seed(seed, "humans", corruption, condition, image_id, draw)``.
    settings : HumanMappingSettings
        ``reference`` (the reference image of Δv, module docstring), ``n_images`` (this many
        clean-set images, a seeded choice; None: all), ``draws`` (manipulations per image and
        condition: independent noise; 1 for deterministic ones), ``lowpass_sigma_scale`` and
        ``jpeg_quality`` (module docstring).
    vif_settings : VifSettings
        How Δv is measured (:func:`vcrbench.testsets.measure.visual_change`).
    images_per_step : int
        Clean images measured per step (memory only: every Δv is the same at any value).
    corruptions_config : mapping, optional
        The config's ``corruptions`` block: options of each corruption (user corruptions).

    Returns
    -------
    DataFrame
        One row per condition x image x draw: ``corruption, condition, param.*, image_id, draw,
        seed, vif, dv``, sorted; its metadata-worthy settings are in ``df.attrs``.
    """
    draws = settings.draws
    conds = conditions_of(conditions) if "dv" in conditions else conditions.copy()
    pcols = param_columns_of(conds)
    ids = sample_image_ids(clean_set.image_ids, settings.n_images, seed)
    rows = []
    records = conds.to_dict("records")
    least = _least_manipulated(conds, records, pcols)
    with tqdm(
        total=len(records) * len(ids) * draws,
        desc="human conditions: Δv",
        unit="img",
        mininterval=2.0,
    ) as bar:
        for start in range(0, len(ids), images_per_step):
            batch_ids = ids[start : start + images_per_step]
            clean = clean_set.images(batch_ids)
            for rec in records:
                options = (corruptions_config or {}).get(rec["corruption"])
                style = (rec["corruption"], options, settings)
                for d in range(draws):
                    rows += _draw_rows(
                        rec, pcols, d, batch_ids, clean, least[rec["corruption"]], style,
                        seed=seed, reference=settings.reference, vif_settings=vif_settings,
                    )  # fmt: skip
                    bar.update(len(batch_ids))
    out = _condition_table(rows)
    out.attrs = {
        "vif_variant": vif_settings.variant,
        **vif_settings.metadata(),
        "seed": seed,
        "reference": settings.reference,
        "n_images": len(ids),
        "draws": draws,
        "lowpass_sigma_scale": settings.lowpass_sigma_scale,
        "jpeg_quality": settings.jpeg_quality,
    }
    return out


def _least_manipulated(conds: pd.DataFrame, records: list[dict], pcols: list[str]) -> dict:
    """The "zero-condition" reference: each corruption's least-manipulated condition's
    parameters (w = 0, σ = 0 for Geirhos)."""
    least = {}
    keys = np.column_stack([identity_distance(conds, c) for c in pcols]) if pcols else None

    def order(i: int) -> list:
        return [] if keys is None else [k for k in keys[i] if pd.notna(k)]

    for i in sorted(range(len(records)), key=order):
        least.setdefault(records[i]["corruption"], _params(records[i], pcols))
    return least


def _draw_rows(rec, pcols, d, batch_ids, clean, least, style, *, seed, reference, vif_settings):
    """The rows of draw ``d`` of condition ``rec`` on the clean images ``clean`` (of
    ``batch_ids``): each image manipulated with its own seed and its Δv from the reference
    (the clean image, or the same draw of the ``least`` manipulated condition)."""
    seeds = [
        seeding.derive_seed(seed, "humans", rec["corruption"], rec["condition"], i, d)
        for i in batch_ids
    ]
    shown = _stimuli(clean, _params(rec, pcols), seeds, *style)
    if reference == "original":
        ref = clean
    else:
        ref = _stimuli(clean, least, seeds, *style)
    vif, dv = measure.visual_change(ref, shown, vif_settings)
    return [
        {
            "corruption": rec["corruption"],
            "condition": rec["condition"],
            **{c: rec[c] for c in pcols},
            "image_id": image_id,
            "draw": d,
            "seed": seeds[i],
            "vif": float(vif[i]),
            "dv": float(dv[i]),
        }
        for i, image_id in enumerate(batch_ids)
    ]


def _condition_table(rows: list[dict]) -> pd.DataFrame:
    """The rows as a table sorted by condition, image and draw; an error naming the first
    condition whose Δv is NaN."""
    out = pd.DataFrame(rows)
    if out["dv"].isna().any():
        bad = out[out["dv"].isna()].iloc[0]
        raise HumanDataError(
            f"Δv is NaN for condition {bad['condition']!r} of {bad['corruption']!r} on image "
            f"{bad['image_id']!r}"
        )
    out = out.sort_values(["corruption", "condition", "image_id", "draw"], kind="stable")
    out = out.reset_index(drop=True)
    out["draw"] = out["draw"].astype("int64")
    out["seed"] = out["seed"].astype("int64")
    return out


def summarise(cdv: pd.DataFrame) -> pd.DataFrame:
    """Per condition: ``n, dv_mean, dv_sd, dv_q05, dv_median, dv_q95`` (conditions in numeric
    order)."""
    g = cdv.groupby(["corruption", "condition"], sort=False)["dv"]
    out = g.agg(
        n="size",
        dv_mean="mean",
        dv_sd="std",
        dv_q05=lambda s: s.quantile(0.05),
        dv_median="median",
        dv_q95=lambda s: s.quantile(0.95),
    ).reset_index()
    key = pd.to_numeric(out["condition"], errors="coerce")
    out = out.assign(_k=key.fillna(np.inf)).sort_values(["corruption", "_k"], kind="stable")
    return out.drop(columns="_k").reset_index(drop=True)


PLACEMENTS = ("draw", "median")


def assign_dv(
    trials: pd.DataFrame,
    cdv: pd.DataFrame,
    seed: int,
    replicate: int = 0,
    *,
    placement: str,
) -> np.ndarray:
    """Δv of every trial: its own where measured, else placed from its condition's distribution.

    ``placement='draw'`` gives each trial of a (corruption, condition) the Δv of a random
    clean-set image under that condition (and a random noise draw of it), from
    ``rng(seed, "humans-assign", replicate, corruption, condition)``. Replicate 0 is the point
    estimate; in bootstrap replicates (1..B) the condition's images are first resampled with
    replacement, so the band also carries the uncertainty of the Δv distribution itself.
    ``'median'`` puts every trial of a condition at the median Δv of the condition (all
    replicates alike). Many replicates of the same trials: :func:`dv_placer` (the same values).
    """
    return dv_placer(trials, cdv, seed, placement)(replicate)


def dv_placer(trials: pd.DataFrame, cdv: pd.DataFrame, seed: int, placement: str):
    """``replicate -> Δv of every trial`` as :func:`assign_dv` gives it, with the grouping of
    trials and conditions that every replicate shares done once."""
    if placement not in PLACEMENTS:
        raise ValueError(f"placement must be one of {PLACEMENTS}, not {placement!r}")
    dv = trials["dv"].to_numpy(dtype=np.float64).copy()
    todo = np.isnan(dv)
    if not todo.any():
        return lambda replicate: dv.copy()
    groups = dict(list(cdv.groupby(["corruption", "condition"], sort=False)))
    keys = trials.loc[todo, ["corruption", "condition"]]
    positions = np.flatnonzero(todo)
    placed = []
    for (corruption, condition), idx in sorted(
        keys.groupby(["corruption", "condition"]).indices.items()
    ):
        group = groups.get((corruption, condition))
        if group is None or len(group) == 0:
            raise HumanDataError(
                f"no Δv measured for condition {condition!r} of {corruption!r}; measured: "
                f"{sorted(groups)}"
            )
        values = group["dv"].to_numpy()
        if placement == "median":
            placed.append((positions[idx], np.median(values), None))
            continue
        # rows of each image, so that images (not noise draws) are the resampling unit: image k's
        # rows are rows[starts[k] : starts[k] + sizes[k]], in table order
        first = np.unique(group["image_id"].to_numpy(), return_inverse=True)[1]
        sizes = np.bincount(first)
        starts = np.cumsum(sizes) - sizes
        rows = np.argsort(first, kind="stable")
        placed.append((positions[idx], values, (corruption, condition, rows, starts, sizes)))

    def place(replicate: int) -> np.ndarray:
        out = dv.copy()
        for where, values, draw in placed:
            if draw is None:
                out[where] = values
                continue
            corruption, condition, rows, starts, sizes = draw
            gen = seeding.rng(seed, "humans-assign", replicate, corruption, condition)
            images = np.arange(sizes.size)
            if replicate > 0:
                images = gen.integers(0, sizes.size, size=sizes.size)
            picked = images[gen.integers(0, images.size, size=where.size)]
            offsets = np.floor(gen.random(where.size) * sizes[picked]).astype(np.int64)
            out[where] = values[rows[starts[picked] + offsets]]
        return out

    return place
