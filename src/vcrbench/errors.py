"""Every exception the library raises, in one leaf module (it imports nothing of vcrbench).

Each message names the thing at fault (a config key, a file and row, a model, a corruption), so a
user can fix it without reading code. The classes derive from the built-in exception a caller
would expect (``ValueError`` for bad input, ``RuntimeError`` for a failure while running), and
every stage module re-exports the ones it raises under the names it always had
(``vcrbench.humans.trial_schema.HumanDataError`` is this module's class).
"""

from __future__ import annotations

import difflib
import errno
import os
from collections.abc import Iterable


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` for the closest known name, or ``""``: the hint every
    unknown-name error carries."""
    close = difflib.get_close_matches(str(name), [str(k) for k in known], n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


# --------------------------------------------------------------------------- configuration


class ConfigError(ValueError):
    """A config value that cannot be used; the message names the key."""


class ConfigErrors(ConfigError):
    """Every problem of a config found in one pass (``problems``: each a message naming its key),
    one a line; one problem reads as that problem alone."""

    def __init__(self, problems: Iterable[str]):
        self.problems = list(dict.fromkeys(problems))
        if len(self.problems) == 1:
            text = self.problems[0]
        else:
            listed = "\n".join(f"  {p}" for p in self.problems)
            text = f"{len(self.problems)} problems in the config:\n{listed}"
        super().__init__(text)

    def __reduce__(self):
        return type(self), (self.problems,)


def raise_all(problems: Iterable[str]) -> None:
    """Raise :class:`ConfigErrors` of ``problems`` if there are any."""
    problems = list(problems)
    if problems:
        raise ConfigErrors(problems)


class FigureConfigError(ConfigError):
    """A ``figures`` config value that cannot be used (the message names the key)."""


class PlanError(ValueError):
    """A rule file asks the plan for something it does not have (a stage without a version)."""


# --------------------------------------------------------------------------- files


class DamagedFileError(OSError):
    """A file that exists but cannot be read back as written (truncated, bits flipped); ``path``
    is the file. The message names it and how to regenerate it."""

    def __init__(self, path, reason: str) -> None:
        self.path, self.reason = str(path), reason
        super().__init__(
            f"{self.path} is damaged ({reason}); delete it and run the same command again, "
            f"which regenerates it: rm {self.path}"
        )

    def __reduce__(self):  # picklable across DataLoader workers, with its path
        return DamagedFileError, (self.path, self.reason)


class DiskFullError(OSError):
    """No space left on the device (or quota) while writing ``path``: the message names it and
    what to do. What was half-written is removed; finished outputs are kept."""

    def __init__(self, path, detail: str = "") -> None:
        self.path, self.detail = str(path), detail
        folder = os.path.dirname(self.path) or "."
        super().__init__(
            errno.ENOSPC,
            f"no space left on the device to write {self.path}"
            + (f" ({detail})" if detail else "")
            + f"; nothing half-written was kept and finished outputs are untouched: free space "
            f"there (df -h {folder}) and run the same command again",
        )

    def __str__(self) -> str:
        return self.strerror

    def __reduce__(self):
        return DiskFullError, (self.path, self.detail)


# --------------------------------------------------------------------------- inputs


class DatasetError(ValueError):
    """A dataset, labels file or image that cannot be used; the message names the file."""


class LabelSpaceError(ValueError):
    """A label space that is malformed or does not fit a model or dataset."""


class CorruptionError(ValueError):
    """A corruption, parameter or option that cannot be used; the message names it."""


class DefenseError(ValueError):
    """A defense, parameter or user function that cannot be used; the message names it."""


class HumanDataError(ValueError):
    """Human trial data that cannot be used; the message names the file, row and column."""


class HumanReferenceError(ValueError):
    """A human-reference config entry that cannot be used; the message names the config key."""


# --------------------------------------------------------------------------- models


class ModelError(Exception):
    """Base class of model errors; the message names the model."""


class ModelConfigError(ModelError, ValueError):
    """A model entry of the config that cannot be used (unknown source, key or value)."""


class ModelLoadError(ModelError, RuntimeError):
    """A model that cannot be built or whose weights do not fit it."""


class WeightsUnavailableError(ModelLoadError, FileNotFoundError):
    """Weights that are neither on disk nor downloadable here; the message says what to get."""


# --------------------------------------------------------------------------- stages


class InferenceError(ValueError):
    """Inputs an inference job cannot use; the message names the file or setting."""


class EvaluationError(ValueError):
    """Predictions that cannot be evaluated (the message names the file or label space)."""


class ShortSampleError(ValueError):
    """Samples too few for Alg. 1's bins: no Δv bin holds ``min_count`` of them (``largest``:
    the most any bin holds, of ``n_samples``). The message names the setting to change."""

    def __init__(self, min_count: int, largest: int, n_samples: int) -> None:
        self.min_count, self.largest, self.n_samples = int(min_count), int(largest), int(n_samples)
        super().__init__(
            f"no Δv bin holds at least min_count={self.min_count} samples (largest bin: "
            f"{self.largest} of {self.n_samples} samples); lower estimation.min_count or add "
            "samples"
        )

    def __reduce__(self):
        return ShortSampleError, (self.min_count, self.largest, self.n_samples)


class TableError(ValueError):
    """Inputs a table cannot be built from (the message names the table and the input)."""


class PoolOverlapError(ValueError):
    """Images of the retraining pool that are also evaluation images; the message names them."""


class RetrainError(RuntimeError):
    """Training data or a model that cannot be fine-tuned as asked; the message says why."""
