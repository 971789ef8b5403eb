"""vcrbench.plan.runlock: a killed run's lock is cleared, a live run's never (issue 23)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict

from vcrbench.plan import runlock


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def make_lock(workdir, name: str) -> None:
    folder = workdir / runlock.LOCKS
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("results/x\n")


def record(workdir, pid: int, locks, host: str | None = None) -> runlock.Run:
    run = runlock.Run(
        pid=pid,
        host=host or runlock._host(),
        started="2026-11-25 10:00:00 UTC",
        command="snakemake --cores 2",
        process_start=runlock.process_start(pid),
        locks=locks,
    )
    path = workdir / run.file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(run)))
    return run


def test_a_killed_runs_lock_is_cleared_and_said(tmp_path):
    make_lock(tmp_path, "0.input.lock")
    make_lock(tmp_path, "0.output.lock")
    pid = dead_pid()
    record(tmp_path, pid, ["0.input.lock", "0.output.lock"])
    lines = runlock.clear_stale(tmp_path)
    assert len(lines) == 1 and f"process {pid}" in lines[0] and "gone" in lines[0]
    assert runlock.lock_files(tmp_path) == set()
    assert runlock.runs(tmp_path) == []  # its record goes too


def test_a_live_runs_lock_is_kept(tmp_path):
    make_lock(tmp_path, "0.input.lock")
    live = record(tmp_path, os.getpid(), ["0.input.lock"])
    record(tmp_path, dead_pid(), ["1.input.lock"])  # a dead run's lock that is gone already
    assert runlock.clear_stale(tmp_path) == []
    assert runlock.lock_files(tmp_path) == {"0.input.lock"}
    assert [r.pid for r in runlock.runs(tmp_path)] == [live.pid]


def test_a_lock_on_another_host_or_without_a_record_is_kept(tmp_path):
    make_lock(tmp_path, "0.input.lock")
    make_lock(tmp_path, "1.input.lock")
    record(tmp_path, dead_pid(), ["0.input.lock"], host="another-host")
    assert runlock.clear_stale(tmp_path) == []
    assert runlock.lock_files(tmp_path) == {"0.input.lock", "1.input.lock"}


def test_a_run_killed_before_it_recorded_its_locks(tmp_path):
    make_lock(tmp_path, "0.input.lock")
    record(tmp_path, dead_pid(), None)  # killed while Snakemake built its jobs
    pending = record(tmp_path, os.getpid(), None)  # a live run that has not recorded its own
    assert runlock.clear_stale(tmp_path) == []  # the lock may be the live run's
    assert runlock.lock_files(tmp_path) == {"0.input.lock"}
    runlock.release(pending, tmp_path)
    record(tmp_path, dead_pid(), None)
    assert len(runlock.clear_stale(tmp_path)) == 1
    assert runlock.lock_files(tmp_path) == set()


def test_a_reused_process_id_is_not_the_run(tmp_path):
    make_lock(tmp_path, "0.input.lock")
    run = record(tmp_path, os.getpid(), ["0.input.lock"])
    run.process_start = "1"  # the recorded process started at another time: it is gone
    (tmp_path / run.file).write_text(json.dumps(asdict(run)))
    assert run.alive() is False
    assert len(runlock.clear_stale(tmp_path)) == 1


def test_claim_record_and_release(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = runlock.claim()
    (saved,) = runlock.runs()
    assert saved.pid == os.getpid() and saved.locks is None and saved.alive()
    runlock.record_locks(run, [".snakemake/locks/0.input.lock"])
    assert runlock.runs()[0].locks == ["0.input.lock"]
    runlock.release(run)
    assert runlock.runs() == []


def test_the_refusal_names_the_live_run_and_never_unlock(tmp_path):
    make_lock(tmp_path, "0.input.lock")
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        record(tmp_path, other.pid, ["0.input.lock"])
        text = runlock.refusal(tmp_path)
    finally:
        other.kill()
        other.wait()
    assert f"process {other.pid} on host {runlock._host()}" in text
    assert "started 2026-11-25 10:00:00 UTC" in text and "kill" in text
    assert "--unlock" not in text
