"""What a run needs on a cluster besides each job's resources (:mod:`vcrbench.plan.resources`):
which rules run where Snakemake runs (:data:`LOCAL_RULES`), which rebuild the figures and tables
from an archive of results (:data:`ARCHIVE_RULES`), and the environment every job runs in
(:func:`job_environment`).

**Environment.** Every job (a workflow script is a subprocess of the Snakemake process that parsed
the Snakefile, which sets these) finds model weights in the configured cache
(``inference.weights_cache``, filled once by the ``fetch_weights`` rule) with the model hubs
offline, so an inference job never opens a network connection; and every other cache
(matplotlib, fontconfig, anything that honours ``XDG_CACHE_HOME``) goes under ``$TMPDIR``,
never under ``$HOME``.
"""

from __future__ import annotations

import getpass
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

#: Rules that take seconds: aggregation, tables and figures, and fetching weights (it needs the
#: network, which compute nodes often lack). On a cluster they run where Snakemake runs instead
#: of waiting in the queue.
ARCHIVE_RULES = (
    "zero_shot_tables",
    "collect_metrics",
    "model_differences",
    "defense_table",
    "model_error_consistency",
    "imagenet_c_accuracy",
    "paper_tables",
    "models_table",
    "retraining_table",
    "human_similarity",
    "geirhos_dnn_table",
    "geirhos_conditions_table",
    "geirhos_trained_table",
    "geirhos_error_consistency",
    "screening_table",
    "definitions_table",
    "imagenet_c_mce",
    "corruption_categories",
    "imagenet_c_clean_correct",
    "clean_correct",
    "zero_shot_unseen_only",
    "plot_curves",
    "plot_hmri_mrsi",
    "plot_dv_histograms",
    "plot_examples",
    "plot_imagenet_c_vs_vcr",
    "plot_human_similarity",
    "plot_geirhos_dnn",
    "plot_geirhos_trained",
    "plot_geirhos_consistency",
    "plot_model_consistency",
    "plot_defenses",
    "paper_figures",
    # the Δv coverage table reads the shards; rules that name it by ``rules.coverage_table``
    # bring it into any run of theirs (Snakemake follows such references past --allowed-rules)
    "coverage_table",
    "all",
)
#: Every local rule: the figure and table rules (the coverage table reads Δv columns only), the
#: dataset's check (seconds, before any other job) and the weights' download.
LOCAL_RULES = (*ARCHIVE_RULES, "ingest_human_reference", "check_images", "fetch_weights")


def defined(names: Iterable[str], rules: Iterable[str]) -> list[str]:
    """``names`` that are rules of the workflow (``rules``), in order."""
    known = set(rules)
    return [n for n in names if n in known]


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
    or archived run): only :data:`ARCHIVE_RULES` may run, all of them; every other file must be
    there (``make figures``)."""
    return ["--forceall", "--allowed-rules", *ARCHIVE_RULES]


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
