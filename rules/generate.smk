# Stage I: the clean set, and per corruption a manifest of samples, sharded test sets with dv,
# and the ImageNet-C comparison sets; the coverage table.


rule prepare_clean_set:
    output:
        images=CLEAN_IMAGES,
        index=CLEAN_INDEX,
    params:
        dataset=config["dataset"],
    threads: 2
    resources:
        mem_mb=4000,
        runtime=120,
    log:
        "results/logs/prepare_clean_set/clean_set.log",
    benchmark:
        "results/benchmarks/prepare_clean_set/clean_set.tsv"
    script:
        "../workflow/scripts/prepare_clean_set.py"


rule sample_manifest:
    input:
        images=CLEAN_IMAGES,
        index=CLEAN_INDEX,
    output:
        "results/testsets/{corruption}/manifest.parquet",
    params:
        corruption=corruption_params,
        n_samples=corruption_n_samples,
        shard_size=config["sampling"]["shard_size"],
        mode=config["sampling"]["mode"],
        options=config["sampling"]["options"],
        seed=config["seed"],
        vif_variant=config["vif"]["variant"],
    threads: 1
    resources:
        mem_mb=4000,
        runtime=120,
    log:
        "results/logs/sample_manifest/{corruption}.log",
    benchmark:
        "results/benchmarks/sample_manifest/{corruption}.tsv"
    script:
        "../workflow/scripts/sample_manifest.py"


rule generate_shard:
    input:
        manifest="results/testsets/{corruption}/manifest.parquet",
        images=CLEAN_IMAGES,
        index=CLEAN_INDEX,
    output:
        "results/testsets/{corruption}/shard-{shard}.parquet",
    params:
        corruption=corruption_params,
        vif_variant=config["vif"]["variant"],
    threads: 1
    resources:
        mem_mb=3000,
        runtime=60,
    log:
        "results/logs/generate_shard/{corruption}/shard-{shard}.log",
    benchmark:
        "results/benchmarks/generate_shard/{corruption}/shard-{shard}.tsv"
    script:
        "../workflow/scripts/generate_shard.py"


rule generate_imagenet_c:
    input:
        images=CLEAN_IMAGES,
        index=CLEAN_INDEX,
    output:
        "results/imagenet-c/{corruption}.parquet",
    params:
        corruption=corruption_params,
        n_images=config["imagenet_c"]["n_images"],
        seed=config["seed"],
        vif_variant=config["vif"]["variant"],
    threads: 1
    resources:
        mem_mb=4000,
        runtime=120,
    log:
        "results/logs/generate_imagenet_c/{corruption}.log",
    benchmark:
        "results/benchmarks/generate_imagenet_c/{corruption}.tsv"
    script:
        "../workflow/scripts/generate_imagenet_c.py"


rule coverage_table:
    input:
        shards=all_shard_files,
        imagenet_c=imagenet_c_files,
    output:
        csv="results/tables/coverage.csv",
        histograms="results/tables/dv_histograms.csv",
    params:
        corruptions=CORRUPTIONS,
        coverage=config["coverage"],
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    log:
        "results/logs/coverage_table/coverage.log",
    benchmark:
        "results/benchmarks/coverage_table/coverage.tsv"
    script:
        "../workflow/scripts/coverage_table.py"
