"""A real single-node SLURM cluster for the tests, started on this machine when none is running.

If ``sinfo`` already answers, that cluster is used as it is. Otherwise, as root, the Debian
packages (slurmctld, slurmd, slurm-client, munge) are installed if missing, and munged, slurmctld
and slurmd are started in the foreground (so that this module holds their processes) with a private
configuration: one node with a count-only GPU (so that jobs asking for ``--gpus=1`` schedule) in two
partitions, ``cpu`` and ``gpu``, as the shipped profile expects. The configuration is written to the
default path, /etc/slurm/slurm.conf (an existing file there is set aside and restored on stop): the
snakemake SLURM jobstep plugin removes every ``SLURM_*`` variable, ``SLURM_CONF`` included, before
its nested ``srun``, so a configuration elsewhere is not found inside jobs. State and logs go to a
temporary folder. ``SlurmdParameters=config_overrides`` lets the node announce the CPUs and memory
that the profile's GPU jobs ask for on a small machine. Every daemon started here is stopped by its
PID.

Accounting: a cluster started here also gets an accounting database, so that ``sacct`` answers
(``usage`` and ``efficiency`` below read the CPU time jobs used and were allocated). slurmdbd and
mariadb-server are installed if missing; MariaDB runs from a private data folder under the
configuration folder on a free 127.0.0.1 port (its socket is private too), slurmdbd on another free
port with its own slurmdbd.conf (mode 0600, also under /etc/slurm, set aside and restored like
slurm.conf), and the cluster is registered with ``sacctmgr`` before slurmctld starts. Where any of
that fails the cluster starts without accounting, as before, and says so: ``Cluster.accounting`` is
False and ``Cluster.accounting_reason`` tells why (tests skip their accounting checks with it).
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

PACKAGES = ["slurmctld", "slurmd", "slurm-client", "munge"]
ACCOUNTING_PACKAGES = ["slurmdbd", "mariadb-server"]
CLUSTER_NAME = "vcrbench-test"


class SlurmUnavailable(RuntimeError):
    """This machine cannot run a SLURM cluster for the tests (the reason is the message)."""


class AccountingUnavailable(RuntimeError):
    """The accounting database could not be set up (the reason is the message)."""


SYSTEM_CONF_DIR = Path("/etc/slurm")
CONF_FILES = ("slurm.conf", "gres.conf", "slurmdbd.conf")


@dataclass
class Cluster:
    env: dict[str, str]
    conf_dir: Path | None
    started: list[subprocess.Popen] = field(default_factory=list)
    restore: dict[Path, Path | None] = field(default_factory=dict)
    #: whether ``sacct`` answers (jobs are recorded); if not, ``accounting_reason`` says why
    accounting: bool = False
    accounting_reason: str = ""
    #: folders removed on stop, once the daemons are (the database's data, ~100 MB)
    scratch: list[Path] = field(default_factory=list)

    def stop(self) -> None:
        _stop(self.started)
        for path in self.scratch:
            shutil.rmtree(path, ignore_errors=True)
        self.scratch.clear()
        for path, backup in self.restore.items():
            path.unlink(missing_ok=True)
            if backup is not None:
                backup.replace(path)
        self.restore.clear()


def _stop(procs: list[subprocess.Popen]) -> None:
    """Terminate (then kill) each process, the last started first, and forget them."""
    for proc in reversed(procs):
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
    procs.clear()


def _run(cmd, env=None, timeout=60, check=True):
    return subprocess.run(
        cmd, env=env, timeout=timeout, check=check, capture_output=True, text=True
    )


def _answers(env) -> bool:
    if shutil.which("sinfo") is None:
        return False
    try:
        return _run(["sinfo", "-h"], env=env, timeout=15, check=False).returncode == 0
    except (subprocess.TimeoutExpired, OSError):
        return False


def _sacct_answers(env) -> bool:
    """Whether this cluster records jobs (``sacct`` fails where accounting storage is none)."""
    if shutil.which("sacct") is None:
        return False
    try:
        return (
            _run(["sacct", "-n", "-X", "-S", "now"], env=env, timeout=15, check=False).returncode
            == 0
        )
    except (subprocess.TimeoutExpired, OSError):
        return False


def _apt_install(packages: list[str]) -> None:
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    _run(["apt-get", "update", "-qq"], env=env, timeout=600)
    _run(
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages],
        env=env,
        timeout=900,
    )


def _install() -> None:
    if all(shutil.which(b) for b in ("slurmctld", "slurmd", "sbatch", "munged")):
        return
    if os.geteuid() != 0:
        raise SlurmUnavailable("SLURM is not installed and installing it needs root")
    if shutil.which("apt-get") is None:
        raise SlurmUnavailable("SLURM is not installed and there is no apt-get to install it")
    try:
        _apt_install(PACKAGES)
    except subprocess.CalledProcessError as exc:
        raise SlurmUnavailable(f"installing SLURM failed: {exc.stderr[-2000:]}") from exc


def _install_accounting() -> None:
    if all(shutil.which(b) for b in ("slurmdbd", "sacctmgr", "mariadbd", "mariadb-install-db")):
        return
    if shutil.which("apt-get") is None:
        raise AccountingUnavailable("slurmdbd/MariaDB are not installed and there is no apt-get")
    try:
        _apt_install(ACCOUNTING_PACKAGES)
    except subprocess.CalledProcessError as exc:
        raise AccountingUnavailable(
            f"installing {ACCOUNTING_PACKAGES} failed: {exc.stderr[-2000:]}"
        ) from exc


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def _set_aside(conf_dir: Path, cluster: Cluster) -> None:
    """Copy each of /etc/slurm's files that this module writes to conf_dir, to restore on stop."""
    SYSTEM_CONF_DIR.mkdir(parents=True, exist_ok=True)
    for name in CONF_FILES:
        path = SYSTEM_CONF_DIR / name
        backup = None
        if path.exists():
            backup = conf_dir / f"{name}.original"
            shutil.copy2(path, backup)
        cluster.restore[path] = backup


def _write_config(conf_dir: Path, host: str, dbd_port: int | None) -> Path:
    """slurm.conf and gres.conf in /etc/slurm; with accounting through slurmdbd on ``dbd_port``
    (CPU use gathered every 2 s, job comments stored), or none when ``dbd_port`` is None."""
    if dbd_port is None:
        accounting = (
            "AccountingStorageType=accounting_storage/none\nJobAcctGatherType=jobacct_gather/none"
        )
    else:
        accounting = f"""AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort={dbd_port}
AccountingStoreFlags=job_comment
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=2"""
    conf = SYSTEM_CONF_DIR / "slurm.conf"
    conf.write_text(
        f"""# VCR-Bench test cluster (single node, count-only GPU)
ClusterName={CLUSTER_NAME}
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
{accounting}
MinJobAge=600
GresTypes=gpu
NodeName={host} NodeAddr=127.0.0.1 CPUs=16 RealMemory=64000 Gres=gpu:1 State=UNKNOWN
PartitionName=cpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=ALL MaxTime=INFINITE State=UP
"""
    )
    (SYSTEM_CONF_DIR / "gres.conf").write_text(f"NodeName={host} Name=gpu Count=1 File=/dev/null\n")
    return conf


def _daemon(cluster: Cluster, cmd: list[str], log: Path, **popen) -> subprocess.Popen:
    """Start ``cmd`` in the foreground, its output to ``log``; the cluster holds (and stops) it."""
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, **popen)
    cluster.started.append(proc)
    return proc


def _wait_alive(procs: list[subprocess.Popen], predicate, timeout: float, message: str) -> None:
    """``_wait`` that gives up at once (naming it) when one of ``procs`` has exited."""

    def check() -> bool:
        for proc in procs:
            if proc.poll() is not None:
                raise SlurmUnavailable(
                    f"{Path(proc.args[0]).name} exited with code {proc.returncode}"
                )
        return predicate()

    _wait(check, timeout, message)


def _start_accounting(conf_dir: Path, host: str, cluster: Cluster, dbd_port: int, env) -> None:
    """MariaDB, then slurmdbd on ``dbd_port``, then the cluster registered (slurm.conf, which
    names slurmdbd, is written already). Raises AccountingUnavailable, the logs' tails included."""
    log = conf_dir / "log"
    db = conf_dir / "mariadb"
    (db / "data").mkdir(parents=True, exist_ok=True)
    cluster.scratch.append(db / "data")
    db_port = _free_port()
    # a unix socket's path has at most 107 bytes: a long temporary folder's goes to /tmp (the
    # server removes it when it stops)
    sock = db / "mariadb.sock"
    if len(str(sock)) > 100:
        sock = Path(tempfile.gettempdir()) / f"vcrbench-mariadb-{db_port}.sock"
    password = secrets.token_hex(12)
    # the server runs as root from a folder only root reads; the init file makes slurmdbd's user
    (db / "init.sql").touch(mode=0o600)
    (db / "init.sql").write_text(
        f"CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY '{password}';\n"
        "GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';\n"
    )
    server = [
        "--no-defaults",
        f"--datadir={db / 'data'}",
        "--user=root",
        "--innodb-log-file-size=16M",
        "--innodb-buffer-pool-size=64M",
        "--innodb-lock-wait-timeout=900",
    ]
    started = len(cluster.started)
    try:
        try:
            _run(
                [
                    "mariadb-install-db",
                    *server,
                    "--auth-root-authentication-method=socket",
                    "--skip-test-db",
                ],
                timeout=180,
            )
        except subprocess.CalledProcessError as exc:
            raise AccountingUnavailable(
                f"mariadb-install-db failed: {exc.stdout[-1500:]}{exc.stderr[-1500:]}"
            ) from exc
        mariadb = _daemon(
            cluster,
            [
                "/usr/sbin/mariadbd",
                *server,
                "--bind-address=127.0.0.1",
                f"--port={db_port}",
                f"--socket={sock}",
                f"--pid-file={db / 'mariadb.pid'}",
                f"--init-file={db / 'init.sql'}",
            ],
            log / "mariadbd.out",
        )
        ready = log / "mariadbd.out"
        _wait_alive(
            [mariadb],
            lambda: "ready for connections" in ready.read_text(),
            120,
            "MariaDB was not ready",
        )
        dbd_conf = SYSTEM_CONF_DIR / "slurmdbd.conf"
        dbd_conf.touch(mode=0o600)
        dbd_conf.chmod(0o600)
        dbd_conf.write_text(
            f"""# VCR-Bench test cluster's accounting daemon
AuthType=auth/munge
DbdHost={host}
DbdAddr=127.0.0.1
DbdPort={dbd_port}
SlurmUser=root
LogFile={log}/slurmdbd.log
PidFile={conf_dir}/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort={db_port}
StorageUser=slurm
StoragePass={password}
StorageLoc=slurm_acct_db
"""
        )
        slurmdbd = _daemon(cluster, ["/usr/sbin/slurmdbd", "-D"], log / "slurmdbd.out", env=env)
        _wait_alive(
            [mariadb, slurmdbd], lambda: _listening(dbd_port), 120, "slurmdbd did not listen"
        )
        add = _run(
            ["sacctmgr", "-i", "add", "cluster", CLUSTER_NAME], env=env, timeout=60, check=False
        )
        if add.returncode != 0 and "already exists" not in add.stdout + add.stderr:
            raise AccountingUnavailable(f"sacctmgr add cluster failed: {add.stdout}{add.stderr}")
    except (AccountingUnavailable, SlurmUnavailable, subprocess.SubprocessError, OSError) as exc:
        ours = cluster.started[started:]
        del cluster.started[started:]
        _stop(ours)
        raise AccountingUnavailable(
            f"{exc}{_log_tails(log, ('mariadbd.out', 'slurmdbd.log', 'slurmdbd.out'))}"
        ) from exc


def _log_tails(log_dir: Path, names=None) -> str:
    out = ""
    for f in sorted(log_dir.glob("*")):
        if names is None or f.name in names:
            out += f"\n--- {f.name}\n" + f.read_text(errors="replace")[-1500:]
    return out


def _munge_ok(env) -> bool:
    try:
        cred = _run(["munge", "-n"], env=env, timeout=10).stdout
        return (
            subprocess.run(
                ["unmunge"], input=cred, capture_output=True, text=True, timeout=10
            ).returncode
            == 0
        )
    except (subprocess.SubprocessError, OSError):
        return False


def _start_munge(cluster: Cluster, env) -> None:
    if _munge_ok(env):
        return
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


def start_cluster(conf_dir: Path, timeout: float = 60.0) -> Cluster:
    """Use the running cluster, or start one (see module docstring). Call ``stop()`` after use."""
    env = dict(os.environ)
    if _answers(env):
        cluster = Cluster(env=env, conf_dir=None, accounting=_sacct_answers(env))
        if not cluster.accounting:
            cluster.accounting_reason = "the running cluster's sacct does not answer"
        return cluster
    _install()
    if os.geteuid() != 0:
        raise SlurmUnavailable("starting SLURM daemons needs root")
    host = socket.gethostname().split(".")[0]
    env.pop("SLURM_CONF", None)
    cluster = Cluster(env=env, conf_dir=conf_dir)
    try:
        for sub in ("state", "spool", "log"):
            (conf_dir / sub).mkdir(parents=True, exist_ok=True)
        _set_aside(conf_dir, cluster)
        _start_munge(cluster, env)
        dbd_port = _free_port()
        _write_config(conf_dir, host, dbd_port)
        try:
            _install_accounting()
            _start_accounting(conf_dir, host, cluster, dbd_port, env)
            cluster.accounting = True
        except AccountingUnavailable as exc:
            cluster.accounting_reason = f"no accounting database: {exc}"
            _write_config(conf_dir, host, None)
        for daemon in ("/usr/sbin/slurmctld", "/usr/sbin/slurmd"):
            _daemon(cluster, [daemon, "-D"], conf_dir / "log" / f"{Path(daemon).name}.out", env=env)
            if daemon.endswith("slurmctld"):
                _wait(lambda: _answers(env), timeout, "slurmctld did not answer")

        def node_idle() -> bool:
            out = _run(["sinfo", "-h", "-o", "%T"], env=env, check=False).stdout
            return "idle" in out

        _wait_alive(cluster.started, node_idle, timeout, "the SLURM node did not become idle")
    except BaseException as exc:
        cluster.stop()
        if isinstance(exc, SlurmUnavailable):
            raise SlurmUnavailable(f"{exc}{_log_tails(conf_dir / 'log')}") from exc
        raise
    return cluster


def _wait(predicate, timeout: float, message: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.5)
    raise SlurmUnavailable(f"{message} within {timeout:.0f} s")


# --------------------------------------------------------------------------- accounting read-out

#: what ``usage`` asks sacct for (Comment last: it is free text and may hold the delimiter)
USAGE_FIELDS = ("JobID", "State", "AllocCPUS", "ElapsedRaw", "TotalCPU", "JobName", "Comment")
#: states after which a job's record no longer changes
RUNNING_STATES = {
    "PENDING",
    "CONFIGURING",
    "RUNNING",
    "COMPLETING",
    "REQUEUED",
    "RESIZING",
    "SUSPENDED",
}


def sacct_seconds(text: str) -> float:
    """Seconds of one of sacct's durations: ``MM:SS.mmm`` (under an hour), ``HH:MM:SS``,
    ``D-HH:MM:SS`` (also ``D-HH:MM``, ``D-HH`` and ``SS``); an empty field is 0."""
    text = text.strip()
    if not text:
        return 0.0
    m = DURATION_RE.fullmatch(text)
    if m is None:
        raise ValueError(f"not a sacct duration: {text!r}")
    days, clock = m.group(1), m.group(2).split(":")
    if days:  # D-HH[:MM[:SS]]: the clock starts at the hours
        clock += ["0"] * (3 - len(clock))
    seconds = 0.0
    for part in clock:
        seconds = seconds * 60 + float(part)
    return seconds + 86400 * int(days or 0)


DURATION_RE = re.compile(r"(?:(\d+)-)?(\d+(?::\d+){0,2}(?:\.\d+)?)")


def usage(env: dict[str, str], job_ids, wait: float = 0.0) -> list[dict]:
    """What sacct recorded of each job ``job_ids`` names (ids as sbatch gives them; an array
    job's id stands for all its tasks, each a row of its own with job_id ``<id>_<task>``):

    ``job_id``, ``name``, ``comment`` (stored: slurm.conf has ``AccountingStoreFlags=job_comment``),
    ``state`` (its first word: "CANCELLED by 0" is CANCELLED), ``alloc_cpus``, ``elapsed`` (s, from
    ElapsedRaw, whole seconds), ``total_cpu`` (s, user + system CPU time) and ``steps``
    ({step: its TotalCPU in s}).

    ``total_cpu`` is the sum of the TotalCPU of the job's steps (batch, extern where
    PrologFlags=Contain makes one, and each srun step 0, 1, ...): SLURM 22.05 (Debian 12's
    22.05.8, checked on this cluster) reports TotalCPU 0 on the allocation's own line with
    ``-X``; without -X that line is the same sum of its steps. A step's TotalCPU is the rusage of
    its processes when they end (children included), so a job still running counts only its
    finished steps; a job without step lines (one that never started) counts its own line.

    With ``wait`` > 0, sacct is asked again every second until every job is listed and none is
    pending or running any more (TimeoutError after ``wait`` seconds): slurmctld records a job's
    end in the database a moment after squeue stops showing it.
    """
    ids = [str(i) for i in job_ids]
    cmd = [
        "sacct",
        "--parsable2",
        "--noheader",
        f"--format={','.join(USAGE_FIELDS)}",
        "-j",
        ",".join(ids),
    ]
    deadline = time.monotonic() + wait
    while True:
        out = _run(cmd, env=env, timeout=60).stdout
        rows = _usage_rows(out)
        listed = {r["job_id"] for r in rows} | {r["job_id"].split("_")[0] for r in rows}
        done = set(ids) <= listed and not any(r["state"] in RUNNING_STATES for r in rows)
        if done or wait <= 0:
            return rows
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"sacct did not report {ids} as finished within {wait:.0f} s:\n{out}"
            )
        time.sleep(1)


def _usage_rows(sacct_output: str) -> list[dict]:
    """The rows of ``usage`` from ``sacct --parsable2 --noheader --format=USAGE_FIELDS``."""
    jobs: dict[str, dict] = {}
    for line in sacct_output.splitlines():
        if not line.strip():
            continue
        job_id, state, alloc, elapsed, total, name, comment = line.split("|", len(USAGE_FIELDS) - 1)
        job, _, step = job_id.partition(".")
        if step:
            jobs[job]["steps"][step] = sacct_seconds(total)
            continue
        jobs[job] = {
            "job_id": job,
            "name": name,
            "comment": comment,
            "state": state.split()[0] if state.strip() else "",
            "alloc_cpus": int(alloc or 0),
            "elapsed": float(elapsed or 0),
            "total_cpu": sacct_seconds(total),
            "steps": {},
        }
    for row in jobs.values():
        if row["steps"]:
            row["total_cpu"] = sum(row["steps"].values())
    return list(jobs.values())


def efficiency(rows: list[dict]) -> float:
    """CPU used over CPU allocated: sum of ``total_cpu`` over sum of ``alloc_cpus * elapsed``
    (rows of ``usage``); NaN when nothing was allocated (no row, or none that ran)."""
    allocated = sum(r["alloc_cpus"] * r["elapsed"] for r in rows)
    return sum(r["total_cpu"] for r in rows) / allocated if allocated else float("nan")
