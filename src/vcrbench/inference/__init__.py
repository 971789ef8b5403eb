"""Inference jobs: a model's predictions on shards of corrupted images, on the clean set, or on
all of them in one call (:mod:`~vcrbench.inference.run`), fed by the readers of
:mod:`~vcrbench.inference.readers`, keeping what :mod:`~vcrbench.inference.outputs` says of each
image's softmax."""

from vcrbench.errors import InferenceError
from vcrbench.inference.outputs import PREDICTION_SCHEMA, TOP_K, logprobs_field
from vcrbench.inference.readers import shard_batches
from vcrbench.inference.run import (
    DEFAULT_BATCH_SIZE,
    InferenceOptions,
    predict_clean,
    predict_model,
    predict_shards,
    resolve_precision,
)

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "PREDICTION_SCHEMA",
    "TOP_K",
    "InferenceError",
    "InferenceOptions",
    "logprobs_field",
    "predict_clean",
    "predict_model",
    "predict_shards",
    "resolve_precision",
    "shard_batches",
]
