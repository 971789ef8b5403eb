"""The paper's domains and dv-stratified sampling through the workflow: manifest, then shards."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.workflow.conftest import snakemake, write_config
from vcrbench.files import io


@pytest.mark.slow
def test_paper_domains_and_dv_stratified_sets_regenerate_the_manifest(tmp_path):
    config = write_config(
        tmp_path / "config.yaml",
        corruptions={"shot_noise": {}, "frost": {}},
        imagenet_c={"enabled": False},  # the VCR sets' coverage is what is checked
        sampling={
            "mode": "dv-stratified",
            "domain_set": "paper",
            "n_samples": 24,
            "shard_size": 8,
            "options": {"max_candidates": 3},
        },
    )
    target = "results/tables/coverage.csv"
    proc = snakemake(tmp_path, "--cores", "2", "--show-failed-logs", target, configfile=config)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-6000:]
    testsets = tmp_path / "results/testsets"
    for name, domain in (
        ("shot_noise", {"photons": (1, 5)}),
        ("frost", {"image_weight": (0.01, 1)}),
    ):
        manifest = io.read_parquet(testsets / name / "manifest.parquet")
        assert len(manifest) == 24 and manifest["candidate"].is_monotonic_increasing
        for param, (lo, hi) in domain.items():
            assert manifest[f"param.{param}"].between(lo, hi).all()
        shards = sorted((testsets / name).glob("shard-*.parquet"))
        assert len(shards) == 3
        dv = pd.concat([io.read_columns(s, ["sample_id", "dv"]) for s in shards])
        # Each shard regenerates the manifest's pixels: the same Δv, hence the same bin.
        np.testing.assert_array_equal(dv.sort_values("sample_id")["dv"], manifest["measured_dv"])
        meta = io.read_metadata(shards[0])
        assert "domain set 'paper'" in meta["corruption"]["reason"]
    log = (tmp_path / "results/logs/sample_manifest/shot_noise.log").read_text()
    assert "bins that no candidate reached" in log
    # Table 2's quantity: the coverage of each set's first N draws c ~ U(C), beside the kept set's
    cov = pd.read_csv(tmp_path / target).set_index(["corruption", "source"])
    for name in ("shot_noise", "frost"):
        draws = cov.loc[(name, "vcr-parameter-uniform")]
        assert draws["n_images"] == 24
        assert draws["coverage"] <= cov.loc[(name, "vcr"), "coverage"]  # stratified covers more
        manifest = io.read_parquet(testsets / name / "manifest.parquet")
        first = manifest[manifest["candidate"] < 24]  # kept candidates among the first N
        np.testing.assert_array_equal(
            manifest["uniform_dv"].to_numpy()[first["candidate"]], first["measured_dv"]
        )
    histograms = pd.read_csv(tmp_path / "results/tables/dv_histograms.csv")
    assert "vcr-parameter-uniform" in set(histograms["source"])
