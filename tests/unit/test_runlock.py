"""vcrbench.plan.runlock: one run per folder; a live run is refused by name, a killed run's lock
goes with its process (issue 23, issue 30: no Snakemake internals)."""

from __future__ import annotations

import json
import os
import signal

import pytest

from vcrbench.plan import runlock

from ..support import runs


@pytest.fixture
def live_run(tmp_path):
    with runs.live_run(tmp_path) as proc:
        yield proc


def test_a_second_run_beside_a_live_one_is_refused_naming_it(tmp_path, live_run):
    with pytest.raises(runlock.AnotherRunIsLive) as refused:
        runlock.acquire(tmp_path)
    text = str(refused.value)
    assert f"another run of this workflow is live in {tmp_path.resolve()}" in text
    assert f"process {live_run.pid} on host {runlock._host()}, started 20" in text
    assert f"kill {live_run.pid}" in text
    assert "--unlock" not in text
    assert runlock.holder(tmp_path).pid == live_run.pid  # the refused run changed nothing


def test_a_killed_runs_lock_goes_with_it_and_the_next_run_says_so(tmp_path, live_run, capsys):
    os.kill(live_run.pid, signal.SIGKILL)
    live_run.wait()
    assert runlock.holder(tmp_path).pid == live_run.pid  # its record is left, as after power loss
    run = runlock.acquire(tmp_path)
    try:
        said = capsys.readouterr().err
        assert f"process {live_run.pid}" in said and "is gone" in said and "resuming" in said
        assert runlock.holder(tmp_path).pid == os.getpid()
    finally:
        runlock.release(run)


def test_release_lets_the_next_run_start_without_a_word(tmp_path, capsys):
    run = runlock.acquire(tmp_path)
    runlock.release(run)
    runlock.release(run)  # twice: nothing
    assert runlock.holder(tmp_path) is None
    again = runlock.acquire(tmp_path)
    runlock.release(again)
    assert "gone" not in capsys.readouterr().err


def test_a_run_of_another_host_is_named_without_a_kill(tmp_path, live_run):
    record = runlock.holder(tmp_path).record() | {"host": "another-host"}
    (tmp_path / runlock.LOCK).write_text(json.dumps(record))
    text = runlock.refusal(tmp_path)
    assert f"process {live_run.pid} on host another-host" in text
    assert f"kill {live_run.pid}" not in text  # not a process of this host
