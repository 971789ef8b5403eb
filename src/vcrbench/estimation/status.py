"""A label space short of samples (:class:`vcrbench.errors.ShortSampleError`: no Δv bin holds
``estimation.min_count`` of its samples): what :func:`vcrbench.evaluation.evaluate.evaluate` does
with it, by ``estimation.short_label_space`` (:data:`SHORT_LABEL_SPACE`), and the ``status`` and
``status_reason`` columns of the metrics tables that say so."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

import pandas as pd

from vcrbench.errors import EvaluationError, ShortSampleError
from vcrbench.vocab import STATUS_OK, STATUS_SHORT

#: What a property of a label space does whose samples fill no Δv bin to estimation.min_count
#: (config: estimation.short_label_space): ``status`` - its metrics are left empty and its row
#: says why (``status``, ``status_reason``), the job's other estimates go on; ``error`` - the
#: job fails.
SHORT_LABEL_SPACE = ("status", "error")

log = logging.getLogger(__name__)


def check_short_label_space(value: str) -> None:
    """An :class:`EvaluationError` naming the config key for a value it cannot take."""
    if value not in SHORT_LABEL_SPACE:
        raise EvaluationError(
            f"estimation.short_label_space must be one of {', '.join(SHORT_LABEL_SPACE)}, "
            f"not {value!r}"
        )


class ShortProperties:
    """The properties of one label space short of samples (:class:`ShortSampleError`), as
    ``with short(prop): …`` blocks: under ``"status"`` the error is recorded (and logged) and the
    block left, under ``"error"`` it becomes an :class:`EvaluationError` naming ``where``."""

    def __init__(self, where: str, on_short: str) -> None:
        self.where, self.on_short = where, on_short
        self.reasons: dict[str, str] = {}

    @contextlib.contextmanager
    def __call__(self, prop: str) -> Iterator[None]:
        try:
            yield
        except ShortSampleError as exc:
            if self.on_short == "error":
                raise EvaluationError(
                    f"{self.where}, {prop}: {exc} (estimation.short_label_space: error; "
                    "'status' leaves its metrics empty instead)"
                ) from exc
            log.warning("%s, %s: %s; its metrics are left empty", self.where, prop, exc)
            self.reasons[prop] = f"{prop}: {exc}"

    def failed(self, prop: str) -> bool:
        return prop in self.reasons

    def columns(self) -> dict:
        """The row's ``status`` and ``status_reason``, only where a property was short (a table
        without them is all :data:`STATUS_OK`)."""
        if not self.reasons:
            return {}
        return {"status": STATUS_SHORT, "status_reason": "; ".join(self.reasons.values())}


def with_status(table: pd.DataFrame, *, only_if_short: bool = False) -> pd.DataFrame:
    """``table`` with its ``status`` and ``status_reason`` filled in (:data:`STATUS_OK` and ""
    where a row has none); with ``only_if_short``, a table without a short row is returned as
    it is (the estimate folders of a job without one keep their columns)."""
    if only_if_short and "status" not in table.columns:
        return table
    table = table.copy()
    status = table["status"] if "status" in table.columns else pd.Series(None, index=table.index)
    reason = (
        table["status_reason"]
        if "status_reason" in table.columns
        else pd.Series(None, index=table.index)
    )
    table["status"] = status.where(status.notna(), STATUS_OK).astype(str)
    table["status_reason"] = reason.where(reason.notna(), "").astype(str)
    return table
