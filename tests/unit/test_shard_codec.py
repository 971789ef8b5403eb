"""The shard image layout: fixed-size binary pixels, LZ4, fixed row groups; old shards still
read."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
from torch.utils.data import DataLoader

from vcrbench.corruptions import get_corruption
from vcrbench.files import io
from vcrbench.inference import shard_batches
from vcrbench.inference.readers import ShardBatches, read_shard_metadata
from vcrbench.testsets import sampling, testset

SCHEMA = pa.schema(
    [
        ("sample_id", pa.int64()),
        ("height", pa.int64()),
        ("width", pa.int64()),
        ("image", pa.binary()),
    ]
)


def random_images(n, h, w, seed=0):
    return np.random.default_rng(seed).integers(0, 256, (n, h, w, 3), dtype=np.uint8)


def column_batches(images, step):
    for start in range(0, len(images), step):
        part = images[start : start + step]
        yield {
            "sample_id": np.arange(start, start + len(part), dtype=np.int64),
            "height": np.full(len(part), part.shape[1], dtype=np.int64),
            "width": np.full(len(part), part.shape[2], dtype=np.int64),
            "image": io.image_column(part),
        }


def old_layout_shard(path, images):
    """A shard as written before the fixed-size layout: raw bytes per row, zstd."""
    n = len(images)
    df = pd.DataFrame(
        {
            "sample_id": np.arange(n, dtype=np.int64),
            "image_id": [f"img-{i}" for i in range(n)],
            "label": np.zeros(n, dtype=np.int64),
            "dv": np.linspace(0, 1, n),
            "height": images.shape[1],
            "width": images.shape[2],
            "image": [io.encode_image(im) for im in images],
        }
    )
    return io.write_parquet(df, path, row_group_size=16)


def new_layout_shard(path, images, step=7):
    schema = pa.schema(
        [
            ("sample_id", pa.int64()),
            ("image_id", pa.string()),
            ("label", pa.int64()),
            ("dv", pa.float64()),
            ("height", pa.int64()),
            ("width", pa.int64()),
            ("image", pa.binary()),
        ]
    )

    def batches():
        for cols in column_batches(images, step):
            ids = cols["sample_id"]
            yield {
                **cols,
                "image_id": [f"img-{i}" for i in ids],
                "label": np.zeros(len(ids), dtype=np.int64),
                "dv": ids / max(len(images) - 1, 1),
            }

    return io.write_image_batches(path, schema, batches(), {"test": True})


@pytest.mark.parametrize("shape", [(224, 224), (72, 72), (5, 7), (1, 1)])
@pytest.mark.parametrize(("codec", "level"), [("lz4", None), ("zstd", 1), ("none", None)])
def test_pixels_round_trip_exactly(tmp_path, shape, codec, level):
    images = random_images(19, *shape)
    images[3] = 0  # compressible rows next to incompressible ones
    images[4] = 255
    path = tmp_path / "s.parquet"
    io.write_image_batches(
        path, SCHEMA, column_batches(images, 5), row_group_size=8, codec=codec, codec_level=level
    )
    pf = pq.ParquetFile(path)
    assert pf.schema_arrow.field("image").type == pa.binary(shape[0] * shape[1] * 3)
    back = io.images_from_table(pf.read())
    assert back.dtype == np.uint8 and back.shape == images.shape
    np.testing.assert_array_equal(back, images)
    # Row groups have the fixed size whatever the batches were (19 = 8 + 8 + 3).
    assert [pf.metadata.row_group(g).num_rows for g in range(pf.num_row_groups)] == [8, 8, 3]
    image = pf.metadata.row_group(0).column(3)
    expected = {"lz4": ("LZ4", "LZ4_RAW"), "zstd": ("ZSTD",), "none": ("UNCOMPRESSED",)}
    assert image.compression in expected[codec]


def test_shard_image_column_uses_lz4_and_no_dictionary(tmp_path):
    path = tmp_path / "s.parquet"
    io.write_image_batches(path, SCHEMA, column_batches(random_images(10, 6, 6), 4))
    meta = pq.ParquetFile(path).metadata
    image = meta.row_group(0).column(3)
    assert image.path_in_schema == "image"
    assert image.compression in ("LZ4", "LZ4_RAW")
    assert not any("DICT" in e for e in image.encodings)
    assert image.statistics is None or not image.statistics.has_min_max
    assert meta.row_group(0).column(0).compression == "ZSTD"
    assert meta.num_rows == 10 and meta.num_row_groups == 1  # 10 < SHARD_ROW_GROUP


def test_image_column_rejects_wrong_dtype_or_shape():
    with pytest.raises(ValueError, match="NxHxWx3 uint8"):
        io.image_column(np.zeros((2, 4, 4, 3), dtype=np.float32))
    with pytest.raises(ValueError, match="NxHxWx3 uint8"):
        io.image_column(np.zeros((4, 4, 3), dtype=np.uint8))


def test_wrong_image_size_names_the_file(tmp_path):
    path = tmp_path / "bad.parquet"
    batches = list(column_batches(random_images(4, 5, 5), 4))
    batches[0]["height"] = np.full(4, 6, dtype=np.int64)
    io.write_image_batches(path, SCHEMA, batches)
    with pytest.raises(ValueError, match=r"bad\.parquet: image bytes do not match"):
        io.images_from_table(pq.read_table(path), str(path))


def test_generated_shards_are_byte_identical_and_independent_of_batch_size(tmp_path, clean_set):
    noise = get_corruption("gaussian_noise")
    manifest = sampling.make_manifest(noise, clean_set, 20, 20, seed=3, mode="parameter-uniform")
    paths = [
        testset.generate_shard(
            manifest, 0, clean_set, noise, tmp_path / f"{k}.parquet", batch_size=b
        )
        for k, b in (("a", 64), ("b", 64), ("c", 3))
    ]
    data = [p.read_bytes() for p in paths]
    assert data[0] == data[1]  # written twice
    assert data[0] == data[2]  # row groups do not follow the generation batch
    # The pixels are the corruption's output for each row's parameters and seed.
    shard = pq.read_table(paths[0])
    images = io.images_from_table(shard)
    clean = clean_set.images(shard.column("image_id").to_pylist())
    sigma, seeds = shard.column("param.sigma").to_pylist(), shard.column("seed").to_pylist()
    for i in range(len(images)):
        expected = noise.apply(clean[i], {"sigma": sigma[i]}, int(seeds[i]))
        np.testing.assert_array_equal(images[i], expected)


def test_readers_give_the_same_batches_from_old_and_new_shards(tmp_path):
    images = random_images(40, 9, 11, seed=5)
    old = old_layout_shard(tmp_path / "old.parquet", images)
    new = new_layout_shard(tmp_path / "new.parquet", images)
    assert pq.ParquetFile(old).schema_arrow.field("image").type == pa.binary()
    meta_old, _ = read_shard_metadata([old])
    meta_new, _ = read_shard_metadata([new])
    pd.testing.assert_frame_equal(meta_old, meta_new)
    got_old = torch.cat([b for _, b in shard_batches([old], 8)]).numpy()
    got_new = torch.cat([b for _, b in shard_batches([new], 8)]).numpy()
    np.testing.assert_array_equal(got_old, images)
    np.testing.assert_array_equal(got_new, images)


def test_worker_batches_arrive_intact_through_shared_memory(tmp_path):
    images = random_images(300, 8, 8, seed=2)
    path = new_layout_shard(tmp_path / "s.parquet", images, step=64)
    _, units = read_shard_metadata([path, path])
    assert [u.offset for u in units] == [0, 256, 300, 556]  # row groups of SHARD_ROW_GROUP
    loader = DataLoader(ShardBatches(units, 100), batch_size=None, num_workers=2)
    out = np.zeros((600, 8, 8, 3), dtype=np.uint8)
    sizes = []
    for offset, batch in loader:
        assert batch.dtype == torch.uint8 and batch.is_contiguous()
        out[offset : offset + len(batch)] = batch.numpy()
        sizes.append(len(batch))
    assert sorted(sizes) == sorted([100, 100, 56, 44] * 2)  # a batch never spans row groups
    np.testing.assert_array_equal(out, np.concatenate([images, images]))
