# Stage III (inference): per model, predictions on the clean images once, and on every group of
# shards of every corruption's test set and ImageNet-C set. A model whose images are few
# (inference.model_job_max_images; the embedded default) is predicted in one job, predict_model,
# which loads it once; otherwise one job per model x set x group (predict_clean, predict_group,
# predict_imagenet_c). The files and their bytes are the same either way. Memory and time come
# from PLAN (the job's images and model, growing with the attempt); threads and GPUs from the
# workflow profile (profiles/default), partitions from the user's.

# Only what can change predictions; batch size and DataLoader workers are read from the config by
# the scripts, so tuning them on a GPU node reruns nothing.
PREDICT_PARAMS = dict(
    model=PLAN.model_entry,
    device=PLAN.setting("inference.device"),
    precision=PLAN.setting("inference.precision"),
    label_space=PLAN.dataset_label_space_entry,
    save_logprobs=PLAN.setting("inference.save_logprobs"),
    version=PLAN.version("predict"),
)


if PLAN.inference_per_model:

    rule predict_model:
        input:
            unpack(PLAN.model_job_inputs),
        output:
            PLAN.model_job_outputs(),
        log:
            paths.log("predict_model", "{model}"),
        benchmark:
            paths.benchmark("predict_model", "{model}")
        conda:
            VCRBENCH_ENV
        threads: 2
        resources:
            **PLAN.resources("predict_model"),
        params:
            **PREDICT_PARAMS,
        script:
            "../workflow/scripts/predict_model.py"

else:

    rule predict_clean:
        input:
            images=rules.prepare_clean_set.output.images,
            index=rules.prepare_clean_set.output.index,
            weights=PLAN.model_weights,
        output:
            paths.PREDICTIONS_CLEAN,
        log:
            paths.log("predict_clean", "{model}"),
        benchmark:
            paths.benchmark("predict_clean", "{model}")
        conda:
            VCRBENCH_ENV
        threads: 2
        resources:
            **PLAN.resources("predict_clean"),
        params:
            **PREDICT_PARAMS,
        script:
            "../workflow/scripts/predict_clean.py"

    rule predict_group:
        input:
            shards=PLAN.group_shard_files,
            weights=PLAN.model_weights,
        output:
            paths.PREDICTIONS_GROUP,
        log:
            paths.log("predict_group", "{model}/{corruption}/group-{group}"),
        benchmark:
            paths.benchmark("predict_group", "{model}/{corruption}/group-{group}")
        conda:
            VCRBENCH_ENV
        threads: 2
        resources:
            **PLAN.resources("predict_group"),
        params:
            **PREDICT_PARAMS,
        script:
            "../workflow/scripts/predict_shards.py"

    use rule predict_group as predict_imagenet_c with:
        input:
            shards=PLAN.imagenet_c_group_shard_files,
            weights=PLAN.model_weights,
        output:
            paths.PREDICTIONS_IMAGENET_C,
        log:
            paths.log("predict_imagenet_c", "{model}/{corruption}/group-{group}"),
        benchmark:
            paths.benchmark("predict_imagenet_c", "{model}/{corruption}/group-{group}")
        resources:
            **PLAN.resources("predict_imagenet_c"),
