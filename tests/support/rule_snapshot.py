"""The figure and table rules as Snakemake sees them: every job of ``paper_figures`` (all planned,
as with ``--forceall``) of the declared rules, with its input and output files (and their
names), params (names and values, and the values Snakemake's params rerun trigger compares), log,
benchmark, locality, resources, software and script.

A refactoring aid: run it on two trees and compare the two files (a finished run made with one
reruns nothing with the other when they agree):

    PYTHONPATH=TREE/src python -m tests.support.rule_snapshot TREE/Snakefile CONFIG WORKDIR OUT.json

It reads Snakemake's DAG beyond its documented surface (``workflow.dag``, ``persistence``), as
only tests and this aid do (the workflow itself: ``vcrbench.plan.snakemake_compat``).
``tests/workflow/test_declared_figure.py`` holds each declared rule to its declaration with it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _files(files) -> dict:
    named = {}
    for name, value in files._allitems():
        if name is not None:
            named[name] = [str(v) for v in value] if isinstance(value, list) else str(value)
    return named


def _job(workflow, job) -> dict:
    reported = [f for f in job.output if "report" in f.flags]
    return {
        "rule": job.rule.name,
        "wildcards": dict(job.wildcards_dict),
        "input": sorted(map(str, job.input)),
        "input_named": _files(job.input),
        "output": [str(f) for f in job.output],
        "output_named": _files(job.output),
        "report": {
            str(f): Path(f.flags["report"].caption.get_path_or_uri(secret_free=True)).name
            for f in reported
        },
        "params": {k: repr(v) for k, v in job.params._allitems() if k is not None},
        "params_trigger": [repr(p) for p in workflow.persistence._params(job)],
        "log": [str(f) for f in job.log],
        "benchmark": str(job.benchmark),
        "local": job.is_local,
        "resources": {k: repr(v) for k, v in job.resources.items() if k != "tmpdir"},
        "conda": str(job.rule.conda_env),
        "script": str(job.rule.script),
    }


def snapshot(snakefile: Path, configfile: Path, workdir: Path, rules=None) -> list[dict]:
    """The jobs of ``rules`` (default: every declared figure and table rule) in the DAG of
    ``paper_figures``, sorted by rule and wildcards."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import (
        ConfigSettings,
        DAGSettings,
        OutputSettings,
        ResourceSettings,
    )

    from vcrbench.plan import products

    names = set(rules) if rules is not None else {p.rule for p in products.products()}
    with SnakemakeApi(OutputSettings(quiet={"all"})) as api:
        workflow_api = api.workflow(
            resource_settings=ResourceSettings(cores=1),
            config_settings=ConfigSettings(configfiles=[Path(configfile)]),
            snakefile=Path(snakefile),
            workdir=Path(workdir),
        )
        workflow_api.dag(DAGSettings(targets={"paper_figures"}, forceall=True))
        workflow = workflow_api._workflow
        workflow._prepare_dag(forceall=True, ignore_incomplete=True, lock_warn_only=True)
        workflow._build_dag()
        jobs = [_job(workflow, job) for job in workflow.dag.jobs if job.rule.name in names]
    return sorted(jobs, key=lambda j: (j["rule"], sorted(j["wildcards"].items())))


if __name__ == "__main__":
    snakefile, configfile, workdir, out = sys.argv[1:5]
    jobs = snapshot(Path(snakefile), Path(configfile), Path(workdir))
    Path(out).write_text(json.dumps(jobs, indent=1, sort_keys=True) + "\n")
    print(f"{len(jobs)} jobs of {len({j['rule'] for j in jobs})} rules -> {out}")
