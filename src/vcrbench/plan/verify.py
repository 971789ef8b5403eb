"""``make verify``: every workflow output checked against the checksum its provenance record holds.

Each sidecar under ``results/provenance/`` (:mod:`vcrbench.plan.job`) names its output and the
``sha256`` of its bytes written when the job ended; every Parquet file under ``results/`` is also
read page by page against its page checksums. A damaged output is listed with what is wrong, and
the last line is the one command that regenerates every one found and what depends on them
(:data:`REPAIR`: delete them, run the workflow again). A rerun alone does not: Snakemake looks at
files' times, not their bytes, and a damaged file that no job reads again is never opened.

    python -m vcrbench.plan.verify [--directory DIR] [--remove]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from vcrbench.errors import DamagedFileError
from vcrbench.files import io
from vcrbench.plan import paths
from vcrbench.plan.job import checksum

#: The one command that repairs every damaged output ``make verify`` found (its last line).
REPAIR = "rm {damaged} && make run"


@dataclass(frozen=True)
class Finding:
    path: str
    problem: str


def _sidecars(root: Path) -> list[Path]:
    folder = root / paths.PROVENANCE
    return sorted(folder.rglob("*.json")) if folder.is_dir() else []


def verify(root: str | Path) -> tuple[int, list[Finding]]:
    """``(outputs checked, findings)`` for the workflow outputs under ``root`` (the workflow's
    working directory)."""
    root = Path(root)
    findings, checked, seen = [], 0, set()
    for sidecar in _sidecars(root):
        try:
            record = json.loads(sidecar.read_text())
            output = record["output"]
        except (OSError, ValueError, KeyError) as exc:
            findings.append(Finding(str(sidecar.relative_to(root)), f"unreadable record: {exc}"))
            continue
        path = root / output
        seen.add(output)
        if not path.exists():
            continue  # not made yet, or deleted: the next run makes it
        checked += 1
        expected = record.get("sha256")
        if expected is not None and checksum(path) != expected:
            findings.append(Finding(output, "its bytes differ from the sha256 of its record"))
        elif path.suffix == ".parquet":
            findings += _parquet(root, output)
    results = root / paths.RESULTS
    for parquet in sorted(results.rglob("*.parquet")) if results.is_dir() else []:
        output = parquet.relative_to(root).as_posix()
        if output not in seen and not parquet.name.startswith("."):
            checked += 1
            findings += _parquet(root, output)
    return checked, findings


def _parquet(root: Path, output: str) -> list[Finding]:
    try:
        io.verify_parquet(root / output)
    except DamagedFileError as exc:
        return [Finding(output, exc.reason)]
    return []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--directory", "-d", default=".", help="the workflow's working directory")
    parser.add_argument(
        "--remove",
        action="store_true",
        help="delete the damaged outputs (the next run remakes them)",
    )
    args = parser.parse_args(argv)
    checked, findings = verify(args.directory)
    for f in findings:
        print(f"damaged: {f.path}: {f.problem}")
    if not findings:
        print(f"{checked} outputs checked, none damaged")
        return 0
    damaged = " ".join(sorted({f.path for f in findings}))
    if args.remove:
        for f in findings:
            (Path(args.directory) / f.path).unlink(missing_ok=True)
        print(f"{len(findings)} of {checked} outputs damaged and deleted; run the workflow again")
    else:
        print(
            f"{len(findings)} of {checked} outputs damaged. A damaged output that no job reads "
            "again (a shard whose predictions exist) stays damaged through any rerun: delete them "
            "and run the workflow again, which regenerates them and what depends on them, "
            "byte-identical (with a config of your own: your snakemake command instead of "
            "`make run`). Everything found is repaired by:"
        )
        print(REPAIR.format(damaged=damaged))
    return 1



if __name__ == "__main__":
    sys.exit(main())
