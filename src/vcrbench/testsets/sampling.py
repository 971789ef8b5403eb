"""Sampling a test set: which image, which parameters and which seed each sample gets.

:func:`make_manifest` returns one row per sample: ``sample_id`` (0..N−1), ``image_id``, ``label``,
``seed`` (the sample's own seed, so any sample can be regenerated alone), ``shard``
(``sample_id // shard_size``) and one ``param.<name>`` column per parameter (plus ``target_dv`` in
Δv-uniform mode). The manifest always has exactly ``n_samples`` rows, so the number of shards is
known from the config alone.

Images. Sample i's image is the i-th entry of a sequence of independent random permutations of the
clean set laid end to end: every image is used ⌊N/M⌋ or ⌈N/M⌉ times (each exactly once when
N = M, as ImageNet-C uses each validation image once per severity), and the marginal is uniform.
The sequence depends on the seed only, not on the corruption or the mode, so sample i shows the
same image in every corruption's test set. Seeds: ``derive_seed(seed, "sample", corruption, i)``.

Modes.

``parameter-uniform``
    The paper's c ~ U(C): every parameter independently uniform on its domain.

``dv-uniform``
    Aims at a uniform Δv instead. Every corruption has a 1-D path through C
    (:meth:`vcrbench.corruptions.Corruption.path`): each parameter moves linearly from its
    identity value (t = 0) to an end of its domain (t = 1); a parameter with the identity inside
    its domain (a signed shift) goes to the upper or lower end at random, with probabilities that
    give it the same marginal as parameter-uniform sampling when t is uniform. Then:

    1. Pilot: the first ``pilot_fraction``·N samples take t stratified over [0, 1]; their Δv is
       measured (corrupt + VIF).
    2. A monotone map t → Δv is fitted by isotonic regression, per image where the image has at
       least ``min_points_per_image`` pilot points and pooled over all images otherwise.
    3. While a counted bin (Alg. 1's bins 0..denominator−1) holds fewer than ``min_count``
       measured samples and the pilot budget (``max_pilot_fraction``·N) lasts, the next samples
       target Δv inside those bins through the inverse map of their image, are measured, and the
       maps are refitted (at most ``max_rounds`` rounds). A bin that no image's map reaches is
       left alone (the domain cannot produce it).
    4. The remaining samples draw a target Δv stratified-uniformly over the Δv range their
       image's map reaches, and take t from the inverse map (nothing is measured).

    The pilot samples stay in the test set (they are valid samples with their own parameters and
    seeds), so the generation cost is N + (pilot size) corruptions and Δv computations; the
    pilot's Δv is known, so coverage of the bins it filled is guaranteed. ``target_dv`` is NaN for
    the first pilot round.

``dv-stratified``
    c ~ U(C) candidates kept under per-bin quotas of their measured Δv, so that each kept sample
    is a draw from U(C) restricted to its bin (:mod:`vcrbench.testsets.sampling_stratified`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import numpy as np
import pandas as pd

from vcrbench import schema
from vcrbench.corruptions import Corruption
from vcrbench.seeding import derive_seed, image_sequence, rng
from vcrbench.settings import VifSettings
from vcrbench.testsets import measure
from vcrbench.testsets.sampling_dvuniform import dv_uniform_params
from vcrbench.vocab import param_column

log = logging.getLogger(__name__)

MODES = ("parameter-uniform", "dv-uniform", "dv-stratified")
#: Options of dv-uniform mode and their defaults (config: sampling.options), from the schema's
#: ``$defs/dv_uniform_options`` (``min_count`` None: ``coverage.threshold(n_samples)``).
DV_UNIFORM_DEFAULTS = schema.definition_defaults("dv_uniform_options")
#: The schema's ``vif`` defaults, for direct library use (a workflow job passes its own).
_DEFAULT_VIF = VifSettings()


# --------------------------------------------------------------------------- the manifest


def sample_seeds(seed: int, corruption: str, ids) -> np.ndarray:
    return np.array([derive_seed(seed, "sample", corruption, int(i)) for i in ids], dtype=np.int64)


def manifest_frame(clean_set, rows: np.ndarray, seeds: np.ndarray, shard_size: int) -> pd.DataFrame:
    """The columns every mode writes: sample i shows clean-set row ``rows[i]`` with ``seeds[i]``."""
    sample_ids = np.arange(len(rows), dtype=np.int64)
    return pd.DataFrame(
        {
            "sample_id": sample_ids,
            "image_id": np.asarray(clean_set.image_ids, dtype=object)[rows].astype(str),
            "label": np.asarray(clean_set.labels, dtype=np.int64)[rows],
            "seed": np.asarray(seeds, dtype=np.int64),
            "shard": (sample_ids // shard_size).astype(np.int64),
        }
    )


def make_manifest(
    corruption: Corruption,
    clean_set,
    n_samples: int,
    shard_size: int,
    seed: int,
    mode: str,
    vif_settings: VifSettings = _DEFAULT_VIF,
    **opts,
) -> pd.DataFrame:
    """The samples of one corruption's test set (see the module docstring).

    Parameters
    ----------
    corruption : Corruption
    clean_set : CleanSet (``image_ids``, ``labels``, ``images(ids)``, ``len``)
    n_samples, shard_size : int
    seed : int
        Root seed; every draw is derived from it and names.
    mode : ``"parameter-uniform"``, ``"dv-uniform"`` or ``"dv-stratified"``
        (``sampling.mode``; :mod:`vcrbench.testsets.sampling_stratified`)
    vif_settings : VifSettings
        How the Δv of dv-uniform's pilot and dv-stratified's candidates is measured (the config's
        ``vif`` block; the shards measure theirs with the same).
    **opts
        dv-uniform options, see ``DV_UNIFORM_DEFAULTS``.

    Returns
    -------
    DataFrame with exactly ``n_samples`` rows; ``DataFrame.attrs["sampling"]`` describes the run
    (mode, pilot size, rounds, bins left uncovered by the pilot).
    """
    if mode not in MODES:
        raise ValueError(f"unknown sampling mode {mode!r}; known: {', '.join(MODES)}")
    n_samples, shard_size = int(n_samples), int(shard_size)
    if n_samples < 1:
        raise ValueError(f"n_samples must be at least 1, not {n_samples}")
    if shard_size < 1:
        raise ValueError(f"shard_size must be at least 1, not {shard_size}")
    from vcrbench.testsets.sampling_stratified import STRATIFIED_DEFAULTS

    # Each mode accepts (and ignores) the others' options, so that switching modes is one key.
    known = set(DV_UNIFORM_DEFAULTS) | set(STRATIFIED_DEFAULTS)
    unknown = sorted(set(opts) - known)
    if unknown:
        what = "dv-stratified" if mode == "dv-stratified" else "dv-uniform"
        raise ValueError(f"unknown {what} option(s) {unknown}; known: {sorted(known)}")
    if mode == "dv-stratified":
        options = {k: opts.get(k, v) for k, v in STRATIFIED_DEFAULTS.items()}
        return _dv_stratified(
            corruption, clean_set, n_samples, shard_size, seed, vif_settings, options
        )

    rows = image_sequence(clean_set, n_samples, seed)
    frame = manifest_frame(
        clean_set, rows, sample_seeds(seed, corruption.name, range(n_samples)), shard_size
    )
    if mode == "parameter-uniform":
        # dv-uniform options are accepted (and unused) so that switching modes is one config key.
        params = corruption.sample_uniform(
            n_samples, rng(seed, "manifest", corruption.name, "params")
        )
        info = {"mode": mode, "n_pilot": 0}
    else:
        options = {**DV_UNIFORM_DEFAULTS, **opts}
        params, target, info = dv_uniform_params(
            corruption, clean_set, frame, seed, vif_settings, options
        )
    for name in corruption.param_names:
        frame[param_column(name)] = np.asarray(params[name], dtype=np.float64)
    if mode == "dv-uniform":
        frame["target_dv"] = target
    frame.attrs["sampling"] = info
    return frame


def _dv_stratified(corruption, clean_set, n, shard_size, seed, vif_settings, options):
    """dv-stratified manifest: candidates drawn as parameter-uniform samples (candidate k shows
    image k of the sequence with seed k), kept by :mod:`vcrbench.testsets.sampling_stratified`."""
    from vcrbench.testsets.sampling_stratified import stratified_draws

    ids = np.asarray(clean_set.image_ids, dtype=object)
    device, batch_size = options["device"], int(options["batch_size"])

    def draw(start: int, params: Mapping[str, np.ndarray]):
        stop = start + len(next(iter(params.values())))
        rows = image_sequence(clean_set, stop, seed)[start:]
        seeds = sample_seeds(seed, corruption.name, range(start, stop))
        dv = measure.samples_dv(
            corruption, clean_set, ids[rows], params, seeds, vif_settings, device, batch_size
        )
        return rows, dv

    kept, rows, params, dv, info, uniform_dv = stratified_draws(corruption, n, seed, draw, options)
    frame = manifest_frame(clean_set, rows, sample_seeds(seed, corruption.name, kept), shard_size)
    for name in corruption.param_names:
        frame[param_column(name)] = np.asarray(params[name], dtype=np.float64)
    frame["candidate"] = kept.astype(np.int64)
    frame["measured_dv"] = dv
    frame["uniform_dv"] = uniform_dv  # of candidate i (the i-th c ~ U(C) draw), not of this row
    frame.attrs["sampling"] = info
    return frame
