"""Source ``hub``: a ``torch.hub`` entry point, from GitHub or from a local repository folder.

``repo`` is ``owner/name[:ref]`` (``hub_source: github``, the default; e.g.
``facebookresearch/dinov2`` with ``id: dinov2_vitg14_lc``) or a folder holding a ``hubconf.py``
(``hub_source: local``). ``kwargs`` go to the entry point. A GitHub repository and the weights its
entry point downloads are cached under ``$TORCH_HOME/hub``; offline, loading works from that cache
and otherwise fails with an error that says what to fetch. ``checkpoint`` loads local weights into
the built model (use ``kwargs: {pretrained: false}`` where the entry point would download them).
torch.hub does not say how a model wants its input: set ``input_size``, ``interpolation``,
``mean``, ``std`` in the entry (the defaults are 224, bilinear, ImageNet mean/std).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

from vcrbench.errors import ModelConfigError, ModelLoadError, WeightsUnavailableError
from vcrbench.models.sources import Built, register_source
from vcrbench.models.spec import ModelSpec


@register_source("hub")
def build_hub(spec: ModelSpec, device: torch.device) -> Built:
    import torch

    repo = spec.repo
    if spec.hub_source == "local":
        if not (Path(repo) / "hubconf.py").is_file():
            raise ModelConfigError(
                f"model {spec.name!r}: local torch.hub repository {repo} has no hubconf.py"
            )
    try:
        net = torch.hub.load(
            repo,
            spec.id,
            source=spec.hub_source,
            trust_repo=True,  # the config names the repository: that is the trust decision
            skip_validation=True,
            verbose=False,
            **dict(spec.kwargs),
        )
    except Exception as exc:
        if spec.hub_source == "local":
            raise ModelLoadError(
                f"model {spec.name!r}: torch.hub entry {spec.id!r} of {repo} failed: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        hub_dir = torch.hub.get_dir()
        raise WeightsUnavailableError(
            f"model {spec.name!r}: torch.hub could not load {spec.id!r} from the GitHub "
            f"repository {repo!r} ({type(exc).__name__}: {str(exc)[:300]}). This machine may be "
            "offline: on a machine with network run "
            f"`python -c \"import torch; torch.hub.load('{repo}', '{spec.id}')\"` and copy "
            f"its torch hub folder (the repository folder and checkpoints/) to {hub_dir}, or "
            "clone the repository, put the weights under checkpoints/ there, and set "
            "`hub_source: local` and `repo: <clone>` in the model's entry"
        ) from exc
    if not isinstance(net, torch.nn.Module):
        raise ModelLoadError(
            f"model {spec.name!r}: torch.hub entry {spec.id!r} returned {type(net).__name__}, "
            "not a torch module"
        )
    info = {"library": "torch.hub", "repo": repo, "hub_source": spec.hub_source, "entry": spec.id}
    return Built(net, {}, info).apply_checkpoint(spec)
