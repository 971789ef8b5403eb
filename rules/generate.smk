# Stage I: the clean set, and per corruption a manifest of samples, sharded test sets with dv,
# and the ImageNet-C comparison sets in shards of the same size; the coverage table.


rule prepare_clean_set:
    input:
        checks=ancient(paths.CHECK_IMAGES),
    output:
        **PLAN.clean_stored_output(),
        images=paths.CLEAN_IMAGES,
        index=paths.CLEAN_INDEX,
    log:
        paths.log("prepare_clean_set", "prepare_clean_set"),
    benchmark:
        paths.benchmark("prepare_clean_set", "prepare_clean_set")
    conda:
        VCRBENCH_ENV
    threads: 2
    resources:
        **PLAN.resources("prepare_clean_set"),
    params:
        dataset=PLAN.section("dataset"),
        version=PLAN.version("prepare_clean_set"),
    script:
        "../workflow/scripts/prepare_clean_set.py"


rule sample_manifest:
    input:
        images=rules.prepare_clean_set.output.images,
        index=rules.prepare_clean_set.output.index,
    output:
        paths.MANIFEST,
    log:
        paths.log("sample_manifest", "{corruption}"),
    benchmark:
        paths.benchmark("sample_manifest", "{corruption}")
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("sample_manifest"),
    params:
        **PLAN.measurement(),
        corruption=PLAN.corruption_options,
        n_samples=PLAN.n_samples,
        shard_size=PLAN.setting("sampling.shard_size"),
        mode=PLAN.setting("sampling.mode"),
        options=PLAN.section("sampling")["options"],
        seed=PLAN.setting("seed"),
        vif_variant=PLAN.setting("vif.variant"),
        version=PLAN.version("sample_manifest"),
    script:
        "../workflow/scripts/sample_manifest.py"


rule generate_shard:
    input:
        manifest=rules.sample_manifest.output[0],
        images=rules.prepare_clean_set.output.images,
        index=rules.prepare_clean_set.output.index,
    output:
        paths.SHARD,
    log:
        paths.log("generate_shard", "{corruption}/shard-{shard}"),
    benchmark:
        paths.benchmark("generate_shard", "{corruption}/shard-{shard}")
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("generate_shard"),
    params:
        **PLAN.measurement(),
        corruption=PLAN.corruption_options,
        vif_variant=PLAN.setting("vif.variant"),
        version=PLAN.version("generate_shard"),
    script:
        "../workflow/scripts/generate_shard.py"


rule generate_imagenet_c:
    input:
        images=rules.prepare_clean_set.output.images,
        index=rules.prepare_clean_set.output.index,
    output:
        paths.IMAGENET_C_SHARD,
    log:
        paths.log("generate_imagenet_c", "{corruption}/shard-{shard}"),
    benchmark:
        paths.benchmark("generate_imagenet_c", "{corruption}/shard-{shard}")
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("generate_imagenet_c"),
    params:
        **PLAN.measurement(),
        corruption=PLAN.corruption_options,
        n_images=PLAN.setting("imagenet_c.n_images"),
        shard_size=PLAN.setting("sampling.shard_size"),
        n_shards=PLAN.imagenet_c_n_shards,
        seed=PLAN.setting("seed"),
        vif_variant=PLAN.setting("vif.variant"),
        version=PLAN.version("generate_imagenet_c"),
    script:
        "../workflow/scripts/generate_imagenet_c.py"


rule coverage_table:
    input:
        shards=PLAN.all_shard_files,
        imagenet_c=PLAN.imagenet_c_files,
        # dv-stratified: the Δv of each set's first N draws c ~ U(C) (the paper's Table 2 quantity)
        manifests=PLAN.stratified_manifest_files,
    output:
        csv=paths.COVERAGE,
        histograms=paths.DV_HISTOGRAMS,
    log:
        paths.log("coverage_table", "coverage_table"),
    benchmark:
        paths.benchmark("coverage_table", "coverage_table")
    localrule: True
    conda:
        VCRBENCH_ENV
    resources:
        **PLAN.resources("coverage_table"),
    params:
        corruptions=PLAN.corruptions,
        coverage=PLAN.section("coverage"),
        version=PLAN.version("coverage_table"),
    script:
        "../workflow/scripts/coverage_table.py"
