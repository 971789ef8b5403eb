"""Compare two results folders for the refactor rule: every output byte-identical.

    python tools/compare_results.py BEFORE/results AFTER/results

Two runs of the same config at different commits differ only where the commit is recorded: the
``git_commit``/``git_dirty`` fields of provenance records (JSON sidecars and the
``vcrbench.provenance`` metadata of Parquet files, hence a Parquet output's sha256 in its JSON
record). Those fields are left out of the comparison;
every other byte must match: CSV, Markdown, LaTeX, PNG, PDF, NPY, JSON, and the data and remaining
metadata of each Parquet file. Logs and Snakemake benchmark files (timings) are skipped. Prints one
line per difference and exits 1 if there is any.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow.parquet as pq

SKIPPED = ("logs", "benchmarks")
COMMIT_FIELDS = ("git_commit", "git_dirty")


def _files(root: Path) -> set[str]:
    return {
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and p.relative_to(root).parts[0] not in SKIPPED
    }


def _without_commit(record: dict) -> dict:
    return {k: v for k, v in record.items() if k not in COMMIT_FIELDS}


def _parquet_same(a: Path, b: Path) -> str | None:
    ta, tb = pq.read_table(a), pq.read_table(b)
    if ta.schema.remove_metadata() != tb.schema.remove_metadata():
        return "schema differs"
    ma, mb = dict(ta.schema.metadata or {}), dict(tb.schema.metadata or {})
    for meta in (ma, mb):
        if b"vcrbench.provenance" in meta:
            meta[b"vcrbench.provenance"] = _without_commit(json.loads(meta[b"vcrbench.provenance"]))
    if ma != mb:
        keys = sorted(k.decode() for k in set(ma) | set(mb) if ma.get(k) != mb.get(k))
        return f"metadata differs: {', '.join(keys)}"
    # Compare the data as Parquet would store it (NaN equal to NaN), column by column.
    for name in ta.column_names:
        ca, cb = ta.column(name).combine_chunks(), tb.column(name).combine_chunks()
        if ca.to_pylist() != cb.to_pylist():
            da, db = ca.to_pandas(), cb.to_pandas()
            try:
                if da.equals(db):
                    continue
            except Exception:  # noqa: BLE001 - unequal types: reported below
                pass
            return f"column {name} differs"
    return None


def compare(before: Path, after: Path) -> list[str]:
    """The differences between two results folders, one line each."""
    fa, fb = _files(before), _files(after)
    problems = [f"only in {before}: {f}" for f in sorted(fa - fb)]
    problems += [f"only in {after}: {f}" for f in sorted(fb - fa)]
    for rel in sorted(fa & fb):
        a, b = before / rel, after / rel
        if a.read_bytes() == b.read_bytes():
            continue
        if rel.endswith(".parquet"):
            why = _parquet_same(a, b)
        elif rel.startswith("provenance/") and rel.endswith(".json"):
            ra, rb = (_without_commit(json.loads(p.read_text())) for p in (a, b))
            if str(ra.get("output", "")).endswith(".parquet"):
                # A Parquet output holds the commit in its metadata, so its sha256 differs between
                # commits; the file itself is compared above, without the commit.
                ra.pop("sha256", None)
                rb.pop("sha256", None)
            why = None if ra == rb else "provenance record differs"
        else:
            why = "bytes differ"
        if why:
            problems.append(f"{rel}: {why}")
    return problems


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    before, after = map(Path, argv)
    problems = compare(before, after)
    for line in problems:
        print(line)
    n = len(_files(before) & _files(after))
    print(f"{n} files compared, {len(problems)} differences", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
