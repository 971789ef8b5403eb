"""What every workflow script runs its one library call in: :func:`run`.

It routes the job's logging to its log file (:func:`vcrbench.logs.job_log`), stops a job that
its scheduler gave a GPU that torch cannot see (:func:`vcrbench.runtime.require_gpu`), and records
the job in the provenance of what it writes (:mod:`vcrbench.provenance`): Parquet outputs carry the record
in their metadata, and once the call has succeeded every output gets a JSON sidecar at
``paths.provenance(output)`` (``results/provenance/<path under results>.json``), the record plus
the output's path. A failed job writes no sidecar.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator

from vcrbench import io, logs, provenance
from vcrbench.plan import paths


def _params(smk) -> dict:
    return {name: value for name, value in smk.params.items()}


def _asked_for_gpu(smk) -> bool:
    """Whether a scheduler gave this job the GPU its rule asks for (``resources: gpu``): it
    runs inside a batch job (SLURM's job id is set). A local run asks nobody."""
    return int(smk.resources.get("gpu", 0) or 0) > 0 and bool(os.environ.get("SLURM_JOB_ID"))


@contextlib.contextmanager
def run(smk) -> Iterator[logging.Logger]:
    """``with job.run(snakemake): <the library call>`` (``smk`` is the script's ``snakemake``)."""
    params = _params(smk)
    log_path = smk.log[0] if len(smk.log) else None
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
            io.write_json({**record, "output": str(output)}, paths.provenance(output))
