"""Estimates on disk: one writer and one reader for every estimate folder of the workflow.

A folder holds one Parquet file per table (``bins``, ``curves``, ``summary``, ``replicates``), the
rows of several estimates stacked with leading key columns: a model's folder
(``results/estimates/{model}/{corruption}``) keys them by ``label_space, property`` and keeps the
bins and curves; a human reference's (``results/humans/{reference}``) keys them by ``property``
and keeps all four tables, so that its :class:`~vcrbench.estimation.Estimate` objects, bootstrap
replicates included, can be rebuilt for paired comparisons. A human reference's folder is read as
one :class:`HumanEstimate` (:func:`read_human_estimate`): its curves, how the accuracy curve's
s(0) was set, and the Δv range where the reference has data, from extra columns of its summary.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from vcrbench.estimation.estimate import Estimate
from vcrbench.files import io
from vcrbench.vocab import ESTIMATE_TABLES, PROPERTY_NAMES


def _table(est: Estimate, table: str) -> pd.DataFrame:
    frames = {
        "bins": est.bins_frame,
        "curves": est.curve_frame,
        "summary": est.summary_frame,
        "replicates": est.replicates_frame,
    }
    if table not in frames:
        raise ValueError(f"unknown estimate table {table!r}; known: {', '.join(frames)}")
    return frames[table]()


def estimate_tables(
    estimates: Mapping[tuple, Estimate],
    keys: Sequence[str],
    tables: Sequence[str] = ESTIMATE_TABLES,
    summary_extra: Mapping[tuple, Mapping] | None = None,
) -> dict[str, pd.DataFrame]:
    """``{table: DataFrame}`` of ``estimates`` (``{key values: Estimate}``, in the order given),
    each row led by the ``keys`` columns; ``summary_extra[key]`` adds columns to that estimate's
    summary row (e.g. how a human anchor was set)."""
    out = {}
    for table in tables:
        frames = []
        for key, est in estimates.items():
            if len(key) != len(keys):
                raise ValueError(f"estimate key {key!r} does not match the key columns {keys}")
            frame = _table(est, table)
            if table == "summary" and summary_extra and key in summary_extra:
                frame = frame.assign(**summary_extra[key])
            frame = frame.assign(**dict(zip(keys, key, strict=True)))
            frames.append(frame[[*keys, *(c for c in frame.columns if c not in keys)]])
        if not frames:
            raise ValueError("no estimates to write")
        out[table] = pd.concat(frames, ignore_index=True)
    return out


def write_estimates(
    estimates: Mapping[tuple, Estimate],
    out_dir: str | os.PathLike,
    *,
    keys: Sequence[str],
    tables: Sequence[str] = ESTIMATE_TABLES,
    summary_extra: Mapping[tuple, Mapping] | None = None,
    metadata: Mapping | None = None,
) -> dict[str, Path]:
    """Write :func:`estimate_tables` as ``{table}.parquet`` in ``out_dir`` (atomically, with
    ``metadata``); returns the paths."""
    frames = estimate_tables(estimates, keys, tables, summary_extra)
    out_dir = Path(out_dir)
    return {
        table: io.write_parquet(frame, out_dir / f"{table}.parquet", metadata=metadata)
        for table, frame in frames.items()
    }


def read_estimate_tables(
    out_dir: str | os.PathLike, tables: Sequence[str] = ESTIMATE_TABLES
) -> dict[str, pd.DataFrame]:
    """The tables of an estimate folder, as written."""
    out_dir = Path(out_dir)
    return {t: io.read_parquet(out_dir / f"{t}.parquet") for t in tables}


def read_estimates(out_dir: str | os.PathLike, keys: Sequence[str]) -> dict[tuple, Estimate]:
    """Inverse of :func:`write_estimates` (all four tables): ``{key values: Estimate}`` in the
    order of the summary table."""
    tables = read_estimate_tables(out_dir)
    keys = list(keys)
    out = {}
    for key, _ in tables["summary"].groupby(keys, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        rows = {}
        for name, frame in tables.items():
            mask = pd.Series(True, index=frame.index)
            for col, value in zip(keys, key, strict=True):
                mask &= frame[col] == value
            rows[name] = frame[mask].drop(columns=keys)
        out[key] = Estimate.from_frames(
            rows["bins"], rows["curves"], rows["summary"], rows["replicates"]
        )
    return out


# --------------------------------------------------------------------------- human references

#: How the consistency curve's s(0) is set: the humans' own consistency on trials at Δv = 0.
CONSISTENCY_ANCHOR = "own consistency at dv = 0"


@dataclasses.dataclass(frozen=True)
class HumanEstimate:
    """The estimates of one human reference.

    ``curves``: one :class:`Estimate` per property (``accuracy``, and ``consistency`` where clean
    answers exist), in :data:`~vcrbench.vocab.PROPERTY_NAMES` order; ``anchor``: how the accuracy
    curve's s(0) was set (None without an accuracy curve); ``support``: property ->
    ``(lo, hi, rule)``, the Δv range where the reference has data (empty for a folder written
    before supports existed).
    """

    curves: dict[str, Estimate]
    anchor: str | None = None
    support: dict[str, tuple[float, float, str]] = dataclasses.field(default_factory=dict)
    #: property -> why it has no curve (e.g. no human s_p without trials at Δv = 0); not stored.
    skipped: dict[str, str] = dataclasses.field(default_factory=dict)

    def support_range(self, prop: str) -> tuple[float, float]:
        """``(lo, hi)`` of ``prop``'s support; all of [0, 1] where the folder records none."""
        if prop not in self.support:
            return 0.0, 1.0
        lo, hi, _ = self.support[prop]
        return lo, hi


def write_human_estimate(
    estimate: HumanEstimate, out_dir: str | os.PathLike, metadata: Mapping | None = None
) -> dict[str, Path]:
    """Write a :class:`HumanEstimate` as ``{bins,curves,summary,replicates}.parquet`` in
    ``out_dir`` (:func:`write_estimates` keyed by ``property``); the summary also says how each
    curve's anchor was set (``anchor``) and its support (``dv_lo, dv_hi, support_rule``)."""
    props = [p for p in PROPERTY_NAMES if p in estimate.curves]
    extra = {}
    for p in props:
        how = estimate.anchor if p == "accuracy" and estimate.anchor is not None else None
        row: dict = {"anchor": CONSISTENCY_ANCHOR if how is None else how}
        if p in estimate.support:
            lo, hi, rule = estimate.support[p]
            row.update({"dv_lo": lo, "dv_hi": hi, "support_rule": rule})
        extra[(p,)] = row
    chosen = {(p,): estimate.curves[p] for p in props}
    return write_estimates(
        chosen, out_dir, keys=["property"], summary_extra=extra, metadata=metadata
    )


def read_human_estimate(out_dir: str | os.PathLike) -> HumanEstimate:
    """Inverse of :func:`write_human_estimate`."""
    curves = {key[0]: est for key, est in read_estimates(out_dir, ["property"]).items()}
    summary = read_estimate_tables(out_dir, ["summary"])["summary"]
    accuracy = summary[summary["property"] == "accuracy"]
    anchor = None
    if len(accuracy) and "anchor" in accuracy:
        anchor = str(accuracy["anchor"].iloc[0])
    support = {}
    if {"dv_lo", "dv_hi"} <= set(summary.columns):
        support = {
            str(row.property): (float(row.dv_lo), float(row.dv_hi), str(row.support_rule))
            for row in summary.itertuples()
        }
    return HumanEstimate(curves=curves, anchor=anchor, support=support)
