"""Label spaces: ImageNet-1k, the 16 entry-level classes (mean softmax), dataset label spaces."""

from __future__ import annotations

import numpy as np
import pytest

from vcrbench import labels
from vcrbench.labels import (
    GEIRHOS16_CLASSES,
    LabelSpace,
    LabelSpaceError,
    check_compatible,
    check_labels,
    decide_16,
    geirhos16_imagenet_indices,
    geirhos16_matrix,
    geirhos16_wnids,
    get_label_space,
    imagenet1k,
    imagenet_to_16,
    imagenet_wnids,
    probabilities_to_16,
)

WNID = {w: i for i, w in enumerate(imagenet_wnids())}


def test_sixteen_classes_in_alphabetical_order():
    assert len(GEIRHOS16_CLASSES) == 16
    assert list(GEIRHOS16_CLASSES) == sorted(GEIRHOS16_CLASSES)


def test_mapping_file_lists_231_wnids_of_which_207_are_imagenet_1k():
    listed = geirhos16_wnids()
    assert sum(len(v) for v in listed.values()) == 231
    indices = geirhos16_imagenet_indices()
    flat = [i for v in indices.values() for i in v]
    assert len(flat) == 207 == len(set(flat))
    # Per class, counted independently from the file and the ImageNet-1k WordNet IDs.
    for name in GEIRHOS16_CLASSES:
        expected = sorted(WNID[w] for w in listed[name] if w in WNID)
        assert list(indices[name]) == expected, name
    assert len(indices["dog"]) == 109 and len(indices["bird"]) == 49 and len(indices["knife"]) == 1
    # chelsea's class (tabby, 281), tiger cat 282 and Egyptian cat 285 are cats
    assert {281, 282, 285} <= set(indices["cat"])
    assert WNID["n03041632"] in indices["knife"]


def test_matrix_averages_each_class_fine_probabilities():
    m = geirhos16_matrix()
    assert m.shape == (1000, 16) and m.dtype == np.float32
    np.testing.assert_allclose(m.sum(axis=0, dtype=np.float64), 1.0, rtol=1e-6)
    mapped = np.zeros(1000, bool)
    mapped[[i for v in geirhos16_imagenet_indices().values() for i in v]] = True
    assert (m[~mapped] == 0).all()
    assert ((m > 0).sum(axis=1)[mapped] == 1).all()


def test_mean_not_sum_decides_a_constructed_vector():
    """0.3 on the single knife class beats 0.5 spread over five dog classes (mean 0.5/109 each)."""
    dog = geirhos16_imagenet_indices()["dog"]
    knife = geirhos16_imagenet_indices()["knife"][0]
    p = np.zeros((1, 1000), np.float32)
    p[0, knife] = 0.3
    p[0, list(dog[:5])] = 0.1
    p[0, 0] = 0.2  # tench: not one of the 16 classes, ignored
    q = probabilities_to_16(p)
    np.testing.assert_allclose(q[0, GEIRHOS16_CLASSES.index("knife")], 0.3, rtol=1e-6)
    np.testing.assert_allclose(q[0, GEIRHOS16_CLASSES.index("dog")], 0.5 / 109, rtol=1e-5)
    assert decide_16(p)[0] == GEIRHOS16_CLASSES.index("knife")
    # the sum rule would have said dog: the test tells the two apart
    sums = {n: p[0, list(ix)].sum() for n, ix in geirhos16_imagenet_indices().items()}
    assert max(sums, key=sums.get) == "dog"


def test_decide_16_batches_and_rejects_other_spaces():
    cat = geirhos16_imagenet_indices()["cat"]
    p = np.full((2, 1000), 1e-4, np.float32)
    p[0, cat[0]] = 0.9
    p[1, geirhos16_imagenet_indices()["truck"][2]] = 0.9
    assert decide_16(p).tolist() == [7, 15]
    assert decide_16(p).dtype == np.int8
    with pytest.raises(LabelSpaceError, match="ImageNet-1k probabilities"):
        decide_16(np.ones((1, 16)))


def test_imagenet_to_16():
    out = imagenet_to_16([281, 0, -1, 967, WNID["n03041632"]])
    assert out.tolist() == [7, -1, -1, -1, 13]
    assert out.dtype == np.int8
    with pytest.raises(LabelSpaceError, match="0..999 or -1"):
        imagenet_to_16([1000])


def test_label_spaces_from_config(tmp_path):
    assert get_label_space(None) is imagenet1k()
    assert get_label_space("imagenet1k").num_classes == 1000
    assert imagenet1k().class_names[281] == "tabby"
    names = tmp_path / "classes.txt"
    names.write_text("albatross\nbittern\n\ncrane\n")
    cub = get_label_space({"name": "birds", "class_names": str(names)})
    assert cub == LabelSpace("birds", 3, ("albatross", "bittern", "crane"))
    assert get_label_space({"name": "cub200", "num_classes": 200}).num_classes == 200
    with pytest.raises(LabelSpaceError, match="unknown label space 'cub'"):
        get_label_space("cub")
    with pytest.raises(LabelSpaceError, match="2 class names given for 3 classes"):
        get_label_space({"name": "x", "num_classes": 3, "class_names": ["a", "b"]})
    with pytest.raises(LabelSpaceError, match="needs num_classes or class_names"):
        get_label_space({"name": "x"})
    with pytest.raises(LabelSpaceError, match="not found"):
        get_label_space({"name": "x", "class_names": str(tmp_path / "nope.txt")})
    with pytest.raises(LabelSpaceError, match="unknown key"):
        get_label_space({"name": "x", "num_classes": 2, "classes": 3})


def test_compatibility_and_label_range():
    cub = LabelSpace("cub200", 200)
    check_compatible(cub, LabelSpace("cub200", 200), "m")
    with pytest.raises(LabelSpaceError, match=r"model 'm' predicts label space 'imagenet1k'"):
        check_compatible(imagenet1k(), cub, "m")
    check_labels(np.array([-1, 0, 199]), cub, "shard x")
    with pytest.raises(LabelSpaceError, match="shard x: label 200 is outside label space"):
        check_labels(np.array([3, 200]), cub, "shard x")


def test_mapping_file_is_the_shipped_copy():
    assert labels.geirhos16_mapping_path().is_file()
