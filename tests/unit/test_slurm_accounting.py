"""The test cluster's accounting read-out (tests/support/slurm.py): sacct's durations and rows
parsed (fast), and, on a real cluster, the CPU time a busy and a sleeping job used against the
CPU time they were allocated (slow)."""

from __future__ import annotations

import math

import pytest

from tests.support.slurm import _usage_rows, efficiency, sacct_seconds


@pytest.mark.parametrize(
    "text, seconds",
    [
        ("00:08.097", 8.097),  # MM:SS.mmm, under an hour
        ("59:59.999", 3599.999),
        ("00:00:00", 0.0),
        ("01:02:03", 3723.0),  # HH:MM:SS
        ("1-02:03:04", 93784.0),  # D-HH:MM:SS
        ("12-00:00:01", 12 * 86400 + 1.0),
        ("1-02", 93600.0),  # D-HH
        ("2-03:04", 2 * 86400 + 3 * 3600 + 4 * 60.0),  # D-HH:MM
        ("42", 42.0),
        ("", 0.0),
    ],
)
def test_sacct_seconds(text, seconds):
    assert sacct_seconds(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["INVALID", "Unknown", "1:2:3:4", "-01:00", "1-", "nan", "01:0a"])
def test_sacct_seconds_refuses_what_is_no_duration(text):
    with pytest.raises(ValueError, match="not a sacct duration"):
        sacct_seconds(text)


# sacct --parsable2 --noheader --format=JobID,State,AllocCPUS,ElapsedRaw,TotalCPU,JobName,Comment
# as SLURM 22.05.8 wrote it on the test cluster (job 5 edited in: cancelled before it ran)
SACCT = """\
1|COMPLETED|1|17|00:08.097|busy|hello|world
1.batch|COMPLETED|1|17|00:08.097|batch|
2|COMPLETED|2|8|00:00.002|sleepy|
2.batch|COMPLETED|2|8|00:00.002|batch|
3|COMPLETED|1|15|00:07.193|withsrun|
3.batch|COMPLETED|1|15|00:03.098|batch|
3.0|COMPLETED|1|9|00:04.094|python3|
4_0|COMPLETED|1|2|00:00.002|arr|
4_0.batch|COMPLETED|1|2|00:00.002|batch|
4_1|FAILED|1|2|00:00.002|arr|
4_1.batch|FAILED|1|2|00:00.002|batch|
5|CANCELLED by 0|1|0|00:00:00|never|
"""


def test_usage_rows_sum_the_steps_and_keep_array_tasks_apart():
    rows = {r["job_id"]: r for r in _usage_rows(SACCT)}
    assert list(rows) == ["1", "2", "3", "4_0", "4_1", "5"]
    assert rows["1"] == {
        "job_id": "1",
        "name": "busy",
        "comment": "hello|world",
        "state": "COMPLETED",
        "alloc_cpus": 1,
        "elapsed": 17.0,
        "total_cpu": pytest.approx(8.097),
        "steps": {"batch": pytest.approx(8.097)},
    }
    # the batch step and the srun step (CPU of one is not in the other's)
    assert rows["3"]["steps"] == {"batch": 3.098, "0": 4.094}
    assert rows["3"]["total_cpu"] == pytest.approx(7.192)
    assert rows["4_1"]["state"] == "FAILED"
    assert rows["5"]["state"] == "CANCELLED" and rows["5"]["total_cpu"] == 0.0
    assert rows["5"]["steps"] == {}


def test_efficiency_is_cpu_used_over_cpu_allocated():
    rows = _usage_rows(SACCT)
    assert efficiency(rows[:1]) == pytest.approx(8.097 / 17)
    assert efficiency(rows[:2]) == pytest.approx((8.097 + 0.002) / (17 + 2 * 8))
    assert math.isnan(efficiency([])) and math.isnan(efficiency(rows[-1:]))


# --------------------------------------------------------------------------- on a real cluster

#: burns CPU for 8 s of wall time and says how much CPU it had (the machine may be shared)
@pytest.mark.slow
@pytest.mark.slurm
def test_sacct_tells_a_busy_job_from_a_sleeping_one(tmp_path):
    """A 1-CPU job that computes for 8 s and a 2-CPU job that sleeps for 8 s: sacct's CPU time
    is the busy job's own count of its CPU time, and CPU used over CPU allocated is high for
    the one and near 0 for the other."""
    from tests.support.slurm import SlurmUnavailable, start_cluster, usage
    from tests.support.slurm_jobs import burn, own_share, sbatch

    try:
        cluster = start_cluster(tmp_path / "slurm")
    except SlurmUnavailable as exc:
        pytest.skip(f"cannot run a SLURM cluster here: {exc}")
    try:
        if not cluster.accounting:
            pytest.skip(cluster.accounting_reason)

        busy = burn(cluster.env, tmp_path, 8.0, "-J", "busy", "--comment=burns")
        sleepy = sbatch(cluster.env, tmp_path, "-c", "2", "-J", "sleepy", "--wrap", "sleep 8")
        rows = {r["job_id"]: r for r in usage(cluster.env, [busy, sleepy], wait=90)}
        own = own_share(tmp_path, busy)
        share = own["share"]  # the CPU the machine gave the busy job (1 when idle)
        measured = {job: efficiency([rows[job]]) for job in (busy, sleepy)}
        print(
            f"efficiency: busy {measured[busy]:.3f} (own CPU share {share:.3f}), sleepy {measured[sleepy]:.3f}"
        )
        print(rows)

        assert rows[busy]["state"] == rows[sleepy]["state"] == "COMPLETED", rows
        assert (rows[busy]["name"], rows[busy]["comment"]) == ("busy", "burns")
        assert (rows[busy]["alloc_cpus"], rows[sleepy]["alloc_cpus"]) == (1, 2)
        assert rows[busy]["elapsed"] >= 8 and rows[sleepy]["elapsed"] >= 8, rows
        # sacct's CPU time is the process's own (plus the shell and the interpreter's exit)
        assert rows[busy]["total_cpu"] == pytest.approx(own["cpu"], abs=0.5), (rows, own)
        # >= 0.7 on an idle machine; where others' processes share the CPUs, of the share it had
        assert measured[busy] >= 0.7 * min(1.0, share), (measured, share)
        assert measured[sleepy] <= 0.3, measured
    finally:
        cluster.stop()
