"""Which human reference a corruption uses."""

from __future__ import annotations

import pytest

from vcrbench.humans.transfer import (
    HumanReferenceError,
    declared_classes,
    resolve_all,
    resolve_reference,
)
from vcrbench.plan.humans import reference_of, references_of

ENTRIES = {
    "geirhos2018-noise": {"kind": "geirhos2018", "experiment": "noise"},
    "geirhos2018-lowpass": {"kind": "geirhos2018", "experiment": "lowpass"},
}
#: reference name -> the corruption its trials hold, as the plan layer passes them
REFS = {name: ref.corruption for name, ref in references_of(ENTRIES).items()}


def test_the_plan_reads_each_entry_into_a_typed_reference():
    assert REFS == {"geirhos2018-noise": "uniform_noise", "geirhos2018-lowpass": "geirhos_lowpass"}
    ref = reference_of("mine", {"kind": "trials", "path": "x.csv", "corruption": "gaussian_blur"})
    assert (ref.name, ref.corruption, ref.path, ref.is_geirhos) == (
        "mine",
        "gaussian_blur",
        "x.csv",
        False,
    )
    noise = reference_of("n", ENTRIES["geirhos2018-noise"])
    assert noise.is_geirhos and noise.experiment == "noise" and noise.root is None
    assert noise.entry == ENTRIES["geirhos2018-noise"]


@pytest.mark.parametrize(
    ("corruption", "expected"),
    [
        ("uniform_noise", ("geirhos2018-noise", "own")),
        ("gaussian_noise", ("geirhos2018-noise", "similarity-class")),
        ("shot_noise", ("geirhos2018-noise", "similarity-class")),
        ("impulse_noise", ("geirhos2018-noise", "similarity-class")),
        ("gaussian_blur", ("geirhos2018-lowpass", "similarity-class")),
        ("median_blur", ("geirhos2018-lowpass", "similarity-class")),
        ("defocus_blur", ("geirhos2018-lowpass", "similarity-class")),
        ("motion_blur", (None, None)),
        ("frost", (None, None)),
        ("brightness", (None, None)),
    ],
)
def test_defaults(corruption, expected):
    assert resolve_reference(corruption, REFS) == expected


def test_own_data_wins_over_class():
    refs = {**REFS, "mine": "gaussian_blur"}
    assert resolve_reference("gaussian_blur", refs) == ("mine", "own")
    # a second blur reference makes the choice for other blur members ambiguous
    with pytest.raises(
        HumanReferenceError, match=r"humans.assign.glass_blur.*geirhos2018-lowpass, mine"
    ):
        resolve_reference("glass_blur", refs)
    assert resolve_reference("glass_blur", refs, {"glass_blur": "mine"}) == (
        "mine",
        "similarity-class",
    )


def test_assign_none_and_unknown():
    assert resolve_reference("uniform_noise", REFS, {"uniform_noise": None}) == (None, None)
    with pytest.raises(
        HumanReferenceError,
        match=r"humans.assign.gaussian_noise.*'geirhos-noise'.*geirhos2018-lowpass",
    ):
        resolve_reference("gaussian_noise", REFS, {"gaussian_noise": "geirhos-noise"})


def test_assign_across_classes_is_an_error():
    with pytest.raises(HumanReferenceError, match="not in the similarity class"):
        resolve_reference("frost", REFS, {"frost": "geirhos2018-noise"})


def test_user_corruption_declares_its_class():
    user = {"domain": {"amount": [0.0, 1.0]}, "function": "numpy:clip"}
    classes = declared_classes({"speckle": {**user, "similarity_class": "noise"}})
    assert resolve_reference("speckle", REFS, None, classes) == (
        "geirhos2018-noise",
        "similarity-class",
    )
    classes = declared_classes({"speckle": user})
    assert resolve_reference("speckle", REFS, None, classes) == (None, None)
    with pytest.raises(HumanReferenceError, match="not in the similarity class"):
        resolve_reference("speckle", REFS, {"speckle": "geirhos2018-noise"}, classes)


@pytest.mark.parametrize(
    ("entry", "fragment"),
    [
        ({"kind": "survey"}, "humans.references.bad.kind"),
        ({"kind": "geirhos2018", "experiment": "rotation"}, "humans.references.bad.experiment"),
        ({"kind": "geirhos2018", "experiment": "mirror"}, "humans.references.bad.experiment"),
        ({"kind": "trials", "path": "x.csv"}, "humans.references.bad.corruption"),
        ({"kind": "trials", "corruption": "blur"}, "humans.references.bad.path"),
    ],
)
def test_bad_reference_entries(entry, fragment):
    with pytest.raises(HumanReferenceError, match=fragment.replace(".", r"\.")):
        reference_of("bad", entry)


def test_resolve_all():
    out = resolve_all(["uniform_noise", "gaussian_blur", "frost"], REFS)
    assert out == {
        "uniform_noise": ("geirhos2018-noise", "own"),
        "gaussian_blur": ("geirhos2018-lowpass", "similarity-class"),
        "frost": (None, None),
    }
    with pytest.raises(HumanReferenceError, match="humans.assign.*snow"):
        resolve_all(["frost"], REFS, {"snow": None})
