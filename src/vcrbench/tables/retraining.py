"""Table 3 of the paper: R̂, HMRI and MRSI for accuracy then consistency, before and after
fine-tuning (and, with the paired differences, the change with its interval); a
:class:`~vcrbench.tables.Table`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

import numpy as np
import pandas as pd

from vcrbench.errors import TableError
from vcrbench.settings import TableSettings
from vcrbench.tables.format import (
    DEFAULT,
    HEADERS_MD,
    HEADERS_TEX,
    MISSING,
    Table,
    _check_columns,
    _round,
    display_corruption,
    fmt,
    latex_text,
)
from vcrbench.tables.spaces import merge_spaces, space_column
from vcrbench.vocab import HUMAN_LABEL_SPACE, IMAGENET1K, resolve_label_space

TABLE3_METRICS = (("a", "Accuracy"), ("p", "Prediction consistency"))


def retraining_table(
    metrics: pd.DataFrame,
    pairs: Mapping[str, str],
    settings: TableSettings = DEFAULT,
    *,
    dataset_label_space: str = IMAGENET1K,
    trained_on: Mapping[str, Sequence[str]] | None = None,
    corruptions: Sequence[str] | None = None,
    differences: pd.DataFrame | None = None,
) -> Table:
    """Table 3: R̂, HMRI and MRSI for accuracy then consistency, before and after fine-tuning.

    With ``differences`` (``model_differences.csv``) a third phase, ``change``, gives each
    after − before difference with its paired 95% bootstrap interval.

    ``pairs`` maps a fine-tuned model to the model it started from (both in ``metrics``);
    ``trained_on`` (optional) maps a fine-tuned model to the corruptions it was trained on.
    Rows are corruptions; column groups are base models, each with before/after × accuracy/
    consistency × R̂, HMRI, MRSI (the paper's layout). A base with one fine-tuned model uses it in
    every row; a base fine-tuned once per corruption (the paper: one run per corruption, known
    from ``trained_on``) uses, in each row, the model trained on that corruption; otherwise each
    fine-tuned model gets its own group. A row is kept when some group has both values. After-
    values that improve on before-values are bold in Markdown and LaTeX (the paper marks them
    red). CSV: long format, one row per corruption, fine-tuned model and phase. Numbers to
    ``settings.digits`` decimals; R̂ of a corruption without a human reference in
    ``settings.label_space`` (``"dataset"``: ``dataset_label_space``).
    """
    digits = settings.digits
    label_space = resolve_label_space(settings.label_space, dataset_label_space)
    values, groups, present, in_human = _retraining_values(
        metrics, pairs, trained_on or {}, label_space, corruptions
    )
    change = _changes(differences, label_space, in_human) if differences is not None else None
    data = _retraining_long(values, groups, present, change, digits)
    keys, cells, bold, cols_md, cols_tex = _retraining_cells(
        values, groups, present, change, digits
    )
    columns = ["corruption", *["|".join(key) for key in keys]]
    display = pd.DataFrame(
        [[display_corruption(c), *[cells[key][i] for key in keys]] for i, c in enumerate(present)],
        columns=columns,
    )
    bold_df = pd.DataFrame(
        [[False, *[bold[key][i] for key in keys]] for i in range(len(present))], columns=columns
    )
    caption = (
        "VCR before and after retraining ("
        + "; ".join(_group_description(label, base, rows) for label, base, rows in groups)
        + "; R̂ and HMRI/MRSI on the 16 classes of the human reference"
        + (
            f", R̂ on {label_space} labels where a corruption has none"
            if label_space != HUMAN_LABEL_SPACE
            else ""
        )
        + "). "
        "Bold: improved after retraining."
        + (
            " Change: after − before with its paired 95% bootstrap interval (the same test "
            "images resampled for both models)."
            if change is not None
            else ""
        )
    )
    return Table(
        data,
        display,
        caption,
        "tab:retraining",
        bold=bold_df,
        columns_md=cols_md,
        columns_tex=cols_tex,
    )


#: Table 3's metric columns: R̂, HMRI, MRSI of accuracy, then of consistency.
TABLE3_COLUMNS = [f"{m}_{k}" for k, _ in TABLE3_METRICS for m in ("R", "HMRI", "MRSI")]


def _retraining_values(metrics, pairs, trained_on, label_space, corruptions):
    """Table 3's inputs checked and arranged: ``values`` (metric columns indexed by model and
    corruption), the column ``groups`` (label, base, ``{corruption: fine-tuned model}``) and the
    corruptions ``present`` (those with both values in some group) and the corruptions whose R̂
    is shown in the human label space (``in_human``: those with a human reference)."""
    if not pairs:
        raise TableError("retraining table: no (fine-tuned, base) model pairs given")
    _check_columns(
        metrics, ["model", "corruption", "label_space", "R_a", "R_p"], "retraining table"
    )
    known = set(metrics["model"].astype(str))
    for tuned, base in pairs.items():
        for m in (tuned, base):
            if m not in known:
                raise TableError(f"retraining table: model {m!r} has no rows in the metrics table")
    merged = merge_spaces(metrics, label_space)
    for c in TABLE3_COLUMNS:
        if c not in merged:
            merged[c] = np.nan
    # R̂ in the dataset's space beside the 16-class R̂: in the CSV, not in the display.
    own = [space_column(f"R_{k}", label_space) for k, _ in TABLE3_METRICS]
    own = [c for c in own if c in merged]
    in_human = set(
        merged.loc[merged["R_label_space"] == HUMAN_LABEL_SPACE, "corruption"].astype(str)
    )
    values = merged.set_index(["model", "corruption"])[TABLE3_COLUMNS + own]
    all_corruptions = (
        list(corruptions) if corruptions is not None else sorted(set(merged["corruption"]))
    )
    groups = _retraining_groups(pairs, trained_on, all_corruptions)
    present = [
        c
        for c in all_corruptions
        if any(_pair_present(values, base, rows.get(c), c) for _, base, rows in groups)
    ]
    if not present:
        raise TableError("retraining table: no corruption has metrics for both models of a pair")
    return values, groups, present, in_human


def _pair_present(values: pd.DataFrame, base: str, tuned: str | None, corruption: str) -> bool:
    """Whether both the base and its fine-tuned model have values on ``corruption``."""
    return (
        tuned is not None
        and (base, corruption) in values.index
        and (tuned, corruption) in values.index
    )


def _retraining_long(values, groups, present, change, digits) -> pd.DataFrame:
    """Table 3's CSV: one row per corruption, fine-tuned model and phase (before, after, and with
    ``change`` the difference with its interval)."""
    long_rows = []
    for _, base, rows in groups:
        for c in present:
            if not _pair_present(values, base, rows.get(c), c):
                continue
            for phase, model in (("before", base), ("after", rows[c])):
                long_rows.append(
                    {
                        "corruption": c,
                        "base_model": base,
                        "finetuned_model": rows[c],
                        "phase": phase,
                        **values.loc[(model, c)].to_dict(),
                    }
                )
    if change is not None:
        for _, base, rows in groups:
            for c in present:
                tuned = rows.get(c)
                if not _pair_present(values, base, tuned, c):
                    continue
                extra = {"corruption": c, "base_model": base, "finetuned_model": tuned}
                extra["phase"] = "change"
                for col in TABLE3_COLUMNS:
                    d = change.get((tuned, base, c, col))
                    extra[col] = np.nan if d is None else d[0]
                    extra[f"{col}_lo"] = np.nan if d is None else d[1]
                    extra[f"{col}_hi"] = np.nan if d is None else d[2]
                long_rows.append(extra)
    return _round(pd.DataFrame(long_rows).drop_duplicates(ignore_index=True), digits)


def _retraining_cells(values, groups, present, change, digits):
    """Table 3's display: the column keys (group, phase, property, metric), each column's cells
    and bold flags (an after-value that improves on its before-value), and the Markdown and LaTeX
    headers."""
    phases = (("before", "Before retraining"), ("after", "After retraining"))
    if change is not None:
        phases += (("change", "Change (95% CI)"),)
    keys, cells, bold = [], {}, {}
    cols_md, cols_tex = ["Corruption"], [("", "", "", "Corruption")]
    for label, base, rows in groups:
        value = partial(_cell_value, values, change, base, rows)
        for phase, phase_name in phases:
            for k, prop_name in TABLE3_METRICS:
                for m in ("R", "HMRI", "MRSI"):
                    key = (label, phase, k, m)
                    keys.append(key)
                    name = f"{HEADERS_MD[f'{m}_{k}']} {phase}"
                    cols_md.append(f"{label}: {name}" if len(groups) > 1 else name)
                    cols_tex.append((latex_text(label), phase_name, prop_name, HEADERS_TEX[m]))
                    vals = [value(c, phase, f"{m}_{k}") for c in present]
                    before = [value(c, "before", f"{m}_{k}") for c in present]
                    if phase == "change":
                        cells[key] = [
                            _change_cell(change.get((rows.get(c), base, c, f"{m}_{k}")), digits)
                            for c in present
                        ]
                    else:
                        cells[key] = [fmt(v, digits) for v in vals]
                    bold[key] = [
                        phase == "after"
                        and bool(
                            np.isfinite(a)
                            and np.isfinite(b)
                            and round(a, digits) > round(b, digits)
                        )
                        for a, b in zip(vals, before, strict=True)
                    ]
    return keys, cells, bold, cols_md, cols_tex


def _cell_value(values, change, base: str, rows: Mapping[str, str], c: str, phase: str, col: str):
    """The value of Table 3's cell ``col`` in ``phase`` on corruption ``c``, for the group of
    ``base`` whose fine-tuned model on each corruption ``rows`` gives (NaN where the pair lacks
    it)."""
    if phase == "change":
        d = change.get((rows.get(c), base, c, col))
        return np.nan if d is None else d[0]
    model = base if phase == "before" else rows.get(c)
    if model is None or not _pair_present(values, base, rows.get(c), c):
        return np.nan
    return float(values.loc[(model, c), col])


def _changes(differences: pd.DataFrame, label_space: str, in_human=frozenset()) -> dict:
    """``{(fine-tuned, base, corruption, metric column): (diff, lo, hi)}`` of the fine-tuned-vs-base
    rows of ``model_differences.csv`` (HMRI/MRSI in the human space, R̂ too on the corruptions
    ``in_human`` whose R̂ the table shows there, elsewhere R̂ in ``label_space``)."""
    out = {}
    rows = differences[differences["relation"] == "fine-tuned vs base"]
    for r in rows.itertuples():
        human = r.metric.startswith(("HMRI", "MRSI")) or r.corruption in in_human
        if r.label_space != (HUMAN_LABEL_SPACE if human else label_space):
            continue
        out[(r.model_a, r.model_b, r.corruption, r.metric)] = (r.diff, r.diff_lo, r.diff_hi)
    return out


def _change_cell(d, digits: int) -> str:
    if d is None or pd.isna(d[0]):
        return MISSING
    sign = "+" if d[0] > 0 else ""
    return f"{sign}{fmt(d[0], digits)} [{fmt(d[1], digits)}, {fmt(d[2], digits)}]"


def _retraining_groups(
    pairs: Mapping[str, str], trained_on: Mapping[str, Sequence[str]], corruptions: Sequence[str]
) -> list[tuple[str, str, dict[str, str]]]:
    """Column groups of Table 3: ``(label, base model, {corruption: fine-tuned model})``."""
    by_base: dict[str, list[str]] = {}
    for tuned, base in sorted(pairs.items()):
        by_base.setdefault(base, []).append(tuned)
    groups = []
    for base, tuned in sorted(by_base.items()):
        if len(tuned) == 1:
            groups.append((f"{base} → {tuned[0]}", base, dict.fromkeys(corruptions, tuned[0])))
            continue
        per_row: dict[str, list[str]] = {}
        for t in tuned:
            for c in trained_on.get(t, ()):
                per_row.setdefault(c, []).append(t)
        if all(t in trained_on for t in tuned) and all(len(v) == 1 for v in per_row.values()):
            groups.append((base, base, {c: v[0] for c, v in per_row.items()}))
        else:  # no one model per row: each fine-tuned model is its own group
            groups += [(f"{base} → {t}", base, dict.fromkeys(corruptions, t)) for t in tuned]
    return groups


def _group_description(label: str, base: str, rows: Mapping[str, str]) -> str:
    if label != base:
        return label
    return f"{base} → " + ", ".join(
        f"{t} on {display_corruption(c).lower()}" for c, t in rows.items()
    )
