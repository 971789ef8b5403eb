# Stage I: the clean set, and per corruption a manifest of samples, sharded test sets with dv,
# and the ImageNet-C comparison sets; the coverage table.


rule prepare_clean_set:
    output:
        images=CLEAN_IMAGES,
        index=CLEAN_INDEX,
    log:
        "results/logs/prepare_clean_set/clean_set.log",
    benchmark:
        "results/benchmarks/prepare_clean_set/clean_set.tsv"
    conda:
        VCRBENCH_ENV
    threads: 2
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        dataset=canonical(config["dataset"]),
    script:
        "../workflow/scripts/prepare_clean_set.py"


rule sample_manifest:
    input:
        images=CLEAN_IMAGES,
        index=CLEAN_INDEX,
    output:
        "results/testsets/{corruption}/manifest.parquet",
    log:
        "results/logs/sample_manifest/{corruption}.log",
    benchmark:
        "results/benchmarks/sample_manifest/{corruption}.tsv"
    conda:
        VCRBENCH_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        corruption=corruption_params,
        n_samples=corruption_n_samples,
        shard_size=config["sampling"]["shard_size"],
        mode=config["sampling"]["mode"],
        options=canonical(config["sampling"]["options"]),
        seed=config["seed"],
        vif_variant=config["vif"]["variant"],
    script:
        "../workflow/scripts/sample_manifest.py"


rule generate_shard:
    input:
        manifest="results/testsets/{corruption}/manifest.parquet",
        images=CLEAN_IMAGES,
        index=CLEAN_INDEX,
    output:
        "results/testsets/{corruption}/shard-{shard}.parquet",
    log:
        "results/logs/generate_shard/{corruption}/shard-{shard}.log",
    benchmark:
        "results/benchmarks/generate_shard/{corruption}/shard-{shard}.tsv"
    conda:
        VCRBENCH_ENV
    threads: 1
    resources:
        mem_mb=3000,
        runtime=60,
    params:
        corruption=corruption_params,
        vif_variant=config["vif"]["variant"],
    script:
        "../workflow/scripts/generate_shard.py"


rule generate_imagenet_c:
    input:
        images=CLEAN_IMAGES,
        index=CLEAN_INDEX,
    output:
        "results/imagenet-c/{corruption}.parquet",
    log:
        "results/logs/generate_imagenet_c/{corruption}.log",
    benchmark:
        "results/benchmarks/generate_imagenet_c/{corruption}.tsv"
    conda:
        VCRBENCH_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        corruption=corruption_params,
        n_images=config["imagenet_c"]["n_images"],
        seed=config["seed"],
        vif_variant=config["vif"]["variant"],
    script:
        "../workflow/scripts/generate_imagenet_c.py"


rule coverage_table:
    input:
        shards=all_shard_files,
        imagenet_c=imagenet_c_files,
    output:
        csv="results/tables/coverage.csv",
        histograms="results/tables/dv_histograms.csv",
    log:
        "results/logs/coverage_table/coverage.log",
    benchmark:
        "results/benchmarks/coverage_table/coverage.tsv"
    conda:
        VCRBENCH_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        corruptions=CORRUPTIONS,
        coverage=canonical(config["coverage"]),
    script:
        "../workflow/scripts/coverage_table.py"
