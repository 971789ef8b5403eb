"""A toy figure following the recipe "Add a figure or table" (docs/architecture.md): the drawing,
a library-style function taking plain paths and settings, and the figure's declaration."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from vcrbench.plan import paths, products

HERE = Path(__file__).resolve().parent
#: The toy's one output (PNG in the report, every other format of ``figures.formats`` beside it).
TOY_FIGURE = f"{paths.RESULTS}/figures/toy/labels.{{ext}}"


def plot_labels(index_path: str, out_paths: Sequence[str], *, style: Mapping) -> None:
    """Bars of how many clean images each label has."""
    from vcrbench.figures.style import Style, new_figure, save

    style = Style.from_config(style)
    counts = pd.read_parquet(index_path)["label"].value_counts().sort_index()
    with style.context():
        fig = new_figure(3.0, 2.0)
        ax = fig.add_subplot()
        ax.bar([str(label) for label in counts.index], counts.to_numpy())
        ax.set_xlabel("label")
        ax.set_ylabel("images")
        save(fig, out_paths, style)


#: The declaration: everything the workflow needs to know about the toy figure.
TOY = products.declare(
    products.Product(
        "plot_toy_labels",
        (
            products.Output(
                TOY_FIGURE,
                str(HERE / "caption.rst"),
                "Test sets",
                labels={"figure": "images per label"},
            ),
        ),
        version=3,
        script=str(HERE / "script.py"),
        inputs=lambda plan: {"index": paths.CLEAN_INDEX},
        params=lambda plan: {"style": plan.figure_options},
    )
)
