"""The evaluated model of a :func:`vcrbench.benchmark` call, built, and its predictions (rule
``predict_model``'s library calls, on the test sets of the call)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from types import SimpleNamespace

from vcrbench import inference
from vcrbench.api import stages
from vcrbench.datasets.loading import CleanSet
from vcrbench.labels import get_label_space
from vcrbench.models import ModelSpec, Preprocessing
from vcrbench.plan import Plan, paths
from vcrbench.plan import config as cfg

#: ``ModelSpec.source`` of a model given as a module (no config source: it is built by no one).
MODULE_SOURCE = "module"


def _preprocessing(value, module) -> Preprocessing:
    """``value`` as a :class:`Preprocessing`; None: a timm module's own (its ``pretrained_cfg``,
    as the ``timm`` source reads it), else ImageNet's mean and std at 224."""
    if value is None:
        if getattr(module, "pretrained_cfg", None):
            from vcrbench.models.timm_models import timm_preprocessing

            own = timm_preprocessing(module)
            return Preprocessing(**{k: v for k, v in own.items() if v is not None})
        return Preprocessing()
    if isinstance(value, Preprocessing):
        return value
    if isinstance(value, Mapping):
        try:
            return Preprocessing(**dict(value))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"preprocessing {dict(value)!r}: {exc}") from None
    raise TypeError(
        f"preprocessing must be a vcrbench.models.Preprocessing or a mapping of its keys "
        f"(input_size, interpolation, mean, std, crop), not {type(value).__name__}"
    )


def classifier_of(model, entry: dict | None, name: str, plan: Plan, preprocessing):
    """``(Classifier, ModelSpec, device name)`` of the evaluated model: built from its config
    entry as the workflow's inference job builds it, or a module wrapped with ``preprocessing``.
    Its classes must be the dataset's label space's (an error names both)."""
    import torch

    from vcrbench.models.loading import load_model, wrap
    from vcrbench.runtime import resolve_device

    device = resolve_device(plan.setting("inference.device"))
    if entry is not None:
        if preprocessing is not None:
            raise ValueError(
                f"model {name!r}: preprocessing= is for a module; a model given by its id takes "
                "its own (or input_size, mean, std, … in its entry)"
            )
        spec = ModelSpec.from_config(name, plan.model_entry(SimpleNamespace(model=name)))
        return load_model(spec, device), spec, str(device)
    if not isinstance(model, torch.nn.Module):
        raise TypeError(
            f"model must be a torch.nn.Module, a model id 'source:id', a config entry or a "
            f"model's name, not {type(model).__name__}"
        )
    prep = _preprocessing(preprocessing, model)
    kind = f"{type(model).__module__}.{type(model).__qualname__}"
    spec = ModelSpec(name=name, source=MODULE_SOURCE, id=kind)
    space = get_label_space(plan.config["dataset"]["label_space"])
    info = {"spec": {"source": MODULE_SOURCE, "id": kind}, "preprocessing": asdict(prep)}
    built = wrap(
        name, model, prep, space, info, device,
        hint="the module must return (N, classes) logits over the dataset's label space",
    )  # fmt: skip
    return built, spec, str(device)


def predict_params(plan: Plan, name: str, spec: ModelSpec) -> dict:
    if spec.source != MODULE_SOURCE:
        return stages.predict_params(plan, name)
    return {**stages.predict_params_common(plan), "model": {"source": spec.source, "id": spec.id}}


def predict(
    plan: Plan, outputs: stages.Jobs, inputs: stages.Jobs, name: str, spec: ModelSpec, built,
    clean: tuple[Path, Path], progress: bool,
) -> dict:  # fmt: skip
    """The model's predictions on the clean set and on every group of every test set, each file
    as the workflow's inference job writes it: ``{"clean": file, corruption: [files]}``."""
    params = predict_params(plan, name, spec)
    options = inference.InferenceOptions.of_job(
        params, plan.config["inference"], device=built.device, progress=progress
    )
    files: dict = {"clean": outputs.path(paths.PREDICTIONS_CLEAN, model=name)}
    sets = []
    for c in plan.corruptions:
        files[c] = []
        for g in cfg.group_ids(plan.config, c):
            out = outputs.path(paths.PREDICTIONS_GROUP, model=name, corruption=c, group=g)
            shards = plan.group_shard_files(SimpleNamespace(corruption=c, group=g))
            sets.append((out, [inputs.root / s for s in shards]))
            files[c].append(out)

    def call():
        inference.predict_clean(spec, CleanSet.open(*clean), files["clean"], options, model=built)
        for out, shards in sets:
            inference.predict_shards(spec, shards, out, options, model=built)

    outputs.run("predict_model", [files["clean"], *(o for o, _ in sets)], params, call, force=True)
    return files
