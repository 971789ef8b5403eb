"""The figures stage in the workflow: every figure and table of a finished run, restyling reruns
only figure and table rules, the report holds every output. (That a regeneration of every figure and
table gives the same bytes is tests/workflow/test_archive_workflow.py's: it rebuilds them all
from a copy of the shared run's results.)"""

from __future__ import annotations

import re

import pytest
import yaml

from vcrbench import plan
from vcrbench.plan.figures import figure_targets

from .conftest import TINY, config_error, snakemake, write_config
from .test_workflow import dry_run, scheduled_jobs

#: Rules of the figures stage: the only ones a change of the `figures` block may rerun.
FIGURE_RULES = {
    "imagenet_c_accuracy",
    "imagenet_c_mce",
    "imagenet_c_clean_correct",
    "corruption_categories",
    "paper_tables",
    "models_table",
    "retraining_table",
    "human_similarity",
    "plot_curves",
    "plot_hmri_mrsi",
    "plot_dv_histograms",
    "plot_examples",
    "plot_examples_overview",
    "plot_imagenet_c_vs_vcr",
    "plot_human_similarity",
    "plot_geirhos_dnn",
    "plot_geirhos_consistency",
    "plot_geirhos_trained",
    "plot_model_consistency",
    "paper_figures",
    "all",
}
#: Figure rules the tiny config does not build: Table 3 (no retraining), the trained networks'
#: heat map (humans.trained_table off) and the models' error consistency (one model).
NOT_IN_TINY = {"retraining_table", "plot_geirhos_trained", "plot_model_consistency"}


def targets(config_path):
    return figure_targets(plan.load(config_path))


def restyled(path, base):
    config = yaml.safe_load(base.read_text())
    config["figures"] = {
        "dpi": 120,
        "font_size": 9,
        "family_colors": {"supervised": "#333333"},
        "digits": 2,
        "formats": ["png", "pdf", "svg"],
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


# --------------------------------------------------------------------------- fast checks


@pytest.mark.parametrize(
    ("figures", "words"),
    [
        ({"formats": ["pdf"]}, ["figures", "formats"]),
        ({"family_colors": {"vit": "no-such-colour"}}, ["figures.family_colors.vit"]),
        ({"leaderboard_sort": "accuracy"}, ["figures", "leaderboard_sort"]),
    ],
    ids=["no-png", "bad-colour", "bad-sort-key"],
)
def test_bad_figures_config_stops_before_any_job(tmp_path, figures, words):
    said = config_error(write_config(tmp_path / "bad.yaml", figures=figures))  # in process
    for word in words:
        assert word in said, said


def test_dry_run_plans_the_figures_stage(tmp_path):
    jobs = scheduled_jobs(dry_run(tmp_path, configfile=TINY))
    rules = {r for r, _ in jobs}
    assert FIGURE_RULES - NOT_IN_TINY - {"paper_figures"} <= rules
    plotted = {w["corruption"] for r, w in jobs if r == "plot_curves"}
    assert plotted == {"gaussian_noise", "brightness"}
    examples = {w["corruption"] for r, w in jobs if r == "plot_examples"}
    assert examples == {"gaussian_noise", "brightness"}  # Fig. 10: one grid per corruption
    assert [w for r, w in jobs if r == "plot_examples_overview"] == [{}]  # Fig. 3: one job
    # HMRI/MRSI bars only where a human reference exists (gaussian_noise, through the noise class)
    assert [w["corruption"] for r, w in jobs if r == "plot_hmri_mrsi"] == ["gaussian_noise"]


# --------------------------------------------------------------------------- a finished run


@pytest.mark.slow
def test_finished_run_has_every_figure_and_table(finished_run):
    expected = targets(finished_run / "config.yaml")
    missing = [t for t in expected if not (finished_run / t).is_file()]
    assert not missing, missing
    for t in expected:
        data = (finished_run / t).read_bytes()
        assert len(data) > 100, t
        if t.endswith(".png"):
            assert data.startswith(b"\x89PNG"), t
        if t.endswith(".pdf"):
            assert data.startswith(b"%PDF"), t


@pytest.mark.slow
def test_restyling_reruns_only_figure_and_table_rules(copy_run):
    config = restyled(copy_run / "restyled.yaml", copy_run / "config.yaml")
    jobs = scheduled_jobs(dry_run(copy_run, configfile=config))
    rules = {r for r, _ in jobs}
    assert rules, "a changed figures block must redraw the figures"
    assert rules <= FIGURE_RULES, sorted(rules - FIGURE_RULES)
    assert {"plot_curves", "plot_dv_histograms", "paper_tables"} <= rules
    # the ImageNet-C accuracy and human similarity tables do not depend on the style
    assert not {"imagenet_c_accuracy", "human_similarity"} & rules

    # The style reaches the outputs: two of them made (the targets last: --configfile, which the
    # helper puts first, takes several values). Every figure and table rule redrawn, and again
    # with the same bytes, is the archive test's (tests/workflow/test_archive_workflow.py).
    # (the tiny config draws PNG alone: the PDFs of a figure and of Fig. 3's overview are these)
    made = (
        "results/figures/curves/brightness.svg",
        "results/figures/curves/brightness.pdf",
        "results/figures/examples/overview.pdf",
        "results/tables/paper/table2_coverage.md",
    )
    proc = snakemake(copy_run, "--cores", "2", *made, configfile=config)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert {r for r, _ in scheduled_jobs(proc.stdout + proc.stderr)} <= FIGURE_RULES
    for pdf in made[1:3]:
        data = (copy_run / pdf).read_bytes()
        assert data.startswith(b"%PDF") and len(data) > 1000, pdf
    assert (copy_run / made[0]).read_bytes().lstrip().startswith((b"<?xml", b"<svg"))
    md = (copy_run / made[-1]).read_text()
    numbers = re.findall(r"\b\d\.\d+\b", md)
    assert numbers and all(len(n) == 4 for n in numbers), numbers  # digits: 2
    again = scheduled_jobs(dry_run(copy_run, configfile=config, extra=made))
    assert again == []


@pytest.mark.slow
def test_report_holds_every_figure_and_table_with_captions(copy_run):
    report = copy_run / "report.html"
    proc = snakemake(copy_run, "--report", str(report), configfile=copy_run / "config.yaml")
    assert proc.returncode == 0, proc.stderr[-4000:]
    html = report.read_text(errors="replace")
    for t in targets(copy_run / "config.yaml"):
        if t.endswith((".png", ".csv")):
            name = t.rsplit("/", 1)[-1]
            assert name in html, name
    for caption_words in (
        "HMRI (human-relative model robustness index)",
        "Table 1 of the paper",
        "Table 2 of the paper",
        "Examples of the VCR test set",
        "Every corruption of the run at increasing",
        "How the visual change",
        "ImageNet-C against VCR on",
        "Leaderboard of one corruption",
    ):
        assert caption_words in html, caption_words
