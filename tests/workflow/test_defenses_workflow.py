"""A defended model added by one config line to a finished run: only its jobs are planned, and
running them reports the defense's effect (results/tables/defenses.csv and its figure)."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml

from vcrbench.plan import paths

from .conftest import TINY, snakemake
from .test_workflow import dry_run, scheduled_jobs

LINE = "  efficientnet_lite0_smooth: {base: efficientnet_lite0, defense: spatial_smoothing}\n"


def with_defended_model(run_dir, base=None):
    """The run's config (or ``base``) with the one line added under ``models``."""
    text = (base or run_dir / "config.yaml").read_text()
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("models:")) + 1
    path = run_dir / "config-defended.yaml"
    path.write_text("".join([*lines[:at], LINE, *lines[at:]]))
    assert yaml.safe_load(path.read_text())["models"]["efficientnet_lite0_smooth"]
    return path


def test_a_defended_model_plans_its_own_jobs_and_the_defense_outputs(tmp_path):
    jobs = scheduled_jobs(dry_run(tmp_path, configfile=with_defended_model(tmp_path, TINY)))
    defended = {rule for rule, w in jobs if w.get("model") == "efficientnet_lite0_smooth"}
    assert {"predict_model", "estimate_curves"} <= defended
    rules = [rule for rule, _ in jobs]
    assert rules.count("defense_table") == 1 and rules.count("plot_defenses") == 1


@pytest.mark.slow
def test_one_line_adds_a_defended_model_that_reruns_nothing_else(copy_run):
    config = with_defended_model(copy_run)
    jobs = scheduled_jobs(dry_run(copy_run, configfile=config))
    rules = {rule for rule, _ in jobs}
    assert not {"prepare_clean_set", "sample_manifest", "generate_shard"} & rules
    for rule, wildcards in jobs:
        if rule.startswith("predict") or rule == "estimate_curves":
            assert wildcards["model"] == "efficientnet_lite0_smooth", (rule, wildcards)
    assert {"predict_model", "defense_table", "plot_defenses"} <= rules

    before = {
        p: p.stat().st_mtime_ns for p in (copy_run / "results/predictions").rglob("*.parquet")
    }
    # the defense's table and figure, and what they need (the tables and figures over all models,
    # which the new model makes again too, are planned above; their reruns are other tests')
    targets = (paths.DEFENSES_TABLE, paths.DEFENSES_FIGURE.format(ext="png"))
    proc = snakemake(copy_run, "--cores", "2", "--show-failed-logs", *targets, configfile=config)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-6000:]
    for path, mtime in before.items():  # the undefended model's predictions were not redone
        assert path.stat().st_mtime_ns == mtime, path

    table = pd.read_csv(copy_run / "results/tables/defenses.csv")
    corruptions = sorted(yaml.safe_load(config.read_text())["corruptions"])
    ours = table[table["label_space"] == "imagenet1k"]
    assert sorted(ours["corruption"]) == corruptions
    assert set(ours["model"]) == {"efficientnet_lite0_smooth"}
    assert set(ours["undefended"]) == {"efficientnet_lite0"}
    assert set(ours["defense"]) == {"spatial_smoothing(window=3)"}
    for _, row in ours.iterrows():
        expected = (row["accuracy_defended"] - row["accuracy_undefended"]) / row[
            "clean_accuracy_undefended"
        ]
        assert row["relative_change"] == pytest.approx(expected, abs=1e-5)  # CSV: 6 digits
        assert row["delta_R_a"] == pytest.approx(
            row["R_a_defended"] - row["R_a_undefended"], abs=1e-5
        )
        assert row["delta_R_a_lo"] <= row["delta_R_a"] <= row["delta_R_a_hi"]
    # the defense is part of the model: its predictions differ, the samples and their Δv do not
    plain = pd.read_parquet(copy_run / "results/predictions/efficientnet_lite0/clean.parquet")
    smooth = pd.read_parquet(
        copy_run / "results/predictions/efficientnet_lite0_smooth/clean.parquet"
    )
    assert plain["image_id"].tolist() == smooth["image_id"].tolist()
    assert not plain["prob_label"].equals(smooth["prob_label"])
    assert (copy_run / "results/figures/defenses.png").stat().st_size > 10_000
