"""Reading weights files and fitting them to an architecture.

Accepted files (``.pt``/``.pth``/``.bin``/``.ckpt`` via ``torch.load(weights_only=True)``, or
``.safetensors``):

- a plain state dict, or one wrapped under ``state_dict``, ``model``, ``model_state_dict``, ``net``
  or ``network`` (nested wrappings too; ``state_dict_ema``/``model_ema`` with ``use_ema: true``);
- keys prefixed by ``module.`` (DataParallel/DDP) or ``_orig_mod.`` (torch.compile), removed by
  timm's ``clean_state_dict``;
- RobustBench-style models wrapped with an input normaliser (``normalize_model``: keys
  ``normalize.mean``, ``normalize.std`` and ``model.<...>``): the ``model.`` prefix is removed and
  the normaliser's mean/std become the model's preprocessing (unless the config sets
  ``mean``/``std``); RobustBench's downloaded files (raw keys, ``module.`` or ``model.`` prefixes)
  load the same way;
- any other single common prefix (``model.``, ``backbone.``, ``net.``, ``base_model.``,
  ``encoder.``) that makes the keys match the architecture;
- for timm architectures, checkpoints in an older layout of the same model that timm's own
  ``checkpoint_filter_fn`` converts (e.g. Swin checkpoints from older timm versions).

Loading is strict by default: a missing or unexpected key (other than BatchNorm's
``num_batches_tracked``) or a shape mismatch is an error naming the model and the file. Pickled
Python objects other than tensors are refused (``weights_only``); convert such a file with
``torch.save(model.state_dict(), path)`` where it was made.
"""

from __future__ import annotations

import inspect
import os
import pickle
import sys
from collections.abc import Mapping
from pathlib import Path

import torch
from torch import nn

from vcrbench.errors import ModelLoadError, WeightsUnavailableError

WRAPPER_KEYS = ("state_dict", "model", "model_state_dict", "net", "network")
EMA_KEYS = ("state_dict_ema", "model_ema")
NORMALISER_PREFIXES = ("normalize.", "normalizer.")
STRIPPABLE_PREFIXES = ("model.", "backbone.", "net.", "base_model.", "encoder.")
_IGNORABLE_MISSING = ("num_batches_tracked",)


def read_state_dict(
    path: str | os.PathLike, model_name: str, use_ema: bool = False, url: str | None = None
) -> dict[str, torch.Tensor]:
    """The tensors of a weights file, unwrapped and with wrapper prefixes removed."""
    from timm.models import clean_state_dict

    path = Path(path)
    if not path.is_file():
        where = f"; get it from {url}" if url else ""
        raise WeightsUnavailableError(
            f"model {model_name!r}: weights file {path} does not exist{where}"
        )
    try:
        if path.suffix == ".safetensors":
            import safetensors.torch

            obj = safetensors.torch.load_file(str(path), device="cpu")
        else:
            obj = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        if "Unsupported global" not in str(exc):
            raise ModelLoadError(
                f"model {model_name!r}: cannot read weights file {path}: not a torch or "
                f"safetensors file ({str(exc).splitlines()[0]})"
            ) from None
        raise ModelLoadError(
            f"model {model_name!r}: {path} holds pickled Python objects, not just tensors, and is "
            f"refused for safety ({str(exc).splitlines()[0]}); re-save it where it was made with "
            "torch.save(model.state_dict(), path)"
        ) from None
    except Exception as exc:
        raise ModelLoadError(
            f"model {model_name!r}: cannot read weights file {path}: {exc}"
        ) from exc
    state = _unwrap(obj, use_ema)
    if state is None:
        raise ModelLoadError(
            f"model {model_name!r}: {path} holds no state dict (top-level keys: "
            f"{sorted(obj)[:10] if isinstance(obj, Mapping) else type(obj).__name__})"
        )
    return clean_state_dict(state)


def _unwrap(obj, use_ema: bool) -> dict[str, torch.Tensor] | None:
    for _ in range(4):  # wrappings nest at most a few levels deep
        if not isinstance(obj, Mapping):
            return None
        if obj and all(isinstance(v, torch.Tensor) for v in obj.values()):
            return dict(obj)
        keys = (EMA_KEYS + WRAPPER_KEYS) if use_ema else WRAPPER_KEYS
        inner = next((obj[k] for k in keys if isinstance(obj.get(k), Mapping)), None)
        if inner is None:
            return None
        obj = inner
    return None


def split_normaliser(
    state: dict[str, torch.Tensor],
) -> tuple[dict[str, torch.Tensor], tuple[tuple[float, ...], tuple[float, ...]] | None]:
    """Remove a RobustBench input normaliser; returns the rest and its (mean, std) if present."""
    for prefix in NORMALISER_PREFIXES:
        mean, std = state.get(prefix + "mean"), state.get(prefix + "std")
        if mean is not None and std is not None and mean.numel() == 3 and std.numel() == 3:
            rest = {k: v for k, v in state.items() if not k.startswith(prefix)}
            as_tuple = lambda t: tuple(float(v) for v in t.flatten())  # noqa: E731
            return rest, (as_tuple(mean), as_tuple(std))
    return state, None


def _best_prefix(state: dict[str, torch.Tensor], target_keys: set[str]) -> dict[str, torch.Tensor]:
    best, best_overlap = state, len(target_keys & set(state))
    for prefix in STRIPPABLE_PREFIXES:
        if state and all(k.startswith(prefix) for k in state):
            stripped = {k[len(prefix) :]: v for k, v in state.items()}
            overlap = len(target_keys & set(stripped))
            if overlap > best_overlap:
                best, best_overlap = stripped, overlap
    return best


def _mismatch(net: nn.Module, state: dict[str, torch.Tensor]) -> tuple[list[str], list[str], list]:
    target = net.state_dict()
    missing = [k for k in target if k not in state and not k.endswith(_IGNORABLE_MISSING)]
    unexpected = [k for k in state if k not in target]
    shapes = [
        (k, tuple(state[k].shape), tuple(v.shape))
        for k, v in target.items()
        if k in state and tuple(state[k].shape) != tuple(v.shape)
    ]
    return missing, unexpected, shapes


def _timm_filter(net: nn.Module):
    module = sys.modules.get(type(net).__module__)
    fn = getattr(module, "checkpoint_filter_fn", None)
    if fn is None:
        return None
    params = list(inspect.signature(fn).parameters.values())
    if len(params) < 2:
        return None
    return fn


def load_weights(
    net: nn.Module,
    path: str | os.PathLike,
    model_name: str,
    strict: bool = True,
    use_ema: bool = False,
    url: str | None = None,
) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """Load a weights file into ``net`` (see module docstring); returns a normaliser's (mean,
    std)."""
    state, normaliser = split_normaliser(read_state_dict(path, model_name, use_ema, url))
    target_keys = set(net.state_dict())
    state = _best_prefix(state, target_keys)
    missing, unexpected, shapes = _mismatch(net, state)
    if missing or unexpected or shapes:
        fn = _timm_filter(net)
        if fn is not None:
            try:
                filtered = fn(dict(state), net)
            except Exception:  # the filter is a best effort for old layouts; report the original
                filtered = None
            if filtered is not None:
                f_missing, f_unexpected, f_shapes = _mismatch(net, filtered)
                if len(f_missing) + len(f_unexpected) + len(f_shapes) < len(missing) + len(
                    unexpected
                ) + len(shapes):
                    state, missing, unexpected, shapes = filtered, f_missing, f_unexpected, f_shapes
    if shapes:
        listed = "; ".join(f"{k}: file {a} vs model {b}" for k, a, b in shapes[:5])
        raise ModelLoadError(
            f"model {model_name!r}: weights file {path} does not fit the architecture "
            f"({len(shapes)} shape mismatch(es): {listed})"
        )
    if strict and (missing or unexpected):
        raise ModelLoadError(
            f"model {model_name!r}: weights file {path} does not match the architecture: "
            f"{len(missing)} missing key(s) {missing[:5]}, {len(unexpected)} unexpected key(s) "
            f"{unexpected[:5]} (set strict: false to load what matches)"
        )
    net.load_state_dict(state, strict=False)
    return normaliser
