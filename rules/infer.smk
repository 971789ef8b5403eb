# Stage III (inference): per model, predictions on the clean images once, and on every group of
# shards of every corruption (one job per model x corruption x group), and on the ImageNet-C sets.
# GPU requests live in profiles/slurm; here the rules declare threads and memory only.


rule predict_clean:
    input:
        images=CLEAN_IMAGES,
        index=CLEAN_INDEX,
        weights=model_weights,
    output:
        "results/predictions/{model}/clean.parquet",
    log:
        "results/logs/predict_clean/{model}.log",
    benchmark:
        "results/benchmarks/predict_clean/{model}.tsv"
    conda:
        VCRBENCH_ENV
    threads: 2
    resources:
        mem_mb=8000,
        runtime=60,
    params:
        model=model_entry,
        # Only what can change predictions; batch size and DataLoader workers are read from
        # the config by the script, so tuning them on a GPU node reruns nothing.
        device=config["inference"]["device"],
        precision=config["inference"]["precision"],
        label_space=config["dataset"]["label_space"],
    script:
        "../workflow/scripts/predict_clean.py"


rule predict_group:
    input:
        shards=group_shard_files,
        weights=model_weights,
    output:
        "results/predictions/{model}/{corruption}/group-{group}.parquet",
    log:
        "results/logs/predict_group/{model}/{corruption}/group-{group}.log",
    benchmark:
        "results/benchmarks/predict_group/{model}/{corruption}/group-{group}.tsv"
    conda:
        VCRBENCH_ENV
    threads: 2
    resources:
        mem_mb=8000,
        runtime=120,
    params:
        model=model_entry,
        # Only what can change predictions; batch size and DataLoader workers are read from
        # the config by the script, so tuning them on a GPU node reruns nothing.
        device=config["inference"]["device"],
        precision=config["inference"]["precision"],
        label_space=config["dataset"]["label_space"],
    script:
        "../workflow/scripts/predict_shards.py"


rule predict_imagenet_c:
    input:
        shards=["results/imagenet-c/{corruption}.parquet"],
        weights=model_weights,
    output:
        "results/predictions/{model}/imagenet-c/{corruption}.parquet",
    log:
        "results/logs/predict_imagenet_c/{model}/{corruption}.log",
    benchmark:
        "results/benchmarks/predict_imagenet_c/{model}/{corruption}.tsv"
    conda:
        VCRBENCH_ENV
    threads: 2
    resources:
        mem_mb=8000,
        runtime=120,
    params:
        model=model_entry,
        # Only what can change predictions; batch size and DataLoader workers are read from
        # the config by the script, so tuning them on a GPU node reruns nothing.
        device=config["inference"]["device"],
        precision=config["inference"]["precision"],
        label_space=config["dataset"]["label_space"],
    script:
        "../workflow/scripts/predict_shards.py"
