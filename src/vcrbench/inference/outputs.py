"""What an inference job keeps of each image's softmax: the prediction schema's columns.

Per image, from the model's logits (float32 softmax, on the model's device):

- ``pred`` (top-1), ``prob_label`` (probability of the label), ``pred16``/``label16`` (the
  16-class decision, :func:`vcrbench.labels.decide_16`'s rule): what evaluation reads;
- ``top1`` … ``top5`` (int32) and ``top1_prob`` … ``top5_prob`` (float32): the five most probable
  classes of the model's label space, most probable first (ties: lower class index first, so
  ``top1 == pred``); −1 and NaN beyond a label space of fewer than five classes;
- ``prob16_<class>`` (float32, one column per class of :data:`GEIRHOS16_CLASSES`, in that order):
  the mean softmax probability of the class's ImageNet classes, the vector ``pred16`` is the
  argmax of (means, so they do not sum to 1); NaN unless the label space is ImageNet-1k;
- ``entropy`` (float32): −Σ p log p of the softmax, in nats;
- ``logprobs`` (only with ``save_logprobs``): the full log-softmax as a fixed-size list of
  float16, one value per class of the model's label space; the last column (after
  ``severity``), read as one (N, classes) array with :func:`vcrbench.files.io.fixed_size_matrix`.

One column per rank and per class keeps every column a plain pandas column.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import torch

from vcrbench.labels import PROB16_COLUMNS, geirhos16_matrix
from vcrbench.vocab import PREDICTION_COLUMNS

#: Classes kept per image (``top1`` … ``top5``).
TOP_K = 5
TOP_CLASS_COLUMNS = tuple(f"top{k}" for k in range(1, TOP_K + 1))
TOP_PROB_COLUMNS = tuple(f"top{k}_prob" for k in range(1, TOP_K + 1))
LOGPROBS = "logprobs"

_BASE_TYPES = {
    "sample_id": pa.int64(),
    "image_id": pa.string(),
    "label": pa.int64(),
    "dv": pa.float64(),
    "pred": pa.int32(),
    "prob_label": pa.float32(),
    "pred16": pa.int8(),
    "label16": pa.int8(),
}
#: The columns of every prediction file, in order (``severity`` and ``logprobs`` may follow).
PREDICTION_SCHEMA = pa.schema(
    [
        *[(name, _BASE_TYPES[name]) for name in PREDICTION_COLUMNS],
        *[(name, pa.int32()) for name in TOP_CLASS_COLUMNS],
        *[(name, pa.float32()) for name in TOP_PROB_COLUMNS],
        *[(name, pa.float32()) for name in PROB16_COLUMNS],
        ("entropy", pa.float32()),
    ]
)


def logprobs_field(num_classes: int) -> pa.Field:
    """The ``logprobs`` column of a label space of ``num_classes`` classes."""
    return pa.field(LOGPROBS, pa.list_(pa.float16(), num_classes))


class Outputs:
    """The per-image outputs of one job, filled batch by batch on the device (:meth:`add`), read
    once at the end (:meth:`columns`)."""

    def __init__(
        self,
        labels: np.ndarray,
        num_classes: int,
        imagenet: bool,
        save_logprobs: bool,
        device: torch.device,
    ) -> None:
        n = len(labels)
        self.num_classes = num_classes
        self.k = min(TOP_K, num_classes)
        self.labels = torch.from_numpy(labels.astype(np.int64)).to(device)
        self.pred = torch.empty(n, dtype=torch.int32, device=device)
        self.prob_label = torch.empty(n, dtype=torch.float32, device=device)
        self.pred16 = torch.full((n,), -1, dtype=torch.int8, device=device)
        self.top = torch.full((n, TOP_K), -1, dtype=torch.int32, device=device)
        self.top_prob = torch.full((n, TOP_K), torch.nan, dtype=torch.float32, device=device)
        self.prob16 = torch.full(
            (n, len(PROB16_COLUMNS)), torch.nan, dtype=torch.float32, device=device
        )
        self.entropy = torch.empty(n, dtype=torch.float32, device=device)
        self.m16 = torch.from_numpy(geirhos16_matrix().copy()).to(device) if imagenet else None
        self.logprobs = (
            torch.empty((n, num_classes), dtype=torch.float16, device=device)
            if save_logprobs
            else None
        )

    def add(self, offset: int, logits: torch.Tensor) -> None:
        """Record the outputs of the images ``offset`` … ``offset + len(logits) - 1``."""
        rows = slice(offset, offset + logits.shape[0])
        logits = logits.float()
        probs = torch.softmax(logits, dim=1)
        lab = self.labels[rows]
        self.pred[rows] = probs.argmax(dim=1).to(torch.int32)
        p = probs.gather(1, lab.clamp(min=0).unsqueeze(1)).squeeze(1)
        self.prob_label[rows] = torch.where(lab >= 0, p, torch.nan)
        # a stable sort puts tied classes in index order, as argmax does: top1 == pred
        top_prob, top = torch.sort(probs, dim=1, descending=True, stable=True)
        self.top[rows, : self.k] = top[:, : self.k].to(torch.int32)
        self.top_prob[rows, : self.k] = top_prob[:, : self.k]
        self.entropy[rows] = torch.special.entr(probs).sum(dim=1)
        if self.m16 is not None:
            prob16 = probs @ self.m16
            self.prob16[rows] = prob16
            self.pred16[rows] = prob16.argmax(dim=1).to(torch.int8)
        if self.logprobs is not None:
            self.logprobs[rows] = torch.log_softmax(logits, dim=1).to(torch.float16)

    def columns(self) -> dict[str, np.ndarray]:
        """The computed columns (all but the inputs' ``sample_id`` … ``dv`` and ``label16``)."""
        top, top_prob, prob16 = (t.cpu().numpy() for t in (self.top, self.top_prob, self.prob16))
        out = {
            "pred": self.pred.cpu().numpy(),
            "prob_label": self.prob_label.cpu().numpy(),
            "pred16": self.pred16.cpu().numpy(),
            **{name: top[:, i] for i, name in enumerate(TOP_CLASS_COLUMNS)},
            **{name: top_prob[:, i] for i, name in enumerate(TOP_PROB_COLUMNS)},
            **{name: prob16[:, i] for i, name in enumerate(PROB16_COLUMNS)},
            "entropy": self.entropy.cpu().numpy(),
        }
        if self.logprobs is not None:
            out[LOGPROBS] = self.logprobs.cpu().numpy()
        return out


def empty_columns(num_classes: int, save_logprobs: bool) -> dict[str, np.ndarray]:
    """The computed columns of a job with no images."""
    out = {
        field.name: np.zeros(0, dtype=field.type.to_pandas_dtype())
        for field in PREDICTION_SCHEMA
        if field.name not in ("sample_id", "image_id", "label", "dv", "label16")
    }
    if save_logprobs:
        out[LOGPROBS] = np.zeros((0, num_classes), dtype=np.float16)
    return out


def table(meta, columns: dict[str, np.ndarray], label16: np.ndarray, num_classes: int) -> pa.Table:
    """The prediction table: ``meta``'s sample columns, ``columns`` (:meth:`Outputs.columns`),
    then ``severity`` when ``meta`` has it, then ``logprobs`` when ``columns`` has it."""
    given = {
        "sample_id": meta["sample_id"].to_numpy(dtype=np.int64),
        "image_id": meta["image_id"].astype(str).tolist(),
        "label": meta["label"].to_numpy(dtype=np.int64),
        "dv": meta["dv"].to_numpy(dtype=np.float64),
        "label16": label16,
    }
    values = {**given, **columns}
    arrays = [pa.array(values[f.name], f.type) for f in PREDICTION_SCHEMA]
    schema = PREDICTION_SCHEMA
    if "severity" in meta:
        severity = pa.array(meta["severity"].to_numpy())
        arrays.append(severity)
        schema = schema.append(pa.field("severity", severity.type))
    if LOGPROBS in columns:
        field = logprobs_field(num_classes)
        flat = pa.array(np.ascontiguousarray(columns[LOGPROBS]).reshape(-1), pa.float16())
        arrays.append(pa.FixedSizeListArray.from_arrays(flat, num_classes))
        schema = schema.append(field)
    return pa.Table.from_arrays(arrays, schema=schema)
