"""House style is part of the contract: ruff and snakefmt clean, the conda env in sync."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def run(*cmd):
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)


def test_ruff_finds_nothing():
    proc = run(str(BIN / "ruff"), "check", "src", "tests", "workflow", "benchmarks", "scripts", "tools")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_snakefmt_leaves_rules_unchanged():
    rules = sorted(str(p.relative_to(REPO)) for p in (REPO / "rules").glob("*.smk"))
    proc = run(str(BIN / "snakefmt"), "--check", "Snakefile", *rules)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_conda_env_pins_what_the_lock_pins():
    sys.path.insert(0, str(REPO / "tools"))
    from lock_to_conda import render

    expected = render((REPO / "requirements.lock").read_text())
    assert (REPO / "envs" / "vcrbench.yaml").read_text() == expected, "run `make envs`"
