"""The default run's cost on this machine: wall time, job-time sum, busy share, slowest rules.

    python benchmarks/bench_run.py [--cores 2] [--configfile FILE] [--against REV] [--keep DIR]

Runs the workflow (the embedded default, or ``--configfile``) from nothing into a temporary
folder, as ``make run`` does, and prints

- ``wall``: seconds of the Snakemake process, start to end;
- ``job-time sum``: the jobs' wall seconds added up (Snakemake's ``benchmark:`` files);
- ``busy share``: the jobs' CPU seconds over ``cores x wall``, how much of the cores the run kept
  busy (what is not busy is Snakemake's own scheduling, interpreters starting, and waiting);
- ``last start``: seconds into the run when the last job started, and which;
- the five rules with the largest job-time sum.

``--against REV`` first runs the checkout of ``REV`` (a ``git worktree`` of it, its own
``src/`` first on ``PYTHONPATH``, the same environment otherwise), then this checkout, one right
after the other on the same machine, prints the ratio of their walls and compares their outputs
byte for byte (``tools/compare_results.py``: everything but logs, benchmarks and the commit
fields of provenance). A ratio of two runs in one invocation is what to quote; a single wall
depends on the machine (machines of one kind differ about 2x) and on its load, which is printed
too.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))

import compare_results  # noqa: E402


def snakemake_command(checkout: Path, workdir: Path, cores: int, configfile: Path | None):
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(checkout / "Snakefile")]
    cmd += ["--directory", str(workdir), "--cores", str(cores)]
    if configfile is not None:
        cmd += ["--configfile", str(configfile)]
    return cmd


def job_times(results: Path, started: float) -> list[dict]:
    """One row per job: rule, wall s, cpu s, start and end (seconds after ``started``)."""
    rows = []
    for f in sorted((results / "benchmarks").rglob("*.tsv")):
        with f.open() as fh:
            line = next(csv.DictReader(fh, delimiter="\t"))
        end = f.stat().st_mtime - started
        s = float(line["s"])
        cpu = float(line["cpu_time"]) if line.get("cpu_time") not in (None, "", "NA") else 0.0
        rule = f.relative_to(results / "benchmarks").parts[0]
        name = str(f.relative_to(results / "benchmarks").with_suffix(""))
        rows.append({"rule": rule, "job": name, "s": s, "cpu": cpu, "start": end - s, "end": end})
    return rows


def summarize(results: Path, started: float, wall: float, cores: int) -> dict:
    """What the run's ``benchmarks/`` files say of a run that started at ``started`` (epoch
    seconds) and took ``wall`` seconds on ``cores`` cores."""
    jobs = job_times(results, started)
    by_rule: dict[str, list[float]] = defaultdict(list)
    for j in jobs:
        by_rule[j["rule"]].append(j["s"])
    last = max(jobs, key=lambda j: j["start"])
    return {
        "wall": wall,
        "jobs": len(jobs),
        "job_sum": sum(j["s"] for j in jobs),
        "busy": sum(j["cpu"] for j in jobs) / (cores * wall),
        "last_start": last["start"],
        "last_job": last["job"],
        "rules": sorted(by_rule.items(), key=lambda kv: -sum(kv[1])),
    }


def run_once(checkout: Path, workdir: Path, cores: int, configfile: Path | None) -> dict:
    env = dict(os.environ, NO_ALBUMENTATIONS_UPDATE="1")
    if checkout != REPO:  # the other checkout's library, not this one's editable install
        env["PYTHONPATH"] = os.pathsep.join([str(checkout / "src"), env.get("PYTHONPATH", "")])
    workdir.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()[0]
    started = time.time()
    proc = subprocess.run(
        snakemake_command(checkout, workdir, cores, configfile),
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.time() - started
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-6000:])
        raise SystemExit(f"the run of {checkout} failed (exit {proc.returncode})")
    return {**summarize(workdir / "results", started, wall, cores), "load_before": load}


def report(label: str, r: dict) -> None:
    print(f"{label}: wall {r['wall']:.0f} s, {r['jobs']} jobs, job-time sum {r['job_sum']:.0f} s, "
          f"busy share {r['busy']:.0%} of the cores, last job started at {r['last_start']:.0f} s "
          f"({r['last_job']}), load before {r['load_before']:.2f}")  # fmt: skip
    for rule, times in r["rules"][:5]:
        print(f"    {rule:28s} {sum(times):7.1f} s over {len(times):3d} jobs "
              f"(longest {max(times):.1f} s)")  # fmt: skip


def worktree(rev: str, where: Path) -> Path:
    subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--detach", str(where), rev],
        check=True,
        capture_output=True,
    )
    return where


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--configfile", type=Path, default=None)
    ap.add_argument("--against", metavar="REV", default=None, help="run REV's checkout first")
    ap.add_argument("--keep", type=Path, default=None, help="keep the runs in this folder")
    args = ap.parse_args(argv)
    configfile = args.configfile.resolve() if args.configfile else None
    base = args.keep or Path(tempfile.mkdtemp(prefix="bench-run-"))
    base.mkdir(parents=True, exist_ok=True)
    print(f"machine: {os.cpu_count()} cores, {args.cores} given to the run; runs in {base}")
    try:
        before = None
        if args.against:
            other = worktree(args.against, base / "checkout-against")
            try:
                before = run_once(other, base / "against", args.cores, configfile)
            finally:
                subprocess.run(
                    ["git", "-C", str(REPO), "worktree", "remove", "--force", str(other)],
                    check=False,
                )
            report(f"{args.against}", before)
        now = run_once(REPO, base / "this", args.cores, configfile)
        report("this checkout", now)
        if before is not None:
            print(f"ratio (this / {args.against}): wall {now['wall'] / before['wall']:.2f}, "
                  f"job-time sum {now['job_sum'] / before['job_sum']:.2f}")  # fmt: skip
            problems = compare_results.compare(
                base / "against" / "results", base / "this" / "results"
            )
            print(f"outputs: {len(problems)} differences")
            for line in problems:
                print(f"    {line}")
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
