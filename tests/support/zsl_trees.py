"""Tiny dataset trees in the layouts CUB-200-2011, AwA2 and SUN ship in, and a zero-shot split
(Xian et al.'s class lists), written by the tests that read them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

CUB_CLASSES = ["001.Black_footed_Albatross", "002.Laysan_Albatross", "003.Sooty_Albatross"]
AWA2_CLASSES = ["antelope", "grizzly+bear", "killer+whale"]


def _image(path: Path, seed: int, size=(48, 40)) -> None:
    """A small RGB image: a smooth gradient plus seeded texture (VIF needs some structure)."""
    rng = np.random.default_rng(seed)
    h, w = size
    yy, xx = np.mgrid[0:h, 0:w]
    base = np.stack([xx * 255 / w, yy * 255 / h, (xx + yy) * 127 / (h + w)], axis=-1)
    img = np.clip(base + rng.normal(0, 25, (h, w, 3)), 0, 255).astype(np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(img).save(path)


def make_cub(root: Path, per_class: int = 4, classes=CUB_CLASSES) -> Path:
    """A CUB-200-2011 tree: ``per_class`` images per class, every other one a test image."""
    root.mkdir(parents=True, exist_ok=True)
    images, labels, split = [], [], []
    k = 0
    for c, name in enumerate(classes, 1):
        for i in range(per_class):
            k += 1
            rel = f"{name}/{name.split('.', 1)[1]}_{i:04d}_{k}.jpg"
            _image(root / "images" / rel, seed=k)
            images.append(f"{k} {rel}")
            labels.append(f"{k} {c}")
            split.append(f"{k} {int(i % 2 == 0)}")
    (root / "classes.txt").write_text("".join(f"{c} {n}\n" for c, n in enumerate(classes, 1)))
    (root / "images.txt").write_text("\n".join(images) + "\n")
    (root / "image_class_labels.txt").write_text("\n".join(labels) + "\n")
    (root / "train_test_split.txt").write_text("\n".join(split) + "\n")
    return root


def make_awa2(root: Path, per_class: int = 2, classes=AWA2_CLASSES) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "classes.txt").write_text("".join(f"{c}\t{n}\n" for c, n in enumerate(classes, 1)))
    for c, name in enumerate(classes):
        for i in range(per_class):
            _image(root / "JPEG Images" / name / f"{name}_{10001 + i}.jpg", seed=100 * c + i)
    return root


def make_sun(root: Path) -> Path:
    """SUN's letter folders, one class two deep (``a/apartment_building/outdoor``)."""
    for k, rel in enumerate(["a/abbey", "a/apartment_building/outdoor", "b/beach"]):
        for i in range(2):
            _image(root / "images" / rel / f"sun_{k}{i}.jpg", seed=10 * k + i)
    return root


def make_split(folder: Path, seen, unseen) -> tuple[Path, Path]:
    """Xian et al.'s ``trainvalclasses.txt`` (seen) and ``testclasses.txt`` (unseen)."""
    folder.mkdir(parents=True, exist_ok=True)
    seen_file, unseen_file = folder / "trainvalclasses.txt", folder / "testclasses.txt"
    seen_file.write_text("".join(f"{n}\n" for n in seen))
    unseen_file.write_text("".join(f"{n}\n" for n in unseen))
    return seen_file, unseen_file
