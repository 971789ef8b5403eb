"""Retraining with VCR data (Section 4.3 of the paper). Being written; see issue 8."""

from __future__ import annotations

from collections.abc import Mapping


def derived_model_entries(config: Mapping) -> dict[str, dict]:
    """Model entries of the fine-tuned models the config asks for (none until retraining lands)."""
    return {}
