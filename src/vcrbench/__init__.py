"""VCR-Bench: visually-continuous corruption robustness of image classifiers, against humans.

``vcrbench.benchmark(model, ...)`` evaluates one model in one call (docs/api.md); it is imported on
first use, so ``import vcrbench`` stays cheap (PEP 562).
"""

__version__ = "0.1.0"

#: The API's names, resolved on first use from :mod:`vcrbench.api`.
_API = ("benchmark", "Result")


def __getattr__(name: str):
    if name in _API:
        import importlib

        return getattr(importlib.import_module("vcrbench.api"), name)
    raise AttributeError(f"module 'vcrbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])
