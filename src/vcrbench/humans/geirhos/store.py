"""The compact Parquet copy of the Geirhos data: storage, the raw CSV view, typed trials."""

from __future__ import annotations

import functools
import importlib.resources
import json
import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from vcrbench.humans.geirhos.experiments import (
    _IMAGE_ID_RE,
    CSV_COLUMNS,
    DNN_COLUMNS,
    FLOAT_COLUMNS,
    INT_COLUMNS,
    NULL_TEXT,
    PARQUET_FILES,
    PRETRAINED_NETWORKS,
    TRAINED_NETWORKS,
    _check_collection,
    experiment_info,
)
from vcrbench.humans.trial_schema import HumanDataError

#: The release this copy was made from.


# --------------------------------------------------------------------------- storage


def data_root() -> Path:
    """Folder of the shipped Geirhos data (``vcrbench/data/geirhos2018``)."""
    return Path(str(importlib.resources.files("vcrbench") / "data" / "geirhos2018"))


def parquet_path(collection: str, root: str | os.PathLike | None = None) -> Path:
    _check_collection(collection)
    return Path(root if root is not None else data_root()) / PARQUET_FILES[collection]


#: Float columns are stored as decimals, ``value = mantissa × 10**exponent`` (the CSV's digits:
#: lossless, and smaller than float64), in these two columns.
MANTISSA, EXPONENT = "{}.mantissa", "{}.exponent"
_POW10 = np.array([float(10**k) for k in range(23)])  # exact doubles


def decode_decimal(mantissa: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """float64 nearest to ``mantissa × 10**exponent`` (NaN where the mantissa is NaN).

    Integer mantissas below 2**53 and ``|exponent| <= 22`` take one exactly rounded multiplication
    or division of exact doubles; anything else goes through Python's correctly rounded parser.
    """
    m = np.asarray(mantissa, dtype=np.float64)
    e = np.asarray(exponent, dtype=np.int64)
    out = np.full(m.shape, np.nan)
    valid = ~np.isnan(m)
    fast = valid & (np.abs(e) <= 22) & (np.abs(m) < 2.0**53)
    up, down = fast & (e >= 0), fast & (e < 0)
    out[up] = m[up] * _POW10[e[up]]
    out[down] = m[down] / _POW10[-e[down]]
    for i in np.flatnonzero(valid & ~fast):
        out[i] = float(f"{int(m[i])}e{int(e[i])}")
    return out


@functools.lru_cache(maxsize=8)
def _stored(collection: str, root: str | None) -> tuple[pd.DataFrame, dict]:
    path = parquet_path(collection, root)
    try:
        table = pq.read_table(path)
    except (OSError, ValueError) as exc:
        raise HumanDataError(f"cannot read the Geirhos compact copy {path}: {exc}") from exc
    raw_meta = (table.schema.metadata or {}).get(b"vcrbench")
    meta = json.loads(raw_meta) if raw_meta else {}
    names = table.column_names
    columns = {}
    for name in names:
        if name.endswith(".exponent"):
            continue
        if name.endswith(".mantissa"):
            col = name.removesuffix(".mantissa")
            mantissa = table[name].to_numpy(zero_copy_only=False)
            exponent = table[EXPONENT.format(col)].fill_null(0).to_numpy(zero_copy_only=False)
            columns[col] = pd.Series(decode_decimal(mantissa, exponent), name=col)
        else:
            columns[name] = table[name].to_pandas()
    return pd.DataFrame(columns), meta


def stored(collection: str, root: str | os.PathLike | None = None) -> pd.DataFrame:
    """The Parquet table of one collection as stored (a copy; categorical strings, typed
    numbers)."""
    return _stored(collection, None if root is None else str(root))[0].copy()


def metadata(collection: str, root: str | os.PathLike | None = None) -> dict:
    """The provenance and format metadata the build script stored with ``collection``."""
    return json.loads(json.dumps(_stored(collection, None if root is None else str(root))[1]))


@functools.lru_cache(maxsize=8)
def _file_slices(collection: str, root: str | None) -> dict[tuple[str, str], slice]:
    df = _stored(collection, root)[0]
    experiment, file = (df[c].astype(str).to_numpy(dtype=object) for c in ("experiment", "file"))
    # the runs of rows with the same (experiment, file)
    starts = np.flatnonzero(
        np.r_[True, (experiment[1:] != experiment[:-1]) | (file[1:] != file[:-1])]
    )[: len(df)]
    out: dict[tuple[str, str], slice] = {}
    for start, stop in zip(starts, [*starts[1:], len(df)], strict=True):
        key = (experiment[start], file[start])
        if key in out:
            raise HumanDataError(f"{collection}: rows of {key} are not contiguous")
        out[key] = slice(int(start), int(stop))
    return out


def experiments(collection: str, root: str | os.PathLike | None = None) -> list[str]:
    """Experiment names present in ``collection`` (sorted)."""
    _check_collection(collection)
    return sorted({e for e, _ in _file_slices(collection, None if root is None else str(root))})


def csv_files(collection: str, experiment: str, root: str | os.PathLike | None = None) -> list[str]:
    """Names of the CSV files of one experiment folder of the release, sorted.

    For ``dnns`` these include the human files that the release repeats there.
    """
    _check_collection(collection)
    r = None if root is None else str(root)
    names = {f for e, f in _file_slices(collection, r) if e == experiment}
    if collection == "dnns" and metadata("dnns", root).get("repeats_human_files", False):
        names |= {f for e, f in _file_slices("humans", r) if e == experiment}
    if not names:
        raise HumanDataError(f"no {collection} files for Geirhos experiment {experiment!r}")
    return sorted(names)


def _rows(
    collection: str, experiment: str, file: str, root: str | None
) -> tuple[str, pd.DataFrame]:
    """(collection the rows are stored in, the stored rows of one CSV file)."""
    for coll in (collection, "humans") if collection == "dnns" else (collection,):
        sl = _file_slices(coll, root).get((experiment, file))
        if sl is not None:
            if coll != collection and not metadata("dnns", root).get("repeats_human_files", False):
                break
            return coll, _stored(coll, root)[0].iloc[sl]
    raise HumanDataError(f"no file {file!r} in Geirhos {collection}/{experiment}-experiment")


def _float_text(values: np.ndarray, null: str) -> list[str]:
    return [null if np.isnan(x) else repr(float(x)) for x in values]


def raw_frame(
    collection: str,
    experiment: str,
    file: str,
    root: str | os.PathLike | None = None,
    columns: Iterable[str] | None = None,
) -> pd.DataFrame:
    """One CSV file of the release as ``pd.read_csv(path, dtype=str, keep_default_na=False)`` reads
    it.

    Same columns in the same order, every column of pandas' string dtype, the CSV's text in every
    cell, rows in file order, a fresh ``RangeIndex``. ``columns``: only those of the file's
    columns that are among these (None: all), as ``usecols`` would read them.
    """
    r = None if root is None else str(root)
    coll, rows = _rows(collection, experiment, file, r)
    meta = metadata(coll, root)
    observer = str(rows["subj"].iloc[0]) if len(rows) else ""
    present = CSV_COLUMNS + (
        DNN_COLUMNS if coll == "dnns" and observer in PRETRAINED_NETWORKS else ()
    )
    wanted = present if columns is None else set(columns)
    columns = [c for c in present if c in wanted]
    nulls = meta.get("null_text", {}).get(f"{experiment}/{file}", {})
    out = {}
    for col in columns:
        values = rows[col]
        if col in FLOAT_COLUMNS:
            text = _float_text(values.to_numpy(np.float64), nulls.get(col, NULL_TEXT))
        elif col in INT_COLUMNS:
            text = values.to_numpy(np.int64).astype(str).tolist()
        else:
            text = values.astype(str).tolist()
        out[col] = pd.Series(text, dtype="str")
    return pd.DataFrame(out)


# --------------------------------------------------------------------------- typed trials


def observer_collection(observer: str) -> str:
    """Which collection an observer's trials are in (subject-* / ImageNet network / trained)."""
    if observer.startswith("subject-"):
        return "humans"
    if observer in PRETRAINED_NETWORKS:
        return "dnns"
    if observer in TRAINED_NETWORKS:
        return "trained"
    raise HumanDataError(
        f"unknown Geirhos observer {observer!r}: subject-NN, {', '.join(PRETRAINED_NETWORKS)} or "
        f"one of {', '.join(TRAINED_NETWORKS)}"
    )


def _strings(values: pd.Series) -> np.ndarray:
    """A (categorical) string column as an object array of str (None where missing), fast."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        cats = np.append(np.asarray(values.cat.categories, dtype=object), None)
        return cats[values.cat.codes.to_numpy()]  # code -1 (missing) picks the None
    return values.to_numpy(dtype=object)


def load(
    collection: str,
    experiment: str | Iterable[str] | None = None,
    observers: Iterable[str] | None = None,
    root: str | os.PathLike | None = None,
    image_id: bool = True,
) -> pd.DataFrame:
    """Typed trials of one collection, in stored order (files by name, rows in file order).

    Adds ``condition_label`` (categorical: the experiment's condition string,
    :attr:`Experiment.conditions`), ``condition_index`` (its position) and, with ``image_id``, the
    ImageNet source image (``n04111531_5828``). ``experiment``/``observers`` filter; an unknown name
    is an error.
    """
    _check_collection(collection)
    df = _stored(collection, None if root is None else str(root))[0]
    if experiment is not None:
        wanted = [experiment] if isinstance(experiment, str) else list(experiment)
        missing = sorted(set(wanted) - set(df["experiment"].cat.categories))
        if missing:
            raise HumanDataError(f"no Geirhos experiment(s) {missing} in {collection!r}")
        df = df[df["experiment"].isin(wanted)]
    if observers is not None:
        wanted = list(observers)
        missing = sorted(set(wanted) - set(_strings(df["subj"])))
        if missing:
            raise HumanDataError(
                f"observer(s) {missing} not in Geirhos {collection} {experiment or ''}".rstrip()
            )
        df = df[df["subj"].isin(wanted)]
    df = df.reset_index(drop=True)
    if image_id:
        ids = df["imagename"].str.extract(_IMAGE_ID_RE, expand=False)
        if ids.isna().any():
            bad = df.loc[ids.isna(), "imagename"].iloc[0]
            raise HumanDataError(f"imagename {bad!r} does not end in an ImageNet image id")
        df["image_id"] = ids
    labels = np.empty(len(df), dtype=object)
    index = np.empty(len(df), dtype=np.int64)
    keys = pd.DataFrame({"e": _strings(df["experiment"]), "c": _strings(df["condition"])})
    for (e, c), pos in keys.groupby(["e", "c"], sort=False).indices.items():
        info = experiment_info(e, collection)
        labels[pos] = info.label(c)
        index[pos] = info.conditions.index(labels[pos[0]])
    df["condition_label"] = pd.Categorical(labels)
    df["condition_index"] = index
    return df
