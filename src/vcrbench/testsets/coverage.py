"""Δv coverage of the test sets (the paper's Table 2) and their Δv histograms (Fig. 4/11).

Both read the ``dv`` column of the shards (VCR test sets) and of the ImageNet-C comparison sets:
coverage is the fraction of counted bins (0 .. denominator − 1 of Alg. 1's bins) holding at least
``min_count`` images. The paper (Section 4.1, Table 2) uses one threshold, 20 images per bin, for
VCR's 50,000 images and ImageNet-C's 5 × 50,000 alike; smaller runs scale that one threshold by the
VCR set's size relative to 50,000 and apply it to both sets of a corruption.

A Δv-stratified test set is not the paper's parameter-uniform set: its manifest's ``uniform_dv``
column holds the Δv of its first N candidates, the N draws c ~ U(C) that parameter-uniform sampling
makes, and their coverage and histogram are rows of their own (source :data:`UNIFORM_DRAWS`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from vcrbench.bins import counts_per_bin, scaled_min_count
from vcrbench.files import io
from vcrbench.settings import CoverageSettings
from vcrbench.vocab import COVERAGE_COLUMNS, DV_HISTOGRAM_COLUMNS

#: The ``coverage`` block's defaults (the paper's: 40 bins, 20 images at 50,000, k/39).
DEFAULT = CoverageSettings()


def coverage(dv, min_count: int, settings: CoverageSettings = DEFAULT) -> dict:
    """Coverage of Table 2: the fraction of bins holding at least ``min_count`` images (the
    threshold applied, e.g. :func:`threshold` of a VCR set's size).

    Bins 0 .. denominator−1 of ``settings`` are counted (with the paper's 40 bins and denominator
    39, bin 39, which holds only dv = 1, is left out, so every value is k/39). Returns
    ``coverage``, ``covered_bins``, ``bins``, ``min_count``, ``denominator``, ``n_images`` and
    ``counts`` (all ``bins`` counts).
    """
    n_bins, denominator = settings.bins, settings.denominator
    if min_count < 1:
        raise ValueError(f"min_count must be at least 1, not {min_count}")
    counts = counts_per_bin(dv, n_bins)
    covered = int((counts[:denominator] >= min_count).sum())
    return {
        "coverage": covered / denominator,
        "covered_bins": covered,
        "bins": n_bins,
        "min_count": int(min_count),
        "denominator": denominator,
        "n_images": int(np.asarray(dv).size),
        "counts": counts,
    }


def threshold(n_vcr: int, settings: CoverageSettings = DEFAULT) -> int:
    """Images a bin needs to be covered: ``settings.min_count`` at ``settings.reference_n`` VCR
    images, scaled to a VCR set of ``n_vcr`` images (at least 1); the same threshold applies to
    that corruption's ImageNet-C set, whatever its size."""
    return scaled_min_count(n_vcr, settings.min_count, settings.reference_n)


#: Source of the rows of a Δv-stratified set's first N draws c ~ U(C) (its manifest's
#: ``uniform_dv``), beside ``vcr`` (the kept samples) and ``imagenet-c``.
UNIFORM_DRAWS = "vcr-parameter-uniform"
#: Column of a Δv-stratified manifest with the Δv of its first N candidates.
UNIFORM_DV_COLUMN = "uniform_dv"


def _read_dv(paths: Sequence[str | os.PathLike], column: str = "dv") -> np.ndarray:
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    parts = [io.read_parquet(p, columns=[column])[column].to_numpy() for p in paths]
    return np.concatenate(parts) if parts else np.zeros(0)


def _sources(vcr, imagenet_c, uniform_draws) -> list[tuple[str, dict[str, np.ndarray]]]:
    """``[(source, {corruption: Δv})]``: the VCR sets, the first N draws of the Δv-stratified
    ones (only where given) and the ImageNet-C sets."""
    out = [("vcr", {name: _read_dv(paths) for name, paths in vcr.items()})]
    if uniform_draws:
        draws = {n: _read_dv(p, UNIFORM_DV_COLUMN) for n, p in uniform_draws.items()}
        out.append((UNIFORM_DRAWS, draws))
    out.append(("imagenet-c", {name: _read_dv(p) for name, p in (imagenet_c or {}).items()}))
    return out


def coverage_table(
    vcr: Mapping[str, Sequence[str | os.PathLike]],
    imagenet_c: Mapping[str, str | os.PathLike | Sequence[str | os.PathLike]] | None = None,
    settings: CoverageSettings = DEFAULT,
    uniform_draws: Mapping[str, str | os.PathLike] | None = None,
) -> pd.DataFrame:
    """Rows ``corruption, source, n_images, coverage, covered_bins, bins, min_count, denominator``.

    ``vcr`` maps a corruption to its shard files, ``imagenet_c`` to its comparison set's file or
    shard files, ``uniform_draws`` a Δv-stratified corruption to its manifest (source
    :data:`UNIFORM_DRAWS`). One threshold per corruption, :func:`threshold` of its VCR set's size,
    holds for every source (the paper's definition: 20 images per bin for 50,000 VCR and 250,000
    ImageNet-C images alike).
    """
    sources = _sources(vcr, imagenet_c, uniform_draws)
    vcr_dv = sources[0][1]
    vcr_sizes = [dv.size for dv in vcr_dv.values()]
    rows = []
    for source, sets in sources:
        for name, dv in sets.items():
            # A corruption without a VCR set takes the run's VCR size (the largest one).
            n_vcr = vcr_dv[name].size if name in vcr_dv else max(vcr_sizes, default=dv.size)
            res = coverage(dv, threshold(n_vcr, settings), settings)
            rows.append(
                (
                    name,
                    source,
                    res["n_images"],
                    res["coverage"],
                    res["covered_bins"],
                    settings.bins,
                    res["min_count"],
                    settings.denominator,
                )
            )
    return pd.DataFrame(rows, columns=COVERAGE_COLUMNS)


def dv_histograms(
    vcr: Mapping[str, Sequence[str | os.PathLike]],
    imagenet_c: Mapping[str, str | os.PathLike | Sequence[str | os.PathLike]] | None = None,
    settings: CoverageSettings = DEFAULT,
    uniform_draws: Mapping[str, str | os.PathLike] | None = None,
) -> pd.DataFrame:
    """Δv histogram per corruption and source (Fig. 4/11): one row per bin of ``settings``.

    Columns ``corruption, source, bin, dv_low, dv_high, count, fraction``; bin j spans
    [j/(n_bins−1), (j+1)/(n_bins−1)) as Alg. 1 bins it (the last bin holds dv = 1). Sources as in
    :func:`coverage_table`.
    """
    n_bins = settings.bins
    rows = []
    for source, sets in _sources(vcr, imagenet_c, uniform_draws):
        for name, dv in sets.items():
            counts = counts_per_bin(dv, n_bins)
            total = max(1, counts.sum())
            for j, count in enumerate(counts):
                rows.append(
                    {
                        "corruption": name,
                        "source": source,
                        "bin": j,
                        "dv_low": j / (n_bins - 1),
                        "dv_high": min(1.0, (j + 1) / (n_bins - 1)),
                        "count": int(count),
                        "fraction": count / total,
                    }
                )
    return pd.DataFrame(rows, columns=DV_HISTOGRAM_COLUMNS)
