"""The compact copy of the Geirhos et al. (2018) data against the CSVs and the published numbers.

Published values come from (a) the release's own accuracy tables, ``raw-accuracies/TF/*.csv`` and
``raw-accuracies/fine-tuning/*.csv`` of github.com/rgeirhos/generalisation-humans-DNNs (commit
0b88343; written by its ``data-analysis/plotting_results/plot_accuracy.R``, R's 15 significant
digits; copied verbatim below), (b) Figure 4 of Geirhos et al., *Generalisation in humans and deep
neural networks*, NeurIPS 2018 (percent, one decimal), (c) numbers printed in that paper's text and
in the release's ``data-analysis/plotting_methods/averaging_response_failures.py``, and (d) numbers
printed in ``data-analysis/data-analysis.R`` of github.com/wichmann-lab/error-consistency (Geirhos,
Meding & Wichmann, *Beyond accuracy: quantifying trial-by-trial behaviour of CNNs and humans by
measuring error consistency*, NeurIPS 2020), which reuses the colour experiment's human data.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vcrbench.humans import geirhos as gd
from vcrbench.humans.trial_schema import HumanDataError
from vcrbench.kappa import error_consistency

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def acc() -> pd.DataFrame:
    return gd.condition_accuracy()


def _value(acc: pd.DataFrame, collection, experiment, observer, rule, condition) -> pd.Series:
    row = acc[
        (acc.collection == collection)
        & (acc.experiment == experiment)
        & (acc.observer == observer)
        & (acc.rule == rule)
        & (acc.condition == condition)
    ]
    assert len(row) == 1, (collection, experiment, observer, rule, condition)
    return row.iloc[0]


# --------------------------------------------------------------------------- the raw CSV view


def _release_folder(tmp_path: Path, experiment: str = "lowpass") -> Path:
    """A release-shaped folder of one experiment, its CSVs written from the shipped copy."""
    src = tmp_path / "release"
    for collection in ("humans", "dnns"):
        for name in gd.csv_files(collection, experiment):
            dest = src / f"geirhos2018-{collection}" / f"{experiment}-experiment" / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            gd.raw_frame(collection, experiment, name).to_csv(dest, index=False)
    return src


def test_raw_frame_round_trips_through_csv(tmp_path):
    """A CSV written from raw_frame reads back (as vcrbench.humans.geirhos reads it) unchanged."""
    src = _release_folder(tmp_path, "noise")
    files = sorted(src.glob("*/noise-experiment/*.csv"))
    assert len(files) == 5 + 21 + 5  # humans; networks, and the human files repeated in dnns
    for path in files:
        collection = path.parts[-3].removeprefix("geirhos2018-")
        got = gd.raw_frame(collection, "noise", path.name)
        expected = pd.read_csv(path, dtype=str, keep_default_na=False)
        pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_raw_frame_special_cases():
    # the release's dnns folders repeat the human files; they are served from humans.parquet
    a = gd.raw_frame("dnns", "colour", "colour-experiment_subject-03_session_1.csv")
    b = gd.raw_frame("humans", "colour", "colour-experiment_subject-03_session_1.csv")
    pd.testing.assert_frame_equal(a, b)
    assert list(a.columns) == list(gd.CSV_COLUMNS)
    # the file says session 1, its rows say 3 (kept as in the release)
    assert set(a["session"]) == {"3"}
    # the `specialised` copies were rewritten by pandas: empty rt, '1.0' for '1'
    s = gd.raw_frame("trained", "highpass", "highpass-experiment_specialised_session_1.csv")
    assert set(s["rt"]) == {""} and {"1.0", "3.0", "inf"} <= set(s["condition"])
    n = gd.raw_frame("trained", "highpass", "highpass-experiment_sixteen01v4_session_1.csv")
    assert set(n["rt"]) == {"NaN"} and {"1", "3"} <= set(n["condition"])
    # network files: 18 columns, probabilities as printed
    r = gd.raw_frame("dnns", "eidolon", "eidolon-experiment_resnet152_session_2.csv")
    assert list(r.columns) == list(gd.CSV_COLUMNS + gd.DNN_COLUMNS)
    assert (r.dtypes == "str").all()
    with pytest.raises(HumanDataError, match="no file"):
        gd.raw_frame("humans", "noise", "noise-experiment_resnet152_session_1.csv")
    with pytest.raises(HumanDataError, match="collection"):
        gd.raw_frame("monkeys", "noise", "x.csv")


def test_typed_values_are_the_floats_the_text_denotes():
    d = gd.stored("dnns")
    f = gd.raw_frame("dnns", "noise", "noise-experiment_vgg19_session_3.csv")
    typed = d[(d.experiment == "noise") & (d.file == "noise-experiment_vgg19_session_3.csv")]
    for col in ("entropy_1000", "prob_correct_16", "highest_prob_16_sums"):
        assert typed[col].tolist() == [float(t) for t in f[col]]
    # decimals beyond the fast path (exponent < -22) decode exactly too
    m = np.array([26537394426.0, 318377732671.0, 15.0, np.nan])
    e = np.array([-28, -12, 0, 0])
    out = gd.decode_decimal(m, e)
    assert out[:3].tolist() == [2.6537394426e-18, 0.318377732671, 15.0] and np.isnan(out[3])


def test_collections_and_provenance():
    sizes = {"humans": (67, 82_880), "dnns": (198, 260_160), "trained": (520, 656_000)}
    for collection, (n_files, n_rows) in sizes.items():
        meta = gd.metadata(collection)
        assert meta["commit"] == gd.SOURCE_COMMIT == "0b88343"
        assert meta["licence"] == "CC-BY-4.0"
        assert len(meta["files"]) == n_files
        assert len(gd.stored(collection)) == n_rows
    assert sorted(gd.stored("dnns")["subj"].unique()) == list(gd.PRETRAINED_NETWORKS)
    assert sorted(gd.stored("trained")["subj"].unique()) == sorted(gd.TRAINED_NETWORKS)
    # 67 human files + 198 network files = the 265 CSVs of the release's TF experiment folders
    assert sum(len(gd.csv_files("dnns", e)) for e in gd.experiments("dnns")) == 265
    readme = (gd.data_root() / "README.md").read_text()
    assert "0b88343" in readme and "CC-BY-4.0" in readme
    assert "Creative Commons" in (gd.data_root() / "LICENSE.txt").read_text()


# --------------------------------------------------------------------------- experiments table


def test_experiments_table_matches_the_data():
    table = gd.experiments_table()
    assert len(table) == 19 and table["set"].value_counts().to_dict() == {"lab": 11, "trained": 8}
    for collection, experiments in (
        ("humans", gd.EXPERIMENTS),
        ("trained", gd.TRAINED_EXPERIMENTS),
    ):
        assert gd.experiments(collection) == sorted(experiments)
        data = gd.load(collection, image_id=False)
        for name, e in experiments.items():
            rows = data[data.experiment == name]
            assert set(rows["condition_label"].astype(str)) == set(e.conditions), name
            assert len(e.values) == len(e.conditions)
            if collection == "humans":
                assert tuple(sorted(rows["subj"].unique())) == e.human_observers, name
    assert gd.experiments("dnns") == sorted(gd.EXPERIMENTS)
    cond = gd.conditions_table()
    assert len(cond) == sum(len(e.conditions) for e in gd.EXPERIMENTS.values()) + sum(
        len(e.conditions) for e in gd.TRAINED_EXPERIMENTS.values()
    )


def test_condition_values():
    e = gd.EXPERIMENTS
    assert e["highpass"].parameter_values("inf") == {"inv_sigma": 0.0}
    assert e["highpass"].parameter_values("0.4") == {"inv_sigma": 2.5}
    assert e["contrast-png"].parameter_values("c05") == {"contrast": 0.05}
    assert e["colour"].parameter_values("bw") == {"amount": 1.0}
    assert e["false-colour"].parameter_values("true") == {"amount": 0.0}
    assert e["power-equalisation"].parameter_values("pow") == {"amount": 1.0}
    assert e["noise"].parameter_values("0.35") == {"width": 0.35}
    assert e["eidolon"].parameter_values("4-3-10") == {
        "reach": 4.0,
        "coherence": 0.3,
        "grain": 10.0,
    }
    assert e["eidolon"].groups[e["eidolon"].conditions.index("128-10-10")] == "Eidolon I"
    # raw strings of the `specialised` files
    t = gd.TRAINED_EXPERIMENTS
    assert t["highpass"].label("1.0") == "1" and t["noise-png"].label("0.0") == "0.00"
    assert t["salt-and-pepper-png"].corruption is None
    with pytest.raises(HumanDataError, match="none of"):
        e["lowpass"].label("2")
    cond = gd.conditions_table().set_index(["set", "experiment", "condition"])
    assert cond.loc[("lab", "colour", "cr"), "greyscale"] == False  # noqa: E712
    assert cond.loc[("lab", "colour", "bw"), "greyscale"] == True  # noqa: E712
    assert cond.loc[("lab", "rotation", "90"), "param.angle"] == 90.0


# Table 1 of the paper: main-experiment trials per observer and per category and condition.
TABLE1 = {
    "colour": (1280, 40), "noise": (1280, 10), "contrast": (1280, 10), "eidolon": (3 * 1280, 10),
    "false-colour": (1120, 35), "lowpass": (1280, 10), "highpass": (1280, 10),
    "phase-scrambling": (1120, 10), "power-equalisation": (1120, 35), "rotation": (1280, 20),
    "contrast-png": (1280, 10),
}  # fmt: skip


def test_trial_counts_match_table_1():
    h = gd.load("humans", image_id=False)
    for name, (per_observer, per_cell) in TABLE1.items():
        rows = h[h.experiment == name]
        assert (rows.groupby("subj", observed=True).size() == per_observer).all(), name
        cells = rows.groupby(["subj", "condition_label", "category"], observed=True).size()
        assert (cells == per_cell).all(), name
    # 82,880 trials over the 12 experiments of Table 1 (contrast-png is the 13th data set)
    assert len(h) - (h.experiment == "contrast-png").sum() == 79_040 != 82_880
    assert len(h) == 82_880


def test_no_duplicate_trials():
    for collection in gd.COLLECTIONS:
        d = gd.load(collection)
        assert not d.duplicated(["experiment", "subj", "imagename"]).any()
        assert not d.duplicated(["experiment", "subj", "image_id"]).any()
        assert not d.duplicated(["experiment", "file", "trial"]).any()


# --------------------------------------------------------------------------- published accuracies


# raw-accuracies/ of github.com/rgeirhos/generalisation-humans-DNNs at 0b88343, verbatim, in
# data/geirhos2018_raw_accuracies.txt. TF/*_sums_*: humans and ImageNet networks, summed-probability
# rule; TF/eidolon_*_coh_N_TF.csv ("is.correct") and TF/eidolon_accuracies_sums_TF.csv: ResNet-152
# alone (mean / sum rule).
def _published_tables() -> dict[str, str]:
    text = (Path(__file__).parent / "data" / "geirhos2018_raw_accuracies.txt").read_text()
    tables: dict[str, str] = {}
    name = None
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        if line.startswith("== "):
            name = line[3:]
            tables[name] = ""
        else:
            tables[name] += line + "\n"
    return tables


PUBLISHED_TABLES = _published_tables()
_LABELS = {"colour": "cr", "greyscale": "bw", "opponent": "false", "original": "0",
           "equalised": "pow", "Inf": "inf"}  # fmt: skip


def _published_cells():
    """(collection, experiment, observer, rule, condition, printed value) of every table cell."""
    for name, text in PUBLISHED_TABLES.items():
        trained = name.startswith("fine-tuning/")
        experiment = name.split("/")[1].split("_accuracies")[0]
        coherence = name.split("_coh_")[1].split("_")[0] if "_coh_" in name else None
        rule = "sum" if "_sums" in name else "mean"
        info = (gd.TRAINED_EXPERIMENTS if trained else gd.EXPERIMENTS)[experiment]
        rows = list(csv.reader(io.StringIO(text)))
        header = rows[0]
        for row in rows[1:]:
            label = row[0]
            if experiment == "eidolon" and "-" not in label:
                label = f"{2 ** int(label)}-{coherence}-10"  # rows are log2(reach)
            condition = info.label(_LABELS.get(label, label))
            for observer, printed in zip(header[1:], row[1:], strict=True):
                if observer == "humans":
                    yield "humans", info.human_reference, "humans", rule, condition, printed
                elif observer == "is.correct":
                    yield "dnns", experiment, "resnet152", rule, condition, printed
                else:
                    yield (
                        ("trained" if trained else "dnns"),
                        experiment,
                        observer,
                        rule,
                        condition,
                        printed,
                    )


def test_release_accuracy_tables_reproduced_to_every_printed_digit(acc):
    checked, absent = 0, set()
    for collection, experiment, observer, rule, condition, printed in _published_cells():
        if observer == "all-noise":  # models C1/C2 pooled: not in the compact copy
            absent.add(observer)
            continue
        row = _value(acc, collection, experiment, observer, rule, condition)
        # R prints 15 significant digits; the table holds mean-of-means, equal to pooled here
        assert f"{row.accuracy:.15g}" == printed, (experiment, observer, rule, condition, printed)
        assert f"{row.unit_mean:.15g}" == printed
        checked += 1
    assert checked == 507 and absent == {"all-noise"}


def test_sum_and_mean_rules_differ_for_networks_not_humans(acc):
    a = acc.set_index(["collection", "experiment", "observer", "condition", "rule"])["accuracy"]
    assert a[("dnns", "noise", "resnet152", "0.00", "sum")] == pytest.approx(0.879464285714286)
    assert a[("dnns", "noise", "resnet152", "0.00", "mean")] == pytest.approx(0.8892857142857142)
    humans = acc[acc.observer_type != "network"].pivot_table(
        index=["experiment", "observer", "condition"], columns="rule", values="accuracy"
    )
    assert (humans["sum"] == humans["mean"]).all()


# Figure 4 of the paper: accuracy in percent at one condition per test distortion; columns
# human observers, then models A1-A9 (TRAINED_NETWORKS[:9]); "NA": no human data.
FIGURE4 = """\
colour-png cr 88.5 96.7 90.6 50.0 83.1 86.1 84.2 90.8 10.4 8.1
colour-png bw 86.6 87.8 95.6 94.1 86.2 93.2 87.8 90.5 10.3 9.8
contrast-png c05 47.6 13.1 14.2 89.4 19.6 39.8 17.1 10.2 28.6 29.0
lowpass 7 48.5 18.9 16.1 16.4 78.4 11.9 16.0 9.8 6.9 6.6
highpass 0.7 49.8 21.1 24.7 29.9 11.7 92.6 27.7 8.3 10.4 20.6
phase-scrambling 90 57.4 23.3 28.3 31.2 27.0 46.6 81.4 24.4 7.4 8.9
rotation 90 78.5 36.5 43.3 39.9 31.8 40.4 37.7 89.0 8.5 8.0
salt-and-pepper-png 0.2 NA 6.1 6.4 5.8 7.9 6.2 6.2 6.4 79.4 6.2
noise-png 0.35 45.6 6.2 7.3 6.9 9.0 7.3 6.2 6.0 10.2 80.3
"""


def test_figure_4_reproduced(acc):
    for line in FIGURE4.splitlines():
        experiment, condition, human, *models = line.split()
        info = gd.TRAINED_EXPERIMENTS[experiment]
        condition = info.label(condition)
        # Figure 4's human column takes the JPEG contrast experiment (contrast-png: 54.6%)
        human_exp = "contrast" if experiment == "contrast-png" else info.human_reference
        if human == "NA":
            assert human_exp is None
        else:
            row = _value(acc, "humans", human_exp, "humans", "mean", condition)
            assert f"{100 * row.accuracy:.1f}" == human, (experiment, condition)
        for network, printed in zip(gd.TRAINED_NETWORKS[:9], models, strict=True):
            row = _value(acc, "trained", experiment, network, "mean", condition)
            assert f"{100 * row.accuracy:.1f}" == printed, (experiment, network, printed)


def test_numbers_in_the_paper_text(acc):
    # Fig. 8 caption: human accuracy at uniform noise width 0.1 is 0.75
    assert f"{_value(acc, 'humans', 'noise', 'humans', 'mean', '0.10').accuracy:.2f}" == "0.75"
    # Supplement, JPEG vs PNG: "participants were 2.68% better on average" (contrast-png against
    # the JPEG contrast experiment of the same three observers, all conditions pooled)
    h = gd.load("humans", ["contrast", "contrast-png"], image_id=False)
    h = h[h.subj.isin(gd.EXPERIMENTS["contrast-png"].human_observers)]
    correct = (
        (h.object_response.astype(str) == h.category.astype(str))
        .groupby(h.experiment, observed=True)
        .mean()
    )
    assert f"{100 * (correct['contrast-png'] - correct['contrast']):.2f}" == "2.68"


# data-analysis/plotting_methods/averaging_response_failures.py: share of trials without an
# answer per experiment (the input of the paper's "1.91% of trials per experiment, SD 0.69%").
FAILURES = {
    "colour": "0.0145833333333333", "contrast": "0.01671875", "noise": "0.01296875",
    "eidolon": "0.0109895833333333", "false-colour": "0.0292", "lowpass": "0.0198",
    "highpass": "0.0212", "phase-scrambling": "0.0293", "power-equalisation": "0.0251",
    "rotation": "0.0225",
}  # fmt: skip


def test_no_answer_rates(acc):
    pooled = acc[(acc.observer == "humans") & (acc.rule == "mean")]
    counts = pooled.groupby("experiment")[["n_no_answer", "n"]].sum()
    for experiment, printed in FAILURES.items():
        share = counts.loc[experiment, "n_no_answer"] / counts.loc[experiment, "n"]
        digits = len(printed) - 2 if len(printed) < 10 else None
        text = f"{share:.{digits}f}" if digits else f"{share:.15g}"
        if experiment == "phase-scrambling":
            # the data hold 195 of 6720 (0.0290); 0.0293 would be 197 trials
            assert (counts.loc[experiment, "n_no_answer"], text) == (195, "0.0290")
        else:
            assert text == printed, experiment


def test_error_consistency_repository_numbers(acc):
    # data-analysis.R of wichmann-lab/error-consistency, colour experiment: shared source images
    # 46 (subject-01 vs 02), 46 (01 vs 03), 1280 (02 vs 03: identical stimuli), and the human
    # accuracy range on colour images, 0.8734375 to 0.89375.
    h = gd.load("humans", "colour")
    ids = {
        s: set(h.loc[h.subj == s, "image_id"]) for s in ("subject-01", "subject-02", "subject-03")
    }
    assert len(ids["subject-01"] & ids["subject-02"]) == 46
    assert len(ids["subject-01"] & ids["subject-03"]) == 46
    assert len(ids["subject-02"] & ids["subject-03"]) == 1280
    cr = acc[
        (acc.experiment == "colour") & (acc.observer_type == "human") & (acc.condition == "cr")
    ]
    assert (cr.accuracy.min(), cr.accuracy.max()) == (0.8734375, 0.89375)


# --------------------------------------------------------------------------- pairing


def test_stimulus_pairing():
    # the three ImageNet networks, and the trained ones, answered the same stimuli in the same order
    p = gd.paired_trials("noise", "resnet152", "vgg19")
    assert len(p) == 8960 and (p.trial_a == p.trial_b).all()
    # trained networks: the PNG versions of the same source images and conditions
    q = gd.paired_trials("noise-png", "sixteen01v4", "resnet152", experiment_b="noise")
    assert len(q) == 8960
    # `specialised` is a renamed copy of the network trained on the experiment's distortion
    s = gd.paired_trials("noise-png", "specialised", "sixteen03--uniform-noise-multiple")
    assert len(s) == 8960 and (s.response_a == s.response_b).all()
    assert error_consistency(s.correct_a, s.correct_b)["kappa"] == 1.0
    # an observer against itself
    r = gd.paired_trials("lowpass", "subject-04", "subject-04")
    assert len(r) == 1280 and error_consistency(r.correct_a, r.correct_b)["kappa"] == 1.0
    # humans: subject-02 and subject-03 saw the same stimuli in colour and false-colour
    assert len(gd.paired_trials("colour", "subject-02", "subject-03")) == 1280
    assert len(gd.paired_trials("false-colour", "subject-02", "subject-03")) == 1120
    assert len(gd.paired_trials("colour", "subject-01", "subject-02")) == 22
    # humans and networks share few (source image, condition) pairs
    assert len(gd.paired_trials("noise", "subject-01", "resnet152")) == 42


def test_pairing_with_the_sum_rule_and_errors():
    mean = gd.paired_trials("noise", "resnet152", "googlenet", rule="mean")
    summed = gd.paired_trials("noise", "resnet152", "googlenet", rule="sum")
    assert (mean.response_a != summed.response_a).any()
    d = gd.load("dnns", "noise", ["resnet152"])
    s = d.sort_values(["image_id", "condition_label"], kind="stable")
    assert summed.response_a.tolist() == s.object_response_sums.astype(str).tolist()
    both = gd.load("dnns", "noise", ["resnet152", "vgg19"])
    with pytest.raises(HumanDataError, match="several observers"):
        gd.pair_trials(both, d)
    with pytest.raises(HumanDataError, match="not unique"):
        gd.pair_trials(d, d, on=("condition_label",))
    with pytest.raises(HumanDataError, match="unknown Geirhos observer"):
        gd.paired_trials("noise", "alexnet", "vgg19")
    with pytest.raises(HumanDataError, match="not in Geirhos"):
        gd.paired_trials("noise", "subject-04", "vgg19")


def test_colour_human_error_consistency():
    # subject-02 and subject-03 saw identical colour stimuli. Not a published value (the 2020
    # paper shows human-human κ of these data only in figures): counts from the trials.
    p = gd.paired_trials("colour", "subject-02", "subject-03")
    cr = p[p.condition_label == "cr"]
    r = error_consistency(cr.correct_a, cr.correct_b)
    assert (r["n"], r["p_a"], r["p_b"], r["c_obs"]) == (640, 568 / 640, 559 / 640, 555 / 640)
    c_exp = (568 * 559 + 72 * 81) / 640**2
    assert r["c_exp"] == pytest.approx(c_exp, abs=1e-15)
    assert r["kappa"] == pytest.approx((555 / 640 - c_exp) / (1 - c_exp), abs=1e-12)
    assert round(r["kappa"], 3) == 0.369
    table = gd.consistency_table(
        p.sort_values("condition_label", key=lambda c: c.map({"cr": 0, "bw": 1}))
    )
    assert table["condition_label"].tolist() == ["cr", "bw"] and table["n"].tolist() == [640, 640]
    assert table["kappa"].iloc[0] == r["kappa"]


# --------------------------------------------------------------------------- the build script


def _build_module():
    spec = importlib.util.spec_from_file_location(
        "build_geirhos_data", REPO / "scripts" / "build_geirhos_data.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_build_script_is_deterministic_and_lossless(tmp_path):
    """A release-shaped folder (CSVs written from the shipped copy) builds twice alike."""
    src = _release_folder(tmp_path, "lowpass")
    name = "lowpass-experiment_specialised_session_1.csv"
    trained = src / "geirhos2018-trained" / "lowpass-experiment" / name
    trained.parent.mkdir(parents=True)
    gd.raw_frame("trained", "lowpass", name).to_csv(trained, index=False)
    shutil.copyfile(gd.data_root() / "LICENSE.txt", src / "geirhos2018-humans" / "LICENSE.txt")
    build = _build_module()
    outs = [tmp_path / "a", tmp_path / "b"]
    try:
        for out in outs:
            assert build.main(["--source", str(src), "--out", str(out)]) == 0
    finally:
        gd._stored.cache_clear()
        gd._file_slices.cache_clear()
    for collection in gd.COLLECTIONS:
        a, b = ((o / f"{collection}.parquet").read_bytes() for o in outs)
        assert a == b
    assert (outs[0] / "README.md").read_text() == (outs[1] / "README.md").read_text()
    # the rows equal those of the shipped copy
    for collection in ("humans", "dnns"):
        mine = gd.stored(collection, outs[0]).reset_index(drop=True)
        ref = gd.stored(collection)
        ref = ref[ref.experiment == "lowpass"].reset_index(drop=True)
        for col in mine.columns:
            assert mine[col].astype(str).tolist() == ref[col].astype(str).tolist(), col
    gd._stored.cache_clear()
    gd._file_slices.cache_clear()
    assert build.main(["--source", str(tmp_path / "nothing"), "--out", str(tmp_path / "c")]) == 1


# --------------------------------------------------------------------------- the workflow's table


def test_conditions_table_csv_reproduces_the_published_tables(tmp_path):
    """results/tables/geirhos_conditions.csv: every cell of the release's accuracy tables."""
    from vcrbench.humans.geirhos import stages

    out = tmp_path / "geirhos_conditions.csv"
    stages.conditions_table(out)
    table = pd.read_csv(out, dtype={"condition": str}, keep_default_na=False)
    assert tuple(table.columns) == gd.CONDITIONS_COLUMNS
    assert set(table.decision_rule) == {"sum", "mean", "response"}
    # the ImageNet networks under both rules, everyone else once
    assert set(table.loc[table.collection == "dnns", "decision_rule"]) == {"sum", "mean"}
    assert set(table.loc[table.collection != "dnns", "decision_rule"]) == {"response"}
    assert len(table) == len(table.drop_duplicates(
        ["collection", "experiment", "subject", "decision_rule", "condition"]
    ))  # fmt: skip
    index = table.set_index(["collection", "experiment", "subject", "decision_rule", "condition"])
    checked = 0
    for collection, experiment, observer, rule, condition, printed in _published_cells():
        if observer == "all-noise":
            continue
        rule = rule if collection == "dnns" else gd.RESPONSE_RULE
        row = index.loc[(collection, experiment, observer, rule, condition)]
        assert f"{row.n_correct / row.n:.15g}" == printed, (experiment, observer, condition)
        assert row.accuracy == pytest.approx(float(printed), rel=1e-5)
        checked += 1
    assert checked == 507
    # the mean rule is beside the publication's for every network cell
    networks = table[table.collection == "dnns"]
    assert (networks.decision_rule == "sum").sum() == (networks.decision_rule == "mean").sum()
