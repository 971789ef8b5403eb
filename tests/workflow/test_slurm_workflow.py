"""The README's SLURM commands on a real single-node SLURM cluster (started by the test where the
machine allows): the user's profile installed as typed, every job submitted, HOME read-only, the
allocations busy (issue 27)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time

import pandas as pd
import pytest

from .conftest import REPO, partial_copy

# What the cluster run makes again, from the shared tiny run: one corruption's test sets,
# ImageNet-C sets, predictions and curves (``partial_copy``'s default, ``ONE_CORRUPTION``), so
# that generation, inference and estimation, and the tables and figures over them, run as cluster
# jobs, from where a run stands once its dataset, weights and human references are made. (A human
# reference's files alone removed would not be made again: Snakemake does not rerun a job for an
# intermediate file that is missing when what was made from it is there and newer than its
# inputs.)


def readme_slurm_commands() -> list[str]:
    """The command lines of the README's "On a SLURM cluster" block, comments stripped."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("## On a SLURM cluster") :]
    block = section[section.index("```bash\n") + len("```bash\n") :]
    block = block[: block.index("```")]
    return [
        line.split("#", 1)[0].strip()
        for line in block.splitlines()
        if line.split("#", 1)[0].strip()
    ]


def test_readme_slurm_commands_are_the_ones_tested():
    assert readme_slurm_commands() == [
        "mkdir -p ~/.config/snakemake && cp -r profiles/slurm ~/.config/snakemake/",
        "snakemake --profile slurm",
        "snakemake --profile slurm --configfile config/paper.yaml",
    ]


@pytest.mark.slow
@pytest.mark.slurm
def test_slurm_profile_runs_the_workflow(finished_run, tmp_path):
    """The README's commands, as typed, in a copy of the repository holding the shared tiny run
    without one corruption's sets and what was made from them (``partial_copy``'s default),
    with HOME in a temporary folder: the one-time step installs the user's profile, the site
    edits it as the README says, and `snakemake --profile slurm` submits every job to the
    cluster, with HOME then read-only and nothing written there. Generation and estimation
    allocations use the one core they hold: CPU-seconds used / allocated (sacct) at least 0.7,
    each measured with a core to itself (tests/support/slurm_jobs.py)."""
    from tests.support.homes import read_only_home, written
    from tests.support.slurm import SlurmUnavailable, efficiency, start_cluster, usage
    from tests.support.slurm_jobs import burn, own_share, pin_jobs, submitted

    try:
        cluster = start_cluster(tmp_path / "slurm")
    except SlurmUnavailable as exc:
        if os.geteuid() != 0:
            pytest.skip(f"cannot run a SLURM cluster here: {exc}")
        raise
    try:
        # The repository as a user has it (the library comes from the installed environment).
        repo = tmp_path / "repo"
        repo.mkdir()
        for name in ("Snakefile", "rules", "workflow", "config", "profiles", "report", "envs"):
            src = REPO / name
            (shutil.copytree if src.is_dir() else shutil.copy2)(src, repo / name)
        home = tmp_path / "home"
        home.mkdir()
        # this cluster's GPU is count-only (torch sees none): let GPU jobs run on the CPU
        env = dict(
            cluster.env, HOME=str(home), NO_ALBUMENTATIONS_UPDATE="1", VCRBENCH_ALLOW_NO_GPU="1"
        )
        env.pop("XDG_CONFIG_HOME", None)
        env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")

        def shell(command: str, cpus=None) -> subprocess.CompletedProcess:
            return subprocess.run(
                ["bash", "-c", command],
                cwd=repo,
                env=env,
                capture_output=True,
                text=True,
                timeout=1800,
                preexec_fn=None if cpus is None else lambda: os.sched_setaffinity(0, cpus),
            )

        install, _default, paper = readme_slurm_commands()
        proc = shell(install)
        assert proc.returncode == 0, proc.stderr
        profile = home / ".config" / "snakemake" / "slurm"
        assert (profile / "config.yaml").is_file() and (profile / "partitions.yaml").is_file()
        # The site's edits: this test cluster's partitions are the template's (cpu, gpu); it may
        # have no accounting database (cluster.accounting), so the README's two lines for that
        # case are uncommented; and it answers at once, so status checks start sooner than a
        # real site's would. One cluster job at a time, so that each has a core of its own here.
        settings = (profile / "config.yaml").read_text()
        assert "\njobs: 200 " in settings
        settings = settings.replace("\njobs: 200 ", "\njobs: 1 ")
        for line in ("slurm-status-command: squeue", "slurm-no-account: true"):
            assert f"# {line}" in settings, line
            settings = settings.replace(f"# {line}", line)
        settings += "slurm-init-seconds-before-status-checks: 1\nseconds-between-status-checks: 2\n"
        (profile / "config.yaml").write_text(settings)

        # The shared run's results and Snakemake's records (what a run had made before), its
        # config as the user's
        partial_copy(finished_run, repo)
        shutil.copy2(finished_run / "config.yaml", repo / "config" / "slurm-test.yaml")
        started = time.time()
        command = paper.replace("config/paper.yaml", "config/slurm-test.yaml")
        installed = written(home)
        with read_only_home(home):
            proc = shell(command, cpus=pin_jobs(cluster))
            assert written(home) == installed  # nothing under $HOME but the installed profile
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0, out[-6000:]
        # (Snakemake writes "profiles" when it counts the workflow profile in)
        assert re.search(
            r"Using profiles? slurm and workflow specific profile profiles/default", out
        ), out[:2000]
        # the remade corruption's rows are back in the tables over all corruptions, made anew
        tables = repo / "results" / "tables"
        for name in ("vcr_metrics.csv", "imagenet_c_accuracy.csv"):
            assert (tables / name).stat().st_mtime > started, name
            assert "brightness" in set(pd.read_csv(tables / name)["corruption"]), name

        # jobs alone are logged under rule_<rule>/, group jobs under group_<group>/
        job_ids = dict(
            (m.group(2), m.group(1))
            for m in re.finditer(r"SLURM jobid (\d+).*?(?:rule|group)_([\w-]+?)/", out)
        )
        assert job_ids, out[-3000:]

        def job_info(rule: str) -> str:
            return subprocess.run(
                ["scontrol", "show", "job", job_ids[rule]],
                capture_output=True,
                text=True,
                env=cluster.env,
            ).stdout

        # Group jobs are logged under group_<group job id> (an id per group job, not the group's
        # name): find them by what SLURM says of them. Inference (the GPU jobs) went to the GPU
        # partition with a GPU; generation to the CPU partition with the plan's memory (2,000 MB
        # per job at the first attempt, jobs side by side), not a profile's flat default.
        infos = {key: job_info(key) for key in job_ids}
        gpu_jobs = [i for i in infos.values() if "Partition=gpu" in i]
        assert gpu_jobs, infos
        for info in gpu_jobs:
            assert "gpu" in info.split("TresPerJob=")[-1] or "gres/gpu" in info, info
        cpu_memory = [
            re.search(r"MinMemoryNode=(\d+)M|mem=(\d+)M", info)
            for info in infos.values()
            if "Partition=cpu" in info
        ]
        assert any(m and int(m.group(1) or m.group(2)) % 2000 == 0 for m in cpu_memory), infos
        # cheap rules ran where Snakemake runs; what was not removed is not made again
        assert not {"collect_metrics", "paper_tables"} & set(job_ids), job_ids
        assert "collect_metrics" in out
        assert not {"fetch_weights", "prepare_clean_set"} & set(job_ids), job_ids

        # Generation and estimation: group jobs of one core, busy (issue 27)
        stages = submitted(out)
        assert stages.get("generate") and stages.get("estimate"), stages
        if not cluster.accounting:
            pytest.skip(f"no SLURM accounting to measure allocations: {cluster.accounting_reason}")
        # What a job that never waits gets of the same core, right after (1 on an idle machine;
        # less where other processes share this machine's cores): the measure's ceiling.
        calibration = burn(cluster.env, tmp_path)
        usage(cluster.env, [calibration], wait=120)
        share = min(1.0, own_share(tmp_path, calibration)["share"])
        for stage in ("generate", "estimate"):
            rows = usage(cluster.env, stages[stage], wait=120)
            used = efficiency(rows)
            print(
                f"SLURM {stage}: {len(rows)} cluster jobs, "
                + ", ".join(f"{r['alloc_cpus']} CPU x {r['elapsed']:.0f} s" for r in rows)
                + f"; CPU-seconds used / allocated {used:.2f}"
                + f" (a busy job got {share:.2f} of the core)"
            )
            assert {r["alloc_cpus"] for r in rows} == {1}, rows
            assert used >= 0.7 * share, (rows, share)
    finally:
        cluster.stop()
        shutil.rmtree(tmp_path / "slurm" / "state", ignore_errors=True)
