"""``vcrbench.benchmark``: one model, in memory or by its id, through the workflow's stages in
one call (docs/api.md)."""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from vcrbench.api import experiment, stages
from vcrbench.api.cache import cache_folder
from vcrbench.api.result import Result
from vcrbench.figures.options import DEFAULT_FAMILY
from vcrbench.files import io
from vcrbench.plan import Plan, paths

log = logging.getLogger(__name__)

#: The config blocks a test set and a human reference can depend on (the cache's key).
_TEST_SET_BLOCKS = ("seed", "dataset", "sampling", "vif", "humans", "estimation")


def benchmark(
    model,
    *,
    preprocessing=None,
    name: str | None = None,
    run: str | os.PathLike | None = None,
    config: str | os.PathLike | Mapping | None = None,
    corruptions: Sequence[str] | None = None,
    n_samples: int | None = None,
    dataset: str | os.PathLike | Mapping | None = None,
    device: str | None = None,
    cache_dir: str | os.PathLike | None = None,
    out_dir: str | os.PathLike | None = None,
    settings: Mapping | None = None,
    progress: bool = True,
) -> Result:
    """Evaluate ``model`` as the workflow evaluates a configured model; return a :class:`Result`.

    ``model``: a ``torch.nn.Module`` (logits over the label space's classes from normalised
    float images; ``preprocessing`` says how they are made from the 224x224 uint8 test images: a
    :class:`vcrbench.models.Preprocessing` or a mapping of its keys, else a timm model's own,
    else ImageNet's mean and std at 224), or a model id ``"source:id"`` of any registered source
    (``"timm:resnet50.a1_in1k"``), or a config entry (``{"source": ..., "id": ...}``), or the
    name of a model of the config. ``name`` names it in the tables (default: from the id).

    Test sets: with ``run`` (a finished workflow run's ``results/`` folder) the run's test sets,
    clean set and human curves, checked against the config (``config``, default the run's
    ``config/config.yaml``) by their provenance; the model is compared with the run's models.
    Without ``run`` they are generated from the config (default the embedded default,
    ``config/config.yaml``) into ``cache_dir`` (default ``$XDG_CACHE_HOME/vcrbench``) and reused
    by the next call with the same settings. ``corruptions``, ``n_samples``, ``dataset`` (a
    folder of images with its ``labels.csv``, or a ``dataset`` block), ``device`` (``auto``:
    the GPU if there is one) and ``settings`` (``{"dotted.config.key": value}``) change the
    config; the schema gives every default.

    The model's predictions, estimates, ``vcr_metrics.csv`` and figures go to ``out_dir``
    (default: a folder of the cache named after the model).
    """
    base, source = experiment.read_base(config, run)
    entry = experiment.model_entry(model, base.get("models") or {})
    name = experiment.model_name(model, name)
    config_dict = experiment.build(
        base, name, entry, keep_models=run is not None, corruptions=corruptions,
        n_samples=n_samples, dataset=dataset, device=device, settings=settings,
    )  # fmt: skip
    plan = Plan(config_dict)
    cache = cache_folder(cache_dir) if (run is None or out_dir is None) else None
    if run is not None:
        workdir, _ = experiment.run_folders(run)
        inputs = stages.Jobs(workdir, read_only=True, where=f"{run} (config {source})")
    else:
        inputs = stages.Jobs(cache / "testsets" / _test_set_key(plan))
    out_root = Path(out_dir) if out_dir is not None else cache / "models" / name
    outputs = stages.Jobs(out_root)

    from vcrbench.api.models import classifier_of, predict

    # the model first: a wrong head is named before any test set is made
    built, spec, device_used = classifier_of(model, entry, name, plan, preprocessing)
    clean = stages.clean_set(plan, inputs)
    references = {}
    for c in _progress(plan.corruptions, progress, "test sets"):
        stages.test_set(plan, inputs, c, clean)
        ref, _ = plan.human_references[c]
        if ref is not None and ref not in references:
            references[ref] = stages.human_reference(plan, inputs, ref, clean)

    predictions = predict(plan, outputs, inputs, name, spec, built, clean, progress)
    metric_files = [
        stages.estimate(plan, outputs, name, c, predictions[c], predictions["clean"], inputs.root)
        for c in _progress(plan.corruptions, progress, "estimates")
    ]
    from vcrbench.evaluation import evaluate

    table_csv = outputs.path(paths.VCR_METRICS)
    evaluate.collect_metrics(metric_files, table_csv)
    mine = pd.read_csv(table_csv)  # as the workflow's table reads (its CSV's 6 digits)
    curves = _curves(outputs, name, plan.corruptions)
    compared, curve_files = _compared(plan, inputs, name, run is not None)
    table = pd.concat([compared, mine], ignore_index=True) if len(compared) else mine
    table = table.sort_values(["model", "corruption", "label_space"], kind="stable")
    all_csv = outputs.path(paths.VCR_METRICS).with_name("vcr_metrics_compared.csv")
    io.write_csv(table, all_csv)
    families = {**plan.families, name: plan.families.get(name, DEFAULT_FAMILY)}
    figures = {
        "style": plan.figure_options,
        "families": families,
        "dataset_label_space": plan.dataset_label_space,
        "metrics_csv": all_csv,
        "corruptions": {
            c: {
                "curves": [
                    *curve_files.get(c, []),
                    outputs.path(paths.MODEL_CURVES, model=name, corruption=c),
                ],
                "reference_dir": references.get(plan.human_references[c][0]),
                "reference_name": plan.human_references[c][0],
            }  # fmt: skip
            for c in plan.corruptions
        },
    }
    return Result(name, mine, curves, table.reset_index(drop=True), out_root, device_used, figures)


def _test_set_key(plan: Plan) -> str:
    """The cache folder of the test sets and human curves of a config: a hash of the blocks they
    depend on (each output is still checked against its own params' hash)."""
    blocks = {k: plan.config[k] for k in _TEST_SET_BLOCKS}
    text = json.dumps(blocks, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _progress(items, progress: bool, what: str):
    from tqdm.auto import tqdm

    return tqdm(list(items), desc=what, unit="corruption", disable=not progress)


def _curves(jobs: stages.Jobs, name: str, corruptions: Sequence[str]) -> pd.DataFrame:
    frames = [
        io.read_parquet(jobs.path(paths.MODEL_CURVES, model=name, corruption=c)).assign(
            corruption=c
        )
        for c in corruptions
    ]
    out = pd.concat(frames, ignore_index=True)
    return out[["corruption", *[c for c in out.columns if c != "corruption"]]]


def _compared(
    plan: Plan, inputs: stages.Jobs, name: str, from_run: bool
) -> tuple[pd.DataFrame, dict[str, list[Path]]]:
    """The run's metrics rows and curve files of its other models (none without a run)."""
    if not from_run:
        return pd.DataFrame(), {}
    table_csv = inputs.path(paths.VCR_METRICS)
    others = [m for m in plan.models if m != name]
    rows = pd.DataFrame()
    if table_csv.is_file():
        run_table = pd.read_csv(table_csv)
        keep = run_table["model"].isin(others) & run_table["corruption"].isin(plan.corruptions)
        rows = run_table[keep]
    files: dict[str, list[Path]] = {}
    for c in plan.corruptions:
        found = [inputs.path(paths.MODEL_CURVES, model=m, corruption=c) for m in others]
        files[c] = [f for f in found if f.is_file()]
    return rows, files
