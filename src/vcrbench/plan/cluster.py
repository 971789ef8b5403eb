"""What a run needs on a cluster besides each job's resources (:mod:`vcrbench.plan.resources`):
which rules run where Snakemake runs (:func:`local_rules`), which rebuild the figures and tables
from an archive of results (:func:`archive_rules`), and the environment every job runs in
(:func:`job_environment`).

**Environment.** Every job (a workflow script is a subprocess of the Snakemake process, whose
``onstart`` sets these before any job starts; a cluster job inherits them from it, the SLURM
executor submitting with ``--export=ALL``) finds model weights in the configured cache
(``inference.weights_cache``, filled once by the ``fetch_weights`` rule) with the model hubs
offline, so an inference job never opens a network connection; and every other cache
(matplotlib, fontconfig, anything that honours ``XDG_CACHE_HOME``) goes under ``$TMPDIR``,
never under ``$HOME``.
"""

from __future__ import annotations

import getpass
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

#: Rules that take seconds besides the declared figures and tables (vcrbench.plan.products):
#: aggregation, and fetching weights (it needs the network, which compute nodes often lack). On a
#: cluster they run where Snakemake runs instead of waiting in the queue.
_AGGREGATES = (
    "zero_shot_tables",
    "collect_metrics",
    "model_differences",
    "defense_table",
    "model_error_consistency",
    "geirhos_dnn_table",
    "geirhos_conditions_table",
    "geirhos_trained_table",
    "geirhos_error_consistency",
    "screening_table",
    "definitions_table",
    "clean_correct",
    "zero_shot_unseen_only",
)
#: Rules of the archive mode besides the declared figures and tables: the targets, and the Δv
#: coverage table, which reads the shards; rules that name it by ``rules.coverage_table`` bring it
#: into any run of theirs (Snakemake follows such references past --allowed-rules).
_ARCHIVE_TARGETS = ("paper_figures", "coverage_table", "all")
#: Local rules that are not of the archive: the dataset's check (seconds, before any other job),
#: the human reference's ingestion and the weights' download.
_LOCAL_ONLY = ("ingest_human_reference", "check_images", "fetch_weights")


def archive_rules() -> tuple[str, ...]:
    """The rules that rebuild every figure and table from an archive of results
    (:func:`archive_args`): the aggregations, every declared figure and table, the targets."""
    from vcrbench.plan.products import products

    return (*_AGGREGATES, *(p.rule for p in products()), *_ARCHIVE_TARGETS)


def local_rules() -> tuple[str, ...]:
    """Every local rule: the aggregations, the declared figures and tables that are ``local``,
    the targets and the coverage table (it reads Δv columns only), and :data:`_LOCAL_ONLY`.
    Each of them says so in its own definition (Snakemake's ``localrule: True``; a declared
    rule made from its declaration, its ``local``); tests/unit/test_cluster_plan.py holds the
    rules to this list, both ways."""
    from vcrbench.plan.products import products

    declared = tuple(p.rule for p in products() if p.local)
    return (*_AGGREGATES, *declared, *_ARCHIVE_TARGETS, *_LOCAL_ONLY)


def __getattr__(name: str):
    """``ARCHIVE_RULES`` and ``LOCAL_RULES``, as of the products declared so far."""
    if name == "ARCHIVE_RULES":
        return archive_rules()
    if name == "LOCAL_RULES":
        return local_rules()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def weights_cache(config: Mapping) -> Path:
    """The folder the model weights are fetched into (absolute, for the environment)."""
    return Path(config["inference"]["weights_cache"]).absolute()


def scratch() -> Path:
    """Per-user scratch for caches: ``$TMPDIR/vcrbench-<user>`` (a node-local disk on most
    clusters), never ``$HOME``."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid())
    return Path(os.environ.get("TMPDIR") or tempfile.gettempdir()) / f"vcrbench-{user}"


def job_environment(config: Mapping) -> dict[str, str]:
    """The variables every job runs with (module docstring)."""
    cache = weights_cache(config)
    tmp = scratch()
    return {
        "TORCH_HOME": str(cache / "torch"),
        "HF_HOME": str(cache / "huggingface"),
        "HF_HUB_CACHE": str(cache / "huggingface" / "hub"),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "MPLCONFIGDIR": str(tmp / "matplotlib"),
        "XDG_CACHE_HOME": str(tmp / "cache"),
    }


#: What ``fetch_weights`` changes in :func:`job_environment`: the hubs may download.
ONLINE = {"HF_HUB_OFFLINE": "0", "TRANSFORMERS_OFFLINE": "0", "HF_DATASETS_OFFLINE": "0"}


def archive_args() -> list[str]:
    """Snakemake's arguments that rebuild every figure and table from the predictions and
    estimates in ``results/`` alone, whatever their mtimes and without ``.snakemake/`` (a copied
    or archived run): only :func:`archive_rules` may run, all of them; every other file must be
    there (``make figures``)."""
    return ["--forceall", "--allowed-rules", *archive_rules()]


def snakemake_command(
    snakefile: str | os.PathLike, workdir: str | os.PathLike, *args: str, configfile=None
) -> list[str]:
    """The command line that runs this Python's Snakemake on ``snakefile`` in ``workdir`` (with
    ``configfile`` if given), then ``args``: what the tests, the cost plan and the job-overhead
    benchmark start."""
    import sys

    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(snakefile)]
    cmd += ["--directory", str(workdir)]
    if configfile is not None:
        cmd += ["--configfile", str(configfile)]
    return cmd + list(args)


if __name__ == "__main__":  # make figures
    print(" ".join(archive_args()))
