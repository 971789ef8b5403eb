"""Per-job start-up on this machine: what every cluster job spends before and besides its work.

Three parts, each timed as a fresh process (median of ``--repeats``):

- ``snakemake``: Snakemake starting inside a submitted job (parse the Snakefile, build the plan
  and the DAG of its target): a dry run for one output of the tiny config. A group job pays it
  once, whatever its number of jobs.
- ``generate``: a generation script's start-up (Python and the imports of
  workflow/scripts/generate_shard.py); every generation job pays it.
- ``predict``: an inference script's start-up (the imports of workflow/scripts/predict_shards.py,
  torch among them, and building the tiny config's model on the CPU); every inference job pays
  it. On a GPU node add the CUDA context (not measured here: no GPU).

    python benchmarks/bench_job_overhead.py [--repeats 3] [--json src/vcrbench/data/planning/job_overhead.json]

Wall seconds and CPU seconds (user + system) are recorded with the machine's load average: other
processes share the machine and stretch the wall time; the CPU seconds are what a job alone on
its node would wait (start-up is single-threaded), and what the cost plan uses.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vcrbench.plan.cluster import snakemake_command

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "tests" / "workflow" / "tiny.yaml"

GENERATE = (
    "from vcrbench import logs\n"
    "from vcrbench.files import io\n"
    "from vcrbench.testsets import testset\n"
    "from vcrbench.corruptions import get_corruption\n"
    "from vcrbench.datasets.loading import CleanSet\n"
    "from vcrbench.plan import job\n"
    "get_corruption('gaussian_noise', {})\n"
)
PREDICT = (
    "import yaml\n"
    "from vcrbench import inference, logs\n"
    "from vcrbench.models import ModelSpec, load_model\n"
    "from vcrbench.plan import job\n"
    f"entry = yaml.safe_load(open({str(TINY)!r}))['models']['efficientnet_lite0']\n"
    "load_model(ModelSpec.from_config('efficientnet_lite0', entry), 'cpu')\n"
)


def timed(cmd: list[str], env: dict, cwd: Path) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, the process and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[:4]} failed:\n{proc.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, cpu


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    env = dict(os.environ, NO_ALBUMENTATIONS_UPDATE="1")
    env["PYTHONPATH"] = str(REPO / "src") + os.pathsep + env.get("PYTHONPATH", "")
    load_before = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="vcr-overhead-"))
    commands = {
        "snakemake": snakemake_command(
            REPO / "Snakefile",
            work,
            "-n",
            "--cores",
            "1",
            "results/dataset/index.parquet",
            configfile=TINY,
        ),
        "generate": [sys.executable, "-c", GENERATE],
        "predict": [sys.executable, "-c", PREDICT],
    }
    times: dict[str, list[float]] = {k: [] for k in commands}
    cpu: dict[str, list[float]] = {k: [] for k in commands}
    for _ in range(args.repeats):  # interleaved, so that a load change touches every part
        for name, cmd in commands.items():
            wall, used = timed(cmd, env, work)
            times[name].append(wall)
            cpu[name].append(used)
    load_after = os.getloadavg()
    doc = {
        "machine": f"{platform.node()}, {os.cpu_count()} cores, {platform.machine()}",
        "date": datetime.date.today().isoformat(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "repeats": args.repeats,
        "seconds": {k: round(statistics.median(v), 2) for k, v in times.items()},
        "cpu_seconds": {k: round(statistics.median(v), 2) for k, v in cpu.items()},
        "all_seconds": {k: [round(x, 2) for x in v] for k, v in times.items()},
        "what": {
            "snakemake": "Snakemake's start in a submitted job (dry run of one target, tiny config)",
            "generate": "a generation script's imports",
            "predict": "an inference script's imports and the tiny config's model built on the CPU",
        },
    }
    text = json.dumps(doc, indent=2) + "\n"
    print(text, end="")
    if args.json:
        args.json.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
