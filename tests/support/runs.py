"""A live run of the workflow as the run lock sees it (vcrbench.plan.runlock), for the tests."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path

#: A process that takes the lock of the folder given, says so, and waits to be stopped.
HOLDER = (
    "import sys, time; from vcrbench.plan import runlock; "
    "run = runlock.acquire(sys.argv[1]); print('held', flush=True); time.sleep(120)"
)


@contextlib.contextmanager
def live_run(workdir: Path):
    """A process holding ``workdir``'s run lock while the block runs (killed after it)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(workdir)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "held"
        yield proc
    finally:
        proc.kill()
        proc.wait()
