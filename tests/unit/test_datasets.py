"""Bad input to the clean set: unreadable, truncated, greyscale, RGBA, 16-bit and small images,
and broken labels files. Each has a defined outcome: converted, or an error naming the file."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from vcrbench.datasets import loading
from vcrbench.datasets.loading import (
    CleanSet,
    DatasetError,
    prepare_clean_set,
    read_folder_dataset,
    read_labels_file,
    resize_center_crop,
)
from vcrbench.files import io
from vcrbench.settings import DatasetSettings

#: The schema's view (256, then a 224 centre crop) and what an unreadable image does instead.
VIEW = DatasetSettings().view
SKIP = DatasetSettings(on_error="skip")


def load_image(path):
    """An image file as the default config decodes it (its EXIF orientation tag ignored)."""
    return loading.load_image(path, exif_transpose=False)


@pytest.fixture(scope="module")
def rgb() -> np.ndarray:
    from skimage import data

    return np.asarray(Image.fromarray(data.astronaut()).resize((300, 260)))


def save(img: Image.Image, path, **kw):
    img.save(path, **kw)
    return path


# --------------------------------------------------------------------------- load_image


def test_rgb_png_round_trips(tmp_path, rgb):
    path = save(Image.fromarray(rgb), tmp_path / "a.png")
    np.testing.assert_array_equal(load_image(path), rgb)


def test_greyscale_is_replicated_to_three_channels(tmp_path, rgb):
    grey = rgb[..., 1]
    out = load_image(save(Image.fromarray(grey, "L"), tmp_path / "g.png"))
    assert out.shape == (*grey.shape, 3) and out.dtype == np.uint8
    for ch in range(3):
        np.testing.assert_array_equal(out[..., ch], grey)


def test_rgba_is_composited_onto_white(tmp_path, rgb):
    alpha = np.zeros(rgb.shape[:2], dtype=np.uint8)
    alpha[:, : rgb.shape[1] // 2] = 255  # left half opaque, right half transparent
    rgba = np.dstack([rgb, alpha])
    out = load_image(save(Image.fromarray(rgba, "RGBA"), tmp_path / "a.png"))
    np.testing.assert_array_equal(out[:, : rgb.shape[1] // 2], rgb[:, : rgb.shape[1] // 2])
    assert (out[:, rgb.shape[1] // 2 :] == 255).all()
    # Half transparency blends with white.
    rgba[..., 3] = 128
    out = load_image(save(Image.fromarray(rgba, "RGBA"), tmp_path / "b.png")).astype(int)
    expected = (rgb.astype(int) * 128 + 255 * 127) / 255
    assert np.abs(out - expected).max() <= 1


def test_greyscale_with_alpha_and_palette_images_are_converted(tmp_path, rgb):
    la = Image.fromarray(np.dstack([rgb[..., 0], np.full(rgb.shape[:2], 255, np.uint8)]), "LA")
    out = load_image(save(la, tmp_path / "la.png"))
    np.testing.assert_array_equal(out[..., 2], rgb[..., 0])
    pal = Image.fromarray(rgb).convert("P", palette=Image.ADAPTIVE, colors=16)
    out = load_image(save(pal, tmp_path / "p.png"))
    np.testing.assert_array_equal(out, np.asarray(pal.convert("RGB")))
    cmyk = Image.fromarray(rgb).convert("CMYK")
    out = load_image(save(cmyk, tmp_path / "c.jpg", quality=95))
    assert out.shape == rgb.shape and np.abs(out.astype(int) - rgb).mean() < 10


def test_16bit_greyscale_is_scaled_to_8_bits(tmp_path):
    values = np.linspace(0, 65535, 64 * 64).reshape(64, 64).astype(np.uint16)
    path = save(Image.fromarray(values), tmp_path / "g16.png")
    assert Image.open(path).mode.startswith("I")
    out = load_image(path)
    assert out.shape == (64, 64, 3) and out.dtype == np.uint8
    np.testing.assert_array_equal(out[..., 0], np.round(values / 65535 * 255).astype(np.uint8))
    assert out.min() == 0 and out.max() == 255


def test_float_image_is_scaled(tmp_path):
    values = np.linspace(0, 1, 32 * 32, dtype=np.float32).reshape(32, 32)
    path = save(Image.fromarray(values, "F"), tmp_path / "f.tiff")
    out = load_image(path)
    np.testing.assert_array_equal(out[..., 0], np.round(values * 255).astype(np.uint8))


@pytest.mark.parametrize("suffix", [".png", ".jpg"])
def test_truncated_image_is_an_error_naming_the_file(tmp_path, rgb, suffix):
    path = save(Image.fromarray(rgb), tmp_path / f"t{suffix}")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(DatasetError, match=f"cannot read image .*t{suffix}"):
        load_image(path)


def test_not_an_image_and_missing_file_are_errors_naming_the_file(tmp_path):
    path = tmp_path / "notes.jpg"
    path.write_text("this is not an image")
    with pytest.raises(DatasetError, match="notes.jpg"):
        load_image(path)
    with pytest.raises(DatasetError, match="missing.png"):
        load_image(tmp_path / "missing.png")


def test_decompression_bomb_is_an_error_naming_the_file(tmp_path, monkeypatch):
    path = save(Image.fromarray(np.zeros((64, 64, 3), np.uint8)), tmp_path / "bomb.png")
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100)  # 64² > 2 x 100: PIL refuses it
    with pytest.raises(DatasetError, match="bomb.png"):
        load_image(path)


# --------------------------------------------------------------------------- resizing


@pytest.mark.parametrize("shape", [(100, 150), (150, 100), (224, 224), (20, 1000), (1000, 700)])
def test_any_size_becomes_224_square(shape):
    img = np.random.default_rng(0).integers(0, 256, (*shape, 3), dtype=np.uint8)
    out = resize_center_crop(img, *VIEW)
    assert out.shape == (224, 224, 3) and out.dtype == np.uint8


def test_resize_center_crop_matches_torchvision_geometry():
    # 256 x 512 -> short side already 256: no resize, a central 224 crop.
    img = np.arange(256 * 512 * 3, dtype=np.uint32).reshape(256, 512, 3).astype(np.uint8)
    np.testing.assert_array_equal(resize_center_crop(img, 256, 224), img[16:240, 144:368])


# --------------------------------------------------------------------------- the clean set


def write_folder(tmp_path, images: dict[str, Image.Image], labels: dict[str, str]):
    root = tmp_path / "imgs"
    root.mkdir()
    for name, im in images.items():
        data = im if isinstance(im, bytes) else None
        if data is not None:
            (root / name).write_bytes(data)
        else:
            im.save(root / name)
    csv = tmp_path / "labels.csv"
    csv.write_text("file,label\n" + "".join(f"{f},{lab}\n" for f, lab in labels.items()))
    return root, csv


def test_clean_set_converts_bad_formats_and_upsamples_small_images(tmp_path, rgb):
    small = Image.fromarray(rgb).resize((120, 90))
    grey16 = Image.fromarray(rgb[..., 0].astype(np.uint16) * 257)
    rgba = Image.fromarray(np.dstack([rgb, np.full(rgb.shape[:2], 200, np.uint8)]), "RGBA")
    root, csv = write_folder(
        tmp_path,
        {"small.png": small, "grey16.png": grey16, "rgba.png": rgba, "l.png": small.convert("L")},
        {"small.png": "1", "grey16.png": "2", "rgba.png": "n01440764", "l.png": "-1"},
    )
    ds = read_folder_dataset(root, csv)
    index = prepare_clean_set(ds, tmp_path / "images.npy", tmp_path / "index.parquet")
    clean = CleanSet.open(tmp_path / "images.npy", tmp_path / "index.parquet")
    assert len(clean) == 4
    imgs = clean.images(clean.image_ids)
    assert imgs.shape == (4, 224, 224, 3) and imgs.dtype == np.uint8
    row = index.set_index("image_id")
    assert row.loc["small.png", "upsampled"] and (
        row.loc["small.png", "orig_height"],
        row.loc["small.png", "orig_width"],
    ) == (90, 120)
    assert not row.loc["rgba.png", "upsampled"]
    assert row.loc["rgba.png", "label"] == 0  # WordNet ID n01440764 is class 0
    assert row.loc["l.png", "label"] == -1
    grey = clean.image("grey16.png")
    assert (grey[..., 0] == grey[..., 1]).all()


def test_clean_set_records_every_conversion_and_warns_of_extreme_aspect_ratios(
    tmp_path, rgb, caplog
):
    """CMYK, RGBA, 16-bit and greyscale images are converted, and the index says how, per image;
    a 10x400 image is warned of; the log sums it up."""
    import logging

    big = Image.fromarray(rgb)
    images = {
        "rgb.png": big,
        "cmyk.jpg": big.convert("CMYK"),
        "rgba.png": Image.fromarray(np.dstack([rgb, np.full(rgb.shape[:2], 9, np.uint8)]), "RGBA"),
        "grey16.png": Image.fromarray(rgb[..., 0].astype(np.uint16) * 257),
        "grey.png": big.convert("L"),
        "column.png": big.resize((10, 400)),
    }
    root, csv = write_folder(tmp_path, images, {name: "1" for name in images})
    with caplog.at_level(logging.INFO, logger="vcrbench"):
        index = prepare_clean_set(
            read_folder_dataset(root, csv), tmp_path / "images.npy", tmp_path / "index.parquet"
        )
    row = io.read_parquet(tmp_path / "index.parquet").set_index("image_id")
    assert row["conversion"].to_dict() == {
        "cmyk.jpg": "CMYK to RGB",
        "column.png": "",
        "grey.png": "greyscale (L) to RGB",
        "grey16.png": "16-bit greyscale (I;16) scaled to 8 bits, to RGB",
        "rgb.png": "",
        "rgba.png": "RGBA composited on white",
    }
    assert row.loc["column.png", "aspect"] == 40.0 and row.loc["rgb.png", "aspect"] < 2
    assert list(index.columns) == [
        "row", "image_id", "label", "orig_height", "orig_width", "upsampled", "conversion", "aspect"
    ]  # fmt: skip
    said = [r.getMessage() for r in caplog.records]
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1 and warned[0].startswith(
        f"image {root}/column.png is 400x10 (aspect ratio 40.0:1): the clean set keeps only its "
        "central 10x10 square"
    )
    assert f"image {root}/cmyk.jpg converted: CMYK to RGB" in said
    assert (
        "clean set: 6 of 6 images; 1 upsampled; 4 converted (1 16-bit greyscale (I;16) scaled to "
        "8 bits, to RGB, 1 CMYK to RGB, 1 RGBA composited on white, 1 greyscale (L) to RGB); 1 of "
        "aspect ratio over 4:1; 0 skipped"
    ) in said


def test_clean_set_unreadable_image_raises_naming_it_and_leaves_nothing(tmp_path, rgb):
    good = Image.fromarray(rgb)
    root, csv = write_folder(
        tmp_path,
        {"a.png": good, "broken.png": b"\x89PNG\r\n\x1a\n garbage"},
        {"a.png": "1", "broken.png": "2"},
    )
    ds = read_folder_dataset(root, csv)
    with pytest.raises(DatasetError, match="broken.png"):
        prepare_clean_set(ds, tmp_path / "out" / "images.npy", tmp_path / "out" / "index.parquet")
    assert list((tmp_path / "out").iterdir()) == []


def test_clean_set_skip_records_the_unreadable_image(tmp_path, rgb):
    good = Image.fromarray(rgb)
    root, csv = write_folder(
        tmp_path,
        {"a.png": good, "broken.png": b"not an image", "c.png": good.resize((400, 300))},
        {"a.png": "1", "broken.png": "2", "c.png": "3"},
    )
    ds = read_folder_dataset(root, csv)
    index = prepare_clean_set(ds, tmp_path / "images.npy", tmp_path / "index.parquet", SKIP)
    assert index["image_id"].tolist() == ["a.png", "c.png"]
    assert index["row"].tolist() == [0, 1]
    meta = io.read_metadata(tmp_path / "index.parquet")
    assert meta["n_images"] == 2 and any("broken.png" in s for s in meta["skipped"])
    arr = np.load(tmp_path / "images.npy")
    assert arr.shape == (2, 224, 224, 3)
    np.testing.assert_array_equal(arr[0], resize_center_crop(rgb, *VIEW))
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_clean_set_with_nothing_readable_is_an_error(tmp_path):
    root, csv = write_folder(tmp_path, {"x.png": b"nope"}, {"x.png": "1"})
    with pytest.raises(DatasetError, match="no image of the dataset could be read"):
        prepare_clean_set(
            read_folder_dataset(root, csv),
            tmp_path / "i.npy",
            tmp_path / "i.parquet",
            SKIP,
        )
    assert not (tmp_path / "i.npy").exists() and not (tmp_path / "i.parquet").exists()


# --------------------------------------------------------------------------- labels files


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("name,class\na.png,1\n", "needs a header with columns 'file' and 'label'"),
        ("file,label\na.png,cat\n", r"labels.csv:2: label 'cat' is neither"),
        ("file,label\na.png,n99999999\n", "not an ImageNet-1k class"),
        ("file,label\na.png,-2\n", "is negative"),
        ("file,label\na.png,1\na.png,2\n", r"labels.csv:3: file 'a.png' is listed twice"),
        ("file,label\n", "lists no images"),
    ],
)
def test_bad_labels_file_errors_name_file_and_line(tmp_path, content, message):
    path = tmp_path / "labels.csv"
    path.write_text(content)
    with pytest.raises(DatasetError, match=message):
        read_labels_file(path)


def test_listed_image_that_does_not_exist_is_named(tmp_path):
    (tmp_path / "imgs").mkdir()
    csv = tmp_path / "labels.csv"
    csv.write_text("file,label\nmissing.png,1\n")
    with pytest.raises(
        DatasetError, match="missing.png: listed in .*labels.csv but does not exist"
    ):
        read_folder_dataset(tmp_path / "imgs", csv)


def test_clean_set_lookup_of_an_unknown_id_names_it(tmp_path, rgb):
    root, csv = write_folder(tmp_path, {"a.png": Image.fromarray(rgb)}, {"a.png": "1"})
    prepare_clean_set(read_folder_dataset(root, csv), tmp_path / "i.npy", tmp_path / "i.parquet")
    clean = CleanSet.open(tmp_path / "i.npy", tmp_path / "i.parquet")
    with pytest.raises(KeyError, match="nothere"):
        clean.images(["nothere"])
    assert isinstance(pd.DataFrame(clean.index), pd.DataFrame)


def test_the_selected_images_are_the_blocks_include_exclude_and_limit():
    everything = loading.selected_images(DatasetSettings())
    assert everything.equals(loading.read_embedded_dataset())
    ids = everything["image_id"].tolist()
    chosen = DatasetSettings(include=ids[:5], exclude=[ids[1]], limit=3)
    assert loading.selected_images(chosen)["image_id"].tolist() == [ids[0], ids[2], ids[3]]
    with pytest.raises(DatasetError, match="exclude: image id.*nope"):
        loading.selected_images(DatasetSettings(exclude=["nope"]))
