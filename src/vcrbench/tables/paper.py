"""The paper's tables from the workflow's results: Table 2 (coverage), the metrics with
intervals, a leaderboard per corruption, Table 3 (retraining); each a :class:`~vcrbench.tables.Table`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from vcrbench.errors import TableError
from vcrbench.tables.format import (
    HEADERS_MD,
    HEADERS_TEX,
    MISSING,
    Table,
    _check_columns,
    _interval_cells,
    _round,
    display_corruption,
    fmt,
    latex_text,
)
from vcrbench.tables.spaces import merge_spaces, space_column
from vcrbench.vocab import HUMAN_LABEL_SPACE, IMAGENET1K, METRICS

# --------------------------------------------------------------------------- Table 2


def table2_coverage(coverage: pd.DataFrame, digits: int = 3) -> Table:
    """Table 2: per corruption, the Δv coverage of ImageNet-C and of the VCR test set.

    ``coverage``: ``results/tables/coverage.csv`` (``corruption, source, coverage, …``). Rows are
    sorted by ImageNet-C coverage (highest first, as in the paper); corruptions without an
    ImageNet-C set come last with a missing mark.
    """
    _check_columns(coverage, ["corruption", "source", "coverage", "covered_bins"], "coverage table")
    wide = coverage.pivot_table(
        index="corruption", columns="source", values=["coverage", "covered_bins"], aggfunc="first"
    )
    out = pd.DataFrame({"corruption": wide.index.astype(str)})
    for source, name in (("imagenet-c", "imagenet_c"), ("vcr", "vcr")):
        for value in ("coverage", "covered_bins"):
            col = (value, source)
            vals = wide[col].to_numpy() if col in wide.columns else np.full(len(wide), np.nan)
            out[f"{name}_{value}" if value != "coverage" else name] = vals
    out = out.sort_values(
        ["imagenet_c", "vcr", "corruption"],
        ascending=[False, False, True],
        na_position="last",
        kind="stable",
    ).reset_index(drop=True)
    for col in ("imagenet_c_covered_bins", "vcr_covered_bins"):
        out[col] = out[col].astype("Int64")
    display = pd.DataFrame(
        {
            "Corruption": [display_corruption(c) for c in out["corruption"]],
            "ImageNet-C": [fmt(v, digits) for v in out["imagenet_c"]],
            "VCR test set": [fmt(v, digits) for v in out["vcr"]],
        }
    )
    denominator = (
        coverage["denominator"].iloc[0] if "denominator" in coverage and len(coverage) else None
    )
    caption = (
        "Coverage of the Δv range [0, 1]: covered bins / "
        + (f"{int(denominator)}" if denominator is not None else "bins")
        + " for ImageNet-C (five severities) and the VCR test set."
    )
    return Table(_round(out, digits), display, caption, "tab:coverage")


# --------------------------------------------------------------------------- metrics


def metrics_table(metrics: pd.DataFrame, digits: int = 3) -> Table:
    """Every row of the metrics table (model × corruption × label space) with intervals."""
    _check_columns(metrics, ["model", "corruption", "label_space", "R_a", "R_p"], "metrics table")
    df = metrics.sort_values(["corruption", "model", "label_space"], kind="stable").reset_index(
        drop=True
    )
    keep = ["model", "corruption", "label_space"]
    for m in METRICS:
        keep += [c for c in (m, f"{m}_lo", f"{m}_hi") if c in df]
    keep += [
        c for c in ("human_reference", "reference_how", "clean_accuracy", "n_samples") if c in df
    ]
    data = _round(df[keep], digits)
    display = pd.DataFrame(
        {
            "Corruption": [display_corruption(c) for c in df["corruption"]],
            "Model": df["model"].astype(str),
            "Labels": df["label_space"].astype(str),
        }
    )
    for m in METRICS:
        if m in df:
            display[m] = _interval_cells(df, m, digits)
    display["Human reference"] = _reference_cells(df)
    caption = (
        "VCR metrics with 95% bootstrap percentile intervals: R̂ = area under the accuracy (a) "
        "or consistency (p) curve over Δv; HMRI/MRSI against the human reference (16-class "
        "labels only)."
    )
    return Table(data, display, caption, "tab:vcr-metrics")


def _reference_cells(df: pd.DataFrame) -> list[str]:
    if "human_reference" not in df:
        return [MISSING] * len(df)
    out = []
    how = df["reference_how"] if "reference_how" in df else pd.Series(None, index=df.index)
    for ref, h in zip(df["human_reference"], how, strict=True):
        if pd.isna(ref):
            out.append(MISSING)
        else:
            out.append(f"{ref} ({h})" if not pd.isna(h) else str(ref))
    return out


# --------------------------------------------------------------------------- leaderboard


def leaderboard(
    metrics: pd.DataFrame,
    corruption: str,
    *,
    families: Mapping[str, str] | None = None,
    label_space: str = IMAGENET1K,
    sort_by: str = "R_a",
    digits: int = 3,
    differences: pd.DataFrame | None = None,
) -> Table:
    """The models on one corruption, ranked by ``sort_by`` (highest first; ties share a rank).

    R̂_a and R̂_p come from ``label_space``, HMRI and MRSI from the human label space
    (geirhos16); HMRI/MRSI columns are left out when the corruption has no human reference.
    When ``sort_by`` has no values (e.g. HMRI without a reference) the ranking uses R̂_a.
    With ``differences`` (``model_differences.csv``), column ``≈ next`` marks a model whose
    paired 95% interval of the difference to the next-ranked model holds 0 (not
    distinguishable; data column ``indistinguishable_from_next``).
    """
    _check_columns(metrics, ["model", "corruption", "label_space", "R_a", "R_p"], "leaderboard")
    rows = metrics[metrics["corruption"] == corruption]
    if rows.empty:
        raise TableError(
            f"leaderboard: the metrics table has no rows for corruption {corruption!r}"
        )
    if not (rows["label_space"] == label_space).any():
        raise TableError(
            f"leaderboard of {corruption!r}: no rows in label space {label_space!r} "
            f"(have: {', '.join(sorted(rows['label_space'].astype(str).unique()))}; "
            "config key figures.label_space)"
        )
    df = merge_spaces(rows, label_space)
    key = sort_by if sort_by in df and df[sort_by].notna().any() else "R_a"
    df = df.sort_values([key, "model"], ascending=[False, True], na_position="last", kind="stable")
    df = df.reset_index(drop=True)
    rank = df[key].rank(method="min", ascending=False)
    df.insert(0, "rank", rank.astype("Int64"))
    families = families or {}
    df.insert(2, "family", [families.get(m, "other") for m in df["model"]])
    own = [space_column(m, label_space) for m in ("R_a", "R_p")]
    shown = [m for m in (*METRICS, *own) if m in df and df[m].notna().any()]
    keep = ["rank", "model", "family", "R_label_space"]
    for m in shown:
        keep += [m, f"{m}_lo", f"{m}_hi"]
    human = any(m.startswith(("HMRI", "MRSI")) for m in shown)
    if human:
        keep += [c for c in ("human_reference", "reference_how") if c in df]
    same = None
    if differences is not None:
        space = HUMAN_LABEL_SPACE if human or key.startswith(("HMRI", "MRSI")) else label_space
        same = _next_indistinguishable(df["model"].tolist(), differences, corruption, space, key)
        df["indistinguishable_from_next"] = same
        keep.append("indistinguishable_from_next")
    data = _round(df[[c for c in keep if c in df]], digits)
    display = pd.DataFrame(
        {
            "#": [MISSING if pd.isna(r) else str(int(r)) for r in df["rank"]],
            "Model": df["model"].astype(str),
            "Family": df["family"].astype(str),
        }
    )
    for m in shown:
        header = f"{HEADERS_MD[m[:3]]} ({label_space})" if m in own else m
        display[header] = _interval_cells(df, m, digits)
    if same is not None:
        display["≈ next"] = ["≈" if v is True else ("" if v is False else MISSING) for v in same]
    name = display_corruption(corruption)
    caption = (
        f"{name}: models ranked by {HEADERS_MD.get(key, key)} ("
        + (
            "R̂ and HMRI/MRSI on the 16 classes of the human reference, "
            f"R̂ on {label_space} labels in its own columns"
            if human and label_space != HUMAN_LABEL_SPACE
            else f"R̂ on {label_space} labels"
            + ("" if human else "; no human reference, so no HMRI/MRSI")
        )
        + "); 95% bootstrap intervals"
        + (
            f"; ≈: not distinguishable from the next model by {HEADERS_MD.get(key, key)} "
            "(paired 95% interval of the difference holds 0)."
            if same is not None
            else "."
        )
    )
    return Table(data, display, caption, f"tab:leaderboard-{corruption}")


def _next_indistinguishable(
    models: Sequence[str], differences: pd.DataFrame, corruption: str, space: str, metric: str
) -> list[bool | None]:
    """Per ranked model: does the paired interval of its difference to the next model hold 0?
    (None for the last model, and where the pair has no row.)"""
    rows = differences[
        (differences["corruption"] == corruption)
        & (differences["label_space"] == space)
        & (differences["metric"] == metric)
    ]
    verdict = {}
    for r in rows.itertuples():
        value = None if pd.isna(r.indistinguishable) else bool(r.indistinguishable)
        verdict[(r.model_a, r.model_b)] = verdict[(r.model_b, r.model_a)] = value
    return [
        verdict.get((a, b)) if b is not None else None
        for a, b in zip(models, [*models[1:], None], strict=True)
    ]


# --------------------------------------------------------------------------- Table 3

TABLE3_METRICS = (("a", "Accuracy"), ("p", "Prediction consistency"))


def retraining_table(
    metrics: pd.DataFrame,
    pairs: Mapping[str, str],
    *,
    trained_on: Mapping[str, Sequence[str]] | None = None,
    label_space: str = IMAGENET1K,
    corruptions: Sequence[str] | None = None,
    digits: int = 3,
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
    red). CSV: long format, one row per corruption, fine-tuned model and phase.
    """
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
    cols = [f"{m}_{k}" for k, _ in TABLE3_METRICS for m in ("R", "HMRI", "MRSI")]
    for c in cols:
        if c not in merged:
            merged[c] = np.nan
    # R̂ in the dataset's space beside the 16-class R̂: in the CSV, not in the display.
    own = [space_column(f"R_{k}", label_space) for k, _ in TABLE3_METRICS]
    own = [c for c in own if c in merged]
    in_human = set(
        merged.loc[merged["R_label_space"] == HUMAN_LABEL_SPACE, "corruption"].astype(str)
    )
    values = merged.set_index(["model", "corruption"])[cols + own]
    all_corruptions = (
        list(corruptions) if corruptions is not None else sorted(set(merged["corruption"]))
    )
    groups = _retraining_groups(pairs, trained_on or {}, all_corruptions)

    def has(model, c):
        return (model, c) in values.index

    present = [
        c
        for c in all_corruptions
        if any(c in rows and has(base, c) and has(rows[c], c) for _, base, rows in groups)
    ]
    if not present:
        raise TableError("retraining table: no corruption has metrics for both models of a pair")

    long_rows = []
    for _, base, rows in groups:
        for c in present:
            if c not in rows or not (has(base, c) and has(rows[c], c)):
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
    data = _round(pd.DataFrame(long_rows).drop_duplicates(ignore_index=True), digits)

    change = _changes(differences, label_space, in_human) if differences is not None else None
    if change is not None:
        for _, base, rows in groups:
            for c in present:
                tuned = rows.get(c)
                if tuned is None or not (has(base, c) and has(tuned, c)):
                    continue
                extra = {"corruption": c, "base_model": base, "finetuned_model": tuned}
                extra["phase"] = "change"
                for col in cols:
                    d = change.get((tuned, base, c, col))
                    extra[col] = np.nan if d is None else d[0]
                    extra[f"{col}_lo"] = np.nan if d is None else d[1]
                    extra[f"{col}_hi"] = np.nan if d is None else d[2]
                long_rows.append(extra)
        data = _round(pd.DataFrame(long_rows).drop_duplicates(ignore_index=True), digits)
    phases = (("before", "Before retraining"), ("after", "After retraining"))
    if change is not None:
        phases += (("change", "Change (95% CI)"),)
    keys, cells, bold = [], {}, {}
    cols_md, cols_tex = ["Corruption"], [("", "", "", "Corruption")]
    for label, base, rows in groups:

        def value(c, phase, col, base=base, rows=rows):
            if phase == "change":
                d = change.get((rows.get(c), base, c, col))
                return np.nan if d is None else d[0]
            model = base if phase == "before" else rows.get(c)
            if model is None or not (has(base, c) and has(rows.get(c), c)):
                return np.nan
            return float(values.loc[(model, c), col])

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


# --------------------------------------------------------------------------- the paper's tables


def paper_tables(
    metrics: pd.DataFrame,
    coverage: pd.DataFrame,
    corruptions: Sequence[str],
    *,
    families: Mapping[str, str] | None = None,
    label_space: str = IMAGENET1K,
    sort_by: str = "R_a",
    digits: int = 3,
    differences: pd.DataFrame | None = None,
) -> dict[str, Table]:
    """Table 2, the metrics table and one leaderboard per corruption, by name
    (``table2_coverage``, ``metrics``, ``leaderboard/{corruption}``); ``differences`` marks
    leaderboard neighbours that are not distinguishable."""
    tables = {
        "table2_coverage": table2_coverage(coverage, digits),
        "metrics": metrics_table(metrics, digits),
    }
    for c in corruptions:
        tables[f"leaderboard/{c}"] = leaderboard(
            metrics,
            c,
            families=families,
            label_space=label_space,
            sort_by=sort_by,
            digits=digits,
            differences=differences,
        )
    return tables
