"""definitions.csv is written from the config alone: config/paper.yaml, no data, one job."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml

from tests.support.shipped import shipped_config
from tests.workflow.conftest import snakemake
from vcrbench.plan import definitions, paths


@pytest.mark.slow
def test_definitions_table_from_the_paper_config_without_data(tmp_path):
    # the site's ImageNet folder and weights files: must exist, are not read
    cfg = shipped_config("paper.yaml", tmp_path)
    config = tmp_path / "paper.yaml"
    config.write_text(yaml.safe_dump(cfg, sort_keys=False))
    proc = snakemake(tmp_path, "--cores", "1", paths.DEFINITIONS, configfile=config)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert "1 of 1 steps" in proc.stdout + proc.stderr
    table = pd.read_csv(tmp_path / paths.DEFINITIONS, keep_default_na=False)
    assert list(table.columns) == definitions.COLUMNS
    rows = table.set_index("definition")
    assert rows.loc["curve fit", "this_run"] == "quantile"
    assert rows.loc["curve fit", "matches_paper"] == "yes"
    # the toolbox's own functions for the VCR sets it made: at most two rows differ
    assert rows.loc["corruption function: frost", "matches_paper"] == "yes"
    assert (table["matches_paper"] == "no").sum() <= 2
    assert not (tmp_path / "results" / "testsets").exists()
