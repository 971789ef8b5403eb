"""Inference jobs: a model's predictions on shards of corrupted images, or on the clean set.

One job = one model and a list of shards (one corruption's shard group, or an ImageNet-C set), or
one model and the clean set, or (:func:`predict_model`, where a model's images are few) one model
and all of these, the model built once. Images are read by a torch ``DataLoader`` (worker processes,
pinned memory on a GPU), moved to the model's device as uint8, preprocessed there by the model's own
:class:`~vcrbench.models.Preprocess`, and classified under ``torch.inference_mode``, channels_last,
with bf16/fp16 autocast on a GPU where the model allows. The softmax and what is kept of it (top-1,
the label's probability, the 16-class decision, top-5, the 16-class probabilities, the entropy,
optionally the log-probabilities: :mod:`vcrbench.inference.outputs`) are computed on the device in
float32; results stay there until the job ends, then one Parquet file is written atomically, so a
killed job leaves no predictions file and a rerun on the CPU gives a byte-identical file.

Output: the prediction schema of ``docs/models.md``
(:data:`~vcrbench.inference.outputs.PREDICTION_SCHEMA`), one row per input row, in input order
(shards in the order given, rows in file order), plus ``severity`` when the inputs have it
(ImageNet-C sets), plus ``logprobs`` with ``save_logprobs``.

Batches never span two Parquet row groups (a shard written in one row group gives batches of
``batch_size`` and one shorter tail batch), so each image's batch, and thus its prediction, does
not depend on the number of workers.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch.utils.data import DataLoader, IterableDataset
from tqdm.auto import tqdm

from vcrbench import runtime, schema
from vcrbench.datasets.loading import CleanSet
from vcrbench.errors import InferenceError
from vcrbench.files import io
from vcrbench.inference.outputs import Outputs, empty_columns, table
from vcrbench.inference.readers import (
    CleanBatches,
    DefendedBatches,
    ShardBatches,
    read_shard_metadata,
    worker_init,
)
from vcrbench.labels import (
    LabelSpace,
    check_compatible,
    check_labels,
    get_label_space,
    imagenet_to_16,
)
from vcrbench.models import Classifier, ModelSpec, load_model
from vcrbench.runtime import resolve_device
from vcrbench.vocab import PRECISIONS

log = logging.getLogger(__name__)

#: The config's ``inference`` defaults (the schema's): the defaults of :class:`InferenceOptions`.
_CONFIG = schema.defaults("inference")

DEFAULT_BATCH_SIZE: int = _CONFIG["batch_size"]


# --------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class InferenceOptions:
    """How a prediction job runs: what :func:`predict_shards`, :func:`predict_clean` and
    :func:`predict_model` take besides the model and the files. A workflow job builds it from its
    rule's params and the config (:meth:`of_job`); the defaults, the config's ``inference``
    defaults read from the schema (``num_workers`` and ``progress`` excepted), are for direct
    library use.

    Attributes
    ----------
    batch_size
        Images per forward pass; the model entry's own ``batch_size``, when set, wins. None:
        :data:`DEFAULT_BATCH_SIZE`.
    device
        ``auto`` (GPU if there is one), ``cpu``, ``cuda``, ``cuda:1`` …
    num_workers
        DataLoader worker processes; None: 0 on the CPU, up to 8 on a GPU (the config's
        ``inference.num_workers`` is a number; a workflow job passes it).
    precision
        ``auto`` | ``fp32`` | ``bf16`` | ``fp16`` (autocast; see :func:`resolve_precision`); the
        model entry's own ``precision``, when set, wins.
    progress
        Show a progress bar on the standard error.
    label_space
        The label space of the data; if given, the model's must be the same (else an error).
    save_logprobs
        Also write each image's full log-softmax (float16 column ``logprobs``); nothing else
        changes.
    """

    batch_size: int | None = DEFAULT_BATCH_SIZE
    device: str | torch.device | None = _CONFIG["device"]
    num_workers: int | None = None
    precision: str = _CONFIG["precision"]
    progress: bool = True
    label_space: LabelSpace | str | dict | None = None
    save_logprobs: bool = _CONFIG["save_logprobs"]

    @classmethod
    def of_job(cls, params: Mapping, inference: Mapping, **fields) -> InferenceOptions:
        """The options of a prediction job: ``device``, ``precision``, ``label_space`` and
        ``save_logprobs`` from its rule's ``params`` (``PREDICT_PARAMS`` of rules/infer.smk),
        ``batch_size`` and ``num_workers`` from the config's ``inference`` block (not params, so
        that tuning them on a GPU node reruns nothing); ``fields`` give the others (``progress``)
        or replace one."""
        return cls(
            **{
                "batch_size": inference["batch_size"],
                "num_workers": inference["num_workers"],
                **{k: params[k] for k in ("device", "precision", "label_space", "save_logprobs")},
                **fields,
            }
        )


def _checked(options) -> InferenceOptions:
    """``options``, refused by name if it is not an :class:`InferenceOptions` (the positional
    ``batch_size`` of the old signature, a dict)."""
    if not isinstance(options, InferenceOptions):
        raise TypeError(
            f"options must be a vcrbench.inference.InferenceOptions, not {type(options).__name__}"
        )
    return options


def resolve_precision(
    requested: str, model_precision: str, device: torch.device
) -> tuple[str, torch.dtype | None]:
    """The autocast precision of a job: ``(name, dtype or None for fp32)``.

    A model entry's own ``precision`` (other than ``auto``) wins over the job's, since it records
    what that model allows. ``auto`` is fp32 on the CPU and bf16 on a GPU that supports it (else
    fp16).
    """
    for value, what in ((requested, "precision"), (model_precision, "the model's precision")):
        if value not in PRECISIONS:
            raise InferenceError(f"{what} {value!r} is not one of {', '.join(PRECISIONS)}")
    name = runtime.resolve_precision(requested, model_precision, device)
    return name, runtime.DTYPES[name]


def _num_workers(num_workers: int | None, device: torch.device) -> int:
    if num_workers is not None:
        if num_workers < 0:
            raise InferenceError(f"num_workers must be >= 0, not {num_workers}")
        return num_workers
    if device.type == "cpu":
        return 0  # the model needs every core; decoding in the main process costs little
    return max(1, min(8, (os.cpu_count() or 2) - 1))


# --------------------------------------------------------------------------- the job


def _model_and_space(
    spec: ModelSpec,
    model: Classifier | None,
    device: torch.device,
    label_space: LabelSpace | str | dict | None,
) -> tuple[Classifier, LabelSpace]:
    if model is None:
        model = load_model(spec, device)
    else:
        model = model.to(device).eval()
    if label_space is not None:
        check_compatible(model.label_space, get_label_space(label_space), model.name)
    return model, model.label_space


def _run(
    model: Classifier,
    dataset: IterableDataset,
    labels: np.ndarray,
    device: torch.device,
    num_workers: int,
    dtype: torch.dtype | None,
    progress: bool,
    save_logprobs: bool,
) -> dict[str, np.ndarray]:
    n = len(labels)
    outputs = Outputs(
        labels, model.num_classes, model.label_space.is_imagenet1k, save_logprobs, device
    )
    loader = DataLoader(
        dataset,
        batch_size=None,
        num_workers=num_workers,
        pin_memory=device.type == "cuda",
        worker_init_fn=worker_init if num_workers else None,
    )
    autocast = (
        torch.autocast(device.type, dtype=dtype) if dtype is not None else contextlib.nullcontext()
    )
    seen = 0
    with (
        tqdm(
            total=n,
            unit="img",
            desc=model.name,
            disable=not progress,
            file=sys.stderr,
            mininterval=2.0,
        ) as bar,
        torch.inference_mode(),
        runtime.cudnn_benchmark(device),
    ):
        for offset, images in loader:
            b = images.shape[0]
            x = images.to(device, non_blocking=True)
            with autocast:
                logits = model(x)
            if logits.shape != (b, model.num_classes):
                raise InferenceError(
                    f"model {model.name!r} gave logits of shape {tuple(logits.shape)} for {b} "
                    f"images; expected ({b}, {model.num_classes})"
                )
            outputs.add(offset, logits)
            seen += b
            bar.update(b)
    if seen != n:
        raise InferenceError(f"read {seen} images but the inputs list {n} rows")
    return outputs.columns()


def _write(
    meta: pd.DataFrame,
    columns: dict[str, np.ndarray],
    label16: np.ndarray,
    num_classes: int,
    out_path: str | os.PathLike,
    metadata: dict,
) -> Path:
    return io.write_parquet(table(meta, columns, label16, num_classes), out_path, metadata=metadata)


def _job_metadata(
    name: str,
    spec: ModelSpec,
    info: dict,
    precision: str,
    device,
    batch_size,
    inputs,
    parameters: int | None = None,
) -> dict:
    defense = {"defense": spec.defense.to_config()} if spec.defense is not None else {}
    return {
        "stage": "predict",
        "model": name,
        "model_info": info,
        "parameters": parameters,  # counted on the built model (None: none was built)
        **defense,
        "precision": precision,
        "device_type": device.type,
        "batch_size": batch_size,
        "inputs": [str(p) for p in inputs],
        "torch": torch.__version__,
    }


def _label16(labels: np.ndarray, space: LabelSpace) -> np.ndarray:
    if space.is_imagenet1k:
        return imagenet_to_16(labels)
    return np.full(len(labels), -1, dtype=np.int8)


def _predict(
    spec: ModelSpec,
    meta: pd.DataFrame,
    make_dataset,
    out_path,
    inputs: list,
    options: InferenceOptions,
    model: Classifier | None,
    where: str,
) -> Path:
    save_logprobs = _checked(options).save_logprobs
    device = resolve_device(options.device)
    batch = spec.batch_size or options.batch_size or DEFAULT_BATCH_SIZE
    if batch < 1:
        raise InferenceError(f"batch_size must be >= 1, not {batch}")
    precision_name, dtype = resolve_precision(options.precision, spec.precision, device)
    labels = meta["label"].to_numpy(dtype=np.int64)
    if len(meta) == 0:
        space = model.label_space if model is not None else spec.output_space
        check_labels(labels, space, where)
        columns = empty_columns(space.num_classes, save_logprobs)
        info = model.info if model is not None else {"spec": spec.to_config()}
        count = model.parameter_count if model is not None else None
        metadata = _job_metadata(
            spec.name, spec, info, precision_name, device, batch, inputs, count
        )
        return _write(meta, columns, np.zeros(0, np.int8), space.num_classes, out_path, metadata)
    model, space = _model_and_space(spec, model, device, options.label_space)
    check_labels(labels, space, where)
    dataset = make_dataset(batch)
    if spec.defense is not None:  # part of the model: on every image, before its preprocessing
        dataset = DefendedBatches(dataset, spec.defense)
    columns = _run(
        model,
        dataset,
        labels,
        device,
        _num_workers(options.num_workers, device),
        dtype,
        options.progress,
        save_logprobs,
    )
    metadata = _job_metadata(
        model.name,
        spec,
        model.info,
        precision_name,
        device,
        batch,
        inputs,
        model.parameter_count,
    )
    return _write(meta, columns, _label16(labels, space), model.num_classes, out_path, metadata)


def predict_shards(
    spec: ModelSpec,
    shard_paths: Sequence[str | os.PathLike],
    out_path: str | os.PathLike,
    options: InferenceOptions = InferenceOptions(),
    *,
    model: Classifier | None = None,
) -> Path:
    """Predict every image of ``shard_paths`` with the model of ``spec``; write ``out_path``.

    Parameters
    ----------
    spec
        The model entry (:meth:`ModelSpec.from_config`). Its ``batch_size`` and ``precision``,
        when set, win over the job's.
    shard_paths
        Parquet shards (``docs/architecture.md``); rows are predicted and written in this order.
    options
        How the job runs (:class:`InferenceOptions`: batch size, device, DataLoader workers,
        precision, progress bar, the data's label space, saved log-probabilities).
    model
        An already built model for ``spec`` (benchmarks, tests); built from ``spec`` if None.

    Returns the output path. Nothing is written if the job fails.
    """
    meta, units = read_shard_metadata(shard_paths)
    return _predict(
        spec,
        meta,
        lambda batch: ShardBatches(units, batch),
        out_path,
        list(shard_paths),
        options,
        model,
        where=f"shards {', '.join(str(p) for p in shard_paths)}",
    )


def predict_clean(
    spec: ModelSpec,
    clean_set: CleanSet | tuple[str | os.PathLike, str | os.PathLike],
    out_path: str | os.PathLike,
    options: InferenceOptions = InferenceOptions(),
    *,
    model: Classifier | None = None,
) -> Path:
    """Predict every image of the clean set (once per model); write ``out_path``.

    ``clean_set`` is a :class:`~vcrbench.datasets.loading.CleanSet` or its
    ``(images_path, index_path)``. Rows follow the clean-set index; ``sample_id`` is the image's row
    in the clean set and ``dv`` is 0. Other parameters as :func:`predict_shards`.
    """
    if not isinstance(clean_set, CleanSet):
        clean_set = CleanSet.open(*clean_set)
    index = clean_set.index.reset_index(drop=True)
    rows = index["row"].to_numpy(dtype=np.int64)
    meta = pd.DataFrame(
        {
            "sample_id": rows,
            "image_id": index["image_id"].astype(str).to_numpy(),
            "label": index["label"].to_numpy(dtype=np.int64),
            "dv": np.zeros(len(index), dtype=np.float64),
        }
    )
    return _predict(
        spec,
        meta,
        lambda batch: CleanBatches(clean_set.images_path, rows, batch),
        out_path,
        [clean_set.images_path],
        options,
        model,
        where=f"clean set {clean_set.images_path}",
    )


def predict_model(
    spec: ModelSpec,
    clean_set: CleanSet | tuple[str | os.PathLike, str | os.PathLike],
    clean_out: str | os.PathLike,
    sets: Sequence[tuple[str | os.PathLike, Sequence[str | os.PathLike]]],
    options: InferenceOptions = InferenceOptions(),
) -> list[Path]:
    """Every prediction file of one model, the model built once (rule ``predict_model``): the
    clean set's (``clean_out``), then each ``(out_path, shard_paths)`` of ``sets``, each written
    as :func:`predict_clean` and :func:`predict_shards` write it alone with the same ``options``,
    byte for byte (the same model, the same batches). Returns the paths written."""
    model = load_model(spec, resolve_device(_checked(options).device))
    written = [predict_clean(spec, clean_set, clean_out, options, model=model)]
    for out_path, shard_paths in sets:
        written.append(predict_shards(spec, list(shard_paths), out_path, options, model=model))
    return written
