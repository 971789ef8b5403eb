"""The Geirhos et al. (2018) reader against the numbers the paper prints."""

from __future__ import annotations

import numpy as np
import pytest

from vcrbench.humans.geirhos import reader
from vcrbench.humans.trial_schema import NO_ANSWER, NOT_RECORDED, HumanDataError, correct


@pytest.fixture(scope="module")
def noise():
    return reader.read_geirhos("noise")


@pytest.fixture(scope="module")
def lowpass():
    return reader.read_geirhos("lowpass")


def test_trial_counts_match_table_1(noise, lowpass):
    # Table 1: 1280 main trials per observer, 10 per category and condition; 5 observers (noise),
    # 6 observers (low-pass).
    for trials, n_obs in ((noise, 5), (lowpass, 6)):
        assert trials["participant"].nunique() == n_obs
        assert len(trials) == 1280 * n_obs
        per = trials.groupby(["participant", "condition", "label"]).size()
        assert (per == 10).all()
        # no observer ever saw an image twice
        assert not trials.duplicated(["participant", "image_id"]).any()
        assert (trials["clean_response"] == NOT_RECORDED).all()


def test_published_human_accuracies(noise, lowpass):
    table = {
        "noise": reader.condition_accuracy(noise).set_index("condition")["accuracy"],
        "lowpass": reader.condition_accuracy(lowpass).set_index("condition")["accuracy"],
    }
    for (exp, cond), (value, tol, _where) in reader.PUBLISHED_HUMAN_ACCURACY.items():
        assert abs(table[exp][cond] - value) <= tol, (exp, cond, table[exp][cond], value)


def test_full_condition_table(noise, lowpass):
    # Values of the release (Fig. 3 plots them); the three printed ones are checked above.
    acc = reader.condition_accuracy(noise)
    assert acc["condition"].tolist() == "0.00 0.03 0.05 0.10 0.20 0.35 0.60 0.90".split()
    assert acc["n_correct"].tolist() == [644, 637, 625, 601, 487, 365, 134, 48]
    assert (acc["n"] == 800).all()
    acc = reader.condition_accuracy(lowpass)
    assert acc["condition"].tolist() == ["0", "1", "3", "5", "7", "10", "15", "40"]
    assert acc["n_correct"].tolist() == [825, 776, 689, 560, 466, 300, 178, 74]


def test_na_is_no_answer_and_wrong(noise, lowpass):
    assert (noise["response"] == NO_ANSWER).sum() == 83
    assert (lowpass["response"] == NO_ANSWER).sum() == 152
    assert not correct(noise)[noise["response"].to_numpy() == NO_ANSWER].any()
    # Counting 'na' as wrong is what reproduces the printed 45.6% (dropping it would not).
    sub = noise[noise["condition"] == "0.35"]
    answered = sub[sub["response"] != NO_ANSWER]
    assert round(correct(sub).mean(), 3) == 0.456
    assert round(correct(answered).mean(), 3) != 0.456


def test_parameters_and_corruption(noise, lowpass):
    assert set(noise["corruption"]) == {"uniform_noise"}
    assert sorted(noise["param.width"].unique()) == list(reader.EXPERIMENTS["noise"].conditions)
    assert set(lowpass["corruption"]) == {"geirhos_lowpass"}
    assert sorted(lowpass["param.sigma"].unique()) == list(
        reader.EXPERIMENTS["lowpass"].conditions
    )
    assert noise["image_id"].str.match(r"^n\d{8}_\d+$").all()


def test_dnn_trials():
    dnn = reader.read_geirhos("noise", "dnns")
    # the release's dnns/ folders also hold the human files: only the networks are kept
    assert sorted(dnn["participant"].unique()) == list(reader.DNN_OBSERVERS)
    assert (dnn.groupby("participant").size() == 8960).all()
    assert np.isnan(dnn["rt"]).all()
    acc = reader.condition_accuracy(dnn, by=("participant", "condition"))
    r = acc[acc["participant"] == "resnet152"].set_index("condition")["accuracy"]
    assert r["0.00"] > 0.85 and r["0.90"] < 0.1
    summed = reader.read_geirhos("noise", "dnns", subjects=["resnet152"], dnn_aggregation="sum")
    assert (
        summed["response"].to_numpy() != dnn[dnn.participant == "resnet152"]["response"].to_numpy()
    ).any()


def test_bad_arguments(tmp_path):
    with pytest.raises(HumanDataError, match="unknown Geirhos experiment 'mirror'"):
        reader.read_geirhos("mirror")
    with pytest.raises(HumanDataError, match="'eidolon' cannot be placed on the Δv axis"):
        reader.read_geirhos("eidolon")
    with pytest.raises(HumanDataError, match="observers"):
        reader.read_geirhos("noise", "monkeys")
    with pytest.raises(HumanDataError, match=r"\['alexnet'\] not in"):
        reader.read_geirhos("noise", "dnns", subjects=["alexnet"])
    (tmp_path / "noise-experiment").mkdir()
    with pytest.raises(HumanDataError, match="no Geirhos CSV"):
        reader.read_geirhos("noise", root=tmp_path)
    (tmp_path / "noise-experiment" / "x.csv").write_text(
        "subj,session,trial,rt,object_response,category,condition,imagename\n"
        "s,1,1,0.5,dog,dgo,0.1,0000_nse_s01_0.10_dog_10_n02085620_1.JPEG\n"
    )
    with pytest.raises(HumanDataError, match=r"x.csv, row 1 \(line 2\), column 'label'.*'dgo'"):
        reader.read_geirhos("noise", root=tmp_path)
