"""One row of ``definitions.csv`` (:mod:`vcrbench.plan.definitions`): its cells and the values of
its ``matches_paper`` column."""

from __future__ import annotations

YES, NO, UNSTATED = "yes", "no", "unstated"


def row(definition, paper, this_run, key, matches, note="") -> dict:
    """The row's cells in the table's column order; ``matches`` a bool (yes/no) or one of
    :data:`YES`, :data:`NO`, :data:`UNSTATED`."""
    return {
        "definition": definition,
        "paper": paper,
        "this_run": str(this_run),
        "config_key": key,
        "matches_paper": matches if isinstance(matches, str) else (YES if matches else NO),
        "note": note,
    }
