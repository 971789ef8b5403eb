"""What a prediction file keeps of each softmax: top-5, 16-class probabilities, entropy and the
optional float16 log-probabilities (vcrbench.inference.outputs), checked against a direct
computation on a tiny model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import scipy.stats
import torch
import yaml

from tests.unit.test_inference import SPEC, tiny_model, write_shard
from vcrbench.errors import ConfigError
from vcrbench.evaluation.outcomes import read_predictions
from vcrbench.files import io
from vcrbench.inference import (
    PREDICTION_SCHEMA,
    TOP_K,
    InferenceOptions,
    logprobs_field,
    predict_shards,
)
from vcrbench.labels import (
    GEIRHOS16_CLASSES,
    LabelSpace,
    decide_16,
    geirhos16_imagenet_indices,
)
from vcrbench.plan import load
from vcrbench.vocab import PREDICTION_COLUMNS

TOP = [f"top{k}" for k in range(1, TOP_K + 1)]
TOP_PROB = [f"top{k}_prob" for k in range(1, TOP_K + 1)]
PROB16 = [f"prob16_{c}" for c in GEIRHOS16_CLASSES]


def softmax_of(model, images: np.ndarray) -> np.ndarray:
    """Float32 softmax of every image, one at a time (the reference)."""
    with torch.inference_mode():
        logits = [model(torch.from_numpy(im[None])).float() for im in images]
    return torch.softmax(torch.cat(logits), dim=1).numpy()


@pytest.fixture
def shard(tmp_path):
    labels = [281, -1, 0, 999, 285, 967, 1, 2, -1, 3, 5]
    df, images = write_shard(tmp_path / "shard.parquet", range(len(labels)), labels, 11)
    return tmp_path / "shard.parquet", df, images


def predict(paths, out, model=None, **kwargs):
    return predict_shards(
        SPEC,
        paths,
        out,
        InferenceOptions(batch_size=4, device="cpu", progress=False, **kwargs),
        model=model or tiny_model(),
    )


def test_top5_are_the_most_probable_classes_in_order(shard, tmp_path):
    path, _, images = shard
    pred = io.read_parquet(predict([path], tmp_path / "p.parquet"))
    probs = softmax_of(tiny_model(), images)
    top = pred[TOP].to_numpy()
    top_prob = pred[TOP_PROB].to_numpy()
    np.testing.assert_array_equal(top, np.argsort(-probs, axis=1, kind="stable")[:, :TOP_K])
    np.testing.assert_array_equal(top[:, 0], pred["pred"])
    assert (np.diff(top_prob, axis=1) <= 0).all()  # most probable first
    np.testing.assert_allclose(top_prob, np.take_along_axis(probs, top, 1), rtol=1e-5)
    assert [str(pred[c].dtype) for c in TOP + TOP_PROB] == ["int32"] * 5 + ["float32"] * 5


def test_entropy_is_that_of_the_softmax_in_nats(shard, tmp_path):
    path, _, images = shard
    pred = io.read_parquet(predict([path], tmp_path / "p.parquet"))
    probs = softmax_of(tiny_model(), images).astype(np.float64)
    np.testing.assert_allclose(pred["entropy"], scipy.stats.entropy(probs, axis=1), rtol=1e-4)
    assert (pred["entropy"] >= 0).all() and (pred["entropy"] <= np.log(1000) + 1e-4).all()


def test_16_class_probabilities_are_the_means_decide_16_uses(shard, tmp_path):
    path, _, images = shard
    pred = io.read_parquet(predict([path], tmp_path / "p.parquet"))
    probs = softmax_of(tiny_model(), images)
    prob16 = pred[PROB16].to_numpy()
    for c, indices in enumerate(geirhos16_imagenet_indices().values()):
        np.testing.assert_allclose(prob16[:, c], probs[:, list(indices)].mean(axis=1), rtol=1e-5)
    np.testing.assert_array_equal(prob16.argmax(axis=1), pred["pred16"])
    np.testing.assert_array_equal(pred["pred16"], decide_16(probs))
    # means of the members' probabilities: each is at most the members' share of the mass
    assert (prob16 * [len(i) for i in geirhos16_imagenet_indices().values()]).sum(
        1
    ).max() <= 1 + 1e-5


def test_logprobs_are_the_log_softmax_in_float16(shard, tmp_path):
    path, _, images = shard
    out = predict([path], tmp_path / "p.parquet", save_logprobs=True)
    schema = pq.read_schema(out)
    assert schema.field("logprobs") == logprobs_field(1000)
    logprobs = io.fixed_size_matrix(out, "logprobs")
    assert logprobs.dtype == np.float16 and logprobs.shape == (len(images), 1000)
    with torch.inference_mode():
        logits = torch.cat([tiny_model()(torch.from_numpy(im[None])).float() for im in images])
    reference = torch.log_softmax(logits, dim=1).numpy()
    # float16 keeps ~3 significant digits
    np.testing.assert_allclose(logprobs.astype(np.float32), reference, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(np.exp(logprobs.astype(np.float64)).sum(1), 1.0, rtol=1e-2)


def test_save_logprobs_changes_only_that_output(tmp_path):
    path = tmp_path / "imagenet-c.parquet"
    write_shard(path, range(7), [281, 1, 2, 3, -1, 5, 6], 3, severity=[1, 2, 3, 4, 5, 1, 2])
    without = pq.read_table(predict([path], tmp_path / "a.parquet"))
    with_ = pq.read_table(predict([path], tmp_path / "b.parquet", save_logprobs=True))
    assert with_.schema.names == [*without.schema.names, "logprobs"]  # last, after severity
    assert without.schema.names[-1] == "severity"
    pd.testing.assert_frame_equal(with_.drop_columns(["logprobs"]).to_pandas(), without.to_pandas())
    assert io.read_metadata(tmp_path / "a.parquet") == io.read_metadata(tmp_path / "b.parquet")


def test_small_label_space_pads_the_top_5_and_has_no_16_class_probabilities(tmp_path):
    path = tmp_path / "s.parquet"
    _, images = write_shard(path, range(5), [0, 1, 2, 1, -1], 5)
    space = LabelSpace("three", 3)
    model = tiny_model(3, space)
    out = predict(
        [path], tmp_path / "p.parquet", model=model, label_space=space, save_logprobs=True
    )
    pred = io.read_parquet(out)
    probs = softmax_of(tiny_model(3, space), images)
    np.testing.assert_array_equal(pred[TOP[:3]], np.argsort(-probs, axis=1, kind="stable"))
    assert (pred[TOP[3:]] == -1).all().all() and pred[TOP_PROB[3:]].isna().all().all()
    np.testing.assert_allclose(pred[TOP_PROB[:3]].sum(axis=1), 1.0, rtol=1e-5)
    assert pred[PROB16].isna().all().all() and (pred["pred16"] == -1).all()
    assert io.fixed_size_matrix(out, "logprobs").shape == (5, 3)


def test_empty_input_has_the_full_schema(tmp_path):
    path = tmp_path / "empty.parquet"
    write_shard(path, [], [], 6)
    out = predict([path], tmp_path / "p.parquet", save_logprobs=True)
    schema = pq.read_schema(out).remove_metadata()
    assert schema == PREDICTION_SCHEMA.append(logprobs_field(1000))
    assert io.fixed_size_matrix(out, "logprobs").shape == (0, 1000)


def test_evaluation_reads_only_the_decision_columns(shard, tmp_path):
    path, _, _ = shard
    out = predict([path], tmp_path / "p.parquet", save_logprobs=True)
    assert read_predictions([out]).columns.tolist() == list(PREDICTION_COLUMNS)


def test_fixed_size_matrix_names_a_column_that_is_not_a_list(shard, tmp_path):
    path, _, _ = shard
    out = predict([path], tmp_path / "p.parquet")
    with pytest.raises(ValueError, match=r"column 'entropy' is float, not a fixed-size list"):
        io.fixed_size_matrix(out, "entropy")


def test_save_logprobs_is_a_validated_config_key():
    tiny = yaml.safe_load(
        (Path(__file__).resolve().parents[1] / "workflow" / "tiny.yaml").read_text()
    )
    assert load(dict(tiny))["inference"]["save_logprobs"] is False  # the schema's default
    tiny["inference"] = {**tiny["inference"], "save_logprobs": "yes"}
    with pytest.raises(ConfigError, match=r"inference\.save_logprobs"):
        load(tiny)
