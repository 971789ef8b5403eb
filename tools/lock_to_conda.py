"""Write envs/vcrbench.yaml from requirements.lock, so the conda path pins what the venv path pins.

Usage: python tools/lock_to_conda.py [requirements.lock] [envs/vcrbench.yaml]
"""

from __future__ import annotations

import sys
from pathlib import Path

HEADER = """\
# Conda environment for cluster users who run with `--software-deployment-method conda`.
# Generated from requirements.lock by tools/lock_to_conda.py (`make envs`): the same pins as the
# README's virtual environment. The vcrbench package itself is installed by
# envs/vcrbench.post-deploy.sh from the workflow directory.
name: vcrbench
channels:
  - conda-forge
  - nodefaults
dependencies:
  - python=3.11
  - pip
  - pip:
"""


def render(lock_text: str) -> str:
    pins = [
        line.strip()
        for line in lock_text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    return HEADER + "".join(f'      - "{pin}"\n' for pin in pins)


def main(argv: list[str]) -> None:
    lock = Path(argv[1] if len(argv) > 1 else "requirements.lock")
    out = Path(argv[2] if len(argv) > 2 else "envs/vcrbench.yaml")
    out.write_text(render(lock.read_text()))


if __name__ == "__main__":
    main(sys.argv)
