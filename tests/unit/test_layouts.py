"""Readers of the layouts CUB-200-2011, AwA2 and SUN ship in, class lists and zero-shot splits."""

from __future__ import annotations

import pytest

from tests.support.zsl_trees import (
    AWA2_CLASSES,
    CUB_CLASSES,
    make_awa2,
    make_cub,
    make_split,
    make_sun,
)
from vcrbench.datasets.layouts import layout_classes, read_cub, read_zero_shot_split
from vcrbench.datasets.loading import load_dataset
from vcrbench.errors import DatasetError, LabelSpaceError
from vcrbench.labels import get_label_space, read_class_names
from vcrbench.settings import DatasetSettings


def _load(kind, root, **keys):
    """The dataset of a ``dataset`` block of kind ``kind`` at ``root`` (and ``keys``)."""
    return load_dataset(DatasetSettings(kind=kind, path=str(root), **keys))


def test_class_files_plain_and_numbered(tmp_path):
    plain = tmp_path / "plain.txt"
    plain.write_text("abbey\n\nbeach\n")
    assert read_class_names(plain) == ["abbey", "beach"]
    numbered = tmp_path / "classes.txt"
    numbered.write_text("1 001.Black_footed_Albatross\n2\tgrizzly+bear\n")
    assert read_class_names(numbered) == ["001.Black_footed_Albatross", "grizzly+bear"]
    numbered.write_text("1 a\n3 b\n")
    with pytest.raises(LabelSpaceError, match=r"classes.txt:2: class number 3 where 2"):
        read_class_names(numbered)
    plain.write_text("a\nb\na\n")
    with pytest.raises(LabelSpaceError, match=r"plain.txt:3: class 'a' is listed twice"):
        read_class_names(plain)


def test_label_space_with_a_class_file_and_reserved_names(tmp_path):
    root = make_cub(tmp_path / "CUB_200_2011")
    space = get_label_space({"name": "cub", "class_names": str(root / "classes.txt")})
    assert space.num_classes == 3 and space.class_names == tuple(CUB_CLASSES)
    for bad, match in [
        ({"name": "geirhos16", "num_classes": 16}, "reserved"),
        ({"name": "x", "class_names": ["a", "a"]}, "listed twice"),
        ({"name": "x", "class_names": ["a", 3]}, "list of non-empty strings"),
        ({"name": "x", "num_classes": "3"}, "must be an integer"),
    ]:
        with pytest.raises(LabelSpaceError, match=match):
            get_label_space(bad)


def test_cub_tree_all_train_and_test(tmp_path):
    root = make_cub(tmp_path / "CUB_200_2011", per_class=4)
    table = read_cub(root, "all")
    assert len(table) == 12 and table["label"].value_counts().to_dict() == {0: 4, 1: 4, 2: 4}
    row = table[table["image_id"] == "002.Laysan_Albatross/Laysan_Albatross_0001_6.jpg"].iloc[0]
    assert row["label"] == 1 and row["path"].endswith("images/" + row["image_id"])
    test = read_cub(root, "test")
    train = read_cub(root, "train")
    assert len(test) == len(train) == 6
    assert not set(test["image_id"]) & set(train["image_id"])
    assert layout_classes("cub200", root) == CUB_CLASSES
    space = {"name": "cub", "class_names": str(root / "classes.txt")}
    assert _load("cub200", root, label_space=space, split="test").equals(test)


@pytest.mark.parametrize(
    "file, text, match",
    [
        ("images.txt", "1 a.jpg\nnot-a-line\n", r"images.txt:2: expected '<image id> <value>'"),
        ("images.txt", "1 a.jpg\n1 b.jpg\n", r"images.txt:2: image id 1 is listed twice"),
        ("image_class_labels.txt", "1 7\n", r"image id 1 has class '7', not one of 1..3"),
        ("train_test_split.txt", "2 1\n", r"train_test_split.txt: no line for image id 1"),
        ("train_test_split.txt", "1 yes\n", r"image id 1 has 'yes', not 0 or 1"),
    ],
)
def test_malformed_cub_files_name_file_and_line(tmp_path, file, text, match):
    root = make_cub(tmp_path / "cub", per_class=1)
    keep = {"images.txt": "1 001.Black_footed_Albatross/Black_footed_Albatross_0000_1.jpg\n"}
    for name in ("images.txt", "image_class_labels.txt", "train_test_split.txt"):
        (root / name).write_text(keep.get(name, "1 1\n"))
    (root / file).write_text(text)
    with pytest.raises(DatasetError, match=match):
        read_cub(root, "all")


def test_cub_missing_image_and_empty_split(tmp_path):
    root = make_cub(tmp_path / "cub", per_class=1)
    (root / "train_test_split.txt").write_text("1 1\n2 1\n3 1\n")
    with pytest.raises(DatasetError, match="no image in split 'test'"):
        read_cub(root, "test")
    next((root / "images").rglob("*.jpg")).unlink()
    with pytest.raises(DatasetError, match="is listed in .*images.txt but does not exist"):
        read_cub(root, "all")


def test_awa2_tree(tmp_path):
    root = make_awa2(tmp_path / "Animals_with_Attributes2")
    space = {"name": "awa2", "class_names": str(root / "classes.txt")}
    table = _load("awa2", root, label_space=space)
    assert len(table) == 6
    assert (
        dict(zip(table["image_id"], table["label"], strict=True))[
            "killer+whale/killer+whale_10002.jpg"
        ]
        == 2
    )
    assert layout_classes("awa2", root) == AWA2_CLASSES
    (root / "JPEG Images" / "zebra").mkdir()
    with pytest.raises(DatasetError, match="class folder .*zebra is not a class of"):
        _load("awa2", root, label_space=space)


def test_sun_class_folders_and_label_order(tmp_path):
    root = make_sun(tmp_path / "SUN")
    assert layout_classes("sun", root) == ["abbey", "apartment_building_outdoor", "beach"]
    order = ["beach", "abbey", "apartment_building_outdoor", "zoo"]
    table = _load("sun", root, label_space={"name": "sun", "class_names": order})
    labels = dict(zip(table["image_id"], table["label"], strict=True))
    assert (
        labels["b/beach/sun_20.jpg"] == 0 and labels["a/apartment_building/outdoor/sun_10.jpg"] == 2
    )
    with pytest.raises(
        DatasetError,
        match="'apartment_building_outdoor' .* is not one of the label space's classes",
    ):
        _load("sun", root, label_space={"name": "sun", "class_names": ["abbey"]})
    with pytest.raises(DatasetError, match="only cub200 ships a train/test split"):
        _load("sun", root, label_space={"name": "s", "num_classes": 3}, split="test")


def test_labels_are_checked_against_the_label_space(tmp_path):
    root = make_cub(tmp_path / "cub", per_class=1)
    with pytest.raises(DatasetError, match="label 2 is outside label space 'two'"):
        _load("cub200", root, label_space={"name": "two", "num_classes": 2})


def test_zero_shot_split_files(tmp_path):
    seen, unseen = make_split(tmp_path, [CUB_CLASSES[2], CUB_CLASSES[0]], [CUB_CLASSES[1]])
    assert read_zero_shot_split(seen, unseen, CUB_CLASSES) == ([0, 2], [1])
    assert read_zero_shot_split(["a"], ["b", "c"], ["a", "b", "c"]) == ([0], [1, 2])
    unseen.write_text(f"{CUB_CLASSES[1]}\n004.Groove_billed_Ani\n")
    with pytest.raises(DatasetError, match=r"testclasses.txt:2: unseen class '004.Groove"):
        read_zero_shot_split(seen, unseen, CUB_CLASSES)
    unseen.write_text(f"{CUB_CLASSES[1]}\n{CUB_CLASSES[0]}\n")
    with pytest.raises(
        DatasetError,
        match=r"testclasses.txt:2: class .* already a class of .*trainvalclasses.txt:2",
    ):
        read_zero_shot_split(seen, unseen, CUB_CLASSES)
