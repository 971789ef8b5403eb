"""Runs of the workflow in one folder: a killed run's lock cleared, a live run never.

Snakemake locks the outputs of a run in ``.snakemake/locks/`` and removes the lock when the run
ends; a run that is killed (SIGKILL, power loss) leaves it, and Snakemake then refuses every later
run until ``--unlock``, the same advice it gives when another run is live, where following it lets
two runs write the same files. Here the workflow knows its runs instead:

- the main Snakemake process of a run records itself when it reads the Snakefile
  (:func:`claim`: process id, its start time, host, command, when), and the lock files it holds
  once it has taken them (:func:`record_locks`, from the workflow's ``onstart``); the record is
  removed when the run ends (:func:`release`);
- before the lock is checked, :func:`clear_stale` removes the locks of recorded runs whose process
  is gone from this host (saying so in one line): the plain command resumes a killed run;
- a run that finds the lock of a live run stops with :func:`refusal`'s message: which run (process,
  host, since when), and what to do (wait for it, or stop it), never to unlock.

A lock held by a run on another host, or by a run with no record, is never cleared.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import socket
import sys
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from vcrbench.io import process_alive, write_json

#: Snakemake's lock files (file persistence backend), relative to the working directory.
LOCKS = Path(".snakemake") / "locks"
#: The records of this workflow's runs, one JSON file per run.
RUNS = Path(".snakemake") / "vcrbench-runs"


def _host() -> str:
    return socket.gethostname() or "localhost"


def process_start(pid: int) -> str | None:
    """When process ``pid`` started (its start time in clock ticks since boot, from
    ``/proc/<pid>/stat``), so that a reused process id is not taken for the run; None where
    unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2 :].split()[19]


@dataclass
class Run:
    """One run's record."""

    pid: int
    host: str
    started: str  # UTC, ISO 8601
    command: str
    process_start: str | None = None
    #: The lock files (names in .snakemake/locks) the run holds; None until it has taken them.
    locks: list[str] | None = None

    @property
    def file(self) -> Path:
        return RUNS / f"{self.host}.{self.pid}.json"

    def alive(self) -> bool | None:
        """Whether the run's process exists; None for a run on another host (unknowable)."""
        if self.host != _host():
            return None
        if not process_alive(self.pid):
            return False
        return self.process_start is None or process_start(self.pid) == self.process_start

    def describe(self) -> str:
        return f"process {self.pid} on host {self.host}, started {self.started} (`{self.command}`)"


def runs(workdir: str | Path = ".") -> list[Run]:
    """Every recorded run of the workflow in ``workdir``."""
    folder = Path(workdir) / RUNS
    found = []
    for file in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        with contextlib.suppress(OSError, ValueError, TypeError):
            found.append(Run(**json.loads(file.read_text())))
    return found


def lock_files(workdir: str | Path = ".") -> set[str]:
    folder = Path(workdir) / LOCKS
    return {p.name for p in folder.glob("*.lock")} if folder.is_dir() else set()


def _command() -> str:
    name = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"
    name = "snakemake" if name == "__main__.py" else name  # python -m snakemake
    return " ".join(shlex.quote(a) for a in [name, *sys.argv[1:]])


def claim(workdir: str | Path = ".") -> Run:
    """Record this process as a run of the workflow in ``workdir``."""
    pid = os.getpid()
    run = Run(
        pid=pid,
        host=_host(),
        started=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        command=_command(),
        process_start=process_start(pid),
    )
    write_json(asdict(run), Path(workdir) / run.file)
    return run


def record_locks(run: Run, locks: Iterable[str | os.PathLike], workdir: str | Path = ".") -> None:
    """Record the lock files ``run`` holds (once Snakemake has taken them)."""
    run.locks = sorted(Path(p).name for p in locks)
    write_json(asdict(run), Path(workdir) / run.file)


def release(run: Run, workdir: str | Path = ".") -> None:
    (Path(workdir) / run.file).unlink(missing_ok=True)


def clear_stale(workdir: str | Path = ".") -> list[str]:
    """Remove the locks of recorded runs whose process is gone from this host, and their records;
    returns one line per run whose locks were removed.

    A run that died before it recorded its locks (killed while Snakemake built its jobs) leaves
    locks no record names: those are removed too, unless a live run has not recorded its own yet
    (they may be its)."""
    workdir = Path(workdir)
    recorded = runs(workdir)
    dead = [r for r in recorded if r.alive() is False]
    live = [r for r in recorded if r.alive() is not False]
    present = lock_files(workdir)
    held = {name for r in live for name in r.locks or ()}
    pending = any(r.locks is None for r in live)
    named = {name for r in recorded for name in r.locks or ()}
    lines = []
    for run in dead:
        if run.locks is not None:
            stale = set(run.locks) & (present - held)
        else:
            stale = set() if pending else present - named
        for name in sorted(stale):
            (workdir / LOCKS / name).unlink(missing_ok=True)
        present -= stale
        if stale:
            lines.append(
                f"vcrbench: removed the lock of a run that is gone ({run.describe()}: no such "
                "process on this host any more); resuming its work"
            )
        (workdir / run.file).unlink(missing_ok=True)
    return lines


def refusal(workdir: str | Path = ".", me: int | None = None) -> str:
    """Why a run cannot start while the folder is locked: the live runs, and what to do."""
    workdir = Path(workdir).resolve()
    me = os.getpid() if me is None else me
    others = [r for r in runs(workdir) if r.alive() is not False and r.pid != me]
    if not others:
        return (
            f"the outputs of this run in {workdir} are locked by a Snakemake run this workflow "
            f"has no record of ({LOCKS}/: {', '.join(sorted(lock_files(workdir)))}). If no "
            f"Snakemake process runs in this folder (check: ps -ef | grep snakemake), remove "
            f"{LOCKS} and run the same command again"
        )
    listed = "; ".join(r.describe() for r in others)
    pids = " ".join(str(r.pid) for r in others if r.host == _host())
    stop = f" or stop it (kill {pids})" if pids else ""
    return (
        f"another run of this workflow is live in {workdir}: {listed}. This run stops so as not "
        f"to write the same files: wait for that run to end{stop}, then run the same command "
        "again (a run that was killed is resumed by the same command; nothing to unlock)"
    )


# --------------------------------------------------------------------------- the Snakefile's hooks


def start(workflow) -> Run | None:
    """What the Snakefile runs when it is read: in the main process of a run (not in a job's, which
    read it too) clear stale locks (:func:`clear_stale`), record this run (:func:`claim`), and
    make Snakemake's refusal of a locked folder say which run is live (:func:`refusal`). Returns
    the run (None inside a job)."""
    if workflow.subprocess_exec or workflow.remote_exec:
        return None
    import snakemake.exceptions

    for line in clear_stale():
        print(line, file=sys.stderr, flush=True)
    run = claim()
    base = snakemake.exceptions.LockException

    class AnotherRunIsLive(base):
        def __init__(self) -> None:
            super(base, self).__init__(refusal())

    # Snakemake raises snakemake.exceptions.LockException() when it finds the folder locked.
    snakemake.exceptions.LockException = AnotherRunIsLive
    return run


def started(workflow, run: Run | None) -> None:
    """``onstart`` (a real run, its lock taken): record the lock files it holds."""
    if run is not None:
        held = getattr(workflow.persistence, "_lockfile", {})  # Snakemake's file backend
        record_locks(run, held.values())


def ended(run: Run | None) -> None:
    """``onsuccess``/``onerror``: the run is over."""
    if run is not None:
        release(run)
