"""The one module that reads Snakemake beyond its documented Snakefile surface
(``vcrbench.plan.snakemake_compat``), run in a real Snakemake: an upgrade that changes what it
reads fails here. And the start-up plan line made from what it reads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from vcrbench import plan
from vcrbench.plan import config as cfg
from vcrbench.plan import work

REPO = Path(__file__).resolve().parents[2]

SNAKEFILE = """\
import json
from vcrbench.plan import snakemake_compat

rule all:
    input: "out/a.txt", "out/b.txt"

rule make:
    output: "out/{name}.txt"
    shell: "touch {output}"

onstart:
    jobs = snakemake_compat.planned_jobs(workflow)
    rows = sorted(([job.rule, dict(job.wildcards), job.needrun] for job in jobs), key=str)
    print("PLANNED " + json.dumps(rows), flush=True)
    print("CORES " + json.dumps(snakemake_compat.cores(workflow)), flush=True)
"""


def test_planned_jobs_and_cores_read_from_a_real_snakemake(tmp_path):
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "a.txt").write_text("")  # up to date: in the DAG, not to run
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "3", "--directory", str(tmp_path),
         "--snakefile", str(tmp_path / "Snakefile")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout + proc.stderr
    planned = json.loads(out.split("PLANNED ", 1)[1].splitlines()[0])
    assert planned == [  # the up-to-date job is in the DAG, marked as not to run
        ["all", {}, True],
        ["make", {"name": "a"}, False],
        ["make", {"name": "b"}, True],
    ], planned
    assert json.loads(out.split("CORES ", 1)[1].splitlines()[0]) == 3
    assert (tmp_path / "out" / "b.txt").exists()


def _default():
    from vcrbench.schema import load_yaml

    config = plan.validate(load_yaml((REPO / "config" / "config.yaml").read_text()))
    return config, cfg.clean_set_size(config)


def test_the_plan_line_counts_the_jobs_and_spreads_their_estimates_over_the_cores():
    config, clean = _default()
    model = next(iter(cfg.model_entries(config)))
    corruption = cfg.corruption_names(config)[0]
    jobs = [("generate_shard", {"corruption": corruption, "shard": "0"})] * 4
    jobs += [("predict_model", {"model": model}), ("plot_curves", {"corruption": corruption})]
    one = work.run_seconds(config, jobs, clean, 1)
    two = work.run_seconds(config, jobs, clean, 2)
    assert two == max(one / 2, max(work.run_seconds(config, [j], clean, 1) for j in jobs))
    # a rule the plan does not estimate per job: as long as one of its jobs took in a real run
    plot = work.run_seconds(config, [jobs[-1]], clean, 1)
    assert plot == work.figures("local_jobs")["seconds"]["plot_curves"] > 0
    line = work.plan_line(config, jobs, clean, 2)
    minutes = two / 60
    about = f"about {minutes:.0f} min" if minutes >= 1 else "under a minute"
    assert line == (
        f"vcrbench: plan: 6 jobs of 3 rules to run, {about} on 2 cores "
        "(the plan's estimate, docs/scale.md)"
    )
    # on a cluster (no number of cores): the count, and where the cost is
    assert work.plan_line(config, jobs, clean, None) == (
        "vcrbench: plan: 6 jobs of 3 rules to run (`make plan` for their cost)"
    )
    assert work.plan_line(config, [], clean, 2) == "vcrbench: plan: nothing to run"
    one = work.plan_line(config, [jobs[-1]], clean, 1)
    assert one.startswith("vcrbench: plan: 1 job of 1 rule to run, under a minute on 1 core (")
