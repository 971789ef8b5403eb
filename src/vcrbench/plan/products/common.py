"""What the workflow's own figure and table declarations (:mod:`.tables`, :mod:`.figures`) share:
their scripts' place, the tables' formats, and which of a product's files a config asks for
(``planned``: every corruption's, those with a human reference or an ImageNet-C set, or the rule's
one job when the run has what it shows)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from vcrbench.plan.config import dataset_label_space_name, imagenet_c_corruptions
from vcrbench.plan.humans import geirhos_references, human_references
from vcrbench.vocab import IMAGENET1K

#: The paper's tables: CSV in the report, Markdown and LaTeX beside it.
TABLE_FORMATS = ("csv", "md", "tex")
CSV = ("csv",)


def script(name: str) -> str:
    """The workflow's script ``workflow/scripts/<name>.py``, as a rule in ``rules/`` names it."""
    return f"../workflow/scripts/{name}.py"


def per(corruptions: Callable[[Mapping], list[str]]):
    def planned(config: Mapping) -> list[dict[str, str]]:
        return [{"corruption": c} for c in corruptions(config)]

    return planned


def when(condition: Callable[[Mapping], object]):
    def planned(config: Mapping) -> list[dict[str, str]]:
        return [{}] if condition(config) else []

    return planned


def with_humans(config: Mapping) -> list[str]:
    return [c for c, (ref, _) in human_references(config).items() if ref]


def mce(config: Mapping) -> bool:
    return bool(imagenet_c_corruptions(config)) and dataset_label_space_name(config) == IMAGENET1K


def trained_table(config: Mapping) -> bool:
    return bool(geirhos_references(config)) and bool(config["humans"]["trained_table"])
