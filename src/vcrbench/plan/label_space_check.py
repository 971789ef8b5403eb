"""The label spaces checked at the run's start: how many samples of each corruption's test set
fall in each label space of ``estimation.label_spaces``, and whether Alg. 1 can fit a curve on
them at ``estimation.min_count``, before any job (the workflow's ``onstart``, after the dataset
check: rules/checks.smk).

Counts. A sample's image decides its label spaces: the dataset's own where the image has a label,
the 16 classes of the human experiments (``geirhos16``) where its ImageNet-1k label is one of
theirs. Accuracy in a label space is estimated on those samples (consistency on all of them,
:func:`vcrbench.evaluation.outcomes.outcomes`). Parameter-uniform and dv-uniform sets take each
sample's image from the seed and the clean set's size alone
(:func:`vcrbench.seeding.image_sequence`), so their counts are exact (but for images
``dataset.on_error: skip`` leaves out); a dv-stratified set keeps candidates by their measured Δv,
each image in its share of the clean set, so its counts are expected values.

Bins. A curve needs one Δv bin that holds ``min_count`` of the label space's samples
(:class:`vcrbench.errors.ShortSampleError`). dv-uniform and dv-stratified sets spread their
samples evenly over the bins the corruption reaches: the calibrated Δv range of a built-in on its
calibrated domain (``measured`` in ``vcrbench/data/corruption_domains.yaml``: from the median
image's Δv at the mild end to that at the severe end), else bins 0..M−2. A bin's count is then
about Binomial(n, 1/B) for n samples over B bins, and B · P(count ≥ min_count) bins are expected
to enter the fit. A label space with fewer than one such bin expected, or with fewer samples than
``min_count`` whatever the mode, cannot fit a curve: the run is refused, naming the label space,
the counts and the settings that would fix it (``estimation.min_count``,
``sampling.n_samples``, ``estimation.label_spaces``). One with fewer than half of its bins
expected to count fits only on part of the Δv range: one warning for the run says so, with the
expected support. Parameter-uniform sets put Δv where the domain puts it, which the plan does not
know: only their counts are checked. A label space without any sample (an unlabelled dataset,
no image of the 16 classes) has no accuracy curve by design and is not refused.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.resources
import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from vcrbench.errors import ConfigError, ConfigErrors, DatasetError
from vcrbench.plan import config as cfg
from vcrbench.vocab import HUMAN_LABEL_SPACE, IMAGENET1K, resolve_label_spaces

#: Modes whose samples spread evenly over the Δv bins a corruption reaches.
SPREAD_MODES = ("dv-uniform", "dv-stratified")
#: Modes whose images come from the seed alone: exact counts.
EXACT_MODES = ("parameter-uniform", "dv-uniform")
#: Below this share of its bins expected to hold min_count, a label space is warned about.
PARTIAL_SHARE = 0.5
#: The largest set the search for a fitting ``sampling.n_samples`` counts exactly (beyond it:
#: the label space's share of the set).
EXACT_SEARCH_MAX = 1_000_000


@dataclasses.dataclass(frozen=True)
class SpaceCount:
    """One corruption's test set in one label space: ``n`` of its ``n_total`` samples show an
    image of the label space (``exact``, or an expected value), spread over ``bins`` Δv bins
    (None: not modelled, parameter-uniform) of which ``usable`` are expected to hold
    ``min_count``."""

    corruption: str
    label_space: str
    mode: str
    n: float
    n_total: int
    exact: bool
    bins: int | None
    usable: float | None
    min_count: int
    #: The label space's samples in a set of another size (the fixes' search), as counted here.
    count_at: Callable[[int], float] | None = dataclasses.field(
        default=None, compare=False, repr=False
    )

    @property
    def fits(self) -> bool:
        if self.n <= 0:
            return True  # no sample: no accuracy curve by design
        if self.n < self.min_count:
            return False
        return self.usable is None or self.usable >= 1.0

    @property
    def partial(self) -> bool:
        return (
            self.fits
            and self.n > 0
            and self.usable is not None
            and self.usable < PARTIAL_SHARE * self.bins
        )


# --------------------------------------------------------------------------- counting


def binomial_tail(n: int, p: float, k: int) -> float:
    """P(X ≥ k) for X ~ Binomial(n, p): scipy's binomial complement ``bdtrc(k − 1, n, p)``
    (scipy.special, the function scipy.stats' ``binom.sf`` calls, without importing scipy.stats)."""
    from scipy.special import bdtrc

    n, k = int(n), int(k)
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    return float(bdtrc(k - 1, n, min(1.0, max(0.0, p))))


def expected_usable_bins(n: float, bins: int, min_count: int) -> float:
    """Bins expected to hold at least ``min_count`` of ``n`` samples spread evenly over ``bins``
    (each bin's count Binomial(n, 1/bins))."""
    if bins < 1:
        return 0.0
    return bins * binomial_tail(round(n), 1.0 / bins, min_count)


def samples_in(member: np.ndarray, n_samples: int, seed: int, mode: str) -> tuple[float, bool]:
    """``(samples of a test set that show a member image, exact)``: ``member`` says of each
    clean-set image (in the clean set's order) whether it is in the label space. Exact where the
    images come from the seed alone (:data:`EXACT_MODES`), else ``n_samples`` times the members'
    share."""
    from vcrbench.seeding import image_sequence

    member = np.asarray(member, dtype=bool)
    if len(member) == 0:
        return 0.0, True
    if mode in EXACT_MODES:
        rows = image_sequence(member, int(n_samples), seed)
        return float(member[rows].sum()), True
    return float(n_samples) * float(member.mean()), False


def _count_at(member: np.ndarray, seed: int, mode: str, n_samples: int) -> float:
    return samples_in(member, n_samples, seed, mode)[0]


def members(labels: np.ndarray, label_space: str, dataset_label_space: str) -> np.ndarray:
    """Which images (by their labels in the dataset's label space) are in ``label_space``: the
    labelled ones in the dataset's own, those of the 16 classes in ``geirhos16`` (none unless
    the dataset's labels are ImageNet-1k)."""
    from vcrbench.labels import imagenet_to_16

    labels = np.asarray(labels, dtype=np.int64)
    if label_space == HUMAN_LABEL_SPACE:
        if dataset_label_space != IMAGENET1K:
            return np.zeros(len(labels), dtype=bool)
        return imagenet_to_16(labels) >= 0
    return labels >= 0


def reach_bins(config: Mapping, corruption: str, n_bins: int) -> int:
    """The Δv bins (of Alg. 1's M = ``n_bins``; the last, Δv = 1 alone, left out) a corruption's
    dv-uniform or dv-stratified set spreads over: its calibrated range where it has one and is
    sampled on its calibrated domain, else all of them."""
    entry = cfg.corruption_options(config, corruption)
    everything = n_bins - 1
    if {"domain", "function", "domain_set", "variant"} & set(entry):
        return everything
    measured = _calibrated().get(corruption, {}).get("measured", {})
    lo, hi = _median(measured.get("dv_mild")), _median(measured.get("dv_severe"))
    if lo is None or hi is None or not hi > lo:
        return everything
    first, last = math.floor(lo * (n_bins - 1)), math.floor(hi * (n_bins - 1))
    return max(1, min(everything, last - first + 1))


def _median(entry) -> float | None:
    value = entry.get("median") if isinstance(entry, Mapping) else None
    return float(value) if isinstance(value, int | float) else None


def _calibrated() -> dict:
    """The calibrated domains' file, read as text (the corruption registry is not imported)."""
    from vcrbench.schema import load_yaml

    text = (importlib.resources.files("vcrbench") / "data" / "corruption_domains.yaml").read_text()
    return load_yaml(text) or {}


def count_label_spaces(config: Mapping, labels: np.ndarray) -> list[SpaceCount]:
    """Every corruption's test set in every label space of ``estimation.label_spaces``, from the
    clean set's ``labels`` (in its order)."""
    est = config["estimation"]
    mode, seed = config["sampling"]["mode"], int(config["seed"])
    min_count, n_bins = int(est["min_count"]), int(est["bins"])
    dataset_space = cfg.dataset_label_space_name(config)
    out = []
    for space in resolve_label_spaces(est["label_spaces"], dataset_space):
        member = members(labels, space, dataset_space)
        # one count per set size for all corruptions (the fixes' search asks again and again)
        count_at = functools.lru_cache(maxsize=256)(
            functools.partial(_count_at, member, seed, mode)
        )
        for corruption in cfg.corruption_names(config):
            n_total = cfg.n_samples(config, corruption)
            n, exact = count_at(n_total), mode in EXACT_MODES
            bins = reach_bins(config, corruption, n_bins) if mode in SPREAD_MODES else None
            usable = None if bins is None else expected_usable_bins(n, bins, min_count)
            out.append(
                SpaceCount(
                    corruption, space, mode, n, n_total, exact, bins, usable, min_count, count_at
                )
            )
    return out


# --------------------------------------------------------------------------- what to say


def _fitting_min_count(c: SpaceCount) -> int:
    """The largest min_count at which ``c`` fits (0: none)."""
    for k in range(c.min_count - 1, 0, -1):
        if dataclasses.replace(c, min_count=k, usable=_usable(c, c.n, k)).fits:
            return k
    return 0


def _usable(c: SpaceCount, n: float, min_count: int) -> float | None:
    return None if c.bins is None else expected_usable_bins(n, c.bins, min_count)


def _fitting_n_samples(c: SpaceCount) -> int | None:
    """About the smallest set size (to 1 %) at which ``c`` fits, or None (no sample)."""
    if c.n <= 0:
        return None

    def fits(total: int) -> bool:
        exact = c.count_at is not None and total <= EXACT_SEARCH_MAX
        n = c.count_at(total) if exact else c.n * total / c.n_total
        return dataclasses.replace(c, n=n, usable=_usable(c, n, c.min_count)).fits

    lo, hi = c.n_total, c.n_total
    while not fits(hi):
        lo, hi = hi, hi * 2
        if hi > 10**9:
            return None
    while hi - lo > max(1, lo // 100):
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    return hi


def _counted(c: SpaceCount) -> str:
    """``n of N samples (exact)``, and how they spread over the bins where modelled."""
    how = "exact" if c.exact else f"expected, {c.mode}"
    text = f"{c.n:,.0f} of {c.n_total:,} samples ({how})"
    if c.bins is not None:
        text += f", about {c.n / c.bins:.1f} per Δv bin over the {c.bins} bins it reaches"
    return text


def refusal(failing: Sequence[SpaceCount], config: Mapping) -> str:
    """Why one label space cannot fit a curve on the sets of ``failing`` and what would fix it,
    naming the config keys."""
    first = failing[0]
    space, min_count = first.label_space, first.min_count
    sets = "; ".join(f"{c.corruption}: {_counted(c)}" for c in failing)
    fixes = []
    k = min(_fitting_min_count(c) for c in failing)
    if k:
        fixes.append(f"estimation.min_count: {k} or less")
    sizes: dict[str, int] = {}
    for c in failing:
        total = _fitting_n_samples(c)
        if total is not None:
            own = "n_samples" in (config["corruptions"].get(c.corruption) or {})
            key = f"corruptions.{c.corruption}.n_samples" if own else "sampling.n_samples"
            sizes[key] = max(sizes.get(key, 0), total)
    fixes += [f"{key}: {total:,} or more" for key, total in sizes.items()]
    fixes.append(f"leave {space!r} out of estimation.label_spaces")
    return (
        f"estimation.label_spaces: label space {space!r} cannot fit a curve: no Δv bin is "
        f"expected to hold estimation.min_count={min_count} of the samples that show one of "
        f"its images, on {sets}. Any of these fixes it: " + "; ".join(fixes)
    )


def partial_warning(partial: Sequence[SpaceCount]) -> str:
    """One warning for every label space that fits on part of the Δv range only."""
    lines = [
        f"  {c.label_space!r} on {c.corruption}: {_counted(c)}: expected support about "
        f"{c.usable:.0f} of {c.bins} bins ({c.usable / c.bins:.0%}) at "
        f"estimation.min_count={c.min_count}"
        for c in partial
    ]
    return (
        "label spaces whose curves rest on part of the Δv range only (bins short of "
        "estimation.min_count are bridged by the fit; more samples, sampling.n_samples, or a "
        "lower estimation.min_count widen it):\n" + "\n".join(lines)
    )


def check_label_spaces(config: Mapping, labels: np.ndarray) -> list[str]:
    """Refuse (:class:`ConfigErrors`, every problem named) a config with a label space that
    cannot fit a curve on some corruption's set; returns the warnings (at most one)."""
    counts = count_label_spaces(config, labels)
    failing: dict[str, list[SpaceCount]] = {}
    for c in counts:
        if not c.fits:
            failing.setdefault(c.label_space, []).append(c)
    problems = [refusal(group, config) for group in failing.values()]
    if problems:
        raise ConfigErrors(problems)
    partial = [c for c in counts if c.partial]
    return [partial_warning(partial)] if partial else []


def check_planned(jobs, config: Mapping, no_job: str = "") -> list[str] | None:
    """What the workflow's ``onstart`` runs: :func:`check_label_spaces` on the clean set's labels
    as the dataset's listing gives them, when a job estimating curves is among the planned
    ``jobs``, else nothing (None). A refusal ends with ``no_job``; a listing that cannot be read
    is left to the dataset check, which names it."""
    if not any(job.rule == "estimate_curves" for job in jobs):
        return None
    from vcrbench.plan import dataset_check

    try:
        records = dataset_check.listing(config["dataset"], [])
    except DatasetError:
        return None
    try:
        return check_label_spaces(config, records["label"].to_numpy())
    except ConfigErrors as exc:
        raise ConfigError(f"{exc}{no_job}") from None
