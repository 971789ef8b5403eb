"""A $HOME that nothing may write to, for the tests that check a run leaves $HOME alone.

As root, ``chmod`` does not stop a write, so the folder is bind-mounted read-only onto itself
(``mount --bind`` then ``mount -o remount,bind,ro``): any write then fails with "Read-only file
system", as on a cluster whose home is mounted read-only. Where mounting is not possible (not root,
no ``mount``), the folder is made read-only with ``chmod`` and the test still checks afterwards
that nothing was written there.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path


def _mount(*args: str) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    proc = subprocess.run(["mount", *args], capture_output=True, text=True, timeout=30)
    return proc.returncode == 0


@contextlib.contextmanager
def read_only_home(home: Path) -> Iterator[bool]:
    """Make ``home`` (created, empty) read-only for the duration; yields whether the read-only
    state is enforced for root too (a read-only mount)."""
    home.mkdir(parents=True, exist_ok=True)
    mounted = _mount("--bind", str(home), str(home))
    enforced = mounted and _mount("-o", "remount,bind,ro", str(home))
    if not enforced:
        home.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        yield enforced
    finally:
        if mounted:
            subprocess.run(["umount", str(home)], capture_output=True, timeout=30)
        home.chmod(stat.S_IRWXU)


def written(home: Path) -> list[Path]:
    """Whatever is under ``home`` (nothing, if the run wrote nothing there)."""
    return sorted(home.rglob("*"))
