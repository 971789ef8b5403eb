"""What every workflow script runs its one library call in: :func:`run`.

It routes the job's logging to its log file (:func:`vcrbench.logs.job_log`), stops a job that
its scheduler gave a GPU that torch cannot see (:func:`vcrbench.runtime.require_gpu`), and records
the job in the provenance of what it writes (:mod:`vcrbench.files.provenance`): Parquet outputs
carry the record in their metadata, and once the call has succeeded every output gets a JSON sidecar
at ``paths.provenance(output)`` (``results/provenance/<path under results>.json``), the record plus
the output's path and its ``sha256`` (of a folder: of each file in it), which
:mod:`vcrbench.plan.verify` (``make verify``) checks. A failed job writes no sidecar.

A job that fails prints one line on its standard error (the console, where Snakemake shows the
job) naming the rule and the error; the traceback is in its log only (and Snakemake's account of
the failure is cut to the log's path: :mod:`vcrbench.plan.console`). When the error is a damaged
input (:class:`~vcrbench.errors.DamagedFileError` naming one of the job's inputs under
``results/``), the job deletes that input, so running the same command again regenerates it and
what depends on it. When it is weights that the model's ``fetch_weights`` job fetched but the job
does not find (:class:`~vcrbench.errors.WeightsUnavailableError`), the line says how to fetch
them again.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from vcrbench import logs
from vcrbench.errors import DamagedFileError, WeightsUnavailableError
from vcrbench.files import io, provenance
from vcrbench.plan import paths


def _params(smk) -> dict:
    return {name: value for name, value in smk.params.items()}


def _asked_for_gpu(smk) -> bool:
    """Whether a scheduler gave this job the GPU its rule asks for (``resources: gpu``): it
    runs inside a batch job (SLURM's job id is set). A local run asks nobody."""
    return int(smk.resources.get("gpu", 0) or 0) > 0 and bool(os.environ.get("SLURM_JOB_ID"))


def checksum(output: str | Path) -> str | dict[str, str]:
    """``sha256:<hex>`` of a file, or ``{relative path: sha256}`` of every file in a folder."""
    output = Path(output)
    if output.is_dir():
        return {
            f.relative_to(output).as_posix(): io.file_sha256(f)
            for f in sorted(output.rglob("*"))
            if f.is_file()
        }
    return io.file_sha256(output)


def _chain(exc: BaseException | None) -> Iterator[BaseException]:
    """``exc`` and the exceptions it was raised from or while handling."""
    while exc is not None:
        yield exc
        exc = exc.__cause__ or exc.__context__


def _damaged_input(smk, exc: BaseException) -> str | None:
    """The input of the job named by a :class:`DamagedFileError` in ``exc``'s chain (also when a
    DataLoader worker re-raised it with only its message), if it is a workflow output."""
    for e in _chain(exc):
        if isinstance(e, DamagedFileError) or "is damaged (" in str(e):
            for f in smk.input:
                f = str(f)
                named = getattr(e, "path", None) == f or f"{f} is damaged (" in str(e)
                if named and f.startswith(f"{paths.RESULTS}/"):
                    return f
    return None


def _refetch(smk, exc: BaseException) -> str:
    """What to do when a job does not find weights that ``fetch_weights`` fetched for it (its
    record among the job's inputs): the cache it reads offline lost them or is not the one
    they were fetched into. Sentences to append to the error, or '' for any other error."""
    if not any(isinstance(e, WeightsUnavailableError) for e in _chain(exc)):
        return ""
    for f in map(str, smk.input):
        with contextlib.suppress(ValueError):
            paths.parse(paths.WEIGHTS_FETCHED, f)
            return (
                f" The rule fetch_weights fetched them for this run ({f}), but they are not in "
                "the weights cache that this job reads with the hubs offline "
                "(inference.weights_cache): it was emptied or moved since, or this node does "
                f"not share it. Where the network is, delete {f} and make it alone again "
                f"(`snakemake <your options> {f}`: fetch_weights downloads them again into the "
                "same record, so none of the model's finished jobs reruns, as they would if the "
                "whole workflow ran with the record deleted), then run the workflow again."
            )
    return ""


def _report(smk, exc: BaseException) -> None:
    """One line on the job's standard error (the console): the rule and the error; a damaged
    input is deleted first, and the line says so; fetched weights not found, how to fetch them
    again."""
    damaged = _damaged_input(smk, exc)
    if damaged is not None:
        Path(damaged).unlink(missing_ok=True)
        text = (
            f"input {damaged} was damaged and is now deleted: run the same command again, "
            f"which regenerates it and what depends on it ({exc})"
        )
    else:
        text = f"{type(exc).__name__}: {exc}{_refetch(smk, exc)}"
    wildcards = ", ".join(f"{k}={v}" for k, v in smk.wildcards.items())
    where = f"{smk.rule}" + (f" ({wildcards})" if wildcards else "")
    print(f"vcrbench: job {where} failed: {' '.join(text.split())}", file=sys.stderr, flush=True)


def _traceback_to_log_only(exc: BaseException) -> None:
    """Leave ``exc``'s traceback out of the job's standard error when it ends the script (it is
    in the job's log, its one line on the console); any other exception keeps Python's hook."""
    previous = sys.excepthook

    def hook(kind, value, tb):
        if value is not exc:
            previous(kind, value, tb)

    sys.excepthook = hook


def predict_options(smk):
    """The :class:`vcrbench.inference.InferenceOptions` of a prediction script's job: device,
    precision, label space and saved log-probabilities from the rule's params; batch size and
    DataLoader workers from the config, not params, so that tuning them on a GPU node reruns
    nothing (:meth:`~vcrbench.inference.InferenceOptions.of_job`)."""
    from vcrbench.inference import InferenceOptions  # torch: only in the scripts that predict

    return InferenceOptions.of_job(_params(smk), smk.config["inference"])


def vif_settings(smk):
    """The :class:`vcrbench.settings.VifSettings` of a job that measures Δv, from its rule's
    params (``vif_variant``, and ``grey`` where the config gives it:
    :meth:`~vcrbench.settings.VifSettings.of_job`)."""
    from vcrbench.settings import VifSettings

    return VifSettings.of_job(_params(smk))


@contextlib.contextmanager
def run(smk) -> Iterator[logging.Logger]:
    """``with job.run(snakemake): <the library call>`` (``smk`` is the script's ``snakemake``)."""
    params = _params(smk)
    log_path = smk.log[0] if len(smk.log) else None
    try:
        with (
            logs.job_log(log_path) as logger,
            provenance.job(smk.rule, params.get("version"), params),
        ):
            if _asked_for_gpu(smk):
                from vcrbench.runtime import require_gpu

                require_gpu(f"{smk.rule} {dict(smk.wildcards.items())}")
            yield logger
            record = provenance.record()
            for output in smk.output:
                sidecar = {**record, "output": str(output), "sha256": checksum(output)}
                io.write_json(sidecar, paths.provenance(output))
    except Exception as exc:
        _report(smk, exc)
        if log_path is not None:
            _traceback_to_log_only(exc)
        raise
