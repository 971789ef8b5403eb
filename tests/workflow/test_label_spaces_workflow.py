"""A run on a user's own photographs fails only where it must, and early (issue 39), on a folder
dataset built here: 12 images, one of them in the 16 classes of the human experiments.

- A label space that cannot fit a curve refuses the run at its start, with the counts.
- A failed job (a corruption whose function always raises) leaves the independent jobs finished
  (the workflow profile's keep-going); the 16-class label space, short of samples at the lower
  min_count, yields its status rows and the 1000-class label space its metrics; a plain rerun
  after the fix redoes only what the failed job held up.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from PIL import Image

from vcrbench.files import io
from vcrbench.vocab import STATUS_OK, STATUS_SHORT

from .conftest import TINY, snakemake, split_inference

pytestmark = pytest.mark.slow

#: ImageNet-1k labels: 8 (hen) is one of the 16 classes (bird); the others are not.
LABELS = [8, 0, 1, 2, 3, 4, 5, 6, 7, 9, 0, 1]
MODEL = "efficientnet_lite0"


def _dataset(folder: Path) -> dict:
    """12 small photographs-to-be (smooth random colour fields) and their labels CSV."""
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    rows = ["file,label"]
    for i, label in enumerate(LABELS):
        small = rng.integers(0, 255, (6, 8, 3), dtype=np.uint8)
        image = Image.fromarray(small).resize((80, 60), Image.BICUBIC)
        image.save(folder / f"photo{i:02d}.jpg", quality=92)
        rows.append(f"photo{i:02d}.jpg,{label}")
    (folder / "labels.csv").write_text("\n".join(rows) + "\n")
    return _dataset_entry(folder)


def _dataset_entry(folder: Path) -> dict:
    return {"kind": "folder", "path": str(folder), "labels": str(folder / "labels.csv")}


def _config(workdir: Path, **changes) -> Path:
    """The tiny config on the folder dataset (made once in ``workdir/photos``), with brightness
    only, no human data, min_count 2, and ``changes``."""
    photos = workdir / "photos"
    dataset = _dataset(photos) if not photos.exists() else _dataset_entry(photos)
    config = yaml.safe_load(TINY.read_text())
    config.update(
        dataset=dataset,
        corruptions={"brightness": {}},
        sampling={"mode": "parameter-uniform", "n_samples": 24, "shard_size": 24},
        imagenet_c={"enabled": False},
        humans={"references": {}, "conditions_table": False},
        figures={"formats": ["png"]},
        estimation={"n_boot": 20, "min_count": 2},
        # one job per set and group of shards (predict_clean, predict_group): a failed corruption
        # holds up only its own predictions
        inference=split_inference(),
    )
    config.update(changes)
    path = workdir / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _said(proc) -> str:
    return proc.stdout + proc.stderr


def test_a_label_space_that_cannot_fit_refuses_the_run_at_its_start(tmp_path):
    config = _config(
        tmp_path,
        sampling={"mode": "dv-uniform", "n_samples": 24, "shard_size": 24},
        estimation={"n_boot": 20, "min_count": 20},
    )
    proc = snakemake(tmp_path, "--cores", "2", configfile=config)
    said = _said(proc)
    assert proc.returncode != 0
    assert (
        "estimation.label_spaces: label space 'geirhos16' cannot fit a curve: no Δv bin is "
        "expected to hold estimation.min_count=20 of the samples that show one of its images, "
        "on brightness: 2 of 24 samples (exact)"
    ) in said, said[-4000:]
    assert "label space 'imagenet1k' cannot fit a curve" in said  # 24 samples over 33 bins
    assert "estimation.min_count: " in said and "sampling.n_samples: " in said
    assert "No job was started." in said
    assert not (tmp_path / "results" / "testsets").exists()
    assert not (tmp_path / "results" / "predictions").exists()


def test_a_failed_job_leaves_independent_jobs_and_label_spaces_finished(tmp_path):
    (tmp_path / "boom_corruption.py").write_text(
        "def boom(image, params, rng):\n"
        "    raise RuntimeError('boom: this corruption always fails')\n"
    )
    path = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])
    env = dict(os.environ, PYTHONPATH=path)
    boom = {"function": "boom_corruption:boom", "domain": {"amount": [0.0, 1.0]}, "reason": "t"}
    config = _config(tmp_path, corruptions={"boom": boom, "brightness": {}})
    first = snakemake(tmp_path, "--cores", "1", configfile=config, env=env)
    said = _said(first)
    assert first.returncode != 0
    failed = [line for line in said.splitlines() if line.startswith("vcrbench: ")]
    jobs = [line for line in failed if " failed: " in line]
    assert len(jobs) == 1, said[-6000:]
    job = r"vcrbench: job generate_shard \(corruption=boom, shard=00000\) failed: .*boom"
    assert re.match(job, jobs[0]), jobs
    log = "results/logs/generate_shard/boom/shard-00000.log"
    assert failed.count(f"vcrbench: log of the failed job generate_shard: {log}") == 1
    # the independent jobs finished: brightness estimated, in both label spaces
    estimates = tmp_path / "results" / "estimates" / MODEL
    assert not (estimates / "boom").exists()
    metrics = io.read_parquet(estimates / "brightness" / "metrics.parquet").set_index("label_space")
    ok, short = metrics.loc["imagenet1k"], metrics.loc["geirhos16"]
    assert ok["status"] == STATUS_OK and ok["status_reason"] == ""
    assert 0 <= ok["R_a"] <= 1 and 0 <= ok["R_p"] <= 1
    assert short["status"] == STATUS_SHORT and np.isnan(short["R_a"]) and 0 <= short["R_p"] <= 1
    assert short["status_reason"].startswith(
        "accuracy: no Δv bin holds at least min_count=2 samples (largest bin: 1 of 2 samples)"
    )
    assert not (tmp_path / "results" / "tables" / "vcr_metrics.csv").exists()
    made = (estimates / "brightness" / "metrics.parquet").stat().st_mtime_ns

    # the fix (the corruption left out), a plain rerun: brightness' estimate is not redone
    config = _config(tmp_path)
    second = snakemake(tmp_path, "--cores", "1", configfile=config, env=env)
    assert second.returncode == 0, _said(second)[-6000:]
    assert (estimates / "brightness" / "metrics.parquet").stat().st_mtime_ns == made
    table = pd.read_csv(tmp_path / "results" / "tables" / "vcr_metrics.csv", keep_default_na=False)
    rows = table.set_index("label_space")
    assert rows.loc["imagenet1k", "status"] == STATUS_OK
    assert rows.loc["geirhos16", "status"] == STATUS_SHORT
    assert rows.loc["geirhos16", "R_a"] == "" and float(rows.loc["geirhos16", "R_p"]) >= 0
    paper = (tmp_path / "results" / "tables" / "paper" / "metrics.md").read_text()
    assert "Too few samples" in paper and "accuracy: no Δv bin" in paper
