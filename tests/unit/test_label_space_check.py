"""The label spaces checked at the run's start (issue 39): samples per corruption set and label
space, exact and expected; a label space that cannot fit a curve refuses the run, naming the
counts and the settings; one that fits on part of the Δv range is warned about once."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from PIL import Image
from scipy import stats

from vcrbench import plan
from vcrbench.corruptions import get_corruption
from vcrbench.errors import ConfigError, ConfigErrors
from vcrbench.plan import label_space_check as check
from vcrbench.plan.snakemake_compat import PlannedJob
from vcrbench.testsets import sampling

#: ImageNet-1k classes: 8 (hen) is in the 16 classes (bird), 0 (tench) and 1 (goldfish) are not.
IN16, OUT16 = 8, (0, 1)


def test_binomial_tail_is_the_binomial_survival_function():
    for n, p, k in [(207, 1 / 39, 20), (48, 1 / 39, 3), (1000, 1 / 39, 20), (5, 0.5, 5), (3, 0.1, 0)]:
        assert check.binomial_tail(n, p, k) == pytest.approx(stats.binom.sf(k - 1, n, p), abs=1e-12)
    assert check.binomial_tail(4, 0.5, 5) == 0.0
    assert check.binomial_tail(10, 0.0, 1) == 0.0


def test_expected_usable_bins():
    # the issue's case: 207 samples of the 16 classes over 39 bins hold about 5.3 a bin
    assert check.expected_usable_bins(207, 39, 20) < 1e-4
    assert check.expected_usable_bins(1000, 39, 20) == pytest.approx(
        39 * stats.binom.sf(19, 1000, 1 / 39)
    )
    assert check.expected_usable_bins(40_000, 39, 20) == pytest.approx(39)
    assert check.expected_usable_bins(10, 0, 1) == 0.0


class _Clean:
    """What make_manifest reads of a clean set for parameter-uniform sampling."""

    def __init__(self, labels):
        self.labels = np.asarray(labels, dtype=np.int64)
        self.image_ids = [f"img{i:02d}" for i in range(len(labels))]

    def __len__(self):
        return len(self.labels)


@pytest.mark.parametrize("n_samples", [7, 20, 33, 100])
def test_counts_are_exact_for_the_sets_the_seed_decides(n_samples):
    labels = np.array([IN16, -1, OUT16[0], IN16, OUT16[1], -1, 3, IN16, 2, 0])
    clean = _Clean(labels)
    manifest = sampling.make_manifest(
        get_corruption("brightness"), clean, n_samples, 8, seed=5, mode="parameter-uniform"
    )
    for space in ("imagenet1k", "geirhos16"):
        member = check.members(labels, space, "imagenet1k")
        in_space = set(np.asarray(clean.image_ids)[member])
        truth = int(manifest["image_id"].isin(in_space).sum())
        # dv-uniform draws its images as parameter-uniform does (vcrbench.testsets.sampling), so
        # the count is the same
        for mode in check.EXACT_MODES:
            assert check.samples_in(member, n_samples, 5, mode) == (truth, True)


def test_counts_are_expected_for_dv_stratified_sets():
    member = np.array([True, False, False, True])
    assert check.samples_in(member, 1000, 0, "dv-stratified") == (500.0, False)
    assert check.samples_in(np.zeros(0, bool), 10, 0, "dv-uniform") == (0.0, True)


def test_label_space_members():
    labels = np.array([IN16, OUT16[0], -1, 294])  # 294: brown bear (bear)
    assert check.members(labels, "imagenet1k", "imagenet1k").tolist() == [True, True, False, True]
    assert check.members(labels, "geirhos16", "imagenet1k").tolist() == [True, False, False, True]
    # a dataset with its own classes: no 16-class decisions, no 16-class samples
    assert not check.members(labels, "geirhos16", "cub200").any()
    assert check.members(labels, "cub200", "cub200").tolist() == [True, True, False, True]


def _config(**changes):
    base = {
        "seed": 0,
        "dataset": {"kind": "embedded"},
        "corruptions": {"gaussian_blur": {}, "brightness": {}},
        "sampling": {"mode": "dv-uniform", "n_samples": 1000},
        "models": {"m": {"source": "timm", "id": "resnet18"}},
        "estimation": {"min_count": 20},
    }
    for key, value in changes.items():
        base[key] = {**base[key], **value} if isinstance(value, dict) else value
    return plan.validate(base)


def test_the_bins_a_set_spreads_over():
    config = _config()
    assert check.reach_bins(config, "gaussian_blur", 40) == 39  # Δv 0 … 0.975
    assert check.reach_bins(config, "brightness", 40) == 33  # Δv 0 … 0.84: bins 0..32
    own = _config(corruptions={"brightness": {"domain": {"delta": [0.0, 0.1]}}})
    assert check.reach_bins(own, "brightness", 40) == 39  # a domain of its own: not known


def _labels(n_images=1000, n16=207):
    """The issue's dataset: one image per ImageNet class, 207 of them in the 16 classes."""
    in16 = sorted(i for v in check_indices().values() for i in v)[:n16]
    out = [i for i in range(1000) if i not in set(in16)][: n_images - n16]
    return np.array(in16 + out)


def check_indices():
    from vcrbench.labels import geirhos16_imagenet_indices

    return geirhos16_imagenet_indices()


def test_the_issue_s_run_is_refused_naming_counts_and_settings():
    labels = _labels()
    with pytest.raises(ConfigErrors) as err:
        check.check_label_spaces(_config(), labels)
    (problem,) = err.value.problems  # the 1000-class label space fits
    assert problem.startswith(
        "estimation.label_spaces: label space 'geirhos16' cannot fit a curve: no Δv bin is "
        "expected to hold estimation.min_count=20 of the samples that show one of its images, on "
        "gaussian_blur: 207 of 1,000 samples (exact), about 5.3 per Δv bin over the 39 bins it "
        "reaches; brightness: 207 of 1,000 samples (exact), about 6.3 per Δv bin over the 33 bins"
    )
    fixes = problem.split("Any of these fixes it: ")[1].split("; ")
    k = int(fixes[0].removeprefix("estimation.min_count: ").removesuffix(" or less"))
    n = int(fixes[1].removeprefix("sampling.n_samples: ").removesuffix(" or more").replace(",", ""))
    assert fixes[2] == "leave 'geirhos16' out of estimation.label_spaces"
    # each fix fits, and is the edge: one step further does not
    for fixed, fits in ((k, True), (k + 1, False)):
        config = _config(estimation={"min_count": fixed})
        if fits:
            check.check_label_spaces(config, labels)
        else:
            with pytest.raises(ConfigErrors):
                check.check_label_spaces(config, labels)
    check.check_label_spaces(_config(sampling={"n_samples": n}), labels)
    with pytest.raises(ConfigErrors):
        check.check_label_spaces(_config(sampling={"n_samples": math.floor(n * 0.97)}), labels)
    assert check.check_label_spaces(_config(estimation={"label_spaces": ["dataset"]}), labels) == []


def test_fewer_samples_than_min_count_refuse_in_any_mode():
    labels = np.array([IN16] + [OUT16[0]] * 99)  # one image of the 16 classes in 100
    config = _config(sampling={"mode": "parameter-uniform", "n_samples": 1000})
    with pytest.raises(ConfigErrors, match=r"on gaussian_blur: 10 of 1,000 samples \(exact\);"):
        check.check_label_spaces(config, labels)
    # parameter-uniform: the count alone is checked (Δv is where the domain puts it)
    assert check.check_label_spaces(_config(sampling={"mode": "parameter-uniform"}, estimation={"min_count": 10}), labels) == []  # noqa: E501
    stratified = _config(sampling={"mode": "dv-stratified"})
    with pytest.raises(ConfigErrors, match=r"10 of 1,000 samples \(expected, dv-stratified\)"):
        check.check_label_spaces(stratified, labels)


def test_a_label_space_on_part_of_the_range_is_warned_about_once():
    labels = _labels()
    (warning,) = check.check_label_spaces(_config(estimation={"min_count": 8}), labels)
    lines = warning.splitlines()
    assert lines[0].startswith("label spaces whose curves rest on part of the Δv range only")
    assert len(lines) == 3  # one line per set: geirhos16 on the two corruptions
    assert lines[1].startswith(
        "  'geirhos16' on gaussian_blur: 207 of 1,000 samples (exact), about 5.3 per Δv bin over "
        "the 39 bins it reaches: expected support about"
    )
    assert lines[1].endswith("at estimation.min_count=8")


def test_no_sample_in_a_label_space_is_no_refusal():
    labels = np.array([OUT16[0]] * 10)  # no image of the 16 classes: no 16-class accuracy
    assert check.check_label_spaces(_config(), labels) == []


def test_the_run_s_start_checks_a_folder_dataset_before_any_job(tmp_path):
    """onstart: refused with the counts when curves are to be estimated; nothing otherwise."""
    rng = np.random.default_rng(0)
    rows = ["file,label"]
    for i in range(30):  # 3 images of the 16 classes, 27 outside
        Image.fromarray(rng.integers(0, 255, (24, 24, 3), dtype=np.uint8)).save(tmp_path / f"{i}.png")
        rows.append(f"{i}.png,{IN16 if i < 3 else OUT16[i % 2]}")
    (tmp_path / "labels.csv").write_text("\n".join(rows) + "\n")
    dataset = {"kind": "folder", "path": str(tmp_path), "labels": str(tmp_path / "labels.csv")}
    config = _config(dataset=dataset, sampling={"n_samples": 300})
    estimating = [PlannedJob("estimate_curves")]
    assert check.check_planned([], config) is None  # nothing to estimate: not run
    with pytest.raises(ConfigError) as err:
        check.check_planned(estimating, config, " No job was started.")
    text = str(err.value)
    assert "label space 'imagenet1k'" in text and "label space 'geirhos16'" in text
    assert "on gaussian_blur: 30 of 300 samples (exact), about 0.8 per Δv bin" in text
    assert text.endswith(" No job was started.")
    lower = _config(dataset=dataset, sampling={"n_samples": 300}, estimation={"min_count": 2})
    (warning,) = check.check_planned(estimating, lower)
    assert "'geirhos16' on gaussian_blur: 30 of 300 samples (exact)" in warning
    # the clean set as the listing gives it: the same order, hence the same exact counts
    listed = pd.read_csv(tmp_path / "labels.csv")
    assert check.samples_in(listed["label"].to_numpy() == IN16, 300, 0, "dv-uniform") == (30.0, True)
