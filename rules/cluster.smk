# Running on a cluster (README "On a SLURM cluster", docs/scale.md): the environment of every job
# and the weights fetched once per model before any inference job. Which variables:
# vcrbench.plan.cluster. A rule that runs where Snakemake runs says `localrule: True` in its own
# definition; vcrbench.plan.cluster.LOCAL_RULES lists them (a unit test holds the two together).
from vcrbench.plan import cluster as vcluster

# Every job's environment (weights found in the cache with the hubs offline, no cache under
# $HOME: vcluster.job_environment) is set by `onstart` (rules/checks.smk), before any job starts.


# `gpu` and `cpu_slot` count per group job (one GPU, one single-threaded CPU job at a time), not
# across the cluster (vcrbench.plan.resources.SLOT_RULES).
resource_scopes:
    gpu="local",
    cpu_slot="local",


# Downloads one model's weights into inference.weights_cache, where the network is; a model whose
# weights cannot be had fails here, naming what to get, and none of its GPU jobs is submitted.
rule fetch_weights:
    output:
        paths.WEIGHTS_FETCHED,
    log:
        paths.log("fetch_weights", "{model}"),
    benchmark:
        paths.benchmark("fetch_weights", "{model}")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("fetch_weights"),
    params:
        model=PLAN.model_entry,
        cache=PLAN.setting("inference.weights_cache"),
        online=vcluster.ONLINE,
        version=PLAN.version("fetch_weights"),
    script:
        "../workflow/scripts/fetch_weights.py"
