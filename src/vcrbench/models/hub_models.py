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

from vcrbench.errors import (
    ModelConfigError,
    ModelLoadError,
    WeightsUnavailableError,
    did_you_mean,
)
from vcrbench.models.sources import Built, register_source, same_source
from vcrbench.models.spec import CHECKPOINT_KEYS, HUB_SOURCES, ModelSpec


def parse_hub(entry, values: dict, where: str) -> None:
    """``repo`` is required; ``hub_source`` is github (the default) or local."""
    if not values.get("repo"):
        raise ModelConfigError(
            f"{where}: source 'hub' needs 'repo' (a GitHub 'owner/name[:ref]' or a local "
            "directory with hub_source: local)"
        )
    hub_source = entry.get("hub_source", "github")
    if hub_source not in HUB_SOURCES:
        raise ModelConfigError(f"{where}: hub_source {hub_source!r} is not one of {HUB_SOURCES}")
    values["hub_source"] = hub_source


def check_hub(spec: ModelSpec) -> tuple[list, int | None]:
    """The repository has the entry point (a GitHub one only where torch.hub has it cached:
    nothing is downloaded)."""
    import torch

    if spec.hub_source == "local":
        if not (Path(spec.repo) / "hubconf.py").is_file():
            return [("repo", f"local torch.hub repository {spec.repo} has no hubconf.py")], None
        entries = torch.hub.list(spec.repo, source="local", trust_repo=True)
    else:
        owner_name, _, ref = spec.repo.partition(":")
        cached = Path(torch.hub.get_dir()) / "_".join([*owner_name.split("/"), ref or "main"])
        if not (cached / "hubconf.py").is_file():
            return [], None
        entries = torch.hub.list(str(cached), source="local", trust_repo=True)
    if spec.id not in entries:
        found = did_you_mean(spec.id, entries)
        return [("id", f"torch.hub repository {spec.repo} has no entry {spec.id!r}{found}")], None
    return [], None


@register_source(
    "hub",
    keys={"repo", "hub_source", *CHECKPOINT_KEYS},
    parse=parse_hub,
    check=check_hub,
    fine_tuned=same_source,
)
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
