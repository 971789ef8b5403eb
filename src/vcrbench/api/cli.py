"""The ``vcrbench`` command (a console script; also ``python -m vcrbench``).

``vcrbench evaluate --model timm:NAME [--run results/] ...`` is :func:`vcrbench.benchmark` from
the command line: it prints the model's metrics table and writes it, with the figures
(``--plot``), under the output folder.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import yaml

#: The columns printed (every column is in the CSV the command writes).
SHOWN = ("model", "corruption", "label_space", "R_a", "R_p", "HMRI_a", "MRSI_a", "scenario_a",
         "status")  # fmt: skip


def _setting(text: str) -> tuple[str, object]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"--set {text!r}: write KEY=VALUE (a dotted config key)")
    return key, yaml.safe_load(value)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="vcrbench", description="VCR-Bench from the command line (docs/api.md)."
    )
    commands = top.add_subparsers(dest="command", required=True)
    ev = commands.add_parser(
        "evaluate",
        help="evaluate one model (vcrbench.benchmark)",
        description="Evaluate one model on generated (cached) test sets, or on a finished run's "
        "test sets and compared with its models; print its metrics.",
    )
    ev.add_argument("--model", required=True,
                    help="source:id of any registered source (timm:resnet50.a1_in1k), or the "
                    "name of a model of the config")  # fmt: skip
    ev.add_argument("--name", help="the model's name in the tables (default: from its id)")
    ev.add_argument("--run", help="a finished workflow run's results/ folder: its test sets and "
                    "human curves, its models compared")  # fmt: skip
    ev.add_argument("--config", help="config file (default: the run's config/config.yaml, or the "
                    "embedded default)")  # fmt: skip
    ev.add_argument("--corruptions", help="comma-separated corruptions of the config to evaluate")
    ev.add_argument("--n-samples", type=int, help="samples per corruption (sampling.n_samples)")
    ev.add_argument("--dataset", help="a folder of images (dataset.kind folder)")
    ev.add_argument("--device", help="auto (the GPU if there is one), cpu, cuda, cuda:1, ...")
    ev.add_argument("--cache-dir", help="where generated test sets are kept "
                    "(default $XDG_CACHE_HOME/vcrbench)")  # fmt: skip
    ev.add_argument("--out-dir", help="where the model's outputs go (default: in the cache)")
    ev.add_argument("--set", dest="settings", action="append", type=_setting, default=[],
                    metavar="KEY=VALUE", help="any config key, e.g. --set estimation.n_boot=50")  # fmt: skip
    ev.add_argument("--plot", action="store_true", help="draw the curves and HMRI/MRSI figures")
    ev.add_argument("--quiet", action="store_true", help="no progress bars")
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    from vcrbench.api import benchmark
    from vcrbench.errors import ConfigError, ModelError

    try:
        result = benchmark(
            args.model, name=args.name, run=args.run, config=args.config,
            corruptions=args.corruptions.split(",") if args.corruptions else None,
            n_samples=args.n_samples, dataset=args.dataset, device=args.device,
            cache_dir=args.cache_dir, out_dir=args.out_dir, settings=dict(args.settings),
            progress=not args.quiet,
        )  # fmt: skip
    except (ConfigError, ModelError) as exc:
        print(f"vcrbench evaluate: {exc}", file=sys.stderr)
        return 2
    table = result.metrics[[c for c in SHOWN if c in result.metrics.columns]]
    print(table.to_string(index=False))
    print(f"\nall columns: {result.folder}/results/tables/vcr_metrics.csv")
    if args.plot:
        files = result.plot()
        print(f"figures: {files[0].parent.parent}" if files else "figures: none")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
