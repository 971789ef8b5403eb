"""The workflow's stages for one :func:`vcrbench.benchmark` call: the library calls that
``workflow/scripts/*.py`` make, with the params that ``rules/*.smk`` give them from ``PLAN``.

Each stage is run as the workflow runs a job: inside :func:`vcrbench.files.provenance.job` with the
rule's name, stage version and params, its outputs written at the workflow's paths
(:mod:`vcrbench.plan.paths`) under a root folder, each with its provenance sidecar. An output
whose sidecar records the params' hash is up to date and is not made again (Snakemake's rerun on
changed params): that is how the test sets cached by one call serve the next, and how the
outputs of a finished run are checked to be the ones this config asks for.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from types import SimpleNamespace

from vcrbench import schema
from vcrbench.corruptions import get_corruption
from vcrbench.datasets import loading
from vcrbench.errors import ConfigError
from vcrbench.evaluation import evaluate
from vcrbench.files import io, provenance
from vcrbench.humans import stages as human_stages
from vcrbench.humans.curves import HumanFit
from vcrbench.plan import Plan, paths
from vcrbench.plan import humans as plan_humans
from vcrbench.plan.job import checksum
from vcrbench.settings import DatasetSettings, HumanMappingSettings, VifSettings
from vcrbench.testsets import sampling, testset

# --------------------------------------------------------------------------- the rules' params
# Each is the ``params:`` of its rule in rules/*.smk (tests/workflow/test_api_workflow.py checks
# their hashes against a workflow run's records).


def clean_set_params(plan: Plan) -> dict:
    return {"dataset": plan.section("dataset"), "version": plan.version("prepare_clean_set")}


def manifest_params(plan: Plan, corruption: str) -> dict:
    wc = SimpleNamespace(corruption=corruption)
    return {
        **plan.measurement(),
        "corruption": plan.corruption_options(wc),
        "n_samples": plan.n_samples(wc),
        "shard_size": plan.setting("sampling.shard_size"),
        "mode": plan.setting("sampling.mode"),
        "options": plan.section("sampling")["options"],
        "seed": plan.setting("seed"),
        "vif_variant": plan.setting("vif.variant"),
        "version": plan.version("sample_manifest"),
    }


def shard_params(plan: Plan, corruption: str) -> dict:
    return {
        **plan.measurement(),
        "corruption": plan.corruption_options(SimpleNamespace(corruption=corruption)),
        "vif_variant": plan.setting("vif.variant"),
        "version": plan.version("generate_shard"),
    }


def ingest_params(plan: Plan, reference: str) -> dict:
    wc = SimpleNamespace(reference=reference)
    return {"entry": plan.reference_entry(wc), "version": plan.version("ingest_human_reference")}


def mapping_params(plan: Plan, reference: str) -> dict:
    wc = SimpleNamespace(reference=reference)
    return {
        **plan.measurement(),
        "seed": plan.setting("seed"),
        "vif_variant": plan.setting("vif.variant"),
        "mapping": plan.mapping_options(wc),
        "corruptions": plan.reference_corruption_options(wc),
        "version": plan.version("map_human_conditions"),
    }


def human_params(plan: Plan, reference: str) -> dict:
    return {
        "settings": plan.section("estimation"),
        "seed": plan.setting("seed"),
        "anchor": plan.setting("humans.anchor"),
        "placement": plan.setting("humans.placement"),
        "entry": plan.reference_entry(SimpleNamespace(reference=reference)),
        "version": plan.version("estimate_human_curves"),
    }


def predict_params(plan: Plan, model: str) -> dict:
    """Rule ``predict_model``'s params (``PREDICT_PARAMS`` of rules/infer.smk)."""
    return {"model": plan.model_entry(SimpleNamespace(model=model)), **predict_params_common(plan)}


def predict_params_common(plan: Plan) -> dict:
    """The prediction rules' params other than the model's entry."""
    return {
        "device": plan.setting("inference.device"),
        "precision": plan.setting("inference.precision"),
        "label_space": plan.dataset_label_space_entry,
        "save_logprobs": plan.setting("inference.save_logprobs"),
        "version": plan.version("predict"),
    }


def estimate_params(plan: Plan, corruption: str) -> dict:
    """Rule ``estimate_curves``' params (the same for every model)."""
    return {
        "settings": plan.section("estimation"),
        "seed": plan.setting("seed"),
        "dataset_label_space": plan.dataset_label_space,
        "reference": plan.human_reference(SimpleNamespace(corruption=corruption)),
        "scenario_level": plan.setting("humans.scenario_level"),
        "zero_shot": plan.zero_shot,
        "version": plan.version("estimate_curves"),
    }


# --------------------------------------------------------------------------- jobs


class Jobs:
    """Runs stages at the workflow's paths under ``root`` (``root/results/...``); with
    ``read_only`` (a finished run) makes nothing and checks that what is there is up to date."""

    def __init__(self, root: Path, *, read_only: bool = False, where: str = "") -> None:
        self.root = Path(root)
        self.read_only = read_only
        self.where = where or str(root)

    def path(self, template: str, **wildcards) -> Path:
        return self.root / paths.fill(template, **wildcards)

    def sidecar(self, output: Path) -> Path:
        return self.root / paths.provenance(output.relative_to(self.root).as_posix())

    def recorded_hash(self, output: Path) -> str | None:
        try:
            return json.loads(self.sidecar(output).read_text()).get("config_hash")
        except (OSError, ValueError):
            return None

    def up_to_date(self, outputs: Sequence[Path], params: dict) -> bool:
        want = provenance.config_hash(params)
        return all(o.exists() and self.recorded_hash(o) == want for o in outputs)

    def run(
        self, rule: str, outputs: Sequence[Path], params: dict, call: Callable[[], object],
        *, force: bool = False,
    ) -> None:  # fmt: skip
        """``call()`` as rule ``rule``'s job, unless its ``outputs`` are up to date (``force``:
        always, for what depends on more than its params: a model's predictions and estimates)."""
        if not force and self.up_to_date(outputs, params):
            return
        if self.read_only:
            self._stale(rule, outputs, params)
        with provenance.job(rule, params.get("version"), params):
            call()
            record = provenance.record()
            for output in outputs:
                sidecar = {**record, "output": paths.RESULTS + "/" + self._rel(output),
                           "sha256": checksum(output)}  # fmt: skip
                io.write_json(sidecar, self.sidecar(output))

    def _rel(self, output: Path) -> str:
        return output.relative_to(self.root / paths.RESULTS).as_posix()

    def _stale(self, rule: str, outputs: Sequence[Path], params: dict):
        missing = [o for o in outputs if not o.exists()]
        if missing:
            raise ConfigError(
                f"run {self.where}: {missing[0]} is not there; the run did not make what this "
                f"config asks of rule {rule} (pass config= the config the run was made with, or "
                "leave run= out to generate the test sets)"
            )
        unrecorded = [o for o in outputs if self.recorded_hash(o) is None]
        if unrecorded:
            raise ConfigError(
                f"run {self.where}: {unrecorded[0]} has no provenance record "
                f"({self.sidecar(unrecorded[0])}), so it cannot be checked against this config; "
                "copy the run's results/provenance/ with it"
            )
        raise ConfigError(
            f"run {self.where}: {outputs[0]} was made by rule {rule} with other settings than "
            f"this config gives it (its provenance's config_hash differs); pass config= the "
            "config the run was made with"
        )


# --------------------------------------------------------------------------- stage I and II


def clean_set(plan: Plan, jobs: Jobs) -> tuple[Path, Path]:
    """The clean set (rule prepare_clean_set): ``(images.npy, index.parquet)``."""
    images, index = jobs.path(paths.CLEAN_IMAGES), jobs.path(paths.CLEAN_INDEX)
    params = clean_set_params(plan)

    def call():
        settings = DatasetSettings.of_config(params["dataset"])
        records = loading.selected_images(settings)
        loading.prepare_clean_set(records, images, index, settings, threads=2)

    jobs.run("prepare_clean_set", [images, index], params, call)
    return images, index


def test_set(plan: Plan, jobs: Jobs, corruption: str, clean: tuple[Path, Path]) -> None:
    """One corruption's manifest and shards (rules sample_manifest, generate_shard)."""
    options = manifest_params(plan, corruption)
    manifest = jobs.path(paths.MANIFEST, corruption=corruption)

    def draw():
        c = get_corruption(corruption, options["corruption"])
        table = sampling.make_manifest(
            c, loading.CleanSet.open(*clean), n_samples=options["n_samples"],
            shard_size=options["shard_size"], seed=options["seed"], mode=options["mode"],
            vif_settings=VifSettings.of_job(options), **options["options"],
        )  # fmt: skip
        io.write_parquet(table, manifest)

    jobs.run("sample_manifest", [manifest], options, draw)
    params = shard_params(plan, corruption)
    for shard in plan.shard_ids(corruption):
        out = jobs.path(paths.SHARD, corruption=corruption, shard=shard)

        def make(shard=shard, out=out):
            testset.generate_shard(
                io.read_parquet(manifest), shard=int(shard),
                clean_set=loading.CleanSet.open(*clean),
                corruption=get_corruption(corruption, params["corruption"]), out_path=out,
                vif_settings=VifSettings.of_job(params),
            )  # fmt: skip

        jobs.run("generate_shard", [out], params, make)


def human_reference(plan: Plan, jobs: Jobs, reference: str, clean: tuple[Path, Path]) -> Path:
    """One human reference's trials, conditions and curves (rules ingest_human_reference,
    map_human_conditions, estimate_human_curves); returns its folder."""
    trials = jobs.path(paths.HUMAN_TRIALS, reference=reference)
    conditions = jobs.path(paths.HUMAN_CONDITIONS, reference=reference)
    ingest = ingest_params(plan, reference)
    jobs.run(
        "ingest_human_reference", [trials], ingest,
        lambda: human_stages.ingest_reference(
            plan_humans.reference_of(reference, ingest["entry"]), trials
        ),
    )  # fmt: skip
    mapping = mapping_params(plan, reference)
    jobs.run(
        "map_human_conditions", [conditions], mapping,
        lambda: human_stages.map_conditions(
            trials, *clean, conditions, reference_name=reference, seed=mapping["seed"],
            settings=HumanMappingSettings.of_config(mapping["mapping"]),
            vif_settings=VifSettings.of_job(mapping), corruptions_config=mapping["corruptions"],
        ),
    )  # fmt: skip
    fit = human_params(plan, reference)
    estimates = [jobs.root / f for f in paths.human_estimates(reference)]
    jobs.run(
        "estimate_human_curves", estimates, fit,
        lambda: human_stages.estimate_reference(
            trials, conditions, estimates[0].parent,
            reference=plan_humans.reference_of(reference, fit["entry"]),
            fit=HumanFit(fit["settings"], fit["anchor"], fit["placement"]), seed=fit["seed"],
        ),
    )  # fmt: skip
    return estimates[0].parent


# --------------------------------------------------------------------------- stage III


def estimate(
    plan: Plan, jobs: Jobs, model: str, corruption: str, predictions: Sequence[Path],
    clean: Path, reference_root: Path,
) -> Path:  # fmt: skip
    """Curves and metrics of ``model`` on ``corruption`` (rule estimate_curves); returns the
    metrics file. The human reference's folder is under ``reference_root``."""
    p = estimate_params(plan, corruption)
    out = jobs.path(paths.MODEL_METRICS, model=model, corruption=corruption)
    ref = p["reference"]
    # left out of the params at its default (vcrbench.plan.config.PARAMS_WHEN_SET)
    short = p["settings"].get(
        "short_label_space", schema.default_of("estimation.short_label_space")
    )
    outputs = [jobs.path(t, model=model, corruption=corruption)
               for t in (paths.MODEL_BINS, paths.MODEL_CURVES, paths.MODEL_METRICS,
                         paths.MODEL_REPLICATES)]  # fmt: skip

    def call():
        evaluate.evaluate(
            [str(f) for f in predictions], str(clean), out.parent, model=model,
            corruption=corruption, settings=p["settings"], seed=p["seed"],
            dataset_label_space=p["dataset_label_space"],
            label_spaces=p["settings"]["label_spaces"], reference=ref["name"],
            reference_how=ref["how"],
            reference_dir=None if ref["dir"] is None else reference_root / ref["dir"],
            scenario_level=p["scenario_level"], zero_shot=p["zero_shot"], short_label_space=short,
        )  # fmt: skip

    jobs.run("estimate_curves", outputs, p, call, force=True)
    return out
