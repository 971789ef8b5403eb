"""benchmarks/bench_run.py's arithmetic: job-time sum, busy share of the cores, the last job's
start and the slowest rules, read from a run's Snakemake benchmark files."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def bench_file(results: Path, job: str, s: float, cpu: float, end: float) -> None:
    path = results / "benchmarks" / f"{job}.tsv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
        f"{s}\t0:00:00\t1\t1\t1\t1\t0\t0\t50\t{cpu}\n"
    )
    os.utime(path, (end, end))


def test_a_runs_benchmark_files_give_its_sums_share_and_tail(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    sys.modules.pop("bench_run", None)
    import bench_run

    t0 = 1_000_000.0
    results = tmp_path / "results"
    bench_file(results, "predict_model/m1", 40.0, 70.0, t0 + 50)
    bench_file(results, "predict_model/m2", 30.0, 55.0, t0 + 90)
    bench_file(results, "estimate_curves/m1/noise", 10.0, 9.0, t0 + 70)
    bench_file(results, "collect_metrics/collect_metrics", 2.0, 1.0, t0 + 98)
    r = bench_run.summarize(results, t0, wall=100.0, cores=2)
    assert r["jobs"] == 4
    assert r["job_sum"] == pytest.approx(82.0)
    assert r["busy"] == pytest.approx((70 + 55 + 9 + 1) / 200)
    assert r["last_start"] == pytest.approx(96.0)
    assert r["last_job"] == "collect_metrics/collect_metrics"
    assert [rule for rule, _ in r["rules"]] == [
        "predict_model",
        "estimate_curves",
        "collect_metrics",
    ]
    assert r["rules"][0][1] == [40.0, 30.0]
