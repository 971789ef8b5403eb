"""The human-results schema: one row per trial, validated on load.

A *trial* is one image shown to one participant, and the participant's answer. VCR-Bench reads
trials from a user's own experiment (CSV or Parquet), from a VCR-style export, or from the shipped
Geirhos et al. (2018) data (:mod:`vcrbench.humans.geirhos`); all three come out as the same
canonical table (:data:`TRIAL_COLUMNS`):

============== ======== =====================================================================
column         type     meaning
============== ======== =====================================================================
participant    str      who answered (a bootstrap resamples participants, not trials)
image_id       str      the image shown (before corruption)
label          int64    true class, index in the 16-class label space (:func:`classes16`)
response       int64    the participant's answer; :data:`NO_ANSWER` (-1) = no answer (wrong)
corruption     str      corruption name (``uniform_noise``, ``geirhos_lowpass``, …)
condition      str      fixed condition the trial belongs to ("0.35"); "" if the trial has a Δv
dv             float64  Δv of the image shown, in [0, 1]; NaN = unknown (placed by condition)
clean_response int64    answer to the clean image; -1 no answer; :data:`NOT_RECORDED` (-2) none
param.<name>   float64  corruption parameters (optional, any number)
session, trial int64    optional bookkeeping (kept if present)
rt             float64  optional response time in seconds
============== ======== =====================================================================

In a CSV, ``label``, ``response`` and ``clean_response`` may be class names (``dog``) or indices;
``na``, ``NA``, ``none`` or an empty cell in ``response`` mean no answer; in ``clean_response`` an
empty cell means "not recorded" and ``na`` means "shown, no answer". Every trial needs a ``dv`` or a
``condition``. Any violation raises :class:`HumanDataError` naming the file, row and column.

A VCR-style export has the columns ``label, orig_pred, transf_pred, vd_score, transformation``
(``vd_score`` is the visual degradation Δv of the shown image, ``orig_pred`` the answer to the clean
image); ``participant``/``image_id`` are taken if present, else every row is its own participant
and image.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from vcrbench.errors import HumanDataError
from vcrbench.vocab import GEIRHOS16_CLASSES

#: Response code of a trial without an answer (counts as wrong).
NO_ANSWER = -1
#: ``clean_response`` code where the participant's answer to the clean image was not recorded.
NOT_RECORDED = -2

REQUIRED_COLUMNS = ("participant", "image_id", "label", "response", "corruption")
OPTIONAL_COLUMNS = ("condition", "dv", "clean_response", "session", "trial", "rt")
#: Canonical column order of a trials table (``param.*`` columns follow ``condition``).
TRIAL_COLUMNS = (
    "participant", "image_id", "label", "response", "corruption", "condition", "dv",
    "clean_response",
)  # fmt: skip
VCR_EXPORT_COLUMNS = ("label", "orig_pred", "transf_pred", "vd_score", "transformation")
_NO_ANSWER_TOKENS = {"", "na", "n/a", "nan", "none", "null", "-1"}
_PARAM_RE = re.compile(r"^param\.[A-Za-z_][A-Za-z0-9_]*$")


def classes16() -> list[str]:
    """The 16 entry-level class names in label-index order.

    :data:`vcrbench.vocab.GEIRHOS16_CLASSES` (the 16-class label space the models are mapped
    to), so humans and models share one class order.
    """
    return list(GEIRHOS16_CLASSES)


# --------------------------------------------------------------------------- cell parsing


class _Where:
    """Formats error locations: file, 1-based data row (and CSV line), column."""

    def __init__(self, source: str, csv: bool):
        self.source, self.csv = source, csv

    def __call__(self, row: int, column: str) -> str:
        line = f" (line {row + 2})" if self.csv else ""
        return f"{self.source}, row {row + 1}{line}, column {column!r}"


def _text(values: pd.Series) -> pd.Series:
    """Cells as stripped strings; None/NaN become ""."""
    s = pd.Series(values).reset_index(drop=True).astype(object)
    return s.where(s.notna(), "").astype(str).str.strip()


def _first(mask: np.ndarray) -> int | None:
    hits = np.flatnonzero(mask)
    return int(hits[0]) if hits.size else None


def _class_codes(
    values: pd.Series,
    column: str,
    classes: Sequence[str],
    where: _Where,
    empty: int | None,
    no_answer_ok: bool,
) -> np.ndarray:
    """Parse class names / indices to int codes; ``empty`` is the code of an empty cell."""
    n = len(classes)
    text = _text(values)
    low = text.str.lower()
    codes = low.map({name.lower(): i for i, name in enumerate(classes)})
    number = pd.to_numeric(text, errors="coerce").to_numpy(np.float64)
    is_index = np.isfinite(number) & (number == np.round(number)) & (number >= 0) & (number < n)
    codes = codes.where(codes.notna(), pd.Series(np.where(is_index, number, np.nan)))
    if empty is not None:
        # an empty cell, or the code itself as VCR-Bench writes it (NOT_RECORDED)
        codes = codes.where(~((text == "").to_numpy() | (number == empty)), empty)
    no_answer = low.isin(_NO_ANSWER_TOKENS).to_numpy() & codes.isna().to_numpy()
    if no_answer.any() and not no_answer_ok:
        i = _first(no_answer)
        raise HumanDataError(f"{where(i, column)}: missing class (got {text[i]!r})")
    codes = codes.where(~no_answer, NO_ANSWER)
    i = _first(codes.isna().to_numpy())
    if i is not None:
        raise HumanDataError(
            f"{where(i, column)}: {text[i]!r} is neither one of the {n} classes "
            f"({', '.join(classes)}) nor a class index 0-{n - 1}"
        )
    return codes.to_numpy(np.float64).astype(np.int64)


def _strings(values: pd.Series, column: str, where: _Where, allow_empty: bool) -> np.ndarray:
    text = _text(values)
    if not allow_empty:
        i = _first((text == "").to_numpy())
        if i is not None:
            raise HumanDataError(f"{where(i, column)}: empty value")
    return text.to_numpy(dtype=object)


def _floats(
    values: pd.Series, column: str, where: _Where, lo: float | None = None, hi: float | None = None
) -> np.ndarray:
    text = _text(values)
    missing = text.str.lower().isin(_NO_ANSWER_TOKENS - {"-1"}).to_numpy()
    out = pd.to_numeric(text.where(~missing, "nan"), errors="coerce").to_numpy(np.float64)
    i = _first(np.isnan(out) & ~missing)
    if i is not None:
        raise HumanDataError(f"{where(i, column)}: {text[i]!r} is not a number")
    with np.errstate(invalid="ignore"):
        outside = np.isinf(out)
        if lo is not None:
            outside |= out < lo
        if hi is not None:
            outside |= out > hi
    i = _first(outside)
    if i is not None:
        raise HumanDataError(f"{where(i, column)}: {out[i]} is outside [{lo}, {hi}]")
    return out


def _ints(values: pd.Series, column: str, where: _Where) -> np.ndarray:
    floats = _floats(values, column, where)
    bad = np.flatnonzero(np.isnan(floats) | (floats != np.round(floats)))
    if bad.size:
        raise HumanDataError(
            f"{where(int(bad[0]), column)}: {_text(values)[int(bad[0])]!r} is not an integer"
        )
    return floats.astype(np.int64)


# --------------------------------------------------------------------------- validation


def validate_trials(
    df: pd.DataFrame,
    source: str = "<table>",
    classes: Sequence[str] | None = None,
    csv: bool = False,
) -> pd.DataFrame:
    """Check a raw trials table and return it in canonical form (see module docstring).

    Parameters
    ----------
    df : DataFrame
        Raw table (strings or typed columns).
    source : str
        Name used in error messages (the file path).
    classes : sequence of str, optional
        Class names in label-index order; default :func:`classes16`.
    csv : bool
        Whether rows come from a CSV with a header line (error messages then give line numbers).

    Returns
    -------
    DataFrame
        Columns :data:`TRIAL_COLUMNS`, then sorted ``param.*`` columns, then any of
        ``session, trial, rt`` present, with canonical dtypes.
    """
    classes = list(classes) if classes is not None else classes16()
    where = _Where(source, csv)
    df = _checked_columns(df, source)
    out = pd.DataFrame(
        {
            "participant": _strings(df["participant"], "participant", where, False),
            "image_id": _strings(df["image_id"], "image_id", where, False),
            "label": _class_codes(df["label"], "label", classes, where, None, False),
            "response": _class_codes(df["response"], "response", classes, where, NO_ANSWER, True),
            "corruption": _strings(df["corruption"], "corruption", where, False),
        }
    )
    _add_placement(out, df, classes, where)
    _add_extras(out, df, where)
    for col in ("participant", "image_id", "corruption", "condition"):
        out[col] = out[col].astype(str)
    return out


def _checked_columns(df: pd.DataFrame, source: str) -> pd.DataFrame:
    """``df`` with its column names stripped, once each is known to be unique and required,
    optional or ``param.<name>``, all required ones are there and it holds trials."""
    columns = [str(c).strip() for c in df.columns]
    df = df.set_axis(columns, axis=1)
    dupes = sorted({c for c in columns if columns.count(c) > 1})
    if dupes:
        raise HumanDataError(f"{source}: column(s) {dupes} appear more than once")
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if missing:
        raise HumanDataError(
            f"{source}: missing required column(s) {missing}; found {columns}. Required: "
            f"{list(REQUIRED_COLUMNS)}; optional: {list(OPTIONAL_COLUMNS)} and param.<name>"
        )
    unknown = [
        c
        for c in columns
        if c not in REQUIRED_COLUMNS + OPTIONAL_COLUMNS and not _PARAM_RE.match(c)
    ]
    if unknown:
        raise HumanDataError(
            f"{source}: unknown column(s) {unknown}; parameters must be named param.<name>, other "
            f"columns are {list(REQUIRED_COLUMNS + OPTIONAL_COLUMNS)}"
        )
    if len(df) == 0:
        raise HumanDataError(f"{source}: holds no trials")
    return df


def _add_placement(out: pd.DataFrame, df: pd.DataFrame, classes: list[str], where: _Where) -> None:
    """Add ``condition``, ``dv`` and ``clean_response`` to ``out`` (their defaults where ``df``
    lacks them); every trial must have a Δv or a condition."""
    n = len(df)
    out["condition"] = (
        _strings(df["condition"], "condition", where, True)
        if "condition" in df
        else np.full(n, "", dtype=object)
    )
    out["dv"] = _floats(df["dv"], "dv", where, 0.0, 1.0) if "dv" in df else np.full(n, np.nan)
    out["clean_response"] = (
        _class_codes(df["clean_response"], "clean_response", classes, where, NOT_RECORDED, True)
        if "clean_response" in df
        else np.full(n, NOT_RECORDED, dtype=np.int64)
    )
    unplaced = np.flatnonzero(np.isnan(out["dv"].to_numpy()) & (out["condition"] == "").to_numpy())
    if unplaced.size:
        raise HumanDataError(
            f"{where(int(unplaced[0]), 'dv')}: the trial has neither a Δv ('dv') nor a "
            f"'condition' to place it on the Δv axis ({unplaced.size} such row(s))"
        )


def _add_extras(out: pd.DataFrame, df: pd.DataFrame, where: _Where) -> None:
    """Add the ``param.*`` columns of ``df`` (sorted) to ``out``, then any of ``session, trial,
    rt``."""
    for col in sorted(c for c in df.columns if _PARAM_RE.match(c)):
        out[col] = _floats(df[col], col, where)
    for col in ("session", "trial"):
        if col in df:
            out[col] = _ints(df[col], col, where)
    if "rt" in df:
        out["rt"] = _floats(df["rt"], "rt", where, 0.0, None)


def correct(trials: pd.DataFrame) -> np.ndarray:
    """Whether each trial's response is its label (no answer counts as wrong)."""
    return (trials["response"].to_numpy() == trials["label"].to_numpy()) & (
        trials["response"].to_numpy() != NO_ANSWER
    )


def consistent(trials: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """``(consistent, has_clean)``: response equals the answer to the clean image, where recorded.

    A missing answer on either image counts as inconsistent. Trials whose clean answer was not
    recorded (:data:`NOT_RECORDED`) have ``has_clean = False`` and must be left out of s_p.
    """
    clean = trials["clean_response"].to_numpy()
    resp = trials["response"].to_numpy()
    has_clean = clean != NOT_RECORDED
    return has_clean & (resp == clean) & (resp != NO_ANSWER), has_clean


# --------------------------------------------------------------------------- readers


def _read_table(path: Path) -> tuple[pd.DataFrame, bool]:
    if not path.is_file():
        raise HumanDataError(f"human trials file {path} does not exist")
    suffix = path.suffix.lower()
    try:
        if suffix == ".parquet":
            from vcrbench.files import io

            return io.read_parquet(path), False
        if suffix in (".csv", ".tsv", ".txt"):
            sep = "\t" if suffix == ".tsv" else ","
            # Everything as text: 'na' must stay a token, not become NaN, and ids keep leading
            # zeros.
            return pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False), True
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise HumanDataError(f"cannot read human trials file {path}: {exc}") from exc
    raise HumanDataError(f"{path}: unsupported file type {suffix!r} (use .csv, .tsv or .parquet)")


def is_vcr_export(columns: Sequence[str]) -> bool:
    """Whether a table's columns are those of a VCR-style export."""
    return set(VCR_EXPORT_COLUMNS) <= {str(c).strip() for c in columns}


def corruption_key(name: str) -> str:
    """Registry-style name of a corruption label: ``'Gaussian Noise'`` -> ``'gaussian_noise'``."""
    return re.sub(r"[^a-z0-9]+", "_", name.strip().lower()).strip("_")


def from_vcr_export(
    df: pd.DataFrame,
    source: str = "<table>",
    classes: Sequence[str] | None = None,
    csv: bool = False,
) -> pd.DataFrame:
    """Convert a VCR-style export (see module docstring) to the canonical trials table."""
    columns = {str(c).strip(): c for c in df.columns}
    raw = pd.DataFrame(
        {
            "label": df[columns["label"]],
            "response": df[columns["transf_pred"]],
            "clean_response": df[columns["orig_pred"]],
            "dv": df[columns["vd_score"]],
            "corruption": [
                corruption_key(str(t)) if str(t).strip() else ""
                for t in df[columns["transformation"]]
            ],
        }
    )
    rows = np.arange(len(df))
    for name, alternatives in (
        ("participant", ("participant", "worker_id", "workerid", "subject", "subj")),
        ("image_id", ("image_id", "image", "img", "imagename", "image_name")),
    ):
        found = next((columns[a] for a in alternatives if a in columns), None)
        raw[name] = df[found].to_numpy() if found is not None else [f"row-{i + 1}" for i in rows]
    # An empty vd_score is a missing Δv: without a condition the trial cannot be placed.
    renamed = {"label": "label", "transf_pred": "response", "orig_pred": "clean_response"}
    try:
        return validate_trials(raw, source, classes, csv)
    except HumanDataError as exc:
        msg = str(exc)
        for new, old in (("dv", "vd_score"), ("corruption", "transformation")):
            msg = msg.replace(f"column {new!r}", f"column {old!r}")
        for old, new in renamed.items():
            msg = msg.replace(f"column {new!r}", f"column {old!r}")
        msg = msg.replace("'condition' to place", "condition to place")
        raise HumanDataError(msg) from None


def read_trials(path: str | os.PathLike, classes: Sequence[str] | None = None) -> pd.DataFrame:
    """Read a human trials file (CSV/TSV/Parquet; canonical schema or VCR-style export).

    The format is recognised from the columns. Returns the canonical table of
    :func:`validate_trials`; raises :class:`HumanDataError` naming file, row and column.
    """
    path = Path(path)
    df, csv = _read_table(path)
    if is_vcr_export(df.columns):
        return from_vcr_export(df, str(path), classes, csv)
    return validate_trials(df, str(path), classes, csv)
