"""What :func:`vcrbench.benchmark` returns: the metrics, the curves, and the workflow's figures."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd


@dataclass
class Result:
    """One model's evaluation (:func:`vcrbench.benchmark`).

    ``metrics``: its rows of the workflow's ``results/tables/vcr_metrics.csv`` (one per
    corruption and label space: R̂_a, R̂_p, HMRI and MRSI with their intervals and scenarios, the
    human reference, counts and status; the same columns). ``curves``: its estimated curves
    (``corruption, label_space, property, v, s, lo, hi``). ``table``: ``metrics`` with the rows
    of the models it is compared with (a finished run's, with ``run=``). ``folder``: where its
    predictions, estimates, table and figures are, at the workflow's paths (``results/...``).
    """

    model: str
    metrics: pd.DataFrame
    curves: pd.DataFrame
    table: pd.DataFrame
    folder: Path
    device: str
    #: How to draw (:meth:`plot`): per corruption the curve files of every model compared, the
    #: human reference's folder and name, the families and the figure options.
    figures: Mapping = field(default_factory=dict, repr=False)

    def plot(
        self, out_dir: str | os.PathLike | None = None, formats: Sequence[str] | None = None
    ) -> list[Path]:
        """The workflow's per-corruption figures of the models compared: the s_a and s_p curves
        with the human curve and its band (``figures/curves/{corruption}``) and the HMRI/MRSI
        bars (``figures/hmri_mrsi/{corruption}``), drawn by the workflow's own functions, under
        ``out_dir`` (default: ``folder/results``) in ``formats`` (default: the config's
        ``figures.formats``). Returns the files written."""
        from vcrbench.figures import build
        from vcrbench.plan import paths

        out = Path(out_dir) if out_dir is not None else self.folder / paths.RESULTS
        style = dict(self.figures["style"])
        exts = list(formats) if formats is not None else list(style["formats"])
        written: list[Path] = []
        for corruption, how in self.figures["corruptions"].items():
            files = {
                kind: [out / "figures" / kind / f"{corruption}.{ext}" for ext in exts]
                for kind in ("curves", "hmri_mrsi")
            }
            written += build.plot_curves(
                how["curves"], files["curves"], corruption=corruption,
                families=self.figures["families"], style=style,
                dataset_label_space=self.figures["dataset_label_space"],
                reference_dir=how["reference_dir"], reference_name=how["reference_name"],
            )  # fmt: skip
            written += build.plot_hmri_mrsi(
                self.figures["metrics_csv"], files["hmri_mrsi"], corruption=corruption,
                families=self.figures["families"], style=style,
            )  # fmt: skip
        return written

    def __repr__(self) -> str:
        return (
            f"Result(model={self.model!r}, {len(self.metrics)} metric rows, "
            f"folder={str(self.folder)!r}, device={self.device!r})"
        )
