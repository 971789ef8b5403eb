"""Count the library's keyword defaults named like a config key (issue 37, item 1).

A parameter of a function in ``src/vcrbench`` counts when it has a default other than ``None``
and its name is the name of a property anywhere in the config schema (``$defs`` included), or
stands for one (``n_bins`` for ``bins``, ``vif_variant`` for ``variant``). The scan reads the
source (``ast``); nothing is imported but the schema.

    python tools/setting_defaults.py            # the count
    python tools/setting_defaults.py --list     # and every parameter, one a line
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "vcrbench"
#: Parameter names that stand for a schema key of another name.
ALIASES = {"n_bins": "bins", "vif_variant": "variant"}


def property_names(node) -> set[str]:
    """Every property name in a schema (nested objects, ``additionalProperties``, ``$defs``)."""
    names: set[str] = set()
    if isinstance(node, dict):
        for key, sub in (node.get("properties") or {}).items():
            names.add(key)
            names |= property_names(sub)
        for key in ("additionalProperties", "items"):
            names |= property_names(node.get(key))
        for sub in (node.get("$defs") or {}).values():
            names |= property_names(sub)
    return names


def schema_names() -> set[str]:
    import yaml

    text = (PACKAGE / "data" / "config.schema.yaml").read_text()
    return property_names(yaml.safe_load(text))


def _defaults(args: ast.arguments):
    positional = [*args.posonlyargs, *args.args]
    for arg, default in zip(
        positional[len(positional) - len(args.defaults) :], args.defaults, strict=True
    ):
        yield arg.arg, default
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if default is not None:
            yield arg.arg, default


def setting_defaults(package: Path = PACKAGE, names: set[str] | None = None) -> list[str]:
    """``path:line function(parameter=default)`` of every counted parameter, sorted."""
    names = schema_names() if names is None else names
    found = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for param, default in _defaults(node.args):
                if isinstance(default, ast.Constant) and default.value is None:
                    continue
                if ALIASES.get(param, param) in names:
                    where = f"{path.relative_to(package.parent)}:{node.lineno}"
                    found.append(f"{where} {node.name}({param}={ast.unparse(default)})")
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="print every parameter")
    args = parser.parse_args(argv)
    found = setting_defaults()
    if args.list:
        print("\n".join(found))
    print(f"{len(found)} keyword defaults named like a config key")
    return 0


if __name__ == "__main__":
    sys.exit(main())
