"""Tables as files: the :class:`Table` container, CSV/Markdown/LaTeX writers and cell formatting.

A :class:`Table` holds ``data`` (numbers, rounded: the CSV) and ``display`` (formatted cells,
``value [lo, hi]`` for estimates with intervals: the Markdown and LaTeX versions), plus a caption
and a LaTeX label. :func:`write_table` writes any of the three formats from the path's suffix,
atomically; the bytes depend only on the inputs.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from vcrbench.errors import TableError
from vcrbench.files import io
from vcrbench.settings import TableSettings
from vcrbench.vocab import resolve_label_space  # noqa: F401  (re-exported by vcrbench.tables)

#: The tables' settings at the schema's defaults (3 decimals, R̂ in the dataset's space, by R_a).
DEFAULT = TableSettings()
MISSING = "–"
HEADERS_MD = {
    "R_a": "R̂_a",
    "R_p": "R̂_p",
    "HMRI_a": "HMRI_a",
    "MRSI_a": "MRSI_a",
    "HMRI_p": "HMRI_p",
    "MRSI_p": "MRSI_p",
    "R": "R̂",
    "HMRI": "HMRI",
    "MRSI": "MRSI",
}
HEADERS_TEX = {
    "R_a": r"$\hat{\mathcal{R}}_a$",
    "R_p": r"$\hat{\mathcal{R}}_p$",
    "HMRI_a": r"HMRI$_a$",
    "MRSI_a": r"MRSI$_a$",
    "HMRI_p": r"HMRI$_p$",
    "MRSI_p": r"MRSI$_p$",
    "R": r"$\hat{\mathcal{R}}$",
    "HMRI": "HMRI",
    "MRSI": "MRSI",
}
FORMATS = ("csv", "md", "tex")


@dataclasses.dataclass
class Table:
    """One result table: ``data`` for CSV, ``display`` (formatted strings) for Markdown and
    LaTeX. ``bold`` (same shape as ``display``, or None) marks emphasised cells, e.g.
    improvements. Headers: ``display``'s column keys are named through :data:`HEADERS_MD` /
    :data:`HEADERS_TEX`, unless ``columns_md`` (strings) / ``columns_tex`` (strings, or tuples
    for a multi-row header) give them."""

    data: pd.DataFrame
    display: pd.DataFrame
    caption: str
    label: str
    bold: pd.DataFrame | None = None
    columns_md: list[str] | None = None
    columns_tex: list | None = None

    def to_markdown(self) -> str:
        disp = self.display.copy()
        if self.bold is not None:
            disp = disp.where(~self.bold.to_numpy(), disp.map(lambda s: f"**{s}**"))
        disp.columns = self.columns_md or [HEADERS_MD.get(c, str(c)) for c in disp.columns]
        return f"{self.caption}\n\n" + disp.to_markdown(index=False, disable_numparse=True) + "\n"

    def to_latex(self) -> str:
        disp = self.display.map(_latex_cell)
        if self.bold is not None:
            disp = disp.where(~self.bold.to_numpy(), "\\textbf{" + disp + "}")
        cols = self.columns_tex or [
            HEADERS_TEX.get(c, latex_text(str(c))) for c in self.display.columns
        ]
        if cols and isinstance(cols[0], tuple):
            disp.columns = pd.MultiIndex.from_tuples(cols)
        else:
            disp.columns = cols
        return disp.to_latex(
            index=False,
            escape=False,
            caption=latex_text(self.caption),
            label=self.label,
            multicolumn=True,
            multicolumn_format="c",
            column_format="l" + "r" * (disp.shape[1] - 1),
            position="t",
        )


#: Unicode in captions and cells, and what LaTeX (pdflatex, no extra packages) needs instead
#: (applied after escaping, so the patterns see escaped underscores).
_LATEX_UNICODE = (
    ("R̂\\_a", r"$\hat{\mathcal{R}}_a$"),
    ("R̂\\_p", r"$\hat{\mathcal{R}}_p$"),
    ("R̂", r"$\hat{\mathcal{R}}$"),
    ("Δv", r"$\Delta_v$"),
    ("→", r"$\rightarrow$"),
    ("–", "--"),
    ("×", r"$\times$"),
)


def latex_text(text: str) -> str:
    """Escape plain text for LaTeX and spell out the Unicode this package's tables use."""
    out = latex_escape(text)
    for old, new in _LATEX_UNICODE:
        out = out.replace(old, new)
    return out


def latex_escape(text: str) -> str:
    """Escape LaTeX's special characters in plain text (model names, references)."""
    out = []
    for ch in text:
        if ch in "&%$#_{}":
            out.append("\\" + ch)
        elif ch == "~":
            out.append(r"\textasciitilde{}")
        elif ch == "^":
            out.append(r"\textasciicircum{}")
        elif ch == "\\":
            out.append(r"\textbackslash{}")
        else:
            out.append(ch)
    return "".join(out)


def _latex_cell(value) -> str:
    return latex_text(str(value))


def write_table(table: Table, paths: Sequence[str | os.PathLike]) -> list[Path]:
    """Write ``table`` to each path; the suffix (.csv, .md, .tex) picks the format."""
    written = []
    for path in paths:
        path = Path(path)
        fmt = path.suffix.lstrip(".")
        if fmt == "csv":
            io.write_csv(table.data, path)
        elif fmt == "md":
            io.write_text(table.to_markdown(), path)
        elif fmt == "tex":
            io.write_text(table.to_latex(), path)
        else:
            raise TableError(f"{path}: table format must be one of {', '.join(FORMATS)}")
        written.append(path)
    return written


def write_tables(
    tables: Mapping[str, Table], paths: Sequence[str | os.PathLike], root: str | os.PathLike
) -> list[Path]:
    """Write each path from the table named by its path under ``root`` without suffix
    (``root/leaderboard/frost.md`` <- ``tables["leaderboard/frost"]``)."""
    written = []
    for path in paths:
        name = Path(path).relative_to(root).with_suffix("").as_posix()
        if name not in tables:
            raise TableError(f"{path}: no table named {name!r} (have: {', '.join(sorted(tables))})")
        written += write_table(tables[name], [path])
    return written


# --------------------------------------------------------------------------- cells


def display_corruption(name: str) -> str:
    """``gaussian_noise`` -> ``Gaussian noise``."""
    text = str(name).replace("_", " ").replace("-", " ")
    return text[:1].upper() + text[1:]


def fmt(value, digits: int) -> str:
    """A number with ``digits`` decimals, or the missing mark."""
    if value is None or (isinstance(value, float) and not np.isfinite(value)) or pd.isna(value):
        return MISSING
    return f"{float(value):.{digits}f}"


def fmt_interval(value, lo, hi, digits: int) -> str:
    """``value [lo, hi]``; just ``value`` when the interval is missing; the missing mark when
    the value is."""
    v = fmt(value, digits)
    if v == MISSING:
        return MISSING
    lo_s, hi_s = fmt(lo, digits), fmt(hi, digits)
    if MISSING in (lo_s, hi_s):
        return v
    return f"{v} [{lo_s}, {hi_s}]"


def _interval_cells(df: pd.DataFrame, col: str, digits: int) -> list[str]:
    lo = df[f"{col}_lo"] if f"{col}_lo" in df else pd.Series(np.nan, index=df.index)
    hi = df[f"{col}_hi"] if f"{col}_hi" in df else pd.Series(np.nan, index=df.index)
    return [fmt_interval(v, a, b, digits) for v, a, b in zip(df[col], lo, hi, strict=True)]


def _round(df: pd.DataFrame, digits: int) -> pd.DataFrame:
    out = df.copy()
    for col in out.columns:
        if pd.api.types.is_float_dtype(out[col]):
            out[col] = out[col].round(digits)
    return out


def _check_columns(df: pd.DataFrame, columns, what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise TableError(f"{what}: input lacks column(s) {', '.join(missing)}")
