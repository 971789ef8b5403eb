"""What one job of each rule took in a finished run, from Snakemake's benchmark files: the figures
the start-up plan line (``vcrbench.plan.work.run_seconds``) uses for the rules that the plan does
not estimate per job (everything but generation, inference and fine-tuning).

Every rule of the workflow writes a benchmark file (``results/benchmarks/<rule>/...``, columns as
Snakemake writes them: ``s`` is the job's wall seconds), read as ``bench_run.py`` reads them; this
takes the mean per rule.

    python benchmarks/local_job_seconds.py [--results results] [--commit 08aa64e] \
        [--machine "2 cores, idle"] [--json src/vcrbench/data/planning/local_jobs.json]
"""

from __future__ import annotations

import argparse
import datetime
import json
from pathlib import Path

import pandas as pd
from bench_run import job_times


def mean_seconds(results: Path) -> dict[str, float]:
    """Mean wall seconds of one job, per rule, of the run in ``results`` (its ``benchmarks/``
    files, read by ``bench_run.job_times``)."""
    jobs = job_times(results, started=0.0)
    if not jobs:
        raise SystemExit(
            f"no benchmark files under {results / 'benchmarks'}: run the workflow first"
        )
    table = pd.DataFrame(jobs).groupby("rule")["s"].mean()
    return {rule: round(float(s), 2) for rule, s in table.items()}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--commit", default="", help="the commit the run was made at")
    parser.add_argument("--machine", default="", help="the machine and its load during the run")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    doc = {
        "what": "mean wall seconds of one job per rule, the embedded default's run (make run)",
        "commit": args.commit,
        "machine": args.machine,
        "date": datetime.date.today().isoformat(),
        "seconds": mean_seconds(args.results),
    }
    text = json.dumps(doc, indent=2) + "\n"
    if args.json:
        args.json.write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
