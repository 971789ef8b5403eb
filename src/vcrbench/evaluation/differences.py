"""Paired differences between models: "is model A more robust than model B?", "did fine-tuning
help?"

Intervals of each model alone cannot answer these: two models evaluated on one test set share its
images, so their estimates are correlated. ``evaluate`` draws the bootstrap of every model on a
corruption and label space from the *same* seed (the seed leaves the model out), so replicate b
of every model resamples the same images (and chooses its folds alike): replicate b of A and
replicate b of B are one draw of the joint, paired bootstrap, and ``d_b = m_A,b − m_B,b`` is a
replicate of the difference ``m_A − m_B`` (Efron & Tibshirani 1993, ch. 16).

For each pair and metric (R_a, R_p, and HMRI/MRSI where a human reference exists):

- ``diff``: the difference of the point estimates;
- ``diff_lo``, ``diff_hi``: the percentile interval of ``d_b`` at the estimation level;
- ``p_value``: two-sided bootstrap p-value of "no difference", ``min(1, 2 min(#{d_b ≤ 0},
  #{d_b ≥ 0}) + 1) / (B + 1))``; NaN where the test set has fewer than :data:`MIN_UNITS` images
  (a bootstrap over so few units cannot support a p-value; the interval is still given);
- ``p_holm``: Holm's step-down adjustment over every pair of one family (corruption, label
  space, metric), so that many pairs do not mislead: the family-wise error rate is at most the
  level used;
- ``indistinguishable``: the interval holds 0.

The same images must stand behind both models: pairs whose estimates differ in their number of
samples, images or seed are refused with an error naming them.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from vcrbench.errors import EvaluationError
from vcrbench.estimation import percentile_interval
from vcrbench.files import io
from vcrbench.vocab import DIFFERENCE_COLUMNS, METRICS, REPLICATE_COLUMNS

#: Fewest images a p-value is reported for.
MIN_UNITS = 10


def replicate_rows(
    model: str,
    corruption: str,
    label_space: str,
    metric: str,
    point: float,
    replicates: np.ndarray,
    *,
    n: int,
    n_units: int,
    seed: int,
    level: float,
) -> pd.DataFrame:
    """The :data:`REPLICATE_COLUMNS` rows of one metric of one estimate."""
    reps = np.asarray(replicates, dtype=np.float64)
    return pd.DataFrame(
        {
            "model": model,
            "corruption": corruption,
            "label_space": label_space,
            "metric": metric,
            "replicate": np.arange(len(reps), dtype=np.int32),
            "value": reps,
            "point": float(point),
            "n": int(n),
            "n_units": int(n_units),
            "seed": int(seed),
            "level": float(level),
        }
    )[REPLICATE_COLUMNS]


def bootstrap_p_value(d: np.ndarray) -> float:
    """Two-sided bootstrap p-value of "the difference is 0" from replicate differences ``d``."""
    d = np.asarray(d, dtype=np.float64)
    if d.size == 0:
        return float("nan")
    if np.all(d == 0):
        return 1.0
    tail = min(int((d <= 0).sum()), int((d >= 0).sum()))
    return float(min(1.0, (2 * tail + 1) / (d.size + 1)))


def holm(p: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values (NaN entries stay NaN and do not count)."""
    p = np.asarray(p, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = len(ok)
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out[order] = adjusted
    return out


def differences(
    replicates: pd.DataFrame,
    relations: Mapping[str, str] | None = None,
    metrics: Sequence[str] = METRICS,
) -> pd.DataFrame:
    """Paired differences of every pair of models on each (corruption, label space, metric).

    ``replicates``: :data:`REPLICATE_COLUMNS` rows of many models. ``relations``:
    ``{fine-tuned model: base}``; such pairs are ordered (fine-tuned − base) and marked
    ``relation = "fine-tuned vs base"``; other pairs are in name order, ``"pair"``.
    """
    missing = sorted(set(REPLICATE_COLUMNS) - set(replicates.columns))
    if missing:
        raise EvaluationError(f"replicate metrics lack column(s) {missing}")
    relations = dict(relations or {})
    rows = []
    reps = replicates[replicates["metric"].isin(metrics)]
    for (corruption, space, metric), fam in reps.groupby(
        ["corruption", "label_space", "metric"], sort=True
    ):
        per_model = {m: g.sort_values("replicate") for m, g in fam.groupby("model", sort=True)}
        family = []
        for a, b in itertools.combinations(sorted(per_model), 2):
            if relations.get(b) == a:
                a, b = b, a
            relation = "fine-tuned vs base" if relations.get(a) == b else "pair"
            family.append(_pair(per_model[a], per_model[b], a, b, relation))
        if not family:
            continue
        frame = pd.DataFrame(family)
        frame["p_holm"] = holm(frame["p_value"].to_numpy())
        frame = frame.assign(corruption=corruption, label_space=space, metric=metric)
        rows.append(frame)
    if not rows:
        return pd.DataFrame(columns=DIFFERENCE_COLUMNS)
    out = pd.concat(rows, ignore_index=True)[DIFFERENCE_COLUMNS]
    order = {m: i for i, m in enumerate(metrics)}
    out = out.assign(_m=out["metric"].map(order)).sort_values(
        ["corruption", "label_space", "_m", "model_a", "model_b"], kind="stable"
    )
    return out.drop(columns="_m").reset_index(drop=True)


def _pair(ra: pd.DataFrame, rb: pd.DataFrame, a: str, b: str, relation: str) -> dict:
    where = f"{a} vs {b} ({ra['corruption'].iloc[0]}, {ra['label_space'].iloc[0]})"
    for col in ("n", "n_units", "seed"):
        if ra[col].iloc[0] != rb[col].iloc[0]:
            raise EvaluationError(
                f"{where}: not paired: {col} differs ({ra[col].iloc[0]} vs {rb[col].iloc[0]}); "
                "both models must be evaluated on the same samples with the same seed"
            )
    B = min(len(ra), len(rb))
    va, vb = ra["value"].to_numpy()[:B], rb["value"].to_numpy()[:B]
    point_a, point_b = float(ra["point"].iloc[0]), float(rb["point"].iloc[0])
    d = va - vb
    ok = ~np.isnan(d)
    level = float(ra["level"].iloc[0])
    if ok.any():
        lo, hi = (float(x) for x in percentile_interval(d[ok], level))
    else:
        lo = hi = float("nan")
    n_units = int(ra["n_units"].iloc[0])
    p = bootstrap_p_value(d[ok]) if ok.any() and n_units >= MIN_UNITS else float("nan")
    return {
        "model_a": a,
        "model_b": b,
        "relation": relation,
        "value_a": point_a,
        "value_b": point_b,
        "diff": point_a - point_b,
        "diff_lo": lo,
        "diff_hi": hi,
        "p_value": p,
        "indistinguishable": bool(lo <= 0 <= hi) if ok.any() else None,
        "n_units": n_units,
        "n_boot": int(ok.sum()),
    }


def model_differences(
    paths: Sequence[str | os.PathLike],
    out_path: str | os.PathLike,
    relations: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """:func:`differences` of the replicate files of every (model, corruption), as CSV."""
    frames = [io.read_parquet(p) for p in paths]
    replicates = (
        pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=REPLICATE_COLUMNS)
    )
    table = differences(replicates, relations)
    io.write_csv(table, out_path)
    return table


__all__ = [
    "DIFFERENCE_COLUMNS",
    "METRICS",
    "MIN_UNITS",
    "REPLICATE_COLUMNS",
    "bootstrap_p_value",
    "differences",
    "holm",
    "model_differences",
    "replicate_rows",
]
