"""`make browser` (a step of `make test`): Debian's chromium and chromium-driver installed with
apt-get when either file is missing, as root or through password-less sudo, and a message that
says what to do where neither works. Run against stand-ins for id, sudo and apt-get on PATH
(nothing is installed): they log how they were called."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

FAKE_APT = """#!/bin/sh
echo "apt-get $* DEBIAN_FRONTEND=$DEBIAN_FRONTEND" >> "$LOG"
if [ "$1" = install ] && [ -n "$INSTALLS" ]; then
    touch "$CHROMIUM" "$CHROMEDRIVER" && chmod +x "$CHROMIUM" "$CHROMEDRIVER"
fi
"""
FAKE_SUDO_OK = """#!/bin/sh
echo "sudo $*" >> "$LOG"
[ "$1" = -n ] && shift
exec "$@"
"""
FAKE_SUDO_REFUSES = """#!/bin/sh
echo "sudo $*" >> "$LOG"
exit 1
"""


def script(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


def make_browser(tmp_path: Path, uid: int, sudo: str, installs=True, present=False):
    """``(CompletedProcess, logged calls)`` of `make browser` with ``uid`` as the user, ``sudo``
    the stand-in sudo, Chromium's two files under ``tmp_path`` (there when ``present``)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script(bin_dir / "id", f"#!/bin/sh\necho {uid}\n")
    script(bin_dir / "sudo", sudo)
    script(bin_dir / "apt-get", FAKE_APT)
    chromium, driver, log = tmp_path / "chromium", tmp_path / "chromedriver", tmp_path / "log"
    if present:
        for path in (chromium, driver):
            script(path, "#!/bin/sh\n")
    env = {k: v for k, v in os.environ.items() if k != "DEBIAN_FRONTEND"}  # the step sets it
    env.update(
        PATH=f"{bin_dir}:/usr/bin:/bin",
        LOG=str(log),
        CHROMIUM=str(chromium),
        CHROMEDRIVER=str(driver),
        INSTALLS="1" if installs else "",
    )
    proc = subprocess.run(
        ["make", "-s", "browser", f"CHROMIUM={chromium}", f"CHROMEDRIVER={driver}"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
    )
    return proc, log.read_text().splitlines() if log.exists() else []


INSTALL = [
    "apt-get update -q DEBIAN_FRONTEND=noninteractive",
    "apt-get install -y -q chromium chromium-driver DEBIAN_FRONTEND=noninteractive",
]


def test_root_installs_with_apt_get_after_an_update(tmp_path):
    proc, calls = make_browser(tmp_path, 0, FAKE_SUDO_REFUSES)
    assert proc.returncode == 0, proc.stderr
    assert calls == INSTALL
    assert "installing Debian's chromium and chromium-driver" in proc.stdout


def test_a_user_installs_through_password_less_sudo(tmp_path):
    proc, calls = make_browser(tmp_path, 1000, FAKE_SUDO_OK)
    assert proc.returncode == 0, proc.stderr
    sudo = [c for c in calls if c.startswith("sudo")]
    assert sudo[0] == "sudo -n true"  # asked first whether it works without a password
    assert [c for c in calls if c.startswith("apt-get")] == INSTALL
    assert "sudo -n env DEBIAN_FRONTEND=noninteractive apt-get update -q" in sudo
    assert "sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium " \
        "chromium-driver" in sudo  # fmt: skip


def test_without_root_or_sudo_it_says_what_to_do_and_installs_nothing(tmp_path):
    proc, calls = make_browser(tmp_path, 1000, FAKE_SUDO_REFUSES)
    assert proc.returncode != 0
    assert "needs root or password-less sudo" in proc.stderr
    assert "sudo apt-get install chromium chromium-driver" in proc.stderr
    assert not [c for c in calls if c.startswith("apt-get")]


@pytest.mark.parametrize("uid", [0, 1000])
def test_nothing_is_installed_when_both_files_are_there(tmp_path, uid):
    proc, calls = make_browser(tmp_path, uid, FAKE_SUDO_REFUSES, present=True)
    assert proc.returncode == 0, proc.stderr
    assert calls == []


def test_an_install_that_leaves_the_files_missing_fails(tmp_path):
    proc, calls = make_browser(tmp_path, 0, FAKE_SUDO_REFUSES, installs=False)
    assert proc.returncode != 0
    assert calls == INSTALL
    assert "apt-get did not install" in proc.stderr


def test_make_test_runs_it_first():
    proc = subprocess.run(
        ["make", "-n", "-p", "test", "VENV=/nonexistent"], cwd=REPO, capture_output=True, text=True
    )
    [rule] = [line for line in proc.stdout.splitlines() if line.startswith("test:")]
    assert "browser" in rule.split(":", 1)[1].split()
