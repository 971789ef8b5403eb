"""Human trials schema: validation errors, 'na' handling, VCR-style exports."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vcrbench.files import io
from vcrbench.humans import trial_schema
from vcrbench.humans.trial_schema import NO_ANSWER, NOT_RECORDED, HumanDataError, read_trials

CLASSES = trial_schema.classes16()


def write_csv(path, text):
    path.write_text(text)
    return path


GOOD = """participant,image_id,label,response,corruption,condition,param.width,clean_response
p1,img1,dog,dog,uniform_noise,0.35,0.35,dog
p1,img2,cat,na,uniform_noise,0.35,0.35,
p2,img1,dog,cat,uniform_noise,0.1,0.1,na
p2,img3,3,3,uniform_noise,0.1,0.1,4
"""


def test_classes16_is_the_geirhos_list():
    assert len(CLASSES) == 16
    assert set(CLASSES) == {
        "airplane", "bear", "bicycle", "bird", "boat", "bottle", "car", "cat",
        "chair", "clock", "dog", "elephant", "keyboard", "knife", "oven", "truck",
    }  # fmt: skip


def test_read_canonical_csv(tmp_path):
    t = read_trials(write_csv(tmp_path / "t.csv", GOOD))
    assert list(t.columns[:8]) == list(trial_schema.TRIAL_COLUMNS)
    assert t["label"].tolist() == [
        CLASSES.index("dog"),
        CLASSES.index("cat"),
        CLASSES.index("dog"),
        3,
    ]
    # 'na' and an empty response are "no answer"; empty clean_response is "not recorded".
    assert t["response"].tolist()[1] == NO_ANSWER
    assert t["clean_response"].tolist() == [CLASSES.index("dog"), NOT_RECORDED, NO_ANSWER, 4]
    assert t["param.width"].tolist() == [0.35, 0.35, 0.1, 0.1]
    assert np.isnan(t["dv"]).all()
    assert trial_schema.correct(t).tolist() == [True, False, False, True]
    cons, has = trial_schema.consistent(t)
    assert has.tolist() == [True, False, True, True]
    assert cons.tolist() == [True, False, False, False]


def test_no_answer_never_correct_even_if_label_were_minus_one():
    t = pd.DataFrame(
        {
            "participant": ["a"],
            "image_id": ["i"],
            "label": [0],
            "response": [NO_ANSWER],
            "corruption": ["x"],
            "dv": [0.2],
        }  # fmt: skip
    )
    assert not trial_schema.correct(trial_schema.validate_trials(t)).any()


def test_parquet_roundtrip(tmp_path):
    t = read_trials(write_csv(tmp_path / "t.csv", GOOD))
    io.write_parquet(t, tmp_path / "t.parquet")
    back = read_trials(tmp_path / "t.parquet")
    pd.testing.assert_frame_equal(back, t)


@pytest.mark.parametrize(
    ("edit", "fragments"),
    [
        (lambda s: s.replace("p1,img2,cat", "p1,img2,cow"), ["row 2 (line 3)", "'label'", "'cow'"]),
        (
            lambda s: s.replace("p2,img1,dog,cat", "p2,img1,dog,lion"),
            ["row 3 (line 4)", "'response'", "'lion'"],
        ),
        (
            lambda s: s.replace("p2,img3,3,3", "p2,img3,16,3"),
            ["row 4 (line 5)", "'label'", "class index 0-15"],
        ),
        (
            lambda s: s.replace(",0.35,0.35,dog", ",0.35,wide,dog"),
            ["row 1 (line 2)", "'param.width'", "not a number"],
        ),
        (lambda s: s.replace("p2,img1", ",img1"), ["row 3 (line 4)", "'participant'", "empty"]),
        (
            lambda s: s.replace("na,uniform_noise", "na,"),
            ["row 2 (line 3)", "'corruption'", "empty"],
        ),
        (lambda s: s.replace("label,", "lbl,", 1), ["missing required column", "'label'"]),
        (
            lambda s: s.replace("param.width", "width"),
            ["unknown column", "'width'", "param.<name>"],
        ),
        (lambda s: s.replace("0.1,0.1,4", ",0.1,4"), ["row 4 (line 5)", "neither a Δv"]),
    ],
)
def test_validation_errors_name_file_row_column(tmp_path, edit, fragments):
    path = write_csv(tmp_path / "bad.csv", edit(GOOD))
    with pytest.raises(HumanDataError) as err:
        read_trials(path)
    msg = str(err.value)
    assert str(path) in msg
    for frag in fragments:
        assert frag in msg, msg


def test_dv_range_checked(tmp_path):
    text = "participant,image_id,label,response,corruption,dv\np,i,dog,dog,blur,1.2\n"
    with pytest.raises(HumanDataError, match=r"row 1 \(line 2\), column 'dv'.*outside"):
        read_trials(write_csv(tmp_path / "t.csv", text))


def test_missing_file_and_bad_type(tmp_path):
    with pytest.raises(HumanDataError, match="does not exist"):
        read_trials(tmp_path / "nope.csv")
    (tmp_path / "t.xlsx").write_text("x")
    with pytest.raises(HumanDataError, match="unsupported file type"):
        read_trials(tmp_path / "t.xlsx")


def test_empty_table(tmp_path):
    with pytest.raises(HumanDataError, match="no trials"):
        read_trials(
            write_csv(tmp_path / "t.csv", "participant,image_id,label,response,corruption,dv\n")
        )


VCR = """label,orig_pred,transf_pred,vd_score,transformation
dog,dog,dog,0.12,Gaussian Noise
cat,cat,dog,0.8,Gaussian Noise
car,truck,na,0.5,Median Blur
"""


def test_vcr_export(tmp_path):
    t = read_trials(write_csv(tmp_path / "vcr.csv", VCR))
    assert t["corruption"].tolist() == ["gaussian_noise", "gaussian_noise", "median_blur"]
    assert t["dv"].tolist() == [0.12, 0.8, 0.5]
    assert t["response"].tolist() == [CLASSES.index("dog"), CLASSES.index("dog"), NO_ANSWER]
    assert t["clean_response"].tolist() == [CLASSES.index(c) for c in ("dog", "cat", "truck")]
    # without participant/image columns every row is its own participant and image
    assert t["participant"].tolist() == ["row-1", "row-2", "row-3"]
    assert trial_schema.correct(t).tolist() == [True, False, False]
    cons, has = trial_schema.consistent(t)
    assert has.all() and cons.tolist() == [True, False, False]


def test_vcr_export_keeps_participants_and_names_its_columns(tmp_path):
    text = "worker_id,image,label,orig_pred,transf_pred,vd_score,transformation\nw1,a.png,dog,dog,dog,0.1,Blur\n"
    t = read_trials(write_csv(tmp_path / "vcr.csv", text))
    assert t["participant"].tolist() == ["w1"] and t["image_id"].tolist() == ["a.png"]
    bad = VCR.replace("car,truck,na,0.5", "car,lorry,na,0.5")
    with pytest.raises(HumanDataError, match=r"row 3 \(line 4\), column 'orig_pred'.*'lorry'"):
        read_trials(write_csv(tmp_path / "bad.csv", bad))
    bad = VCR.replace("0.8,Gaussian", "high,Gaussian")
    with pytest.raises(HumanDataError, match=r"row 2 \(line 3\), column 'vd_score'"):
        read_trials(write_csv(tmp_path / "bad2.csv", bad))


def test_corruption_key():
    assert trial_schema.corruption_key(" Hue Saturation Value ") == "hue_saturation_value"
    assert trial_schema.corruption_key("Color-Jitter") == "color_jitter"
