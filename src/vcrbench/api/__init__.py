"""The Python API: one model through the workflow's stages in one call (docs/api.md).

``vcrbench.benchmark(model, ...)`` takes a ``torch.nn.Module`` with its preprocessing, or a model
id of any registered source, evaluates it on generated (and cached) test sets or on a finished
run's, and returns a :class:`Result` (``.metrics``, ``.curves``, ``.plot()``). The layer above the
plan: it builds the config and the stages' settings as the workflow does (the plan layer) and
makes the library calls that the workflow's scripts make (:mod:`vcrbench.api.stages`).
``vcrbench evaluate`` is the same from the command line (:mod:`vcrbench.api.cli`).
"""

from vcrbench.api.bench import benchmark
from vcrbench.api.result import Result

__all__ = ["Result", "benchmark"]
