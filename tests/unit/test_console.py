"""The workflow's console (vcrbench.plan.console, the logger plugin ``vcrbench``): a failed job's
error once, its own line then its log's path. Its decisions on records made here, then the plugin
in a real Snakemake: an upgrade that stops giving the documented record fields it reads fails
here."""

from __future__ import annotations

import io
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from snakemake_interface_logger_plugins.common import LogEvent

from vcrbench.plan import console

REPO = Path(__file__).resolve().parents[2]
LOGGER = logging.getLogger("test.console")
CALLED = "RuleException:\nCalledProcessError in file rules/x.smk, line 3:\nCommand 'python s.py' "


def record(event=None, msg="a note", level=logging.INFO, **fields) -> logging.LogRecord:
    return LOGGER.makeRecord(LOGGER.name, level, __file__, 1, msg, None, None,
                             extra={"event": event, **fields})  # fmt: skip


def job_info(jobid, rule, logs=(), message=None):
    return record(LogEvent.JOB_INFO, f" Rule: {rule}, Jobid: {jobid}", jobid=jobid,
                  rule_name=rule, log=list(logs), rule_msg=message)  # fmt: skip


def job_error(jobid, rule="r"):
    return record(LogEvent.JOB_ERROR, f"Error in rule {rule}, jobid: {jobid}", logging.ERROR,
                  jobid=jobid)  # fmt: skip


def error(text):
    return record(LogEvent.ERROR, text, logging.ERROR, exception="RuleException")


def shown(records, remote=False, local_rules=()) -> list[str]:
    """The console's text of each record, each seen first (Snakemake's formatter stood in for by
    the record's message)."""
    out = console.Console(io.StringIO(), local_rules=lambda: local_rules)
    texts = []
    for r in records:
        out.see(r)
        texts.append(out.text(r, lambda r: r.getMessage()))
    return texts


def test_a_failed_local_jobs_block_is_one_line_naming_its_log():
    texts = shown([job_info(3, "check_images", ["results/logs/c.log"]), job_error(3),
                   job_info(4, "all"), job_error(4)])  # fmt: skip
    assert texts[1] == "vcrbench: log of the failed job check_images: results/logs/c.log"
    assert texts[3] == "vcrbench: log of the failed job all: none (the job has no log)"
    assert texts[0] == " Rule: check_images, Jobid: 3"  # the job's block itself is kept


def test_the_called_process_error_of_a_script_is_dropped_and_any_other_exit_kept():
    exit_1 = CALLED + "returned non-zero exit status 1."
    killed = CALLED + "died with <Signals.SIGKILL: 9>."
    exit_2 = CALLED + "returned non-zero exit status 2."
    other = record(LogEvent.ERROR, exit_1, logging.ERROR, exception="WorkflowError")
    assert shown([error(exit_1), error(killed), error(exit_2), other]) == [
        "", killed, exit_2, exit_1,
    ]  # fmt: skip


def test_snakemakes_block_stays_for_a_rule_with_a_message_and_a_job_that_ran_elsewhere():
    message = [job_info(1, "r", ["l.log"], "making x"), job_error(1)]
    assert shown(message)[1] == "Error in rule r, jobid: 1"
    assert shown([job_error(9)]) == ["Error in rule r, jobid: 9"]  # no JOB_INFO seen: kept
    # a cluster run (Snakemake says it provides remote nodes): a cluster job keeps its block,
    # a local rule's job ran here and is cut to its log
    cluster = [record(LogEvent.RESOURCES_INFO, "Provided remote nodes: 5", nodes=5),
               job_info(1, "predict_model", ["p.log"]), job_error(1),
               job_info(2, "coverage_table", ["c.log"]), job_error(2)]  # fmt: skip
    texts = shown(cluster, local_rules=("coverage_table",))
    assert texts[2] == "Error in rule r, jobid: 1"
    assert texts[4] == "vcrbench: log of the failed job coverage_table: c.log"
    # a local run says its cores: every job ran here
    local = [record(LogEvent.RESOURCES_INFO, "Provided cores: 2", cores=2), *cluster[1:]]
    assert shown(local)[2] == "vcrbench: log of the failed job predict_model: p.log"


def test_the_local_rules_of_a_cluster_run_are_the_workflows():
    from vcrbench.plan.cluster import local_rules

    out = console.Console(io.StringIO())
    out.remote = True
    assert out.local_rules() == local_rules() and "coverage_table" in out.local_rules()
    assert out.ran_here(console.Job("coverage_table", (), None))
    assert not out.ran_here(console.Job("predict_model", (), None))


def test_the_plugin_sees_what_snakemakes_filter_hides(capsys):
    """``--quiet progress`` hides the record that says the run submits to a cluster; the plugin
    still knows it, so a cluster job keeps Snakemake's block."""
    from types import SimpleNamespace

    from snakemake_logger_plugin_vcrbench import LogHandler

    handler = LogHandler(SimpleNamespace(stdout=False, nocolor=True), None)
    handler.addFilter(lambda r: r.event != LogEvent.RESOURCES_INFO)  # as --quiet progress
    nodes = record(LogEvent.RESOURCES_INFO, "Provided remote nodes: 5", nodes=5)
    for r in [nodes, job_info(1, "predict_model", ["p.log"]), job_error(1)]:
        handler.handle(r)
    err = capsys.readouterr().err
    assert "Provided remote nodes" not in err and "Error in rule r, jobid: 1\n" in err
    assert not (handler.writes_to_file or handler.has_filter or handler.has_formatter)
    assert handler.writes_to_stream and not handler.needs_rulegraph


def test_the_console_writes_as_snakemakes_does():
    """A blank line before a job's block (one before a group's blocks), nothing for an empty
    text, colour by level only where it is on."""
    stream = io.StringIO()
    out = console.Console(stream)
    for r in [record(msg="Building DAG of jobs..."), job_info(1, "a"), job_info(2, "b"),
              record(msg="None"), job_info(3, "c"), error(CALLED + "returned non-zero exit status 1.")]:  # fmt: skip
        out.see(r)
        out.write(r, lambda r: r.getMessage())
    assert stream.getvalue() == (
        "Building DAG of jobs...\n\n Rule: a, Jobid: 1\n Rule: b, Jobid: 2\n\n Rule: c, Jobid: 3\n"
    )
    stream = io.StringIO()
    coloured = console.Console(stream, colour=True)
    for r in [record(msg="note"), job_info(1, "a"), job_error(1)]:
        coloured.see(r)
        coloured.write(r, lambda r: r.getMessage())
    assert stream.getvalue() == (
        "\033[33mnote\033[0m\n\n\033[32m Rule: a, Jobid: 1\033[0m\n"
        "\033[31mvcrbench: log of the failed job a: none (the job has no log)\033[0m\n"
    )
    assert not console.colour_on(io.StringIO(), nocolor=False)  # not a terminal


FAILING = """\
rule all:
    input: "out/script.txt", "out/exit2.txt", "out/message.txt", "out/nolog.txt"

rule script_fails:
    output: "out/script.txt"
    log: "logs/script.log"
    script: "fail.py"

rule exit_2:
    output: "out/exit2.txt"
    log: "logs/exit2.log"
    shell: "exit 2"

rule with_message:
    output: "out/message.txt"
    log: "logs/message.log"
    message: "making {output}"
    shell: "exit 1"

rule no_log:
    output: "out/nolog.txt"
    shell: "exit 1"
"""

#: The job's own line (vcrbench.plan.job prints such a line; here the script itself).
SCRIPT = (
    "import sys\nprint('own line: script_fails failed', file=sys.stderr)\nraise ValueError('x')\n"
)


def run_snakemake(folder: Path, *args: str, snakefile: str = FAILING, path: str = "") -> str:
    """A real Snakemake with the plugin on ``snakefile`` (keep going: every job fails); returns
    what it printed. Run in ``folder``: no workflow profile of this repository applies."""
    (folder / "Snakefile").write_text(snakefile)
    (folder / "fail.py").write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO / "src"), *filter(None, [os.environ.get("PYTHONPATH")])])}  # fmt: skip
    if path:
        env["PATH"] = f"{path}{os.pathsep}{env['PATH']}"
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "--keep-going", "--logger", "vcrbench", *args],
        cwd=folder, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "Exiting because a job execution failed" in said, said[-3000:]
    return said


def test_the_plugin_in_a_real_snakemake(tmp_path):
    """The records Snakemake gives carry the documented fields the console reads: a failed
    script's block is one line naming its log, its exit-1 CalledProcessError gone; an exit 2
    named; a rule with a message keeps Snakemake's block; and Snakemake's filter and formatter
    still shape the rest (the jobs' blocks, with the blank line before each)."""
    said = run_snakemake(tmp_path, "--cores", "1")
    lines = said.splitlines()
    assert "own line: script_fails failed" in lines
    assert "vcrbench: log of the failed job script_fails: logs/script.log" in lines
    assert "vcrbench: log of the failed job no_log: none (the job has no log)" in lines
    assert "vcrbench: log of the failed job exit_2: logs/exit2.log" in lines
    # the errors of the commands: exit 2 named (not Python's exit), every exit 1 dropped (an
    # error's record names no job: with_message's too, its block says its command failed)
    assert "returned non-zero exit status 2." in said and said.count("CalledProcessError") == 1
    assert "exit status 1." not in said
    # a rule with a message: Snakemake's block, its message in the job's
    assert said.count("Error in rule") == 1 and "Error in rule with_message:" in said
    assert any(re.fullmatch(r"Job \d+: making out/message.txt", x) for x in lines), said
    for rule in ("script_fails", "exit_2", "no_log"):
        i = lines.index(f"localrule {rule}:")
        assert lines[i - 2] == "" and lines[i - 1].startswith("["), lines[i - 3 : i + 1]
    assert "vcrbench: log of the failed job with_message" not in said


def test_the_plugin_honours_quiet(tmp_path):
    """``--quiet`` (no jobs' blocks, no progress) hides the one line as it hides Snakemake's
    blocks; an error Snakemake shows anyway is still shown, the exit-1 ones still dropped."""
    said = run_snakemake(tmp_path, "--cores", "1", "--quiet")
    assert "localrule" not in said and "steps (" not in said
    assert "vcrbench: log of the failed job" not in said and "Error in rule" not in said
    assert "returned non-zero exit status 2." in said and said.count("CalledProcessError") == 1


ON_A_CLUSTER = """\
rule all:
    input: "out/remote.txt", "out/here.txt"

rule remote:
    output: "out/remote.txt"
    log: "logs/remote.log"
    shell: "exit 1"

rule coverage_table:
    output: "out/here.txt"
    log: "logs/here.log"
    localrule: True
    shell: "exit 1"
"""

#: Stand-in SLURM commands: a submitted job is job 7, and sacct says it failed.
STAND_IN = """#!/bin/sh
case "$(basename "$0")" in
  sbatch) echo 7 ;;
  sacct) case "$*" in *--name*) echo '7|FAILED' ;; *) echo NonZeroExitCode ;; esac ;;
  sacctmgr|sshare) echo acct ;;
  scontrol) echo 'MinJobAge = 300 sec' ;;
esac
"""


@pytest.mark.slow  # the SLURM executor waits between its status checks: about 15 s
def test_the_plugin_in_a_cluster_run(tmp_path):
    """With the SLURM executor (stand-in commands): Snakemake says it provides remote nodes,
    the cluster job's failure keeps Snakemake's block with the cluster's status and log, and a
    local rule's job (vcrbench.plan.cluster.LOCAL_RULES) ran here: its one line."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for name in ("sbatch", "sacct", "sacctmgr", "sshare", "sinfo", "squeue", "scontrol"):
        (bin_ / name).write_text(STAND_IN)
        (bin_ / name).chmod(0o755)
    run = tmp_path / "run"
    run.mkdir()
    said = run_snakemake(
        run, "--executor", "slurm", "--jobs", "2", "--slurm-init-seconds-before-status-checks",
        "1", "--default-resources", "slurm_partition=cpu", "slurm_account=acct", "runtime=5",
        snakefile=ON_A_CLUSTER, path=str(bin_),
    )  # fmt: skip
    assert "Provided remote nodes" in said, said[-3000:]
    assert "vcrbench: log of the failed job coverage_table: logs/here.log" in said.splitlines()
    assert "Error in rule remote:" in said and "SLURM-job '7' failed" in said, said[-3000:]
    assert "vcrbench: log of the failed job remote" not in said
