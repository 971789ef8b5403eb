"""The paper's tables from the workflow's results: Table 2 (coverage), the metrics with
intervals, a leaderboard per corruption; each a :class:`~vcrbench.tables.Table`. Table 3
(retraining) is :mod:`vcrbench.tables.retraining`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from vcrbench.errors import TableError
from vcrbench.settings import TableSettings
from vcrbench.tables.format import (
    DEFAULT,
    HEADERS_MD,
    MISSING,
    Table,
    _check_columns,
    _interval_cells,
    _round,
    display_corruption,
    fmt,
)
from vcrbench.tables.spaces import merge_spaces, space_column
from vcrbench.vocab import (
    HUMAN_LABEL_SPACE,
    IMAGENET1K,
    METRICS,
    PAIRED_VCR_SETS,
    STATUS_OK,
    resolve_label_space,
)

# --------------------------------------------------------------------------- Table 2


#: Table 2's sources: (coverage.csv source, column, display header); the parameter-uniform draws
#: of a Δv-stratified set only where coverage.csv has them.
TABLE2_SOURCES = (
    ("imagenet-c", "imagenet_c", "ImageNet-C"),
    ("vcr-parameter-uniform", "vcr_parameter_uniform", "VCR, first N draws c ~ U(C)"),
    ("vcr", "vcr", "VCR test set"),
)


def _paired(coverage: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str]]:
    """``coverage`` with each paired row's VCR sources taken from its VCR set (which leaves the
    table), and ``{row: its VCR set}`` where one was taken."""
    used = {}
    for row, vcr_set in PAIRED_VCR_SETS.items():
        names = set(coverage["corruption"])
        has_ic = ((coverage["corruption"] == row) & (coverage["source"] == "imagenet-c")).any()
        if row not in names or vcr_set not in names or not has_ic:
            continue
        keep = (coverage["corruption"] != vcr_set) & (
            (coverage["corruption"] != row) | (coverage["source"] == "imagenet-c")
        )
        moved = coverage[
            (coverage["corruption"] == vcr_set) & (coverage["source"] != "imagenet-c")
        ].assign(corruption=row)
        coverage = pd.concat([coverage[keep], moved], ignore_index=True)
        used[row] = vcr_set
    return coverage, used


def table2_coverage(coverage: pd.DataFrame, settings: TableSettings = DEFAULT) -> Table:
    """Table 2: per corruption, the Δv coverage of ImageNet-C and of the VCR test set.

    ``coverage``: ``results/tables/coverage.csv`` (``corruption, source, coverage, …``). Rows are
    sorted by ImageNet-C coverage (highest first, as in the paper); corruptions without an
    ImageNet-C set come last with a missing mark. A Δv-stratified run's first N draws c ~ U(C)
    (source ``vcr-parameter-uniform``, the paper's quantity) get columns of their own, and a row
    of :data:`PAIRED_VCR_SETS` takes its VCR columns from its paired set (column ``vcr_set``).
    Numbers to ``settings.digits`` decimals.
    """
    digits = settings.digits
    _check_columns(coverage, ["corruption", "source", "coverage", "covered_bins"], "coverage table")
    coverage, paired = _paired(coverage)
    wide = coverage.pivot_table(
        index="corruption", columns="source", values=["coverage", "covered_bins"], aggfunc="first"
    )
    present = set(coverage["source"])
    sources = [s for s in TABLE2_SOURCES if s[0] != "vcr-parameter-uniform" or s[0] in present]
    out = pd.DataFrame({"corruption": wide.index.astype(str)})
    for source, name, _ in sources:
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
    for _, name, _ in sources:
        out[f"{name}_covered_bins"] = out[f"{name}_covered_bins"].astype("Int64")
    if paired:
        out["vcr_set"] = [paired.get(c, c) for c in out["corruption"]]
    names = [
        display_corruption(c) + (f" (VCR: {paired[c]})" if c in paired else "")
        for c in out["corruption"]
    ]
    display = pd.DataFrame(
        {"Corruption": names, **{head: [fmt(v, digits) for v in out[n]] for _, n, head in sources}}
    )
    denominator = (
        coverage["denominator"].iloc[0] if "denominator" in coverage and len(coverage) else None
    )
    caption = (
        "Coverage of the Δv range [0, 1]: covered bins / "
        + (f"{int(denominator)}" if denominator is not None else "bins")
        + " for ImageNet-C (five severities) and the VCR test set"
        + (
            ", and for the test set's first N draws c ~ U(C) (the paper's sampling; the test set "
            "keeps Δv-stratified draws)."
            if "vcr-parameter-uniform" in present
            else "."
        )
    )
    return Table(_round(out, digits), display, caption, "tab:coverage")


# --------------------------------------------------------------------------- metrics


def metrics_table(metrics: pd.DataFrame, settings: TableSettings = DEFAULT) -> Table:
    """Every row of the metrics table (model × corruption × label space) with intervals, to
    ``settings.digits`` decimals."""
    digits = settings.digits
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
    short = _short_rows(df)
    if short.any():  # the status columns only where a label space was short of samples
        keep += ["status", "status_reason"]
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
    if short.any():
        display["Status"] = [
            str(r) if bad else "ok" for r, bad in zip(df["status_reason"], short, strict=True)
        ]
        caption += SHORT_NOTE
    return Table(data, display, caption, "tab:vcr-metrics")


#: What a table's caption adds where some label space was short of samples.
SHORT_NOTE = (
    " Too few samples for a curve (status): a property whose samples fill no Δv bin to "
    "estimation.min_count has no metrics (—)."
)


def _short_rows(df: pd.DataFrame) -> pd.Series:
    """Which rows of a metrics table have a label space short of samples (status not ok)."""
    if "status" not in df:
        return pd.Series(False, index=df.index)
    status = df["status"]
    return status.notna() & (status.astype(str) != STATUS_OK)


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
    settings: TableSettings = DEFAULT,
    *,
    dataset_label_space: str = IMAGENET1K,
    families: Mapping[str, str] | None = None,
    differences: pd.DataFrame | None = None,
) -> Table:
    """The models on one corruption, ranked by ``settings.leaderboard_sort`` (highest first; ties
    share a rank), numbers to ``settings.digits`` decimals.

    R̂_a and R̂_p come from ``settings.label_space`` (``"dataset"``: ``dataset_label_space``),
    HMRI and MRSI from the human label space (geirhos16); HMRI/MRSI columns are left out when
    the corruption has no human reference. When the sort metric has no values (e.g. HMRI
    without a reference) the ranking uses R̂_a.
    With ``differences`` (``model_differences.csv``), column ``≈ next`` marks a model whose
    paired 95% interval of the difference to the next-ranked model holds 0 (not
    distinguishable; data column ``indistinguishable_from_next``).
    """
    digits = settings.digits
    label_space = resolve_label_space(settings.label_space, dataset_label_space)
    df, key = _ranked(
        _corruption_rows(metrics, corruption, label_space), settings.leaderboard_sort, families
    )
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
    caption = _leaderboard_caption(corruption, key, label_space, human, same is not None)
    short = metrics[(metrics["corruption"] == corruption)]
    short = short[_short_rows(short)]
    if not short.empty:
        caption += (
            SHORT_NOTE.rstrip(".")
            + ": "
            + "; ".join(
                f"{r.model}, {r.label_space}: {r.status_reason}" for r in short.head(3).itertuples()
            )
            + ("; …" if len(short) > 3 else "")
            + "."
        )
    return Table(data, display, caption, f"tab:leaderboard-{corruption}")


def _corruption_rows(metrics: pd.DataFrame, corruption: str, label_space: str) -> pd.DataFrame:
    """The metrics of ``corruption``, one row per model (:func:`merge_spaces`); no rows, or none
    in ``label_space``, is an error."""
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
    return merge_spaces(rows, label_space)


def _ranked(
    df: pd.DataFrame, sort_by: str, families: Mapping[str, str] | None
) -> tuple[pd.DataFrame, str]:
    """``df`` sorted by ``sort_by`` (R_a where it has no values), highest first, with its
    ``rank`` (ties share one) and ``family`` columns; and the column it was ranked by."""
    key = sort_by if sort_by in df and df[sort_by].notna().any() else "R_a"
    df = df.sort_values([key, "model"], ascending=[False, True], na_position="last", kind="stable")
    df = df.reset_index(drop=True)
    rank = df[key].rank(method="min", ascending=False)
    df.insert(0, "rank", rank.astype("Int64"))
    families = families or {}
    df.insert(2, "family", [families.get(m, "other") for m in df["model"]])
    return df, key


def _leaderboard_caption(
    corruption: str, key: str, label_space: str, human: bool, marks_next: bool
) -> str:
    """The leaderboard's caption: what ranks it, on which labels, and (``marks_next``) what ≈
    means."""
    name = display_corruption(corruption)
    return (
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
            if marks_next
            else "."
        )
    )


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


# --------------------------------------------------------------------------- the paper's tables


def paper_tables(
    metrics: pd.DataFrame,
    coverage: pd.DataFrame,
    corruptions: Sequence[str],
    settings: TableSettings = DEFAULT,
    *,
    dataset_label_space: str = IMAGENET1K,
    families: Mapping[str, str] | None = None,
    differences: pd.DataFrame | None = None,
) -> dict[str, Table]:
    """Table 2, the metrics table and one leaderboard per corruption, by name
    (``table2_coverage``, ``metrics``, ``leaderboard/{corruption}``), all by ``settings``;
    ``differences`` marks leaderboard neighbours that are not distinguishable."""
    tables = {
        "table2_coverage": table2_coverage(coverage, settings),
        "metrics": metrics_table(metrics, settings),
    }
    for c in corruptions:
        tables[f"leaderboard/{c}"] = leaderboard(
            metrics,
            c,
            settings,
            dataset_label_space=dataset_label_space,
            families=families,
            differences=differences,
        )
    return tables
