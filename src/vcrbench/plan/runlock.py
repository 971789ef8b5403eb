"""One run of the workflow per folder: a live run refused by name, a killed run resumed as is.

Snakemake's own lock of a run's files (``.snakemake/locks/``) outlives a killed run and then
refuses every later one until ``--unlock``, the advice it also gives when another run is live,
where following it lets two runs write the same files. The workflow turns it off (``nolock`` in
its profile, ``profiles/default``) and takes its own instead, in the workflow's ``onstart``: where
Snakemake runs only for a real run (not a dry run, not a cluster job, which Snakemake starts with
``--no-hooks``), after it has planned the jobs and before it starts any:

- :func:`acquire` takes an exclusive ``flock`` of :data:`LOCK` and writes the run's record into it
  (process id, host, command, since when). The kernel holds that lock for the process and lets it
  go when the process ends, however it ends: a killed run (SIGKILL, power loss) leaves nothing that
  stops the next run, which says in one line that it resumes the gone run's work;
- a run that cannot take the lock stops with :func:`refusal`'s message: which run (process, host,
  since when), and what to do (wait for it, or stop it), never to unlock;
- :func:`release` (``onsuccess``/``onerror``) empties the record and lets the lock go.

``flock`` is the operating system's, so no Snakemake internal is involved; on a shared file
system across hosts it holds where the file system supports locks (NFSv4, Lustre, GPFS do).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shlex
import socket
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

#: The lock and record of the live run, relative to the working directory.
LOCK = Path(".snakemake") / "vcrbench-run.lock"


class AnotherRunIsLive(RuntimeError):
    """A run found the folder taken by a live run (the message names it)."""


def _host() -> str:
    return socket.gethostname() or "localhost"


@dataclass
class Run:
    """One run's record, and (while it runs) the open file that holds the lock."""

    pid: int
    host: str
    started: str  # UTC
    command: str
    workdir: str = "."
    _fd: int | None = field(default=None, repr=False, compare=False)

    def describe(self) -> str:
        return f"process {self.pid} on host {self.host}, started {self.started} (`{self.command}`)"

    def record(self) -> dict:
        return {k: v for k, v in asdict(self).items() if not k.startswith("_") and k != "workdir"}


def _command() -> str:
    name = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"
    name = "snakemake" if name == "__main__.py" else name  # python -m snakemake
    return " ".join(shlex.quote(a) for a in [name, *sys.argv[1:]])


def holder(workdir: str | Path = ".") -> Run | None:
    """The run recorded in the lock file of ``workdir`` (live or gone), None if none is."""
    with contextlib.suppress(OSError, ValueError, TypeError):
        return Run(**json.loads((Path(workdir) / LOCK).read_text()), workdir=str(workdir))
    return None


def acquire(workdir: str | Path = ".") -> Run:
    """Take the folder for this process (module docstring); raises :class:`AnotherRunIsLive`,
    naming the live run, if another process holds it. A record left by a run whose process is
    gone is said (one line on stderr) and replaced."""
    path = Path(workdir) / LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise AnotherRunIsLive(refusal(workdir)) from None
    gone = holder(workdir)
    if gone is not None:
        print(
            f"vcrbench: the run {gone.describe()} is gone (its lock went with its process); "
            "resuming its work",
            file=sys.stderr,
            flush=True,
        )
    run = Run(
        pid=os.getpid(),
        host=_host(),
        started=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        command=_command(),
        workdir=str(workdir),
        _fd=fd,
    )
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(run.record()).encode(), 0)
    os.fsync(fd)
    return run


def release(run: Run | None) -> None:
    """The run is over: its record emptied, its lock let go (nothing for None or twice)."""
    if run is None or run._fd is None:
        return
    fd, run._fd = run._fd, None
    try:
        os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # closing the file lets the flock go


def refusal(workdir: str | Path = ".") -> str:
    """Why a run cannot start while another holds the folder: which run, and what to do."""
    where = Path(workdir).resolve()
    live = holder(workdir)
    if live is None:  # taken, its record not yet written
        listed, stop = "a run that is starting", ""
    else:
        listed = live.describe()
        stop = f" or stop it (kill {live.pid})" if live.host == _host() else ""
    return (
        f"another run of this workflow is live in {where}: {listed}. This run stops so as not "
        f"to write the same files: wait for that run to end{stop}, then run the same command "
        "again (a run that was killed is resumed by the same command; nothing to unlock)"
    )
