"""Source ``clip``: a CLIP model used zero-shot, through ``open_clip``.

The classifier head holds one text embedding per class, of the prompt ``prompt`` (default
``"a picture of {}"``, the VCR paper's "a picture of (ImageNet class)") filled with the class name;
logits are the scaled cosine similarities between image and class embeddings. ImageNet-1k class
names are OpenAI's curated list shipped by open_clip (``class_names: openai``, the default) or the
first WordNet synonym (``class_names: wordnet``); another label space brings its own names (a
dataset's label space, ``label_space: dataset`` in the entry, made readable by
:func:`readable_class_name`; names listed in ``class_names`` are used as written). The paper does
not say which names it used.

``id`` is an open_clip model name (``ViT-B-32-quickgelu`` for OpenAI's ViT-B/32, the paper's
``openai/clip-vit-base-patch32``), ``hf-hub:org/repo`` or ``local-dir:<folder>`` (a folder with an
``open_clip_config.json`` and, optionally, weights). ``pretrained`` is an open_clip tag
(``openai``), ``checkpoint`` a local weights file.
"""

from __future__ import annotations

import logging
import os
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

from vcrbench.errors import (
    ModelConfigError,
    ModelLoadError,
    WeightsUnavailableError,
    did_you_mean,
)
from vcrbench.labels import imagenet_class_names
from vcrbench.models.sources import Built, register_source
from vcrbench.models.spec import ModelSpec

_UNSET = object()

#: open_clip's model ids that bring their own config (and weights): a folder, a hub repository.
SCHEMAS = ("local-dir:", "hf-hub:")

log = logging.getLogger(__name__)


_NUMBER_PREFIX = re.compile(r"^\d+[._\s]+")


def readable_class_name(name: str) -> str:
    """A dataset's class name as the prompts use it: a leading class number and the
    underscores of file-system names dropped (CUB-200-2011's ``001.Black_footed_Albatross`` ->
    ``Black footed Albatross``, SUN's ``apartment_building_outdoor`` -> ``apartment building
    outdoor``)."""
    return " ".join(_NUMBER_PREFIX.sub("", name.strip()).replace("_", " ").split()) or name


def class_names_for(spec: ModelSpec) -> list[str]:
    import open_clip

    space = spec.output_space
    if isinstance(spec.class_names, tuple):
        names = list(spec.class_names)
    elif not space.is_imagenet1k:
        if space.class_names is None:
            raise ModelConfigError(
                f"model {spec.name!r}: zero-shot CLIP on label space {space.name!r} needs its "
                "class names (label_space.class_names, or class_names in the entry)"
            )
        names = [readable_class_name(n) for n in space.class_names]
    elif spec.class_names == "openai":
        names = list(open_clip.IMAGENET_CLASSNAMES)
    else:
        names = imagenet_class_names()
    if len(names) != space.num_classes:
        raise ModelConfigError(
            f"model {spec.name!r}: {len(names)} class names for label space {space.name!r} "
            f"with {space.num_classes} classes"
        )
    return names


def parse_clip(entry, values: dict, where: str) -> None:
    """``pretrained`` (an open_clip tag or false) or ``checkpoint`` is required (but for a
    ``local-dir:`` id); ``prompt`` holds ``{}``; ``class_names`` is openai, wordnet or a list."""
    pretrained = entry.get("pretrained", _UNSET)
    own_weights = values["id"].startswith(SCHEMAS)  # the folder or hub repo holds its weights
    if pretrained is _UNSET and values.get("checkpoint") is None and not own_weights:
        raise ModelConfigError(
            f"{where}: a clip model needs 'pretrained' (an open_clip tag such as 'openai', or "
            "false for random weights) or 'checkpoint' (a weights file)"
        )
    if pretrained is True or (pretrained is not _UNSET and not isinstance(pretrained, str | bool)):
        raise ModelConfigError(f"{where}: clip 'pretrained' is an open_clip tag or false")
    values["pretrained"] = None if pretrained in (_UNSET, False) else pretrained
    if "prompt" in entry and "{}" not in entry["prompt"]:
        raise ModelConfigError(f"{where}: the clip prompt needs '{{}}' for the class name")
    if "class_names" in entry:
        names = entry["class_names"]
        if isinstance(names, list) and all(isinstance(n, str) for n in names):
            values["class_names"] = tuple(names)
        elif names in ("openai", "wordnet"):
            values["class_names"] = names
        else:
            raise ModelConfigError(
                f"{where}: class_names is 'openai', 'wordnet' or a list of names"
            )


def check_clip(spec: ModelSpec) -> tuple[list, int | None]:
    """open_clip knows the model and its pretrained tag (a ``local-dir:`` or ``hf-hub:`` model,
    which brings its own config, is not checked: nothing is downloaded before a job)."""
    import open_clip

    if spec.id.startswith(SCHEMAS):
        return [], None
    if spec.id not in open_clip.list_models():
        known = open_clip.list_models()
        return [("id", f"open_clip has no model {spec.id!r}{did_you_mean(spec.id, known)}")], None
    if isinstance(spec.pretrained, str):
        tags = open_clip.list_pretrained_tags_by_model(spec.id)
        if spec.pretrained not in tags:
            problem = (
                f"open_clip has no weights {spec.pretrained!r} for {spec.id!r}; "
                f"known: {', '.join(tags) or 'none'}"
            )
            return [("pretrained", problem)], None
    return [], None


def _hub_weights(spec: ModelSpec, cache: str | None) -> None:
    """Download (or find in the cache) the weights of an ``hf-hub:`` model: open_clip itself
    only warns when they cannot be had and builds the model with random weights."""
    from open_clip.pretrained import download_pretrained_from_hf

    repo = spec.id.removeprefix("hf-hub:")
    try:
        download_pretrained_from_hf(repo, cache_dir=cache)
    except Exception as exc:
        raise WeightsUnavailableError(
            f"model {spec.name!r}: open_clip could not get the weights of the Hugging Face Hub "
            f"repository {repo!r} ({type(exc).__name__}: {str(exc)[:300]}). This machine may be "
            "offline: run the workflow's fetch_weights where there is network (it downloads them "
            f"into {cache or 'the Hugging Face cache'}), or download the repository's weights "
            "file and set `checkpoint: <file>` in the model's entry"
        ) from exc


# A zero-shot model's head is made from prompts: it cannot be fine-tuned here.
@register_source(
    "clip",
    keys={"pretrained", "checkpoint", "sha256", "prompt", "class_names"},
    parse=parse_clip,
    check=check_clip,
)
def build_clip(spec: ModelSpec, device: torch.device) -> Built:
    import open_clip
    import torch

    from vcrbench.models.architectures import ClipZeroShot

    names = class_names_for(spec)
    pretrained = spec.pretrained
    if spec.checkpoint is not None:
        if not spec.checkpoint.is_file():
            where = f"; get it from {spec.url}" if spec.url else ""
            raise WeightsUnavailableError(
                f"model {spec.name!r}: weights file {spec.checkpoint} does not exist{where}"
            )
        pretrained = str(spec.checkpoint)
    # in the workflow, downloads go to the weights cache (vcrbench.plan.cluster), not ~/.cache
    cache = os.environ.get("HF_HUB_CACHE")
    if spec.id.startswith("hf-hub:") and spec.checkpoint is None:
        _hub_weights(spec, cache)
    try:
        model = open_clip.create_model(
            spec.id, pretrained=pretrained, cache_dir=cache, **dict(spec.kwargs)
        )
    except Exception as exc:
        if isinstance(pretrained, str) and spec.checkpoint is None:
            raise WeightsUnavailableError(
                f"model {spec.name!r}: open_clip could not get the weights {pretrained!r} of "
                f"{spec.id!r} ({type(exc).__name__}: {str(exc)[:300]}). This machine may be "
                'offline: on a machine with network run `python -c "import open_clip; '
                f"open_clip.create_model('{spec.id}', pretrained='{pretrained}')\"` and copy its "
                "Hugging Face cache to this machine, or download the weights file and set "
                "`checkpoint: <file>` in the model's entry"
            ) from exc
        raise ModelLoadError(
            f"model {spec.name!r}: open_clip cannot build {spec.id!r}: {exc}"
        ) from exc
    if pretrained is None and not spec.id.startswith(SCHEMAS):
        log.warning("model %r: CLIP %s with random weights", spec.name, spec.id)
    model = model.to(device).eval()
    tokenizer = open_clip.get_tokenizer(spec.id)
    with torch.inference_mode():
        head = open_clip.build_zero_shot_classifier(
            model, tokenizer, names, [spec.prompt], num_classes_per_batch=100, device=device
        )
    # inference_mode tensors cannot be saved for autograd later; a plain copy can.
    head = head.detach().clone().float()
    net = ClipZeroShot(model.visual, head, model.logit_scale.exp().item())
    cfg = getattr(model.visual, "preprocess_cfg", {}) or {}
    size = cfg.get("size")
    preprocessing = {
        "input_size": int(size if isinstance(size, int) else max(size)) if size else None,
        "interpolation": cfg.get("interpolation"),
        "mean": tuple(cfg["mean"]) if cfg.get("mean") else None,
        "std": tuple(cfg["std"]) if cfg.get("std") else None,
    }
    info = {
        "library": "open_clip",
        "arch": spec.id,
        "pretrained": pretrained,
        "prompt": spec.prompt,
        "class_names": spec.class_names if isinstance(spec.class_names, str) else "list",
    }
    return Built(net, preprocessing, info, net.num_classes)
