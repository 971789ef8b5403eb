"""Stand-in SLURM commands (``sbatch``, ``sacct``, ``sinfo``, ``squeue``, ``scontrol``) for a
folder put first on PATH: the SLURM executor plugin finds a "cluster" and nothing runs. Each call
is appended to ``calls.log`` beside them; ``sbatch`` answers with a new job id, the others with
empty or minimal output."""

from __future__ import annotations

import os
import stat
from pathlib import Path

_SCRIPT = """#!/bin/sh
echo "$(basename "$0") $*" >> "{log}"
case "$(basename "$0")" in
  sbatch) n=$(grep -c '^sbatch ' "{log}"); echo "Submitted batch job $n" ;;
  sinfo) printf 'cpu\\ngpu\\n' ;;
  scontrol) echo 'MinJobAge = 300 sec' ;;
esac
exit 0
"""


def install(folder: Path) -> Path:
    """Write the stand-ins into ``folder``; returns the log of their calls."""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "calls.log"
    log.touch()
    for name in ("sbatch", "sacct", "sinfo", "squeue", "scontrol"):
        path = folder / name
        path.write_text(_SCRIPT.format(log=log))
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return log


def environ(folder: Path, home: Path) -> dict[str, str]:
    """The environment of a user with the stand-ins first on PATH and ``home`` as HOME."""
    env = dict(os.environ, HOME=str(home), NO_ALBUMENTATIONS_UPDATE="1")
    env.pop("XDG_CONFIG_HOME", None)
    env["PATH"] = f"{folder}{os.pathsep}{env.get('PATH', '')}"
    return env
