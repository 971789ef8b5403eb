"""The screening experiment of the VCR paper (Appendix E.1): "same corruption or not?".

Observers see two images, each altered by a corruption, and answer whether the same corruption
altered both. Where they cannot tell two different corruptions apart better than chance, the two
are candidates for one similarity class (whose members may share human data). Each pair of
corruptions is judged by :func:`vcrbench.estimation.similarity.screening_test` (one-sided binomial
test against chance, Clopper–Pearson interval) on its trials.

Answers file (CSV, one row per trial; ``docs/humans.md`` §6 and
``config/examples/screening_answers.csv``):

=============== ==================================================================
column          meaning
=============== ==================================================================
participant     observer id
corruption_a    corruption of the first image (a registered name)
corruption_b    corruption of the second image
response        the observer's answer: ``same`` or ``different``
=============== ==================================================================

A trial is correct when the answer matches the truth (``same`` exactly when the two names are
equal). Pairs are unordered (a, b and b, a are one pair); trials of equal corruptions are
catch trials: their accuracy is reported, and a pair is judged on its own trials only.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import pandas as pd

from vcrbench.estimation.similarity import screening_test
from vcrbench.files import io
from vcrbench.humans.trial_schema import HumanDataError

ANSWER_COLUMNS = ("participant", "corruption_a", "corruption_b", "response")
RESPONSES = ("same", "different")
TABLE_COLUMNS = (
    "corruption_a", "corruption_b", "n_trials", "n_participants", "accuracy", "ci_lo", "ci_hi",
    "p_value", "distinguishable", "verdict",
)  # fmt: skip


def read_answers(path: str | os.PathLike, known: Iterable[str] | None = None) -> pd.DataFrame:
    """The screening answers of ``path``, checked: the columns, the answers (``same`` or
    ``different``, case and spaces ignored) and, with ``known``, the corruption names."""
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise HumanDataError(f"{path}: cannot read the screening answers ({exc})") from exc
    missing = [c for c in ANSWER_COLUMNS if c not in df.columns]
    if missing:
        raise HumanDataError(
            f"{path}: missing column(s) {missing}; a screening answers file has "
            f"{list(ANSWER_COLUMNS)}"
        )
    if df.empty:
        raise HumanDataError(f"{path}: no screening trials")
    df = df[list(ANSWER_COLUMNS)].apply(lambda s: s.str.strip())
    df["response"] = df["response"].str.lower()
    bad = ~df["response"].isin(RESPONSES)
    if bad.any():
        row = int(bad.to_numpy().nonzero()[0][0]) + 2  # 1-based, after the header
        raise HumanDataError(
            f"{path}, line {row}: response {df['response'][bad].iloc[0]!r} is not one of "
            f"{list(RESPONSES)}"
        )
    empty = (df[["participant", "corruption_a", "corruption_b"]] == "").any(axis=1)
    if empty.any():
        raise HumanDataError(
            f"{path}, line {int(empty.to_numpy().nonzero()[0][0]) + 2}: empty cell"
        )
    if known is not None:
        known = set(known)
        unknown = sorted((set(df["corruption_a"]) | set(df["corruption_b"])) - known)
        if unknown:
            raise HumanDataError(
                f"{path}: unknown corruption(s) {unknown}; known: {', '.join(sorted(known))}"
            )
    return df.reset_index(drop=True)


def screening_table(answers: pd.DataFrame, *, alpha: float) -> pd.DataFrame:
    """One row per unordered pair (catch trials of one corruption included): the binomial test
    at level ``alpha`` (``humans.screening.alpha``) against chance 0.5 and a verdict
    (``distinguishable``, ``not distinguishable``, or ``catch trials`` for a corruption against
    itself)."""
    a = answers["corruption_a"].where(
        answers["corruption_a"] <= answers["corruption_b"], answers["corruption_b"]
    )
    b = answers["corruption_b"].where(
        answers["corruption_a"] <= answers["corruption_b"], answers["corruption_a"]
    )
    truth = (answers["corruption_a"] == answers["corruption_b"]).map(
        {True: "same", False: "different"}
    )
    frame = answers.assign(pair_a=a, pair_b=b, correct=answers["response"] == truth)
    rows = []
    for (pa, pb), g in frame.groupby(["pair_a", "pair_b"], sort=True):
        res = screening_test(int(g["correct"].sum()), len(g), alpha=alpha)
        if pa == pb:
            verdict = "catch trials"
        else:
            verdict = "distinguishable" if res["distinguishable"] else "not distinguishable"
        rows.append(
            {
                "corruption_a": pa,
                "corruption_b": pb,
                "n_trials": res["n_trials"],
                "n_participants": int(g["participant"].nunique()),
                "accuracy": res["accuracy"],
                "ci_lo": res["ci_lo"],
                "ci_hi": res["ci_hi"],
                "p_value": res["p_value"],
                "distinguishable": res["distinguishable"] if pa != pb else None,
                "verdict": verdict,
            }
        )
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))


def screening(
    answers_path: str | os.PathLike,
    out_path: str | os.PathLike,
    *,
    known: Iterable[str] | None = None,
    alpha: float,
) -> pd.DataFrame:
    """:func:`screening_table` of an answers file, written as CSV."""
    table = screening_table(read_answers(answers_path, known), alpha=alpha)
    io.write_csv(table, out_path)
    return table


__all__ = ["ANSWER_COLUMNS", "TABLE_COLUMNS", "read_answers", "screening", "screening_table"]
