"""A defense's effect (vcrbench.evaluation.defense_effects): the defense table's numbers on a small
synthetic input, unpaired samples refused, and its figure."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vcrbench.files import io

# --------------------------------------------------------------------------- the defense table


def write_predictions(path, sample_ids, images, labels, preds) -> str:
    frame = pd.DataFrame(
        {
            "sample_id": np.asarray(sample_ids, np.int64),
            "image_id": images,
            "label": np.asarray(labels, np.int64),
            "dv": np.linspace(0.0, 1.0, len(sample_ids)),
            "pred": np.asarray(preds, np.int32),
            "prob_label": np.full(len(sample_ids), 0.5, np.float32),
            "pred16": np.full(len(sample_ids), -1, np.int8),  # not ImageNet: no 16 classes
            "label16": np.full(len(sample_ids), -1, np.int8),
        }
    )
    io.write_parquet(frame, path)
    return str(path)


def replicate_frame(model: str, r_a: np.ndarray, r_p: np.ndarray) -> pd.DataFrame:
    from vcrbench.evaluation.differences import replicate_rows

    unit = {"n": 8, "n_units": 4, "seed": 11, "level": 0.95}
    return pd.concat(
        [
            replicate_rows(model, "noise", "ten", "R_a", float(r_a.mean()), r_a, **unit),
            replicate_rows(model, "noise", "ten", "R_p", float(r_p.mean()), r_p, **unit),
        ]
    )


@pytest.fixture
def synthetic(tmp_path):
    """4 images (labels 0..3), 2 corrupted samples each. Undefended: clean 3/4 right, corrupted
    2/8; defended: clean 4/4, corrupted 5/8."""
    images, labels = ["i0", "i1", "i2", "i3"], [0, 1, 2, 3]
    clean = {
        "u": write_predictions(
            tmp_path / "u-clean.parquet", range(4), images, labels, [0, 1, 2, 0]
        ),
        "d": write_predictions(
            tmp_path / "d-clean.parquet", range(4), images, labels, [0, 1, 2, 3]
        ),
    }
    ids, imgs = range(100, 108), [im for im in images for _ in range(2)]
    labs = [lab for lab in labels for _ in range(2)]
    right_u = [1, 0, 1, 0, 0, 0, 0, 0]
    right_d = [1, 1, 1, 0, 1, 0, 0, 1]
    preds = {
        m: [lab if ok else (lab + 1) % 4 for lab, ok in zip(labs, right, strict=True)]
        for m, right in (("u", right_u), ("d", right_d))
    }
    predictions = {
        m: {"noise": [write_predictions(tmp_path / f"{m}.parquet", ids, imgs, labs, preds[m])]}
        for m in ("u", "d")
    }
    rng = np.random.default_rng(0)
    r_a_u, r_p_u = rng.uniform(0.2, 0.4, 50), rng.uniform(0.5, 0.7, 50)
    r_a_d = r_a_u + 0.1 + rng.normal(0, 0.01, 50)
    replicates = pd.concat(
        [replicate_frame("u", r_a_u, r_p_u), replicate_frame("d", r_a_d, r_p_u - 0.05)]
    )
    return predictions, clean, replicates


SETTINGS = {"n_boot": 400, "level": 0.95, "small_sample": "t"}


def effects(synthetic, **kwargs):
    from vcrbench.evaluation.defense_effects import defense_effects

    predictions, clean, replicates = synthetic
    return defense_effects(
        {"d": "u"}, predictions, clean, replicates, defenses={"d": "jpeg(quality=75)"},
        dataset_label_space="ten", settings=SETTINGS, seed=0,
        **{"label_spaces": ["dataset", "geirhos16"], **kwargs},
    )  # fmt: skip


def test_defense_table_numbers_on_a_synthetic_input(synthetic):
    from vcrbench.evaluation.defense_effects import DEFENSE_COLUMNS
    from vcrbench.evaluation.differences import differences

    table = effects(synthetic)
    assert list(table.columns) == DEFENSE_COLUMNS
    assert len(table) == 1  # no 16-class decisions: the dataset's label space only
    row = table.iloc[0]
    assert (row["model"], row["undefended"], row["defense"]) == ("d", "u", "jpeg(quality=75)")
    assert (row["n_samples"], row["n_images"]) == (8, 4)
    assert row["clean_accuracy_undefended"] == 0.75 and row["clean_accuracy_defended"] == 1.0
    assert row["accuracy_undefended"] == 0.25 and row["accuracy_defended"] == 0.625
    assert row["relative_change"] == pytest.approx((0.625 - 0.25) / 0.75)  # = 0.5
    assert row["clean_relative_change"] == pytest.approx(0.25 / 0.75)
    assert row["relative_change_lo"] < 0.5 < row["relative_change_hi"]
    # ΔR̂: the paired differences of vcrbench.evaluation.differences, defended − undefended
    _, _, replicates = synthetic
    expected = differences(replicates, relations={"d": "u"}).set_index("metric")
    for metric in ("R_a", "R_p"):
        e = expected.loc[metric]
        assert (e["model_a"], e["model_b"]) == ("d", "u")
        assert row[f"delta_{metric}"] == pytest.approx(e["diff"])
        assert row[f"delta_{metric}_lo"] == pytest.approx(e["diff_lo"])
        assert row[f"delta_{metric}_hi"] == pytest.approx(e["diff_hi"])
        assert row[f"{metric}_defended"] - row[f"{metric}_undefended"] == pytest.approx(e["diff"])
    assert 0.05 < row["delta_R_a_lo"] < row["delta_R_a"] < row["delta_R_a_hi"] < 0.15
    assert row["delta_R_p"] == pytest.approx(-0.05)
    pd.testing.assert_frame_equal(effects(synthetic), table)  # seeded: the same numbers again


def test_a_defense_that_changes_nothing_has_no_effect(synthetic):
    predictions, clean, replicates = synthetic
    same = ({"d": predictions["u"], "u": predictions["u"]}, {"d": clean["u"], "u": clean["u"]})
    replicates = pd.concat(
        [
            replicates[replicates["model"] == "u"],
            replicates[replicates["model"] == "u"].assign(model="d"),
        ]
    )
    row = effects((*same, replicates)).iloc[0]
    assert row["relative_change"] == 0 and row["clean_relative_change"] == 0
    assert row["relative_change_lo"] == 0 and row["relative_change_hi"] == 0
    assert row["delta_R_a"] == 0 and row["delta_R_a_lo"] == 0 and row["delta_R_a_hi"] == 0


def test_defense_table_refuses_unpaired_samples(synthetic, tmp_path):
    from vcrbench.errors import EvaluationError

    predictions, clean, replicates = synthetic
    other = write_predictions(tmp_path / "o.parquet", range(200, 208), ["i0"] * 8, [0] * 8, [0] * 8)
    predictions = {**predictions, "d": {"noise": [other]}}
    with pytest.raises(EvaluationError, match="did not predict the same samples of 'noise'"):
        effects((predictions, clean, replicates))


def test_defense_figure_is_readable(synthetic, tmp_path):
    from tests.support.figure_checks import drawn_texts, overlapping_pairs, text_bboxes
    from vcrbench.figures.build import plot_defenses
    from vcrbench.figures.defenses import defense_figure
    from vcrbench.figures.style import Style

    table = effects(synthetic)
    csv = tmp_path / "defenses.csv"
    io.write_csv(table, csv)
    written = plot_defenses(csv, [tmp_path / "defenses.png", tmp_path / "defenses.pdf"])
    assert all(p.stat().st_size > 5000 for p in written)
    style = Style.from_config(None)
    with style.context():
        fig = defense_figure(table, style)
        texts = [t.get_text() for t in drawn_texts(fig)]
        assert "clean images" in texts and "noise" in texts
        assert any("d (jpeg(quality=75)) vs u" in t for t in texts)
        assert not overlapping_pairs(text_bboxes(fig, drawn_texts(fig)))
