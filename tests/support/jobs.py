"""The ``snakemake`` object a workflow script gets, built without Snakemake running a job: for
tests of :func:`vcrbench.plan.job.run` (logs, provenance records, damaged inputs)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from snakemake.iocontainers import (
    InputFiles,
    Log,
    OutputFiles,
    Params,
    ResourceList,
    Snakemake,
    Wildcards,
)


def fake_job(
    outputs: Sequence[str],
    params: Mapping | None = None,
    inputs: Sequence[str] = (),
    rule: str = "collect_metrics",
    log: str = "results/logs/r/x.log",
) -> Snakemake:
    """A job of ``rule`` reading ``inputs`` and writing ``outputs`` (params: ``version`` 1 unless
    given), one thread, logging to ``log``."""
    return Snakemake(
        InputFiles(list(inputs)),
        OutputFiles(list(outputs)),
        Params(fromdict=dict(params) if params is not None else {"version": 1}),
        Wildcards(),
        1,
        ResourceList(),
        Log([log]),
        {},
        rule,
        0,
    )
