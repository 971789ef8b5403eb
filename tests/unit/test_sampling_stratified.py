"""Δv-stratified sampling (c ~ U(C) under per-bin quotas) and the paper's domain set."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from scipy.stats import ks_2samp

from vcrbench.corruptions import Param, build_corruption, domain_set, get_corruption
from vcrbench.errors import CorruptionError
from vcrbench.plan import config as plan_config
from vcrbench.testsets import measure, sampling, sampling_stratified


def dim(image, params, rng):
    return image * (1.0 - params["a"] * params["b"])


@pytest.fixture
def fake_dv(monkeypatch):
    """Δv := 1 - mean(corrupted)/mean(clean) for ``dim``: about a·b, far from uniform on [0, 1]²."""

    def fake(clean, corrupted, vif_settings=None, device=None):
        ratio = corrupted.reshape(len(clean), -1).mean(1) / clean.reshape(len(clean), -1).mean(1)
        dv = np.clip(1.0 - ratio, 0.0, 1.0)
        return 1.0 - dv, dv

    monkeypatch.setattr(measure, "visual_change", fake)


@pytest.fixture(scope="module")
def dim_corruption():
    params = [Param("a", 0.0, (0.0, 1.0)), Param("b", 0.0, (0.0, 1.0))]
    return build_corruption("dim", dim, params, source="user", domain={"a": [0, 1], "b": [0, 1]})


def measure_manifest(corruption, clean_set, frame, batch_size):
    """Δv of a manifest's samples, corrupted as their shard corrupts them."""
    params = {p: frame[f"param.{p}"].to_numpy() for p in corruption.param_names}
    images, seeds = frame["image_id"].to_numpy(), frame["seed"].to_numpy()
    return measure.samples_dv(
        corruption, clean_set, images, params, seeds, "kumar", None, batch_size
    )


def in_bin(frame, dv, lo, hi):
    sel = (dv >= lo) & (dv < hi)
    return frame.loc[sel, "param.a"].to_numpy(), frame.loc[sel, "param.b"].to_numpy()


def test_kept_parameters_follow_uniform_restricted_to_their_bin(clean_set, dim_corruption, fake_dv):
    n = 1500
    kept = sampling.make_manifest(dim_corruption, clean_set, n, 500, seed=5, mode="dv-stratified")
    assert len(kept) == n and kept["sample_id"].tolist() == list(range(n))
    # Plain U(C) draws (another seed), measured the same way.
    plain = sampling.make_manifest(dim_corruption, clean_set, 6000, 6000, 9, "parameter-uniform")
    plain_dv = measure_manifest(dim_corruption, clean_set, plain, 256)
    kept_dv = kept["measured_dv"].to_numpy()
    dv_path = sampling.make_manifest(dim_corruption, clean_set, n, n, seed=5, mode="dv-uniform")
    path_dv = np.asarray(dv_path.attrs["sampling"]["pilot_dv"])
    path_dv = np.concatenate([path_dv, dv_path["target_dv"].to_numpy()[len(path_dv) :]])
    for lo, hi in ((0.4, 0.5), (0.05, 0.15)):  # a middle bin, and a low one that is rare in U(C)
        a_kept, b_kept = in_bin(kept, kept_dv, lo, hi)
        a_plain, b_plain = in_bin(plain, plain_dv, lo, hi)
        assert len(a_kept) >= 60 and len(a_plain) >= 60
        assert ks_2samp(a_kept, a_plain).pvalue > 0.01
        assert ks_2samp(b_kept, b_plain).pvalue > 0.01
        # The test has power: dv-uniform's path (a = b) puts other parameters in the same bin.
        a_path, _ = in_bin(dv_path, path_dv, lo, hi)
        assert ks_2samp(a_path, a_plain).pvalue < 1e-4
    # The bins are filled evenly (to the level, or one below) where U(C) is uneven: a·b piles up
    # at small Δv, and the top bins are too rare to fill within the cap.
    level = kept.attrs["sampling"]["level"]
    counts = np.bincount(sampling_stratified.strata_of(kept_dv, 40), minlength=39)
    assert set(counts[:34].tolist()) <= {level - 1, level}
    plain_counts = np.bincount(sampling_stratified.strata_of(plain_dv, 40), minlength=39)
    assert plain_counts[2] > 3 * plain_counts[30]
    assert set(kept.attrs["sampling"]["short_strata"]) <= set(range(34, 39))


def test_regenerated_shard_has_the_manifest_dv(clean_set, dim_corruption, fake_dv):
    m = sampling.make_manifest(dim_corruption, clean_set, 60, 60, seed=2, mode="dv-stratified")
    dv = measure_manifest(dim_corruption, clean_set, m, 7)
    np.testing.assert_array_equal(dv, m["measured_dv"].to_numpy())
    # The first N candidates are the parameter-uniform manifest.
    pu = sampling.make_manifest(dim_corruption, clean_set, 60, 60, 2, "parameter-uniform")
    first = m[m["candidate"] < 60]
    np.testing.assert_array_equal(
        first["param.a"].to_numpy(), pu["param.a"].to_numpy()[first["candidate"]]
    )
    np.testing.assert_array_equal(
        first["seed"].to_numpy(), pu["seed"].to_numpy()[first["candidate"]]
    )
    # uniform_dv records them: row i holds the Δv of candidate i, the i-th c ~ U(C) draw
    np.testing.assert_array_equal(
        m["uniform_dv"], measure_manifest(dim_corruption, clean_set, pu, 7)
    )


def test_quotas_fill_evenly_and_sum_to_n():
    gen = np.random.default_rng(0)
    hits = np.array([0, 3, 50, 7, 100, 1])
    for n in (1, 10, 30, 161):
        keep = sampling_stratified.quotas(hits, n, gen)
        assert keep.sum() == n and np.all(keep <= hits)
        level = sampling_stratified.water_level(hits, n)
        assert np.all((keep >= level - 1) | (keep == hits))
    with pytest.raises(ValueError, match="cannot fill"):
        sampling_stratified.water_level(hits, 162)


def test_real_vif_is_deterministic_bounded_and_names_unreachable_bins(clean_set, caplog):
    c = get_corruption("shot_noise", {"domain_set": "paper"})
    with caplog.at_level(logging.WARNING, logger="vcrbench.testsets.sampling_stratified"):
        m1 = sampling.make_manifest(
            c, clean_set, 30, 10, seed=4, mode="dv-stratified", max_candidates=2
        )
    m2 = sampling.make_manifest(
        c, clean_set, 30, 10, seed=4, mode="dv-stratified", max_candidates=2
    )
    assert m1.equals(m2)
    info = m1.attrs["sampling"]
    assert info["candidates"] <= 60 and info["cost"] == info["candidates"] / 30
    # With 1-5 photons every sample is heavy noise: the low bins are out of reach.
    assert set(range(15)) <= set(info["unreached_strata"])
    assert "bins that no candidate reached" in caplog.text and "shot_noise" in caplog.text
    with pytest.raises(ValueError, match="unknown dv-stratified option"):
        sampling.make_manifest(c, clean_set, 5, 5, seed=4, mode="dv-stratified", cap=3)
    with pytest.raises(ValueError, match="max_candidates must be at least 1"):
        sampling.make_manifest(c, clean_set, 5, 5, 4, mode="dv-stratified", max_candidates=0.5)


# --------------------------------------------------------------------------- domain sets


def test_paper_domain_set_names_its_source_for_every_corruption():
    paper = domain_set("paper")
    # the 14, motion and glass blur twice (ImageNet-C's and the toolbox generator's)
    assert len(paper) == 16
    for name, entry in paper.items():
        assert "transformations.py" in entry["source"], name
        assert entry["chosen"], name
        corruption = get_corruption(name, {"domain_set": "paper"})
        assert dict(corruption.domain) == {k: tuple(v) for k, v in entry["domain"].items()}
        assert "domain set 'paper'" in corruption.reason
    assert get_corruption("shot_noise", {"domain_set": "paper"}).domain == {"photons": (1.0, 5.0)}
    assert get_corruption("gaussian_noise", {"domain_set": "paper"}).domain["sigma"][1] == 1.0
    line = get_corruption("motion_blur_line", {"domain_set": "paper"})
    assert line.domain == {
        "ksize": (3.0, 49.0),
        **{k: (0.0, 1.0) for k in ("x0", "y0", "x1", "y1")},
    }
    assert "Motion_Blur: MotionBlur(blur_limit=50" in paper["motion_blur_line"]["source"]
    corner = get_corruption("glass_blur_toolbox", {"domain_set": "paper"})
    assert corner.domain == {"sigma": (0.0, 5.0), "max_delta": (1.0, 9.0)}
    assert "range(32 - max_delta, max_delta, -1)" in paper["glass_blur_toolbox"]["source"]


def test_paper_config_draws_motion_blur_with_the_toolbox_line_kernel(clean_set):
    import yaml

    from tests.support.shipped import REPO

    paper = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    assert {"motion_blur", "motion_blur_line"} <= set(paper["corruptions"])
    assert paper["sampling"]["domain_set"] == "paper"
    options = plan_config.corruption_options(paper, "motion_blur_line")
    c = get_corruption("motion_blur_line", options)
    assert c.domain["ksize"] == (3.0, 49.0) and c.category == "blur"
    m = sampling.make_manifest(c, clean_set, 20, 20, seed=0, mode="parameter-uniform")
    assert m["param.ksize"].between(3.0, 49.0).all() and m["param.ksize"].std() > 5


def test_paper_config_draws_glass_blur_with_the_toolbox_corner_loop(clean_set):
    import yaml

    from tests.support.shipped import REPO

    paper = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    assert {"glass_blur", "glass_blur_toolbox"} <= set(paper["corruptions"])
    c = get_corruption(
        "glass_blur_toolbox", plan_config.corruption_options(paper, "glass_blur_toolbox")
    )
    assert c.domain == {"sigma": (0.0, 5.0), "max_delta": (1.0, 9.0)} and c.category == "blur"
    m = sampling.make_manifest(c, clean_set, 20, 20, seed=0, mode="parameter-uniform")
    assert m["param.sigma"].between(0.0, 5.0).all() and m["param.max_delta"].between(1.0, 9.0).all()
    # Table 3 fine-tunes on the paper's glass-blur sets too
    glass_runs = {k: v for k, v in paper["retrain"]["runs"].items() if "glass" in k}
    assert len(glass_runs) == 2
    assert all(run["corruptions"] == ["glass_blur_toolbox"] for run in glass_runs.values())


def test_domain_sets_default_override_and_errors():
    assert (
        get_corruption("shot_noise").domain
        == get_corruption("shot_noise", {"domain_set": "calibrated"}).domain
    )
    # Not in the paper's set: the calibrated domain.
    assert (
        get_corruption("contrast", {"domain_set": "paper"}).domain
        == get_corruption("contrast").domain
    )
    # A corruption's own domain wins over the set.
    c = get_corruption("shot_noise", {"domain_set": "paper", "domain": {"photons": [2, 3]}})
    assert c.domain == {"photons": (2.0, 3.0)}
    with pytest.raises(CorruptionError, match="unknown domain set 'papr'.*did you mean 'paper'"):
        get_corruption("shot_noise", {"domain_set": "papr"})


def test_plan_passes_the_domain_set_to_every_job_only_when_not_default():
    config = {"corruptions": {"shot_noise": {}, "frost": {"n_samples": 5}}, "sampling": {}}
    assert plan_config.corruption_options(config, "shot_noise") == {}
    config["sampling"]["domain_set"] = "calibrated"
    assert plan_config.corruption_options(config, "frost") == {"n_samples": 5}
    config["sampling"]["domain_set"] = "paper"
    assert plan_config.corruption_options(config, "frost") == {
        "n_samples": 5,
        "domain_set": "paper",
    }


def test_next_round_pursues_a_stratum_only_while_the_cap_can_fill_it():
    next_round = sampling_stratified._next_round
    # Level ⌈200 / 3⌉ = 67: one hit in 200 candidates needs 66 · 200 more, beyond the cap.
    assert next_round(np.array([150, 70, 1]), 200, 200, 10_000, 32) == 0
    # A stratum not hit yet counts at the plausible rate 3 / 200: 100 · 200 / 3 candidates.
    assert next_round(np.array([150, 70, 0]), 200, 200, 10_000, 32) == 200
    # Within a smaller cap only the stratum at 70 of 100 is pursued: 1.1 · 30 · 200 / 70.
    assert next_round(np.array([150, 70, 0]), 200, 200, 5_000, 32) == 95
    assert next_round(np.array([150, 70, 0]), 200, 200, 200, 32) == 0
