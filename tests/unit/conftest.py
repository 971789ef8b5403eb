"""Fixtures shared by the unit tests."""

from __future__ import annotations

import pytest

from vcrbench.datasets.loading import CleanSet, prepare_clean_set, read_embedded_dataset
from vcrbench.settings import DatasetSettings


@pytest.fixture(scope="session")
def clean_set(tmp_path_factory) -> CleanSet:
    """The embedded images at 72x72 (small enough for fast Δv, large enough for the pyramid).

    Read-only; a module that needs other images defines its own ``clean_set``.
    """
    d = tmp_path_factory.mktemp("clean")
    prepare_clean_set(
        read_embedded_dataset(), d / "images.npy", d / "index.parquet",
        DatasetSettings(resize=80, crop=72),
    )  # fmt: skip
    return CleanSet.open(d / "images.npy", d / "index.parquet")
