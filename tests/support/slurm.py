"""A real single-node SLURM cluster for the tests, started on this machine when none is running.

If ``sinfo`` already answers, that cluster is used as it is. Otherwise, as root, the Debian
packages (slurmctld, slurmd, slurm-client, munge) are installed if missing, and munged, slurmctld and
slurmd are started in the foreground (so that this module holds their processes) with a private
configuration: one node with a count-only GPU (so that jobs asking for ``--gpus=1`` schedule) in two
partitions, ``cpu`` and ``gpu``, as the shipped profile expects. The configuration is written to the
default path, /etc/slurm/slurm.conf (an existing file there is set aside and restored on stop): the
snakemake SLURM jobstep plugin removes every ``SLURM_*`` variable, ``SLURM_CONF`` included, before
its nested ``srun``, so a configuration elsewhere is not found inside jobs. State and logs go to a
temporary folder. ``SlurmdParameters=config_overrides`` lets the node announce the CPUs and memory that the
profile's GPU jobs ask for on a small machine. Every daemon started here is stopped by its PID.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

PACKAGES = ["slurmctld", "slurmd", "slurm-client", "munge"]


class SlurmUnavailable(RuntimeError):
    """This machine cannot run a SLURM cluster for the tests (the reason is the message)."""


SYSTEM_CONF_DIR = Path("/etc/slurm")
CONF_FILES = ("slurm.conf", "gres.conf")


@dataclass
class Cluster:
    env: dict[str, str]
    conf_dir: Path | None
    started: list[subprocess.Popen] = field(default_factory=list)
    restore: dict[Path, Path | None] = field(default_factory=dict)

    def stop(self) -> None:
        for proc in reversed(self.started):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=10)
        self.started.clear()
        for path, backup in self.restore.items():
            path.unlink(missing_ok=True)
            if backup is not None:
                backup.replace(path)
        self.restore.clear()


def _run(cmd, env=None, timeout=60, check=True):
    return subprocess.run(cmd, env=env, timeout=timeout, check=check, capture_output=True, text=True)


def _answers(env) -> bool:
    if shutil.which("sinfo") is None:
        return False
    try:
        return _run(["sinfo", "-h"], env=env, timeout=15, check=False).returncode == 0
    except (subprocess.TimeoutExpired, OSError):
        return False


def _install() -> None:
    if all(shutil.which(b) for b in ("slurmctld", "slurmd", "sbatch", "munged")):
        return
    if os.geteuid() != 0:
        raise SlurmUnavailable("SLURM is not installed and installing it needs root")
    if shutil.which("apt-get") is None:
        raise SlurmUnavailable("SLURM is not installed and there is no apt-get to install it")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    try:
        _run(["apt-get", "update", "-qq"], env=env, timeout=600)
        _run(
            ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *PACKAGES],
            env=env,
            timeout=900,
        )
    except subprocess.CalledProcessError as exc:
        raise SlurmUnavailable(f"installing SLURM failed: {exc.stderr[-2000:]}") from exc


def _write_config(conf_dir: Path, host: str, cluster: Cluster) -> Path:
    for sub in ("state", "spool", "log"):
        (conf_dir / sub).mkdir(parents=True, exist_ok=True)
    SYSTEM_CONF_DIR.mkdir(parents=True, exist_ok=True)
    for name in CONF_FILES:
        path = SYSTEM_CONF_DIR / name
        backup = None
        if path.exists():
            backup = conf_dir / f"{name}.original"
            shutil.copy2(path, backup)
        cluster.restore[path] = backup
    conf = SYSTEM_CONF_DIR / "slurm.conf"
    conf.write_text(
        f"""# VCR-Bench test cluster (single node, count-only GPU)
ClusterName=vcrbench-test
SlurmctldHost={host}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
StateSaveLocation={conf_dir}/state
SlurmdSpoolDir={conf_dir}/spool
SlurmctldPidFile={conf_dir}/slurmctld.pid
SlurmdPidFile={conf_dir}/slurmd.pid
SlurmctldLogFile={conf_dir}/log/slurmctld.log
SlurmdLogFile={conf_dir}/log/slurmd.log
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MinJobAge=600
GresTypes=gpu
NodeName={host} NodeAddr=127.0.0.1 CPUs=16 RealMemory=64000 Gres=gpu:1 State=UNKNOWN
PartitionName=cpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=ALL MaxTime=INFINITE State=UP
"""
    )
    (SYSTEM_CONF_DIR / "gres.conf").write_text(f"NodeName={host} Name=gpu Count=1 File=/dev/null\n")
    return conf


def _munge_ok(env) -> bool:
    try:
        cred = _run(["munge", "-n"], env=env, timeout=10).stdout
        return (
            subprocess.run(["unmunge"], input=cred, capture_output=True, text=True, timeout=10).returncode
            == 0
        )
    except (subprocess.SubprocessError, OSError):
        return False


def start_cluster(conf_dir: Path, timeout: float = 60.0) -> Cluster:
    """Use the running cluster, or start one (see module docstring). Call ``stop()`` after use."""
    env = dict(os.environ)
    if _answers(env):
        return Cluster(env=env, conf_dir=None)
    _install()
    if os.geteuid() != 0:
        raise SlurmUnavailable("starting SLURM daemons needs root")
    host = socket.gethostname().split(".")[0]
    env.pop("SLURM_CONF", None)
    cluster = Cluster(env=env, conf_dir=conf_dir)
    try:
        _write_config(conf_dir, host, cluster)
        if not _munge_ok(env):
            for d in ("/run/munge", "/var/log/munge", "/var/lib/munge"):
                Path(d).mkdir(parents=True, exist_ok=True)
                shutil.chown(d, "munge", "munge")
            if not Path("/etc/munge/munge.key").exists():
                _run(["runuser", "-u", "munge", "--", "/usr/sbin/mungekey", "--create"])
            cluster.started.append(
                subprocess.Popen(
                    ["/usr/sbin/munged", "-F"],
                    user="munge",
                    group="munge",
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
            _wait(lambda: _munge_ok(env), 15, "munged did not start")
        for daemon in ("/usr/sbin/slurmctld", "/usr/sbin/slurmd"):
            log = open(conf_dir / "log" / f"{Path(daemon).name}.out", "w")
            cluster.started.append(
                subprocess.Popen([daemon, "-D"], env=env, stdout=log, stderr=subprocess.STDOUT)
            )
            if daemon.endswith("slurmctld"):
                _wait(lambda: _answers(env), timeout, "slurmctld did not answer")

        def node_idle() -> bool:
            for proc in cluster.started:
                if proc.poll() is not None:
                    raise SlurmUnavailable(f"{proc.args[-2]} exited with code {proc.returncode}")
            out = _run(["sinfo", "-h", "-o", "%T"], env=env, check=False).stdout
            return "idle" in out

        _wait(node_idle, timeout, "the SLURM node did not become idle")
    except BaseException as exc:
        cluster.stop()
        logs = ""
        for f in sorted((conf_dir / "log").glob("*")):
            logs += f"\n--- {f.name}\n" + f.read_text()[-1500:]
        if isinstance(exc, SlurmUnavailable):
            raise SlurmUnavailable(f"{exc}{logs}") from exc
        raise
    return cluster


def _wait(predicate, timeout: float, message: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.5)
    raise SlurmUnavailable(f"{message} within {timeout:.0f} s")
