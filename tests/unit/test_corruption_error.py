"""ImageNet-C's CE, relative CE and mCE against AlexNet, and means by corruption category."""

import numpy as np
import pandas as pd
import pytest

from vcrbench.corruptions import Param, build_corruption, get_corruption, list_corruptions
from vcrbench.errors import CorruptionError, TableError
from vcrbench.files import io
from vcrbench.tables import corruption_error as ce
from vcrbench.vocab import (
    CATEGORY_COLUMNS,
    CORRUPTION_CATEGORIES,
    IMAGENET_C_BENCHMARK,
    IMAGENET_C_BENCHMARK_CATEGORY,
    IMAGENET_C_MCE_COLUMNS,
)

#: AlexNet's per-corruption errors (mean over severities) as AugMix and others quote them from
#: hendrycks/robustness: the shipped per-severity table must average to these.
PUBLISHED_MEANS = {
    "gaussian_noise": 0.886428, "shot_noise": 0.894468, "impulse_noise": 0.922640,
    "defocus_blur": 0.819880, "glass_blur": 0.826268, "motion_blur": 0.785948,
    "zoom_blur": 0.798360, "snow": 0.866816, "frost": 0.826572, "fog": 0.819324,
    "brightness": 0.564592, "contrast": 0.853204, "elastic_transform": 0.646056,
    "pixelate": 0.717840, "jpeg_compression": 0.606500,
}  # fmt: skip


def test_alexnet_table_is_complete_and_averages_to_the_published_errors():
    per, clean = ce.alexnet_errors()
    assert clean == pytest.approx(0.43478)
    assert set(per["corruption"]) == set(IMAGENET_C_BENCHMARK)
    assert (per.groupby("corruption")["severity"].apply(sorted) == [[1, 2, 3, 4, 5]] * 15).all()
    means = per.groupby("corruption")["error"].mean()
    for name, value in PUBLISHED_MEANS.items():
        assert means[name] == pytest.approx(value, abs=5e-7), name


def test_categories_follow_imagenet_c_and_the_registry_declares_them():
    groups = {
        cat: [c for c in IMAGENET_C_BENCHMARK if ce.category(c) == cat]
        for cat in CORRUPTION_CATEGORIES
    }
    assert groups == {
        "noise": ["gaussian_noise", "shot_noise", "impulse_noise"],
        "blur": ["defocus_blur", "glass_blur", "motion_blur", "zoom_blur"],
        "weather": ["snow", "frost", "fog", "brightness"],
        "digital": ["contrast", "elastic_transform", "pixelate", "jpeg_compression"],
    }
    assert get_corruption("gaussian_blur").category == "blur"
    assert get_corruption("uniform_noise").category == "noise"
    assert get_corruption("geirhos_greyscale").category == "other"
    assert ce.category("my_own_corruption") == "other"
    for name in list_corruptions():
        assert get_corruption(name).category in (*CORRUPTION_CATEGORIES, "other")
        assert ce.category(name) == get_corruption(name).category
        # a benchmark corruption is registered with the category ImageNet-C gives it
        if name in IMAGENET_C_BENCHMARK_CATEGORY:
            assert get_corruption(name).category == IMAGENET_C_BENCHMARK_CATEGORY[name], name


def test_a_corruption_category_is_checked_where_it_is_registered():
    with pytest.raises(CorruptionError, match="category must be one of"):
        build_corruption(
            "odd", lambda im, p, rng: im, [Param("s", 0.0)], source="user",
            domain={"s": [0, 1]}, category="smudge",
        )  # fmt: skip


def accuracy_rows(model, corruption, accs, space="imagenet1k"):
    rows = [(model, corruption, space, str(s), a, 1.0, 10, 10) for s, a in enumerate(accs, 1)]
    rows.append((model, corruption, space, "mean", float(np.mean(accs)), 1.0, 50, 50))
    return rows


def accuracy_table(rows):
    cols = ["model", "corruption", "label_space", "severity", "accuracy", "consistency", "n",
            "n_images"]  # fmt: skip
    return pd.DataFrame(rows, columns=cols)


def test_ce_and_relative_ce_by_hand():
    accs = [0.7, 0.6, 0.5, 0.4, 0.3]  # errors .3 … .7, sum 2.5
    table = accuracy_table(
        accuracy_rows("m", "gaussian_noise", accs)
        + accuracy_rows("m", "gaussian_noise", [0.9] * 5, space="geirhos16")  # not used
        + accuracy_rows("m", "gaussian_blur", accs)  # not a benchmark corruption: no CE
    )
    out = ce.mce_table(table, {"m": 0.2})
    assert list(out.columns) == IMAGENET_C_MCE_COLUMNS
    row = out[out["row"] == "corruption"].iloc[0]
    assert row["corruption"] == "gaussian_noise" and row["category"] == "noise"
    alex = np.array([0.69528, 0.82542, 0.93554, 0.98138, 0.99452])
    assert row["CE"] == pytest.approx(2.5 / alex.sum())
    assert row["relative_CE"] == pytest.approx((2.5 - 5 * 0.2) / (alex.sum() - 5 * 0.43478))
    assert row["error"] == pytest.approx(0.5) and row["alexnet_error"] == pytest.approx(0.886428)
    assert len(out[out["row"] == "corruption"]) == 1  # Gaussian blur and geirhos16 left out
    noise = out[(out["row"] == "category") & (out["category"] == "noise")].iloc[0]
    assert noise["CE"] == pytest.approx(row["CE"])
    assert noise["missing"] == "shot_noise;impulse_noise"
    assert set(out.loc[out["row"] == "category", "category"]) == {"noise"}
    last = out.iloc[-1]
    assert last["row"] == "partial mCE" and last["n_corruptions"] == 1
    assert len(last["missing"].split(";")) == 14
    assert "mCE" not in set(out["row"])


def test_full_benchmark_gives_mce_the_mean_of_the_fifteen():
    rng = np.random.default_rng(0)
    rows = []
    for c in IMAGENET_C_BENCHMARK:
        rows += accuracy_rows("m", c, rng.uniform(0.2, 0.8, 5))
    out = ce.mce_table(accuracy_table(rows), {"m": 0.25})
    per = out[out["row"] == "corruption"]
    last = out.iloc[-1]
    assert last["row"] == "mCE" and last["missing"] == "" and last["n_corruptions"] == 15
    assert last["CE"] == pytest.approx(per["CE"].mean())
    assert last["relative_CE"] == pytest.approx(per["relative_CE"].mean())
    cats = out[out["row"] == "category"].set_index("category")
    assert cats.loc["digital", "CE"] == pytest.approx(
        per.loc[per["category"] == "digital", "CE"].mean()
    )
    # AlexNet's own errors give CE = relative CE = 1 everywhere
    alex, alex_clean = ce.alexnet_errors()
    rows = []
    for c, g in alex.groupby("corruption"):
        rows += accuracy_rows("alexnet", c, 1 - g.sort_values("severity")["error"].to_numpy())
    out = ce.mce_table(accuracy_table(rows), {"alexnet": alex_clean})
    assert np.allclose(out["CE"], 1.0) and np.allclose(out["relative_CE"], 1.0)


def test_mce_errors_name_the_problem():
    rows = accuracy_rows("m", "frost", [0.5] * 5)
    with pytest.raises(TableError, match="no clean error for model 'm'"):
        ce.mce_table(accuracy_table(rows), {})
    with pytest.raises(TableError, match="'m' on 'frost' needs an accuracy at each severity"):
        ce.mce_table(accuracy_table(rows[1:]), {"m": 0.1})


def test_write_mce_table_counts_the_clean_error_on_the_imagenet_c_images(tmp_path):
    clean = pd.DataFrame(
        {"image_id": ["a", "b", "c", "d"], "label": [1, 2, 3, -1], "pred": [1, 0, 0, 5]}
    )
    io.write_parquet(clean, tmp_path / "clean.parquet")
    inc = pd.DataFrame({"image_id": ["a", "b", "d"] * 5})  # c is not in the ImageNet-C sets
    io.write_parquet(inc, tmp_path / "inc.parquet")
    io.write_csv(accuracy_table(accuracy_rows("m", "frost", [0.5] * 5)), tmp_path / "acc.csv")
    out = ce.write_mce_table(
        tmp_path / "acc.csv", {"m": [tmp_path / "inc.parquet"]}, {"m": tmp_path / "clean.parquet"},
        tmp_path / "mce.csv",
    )  # fmt: skip
    assert out["clean_error"].iloc[0] == pytest.approx(0.5)  # a right, b wrong; d unlabelled
    assert pd.read_csv(tmp_path / "mce.csv")["row"].tolist() == [
        "corruption", "category", "partial mCE",
    ]  # fmt: skip
    with pytest.raises(TableError, match="no clean predictions for model 'm'"):
        ce.clean_errors({}, {"m": ["a"]})


def test_clean_accuracies_are_on_the_imagenet_c_images_and_skip_unlabelled_models(tmp_path):
    clean = pd.DataFrame(
        {"image_id": ["a", "b", "c", "d"], "label": [1, 2, 3, -1], "pred": [1, 0, 3, 5]}
    )
    io.write_parquet(clean, tmp_path / "clean.parquet")
    io.write_parquet(pd.DataFrame({"image_id": ["a", "b", "d"] * 5}), tmp_path / "m.parquet")
    io.write_parquet(pd.DataFrame({"image_id": ["d"] * 5}), tmp_path / "u.parquet")
    got = ce.clean_accuracies(
        {"m": [tmp_path / "m.parquet"], "u": [tmp_path / "u.parquet"]},
        {"m": tmp_path / "clean.parquet", "u": tmp_path / "clean.parquet"},
        "imagenet1k",
    )
    # m: a right, b wrong (c is in no ImageNet-C set, d unlabelled); u: only d, so no ratio
    assert got == {("m", "imagenet1k"): pytest.approx(0.5)}


def test_category_table_means_over_corruptions_with_values(tmp_path):
    imagenet_c = accuracy_table(
        accuracy_rows("m", "gaussian_noise", [0.4] * 5)
        + accuracy_rows("m", "uniform_noise", [0.6] * 5)
        + accuracy_rows("m", "geirhos_greyscale", [0.9] * 5)
    )
    metrics = pd.DataFrame(
        {
            "model": ["m", "m", "m"],
            "corruption": ["gaussian_noise", "shot_noise", "brightness"],
            "label_space": ["imagenet1k"] * 3,
            "R_a": [0.5, 0.7, 0.9],
            "HMRI_a": [0.2, np.nan, np.nan],
        }
    )
    out = ce.category_table(imagenet_c, metrics)
    assert list(out.columns) == CATEGORY_COLUMNS
    got = out.set_index(["source", "category", "metric"])
    assert got.loc[("imagenet_c", "noise", "accuracy"), "value"] == pytest.approx(0.5)
    assert got.loc[("imagenet_c", "noise", "accuracy"), "corruptions"] == (
        "gaussian_noise;uniform_noise"
    )
    assert got.loc[("imagenet_c", "other", "accuracy"), "value"] == pytest.approx(0.9)
    assert got.loc[("vcr", "noise", "R_a"), "value"] == pytest.approx(0.6)
    assert got.loc[("vcr", "noise", "HMRI_a"), "n_corruptions"] == 1
    assert ("vcr", "weather", "HMRI_a") not in got.index  # no value: no row
    assert got.loc[("vcr", "weather", "R_a"), "value"] == pytest.approx(0.9)
    # categories in ImageNet-C's order, other last
    assert out.loc[out["source"] == "imagenet_c", "category"].unique().tolist() == [
        "noise", "other",
    ]  # fmt: skip
    metrics.to_csv(tmp_path / "m.csv", index=False)
    written = ce.write_category_table(tmp_path / "m.csv", None, tmp_path / "cat.csv")
    assert set(written["source"]) == {"vcr"}


def test_zsl_ratio_of_reduction_by_hand():
    # Clean accuracy 0.8. Gaussian noise loses 0.2 at every severity: 25 %; shot noise loses
    # 0.1, 0.2, 0.4, 0.5, 0.8 over the severities, mean 0.4: 50 %. Noise: 37.5 %. Defocus: 0 %.
    imagenet_c = accuracy_table(
        accuracy_rows("m", "gaussian_noise", [0.6] * 5)
        + accuracy_rows("m", "shot_noise", [0.7, 0.6, 0.4, 0.3, 0.0])
        + accuracy_rows("m", "defocus_blur", [0.8] * 5)
        # The defended model: clean 0.5 (the defense costs clean accuracy), gaussian noise 0.7 at
        # every severity (0.1 over m's 0.6: a reduction of −12.5 % of m's clean 0.8), shot noise 0.5
        # at every severity (−0.2, −0.1, +0.1, +0.2, +0.5 against m, mean +0.1: −12.5 %): noise
        # −12.5 %; defocus 0.4 (0.4 lost: +50 %).
        + accuracy_rows("m+tvm", "gaussian_noise", [0.7] * 5)
        + accuracy_rows("m+tvm", "shot_noise", [0.5] * 5)
        + accuracy_rows("m+tvm", "defocus_blur", [0.4] * 5)
        # no clean accuracy given: no ratio
        + accuracy_rows("x", "gaussian_noise", [0.1] * 5)
    )
    clean = {("m", "imagenet1k"): 0.8, ("m+tvm", "imagenet1k"): 0.5}
    per = ce.zsl_ratios(imagenet_c, clean, {"m+tvm": "m"}).set_index(["model", "corruption"])
    assert per.loc[("m", "gaussian_noise"), ce.ZSL_RATIO] == pytest.approx(25.0)
    assert per.loc[("m", "shot_noise"), ce.ZSL_RATIO] == pytest.approx(50.0)
    assert np.isnan(per.loc[("m", "shot_noise"), ce.ZSL_DEFENSE_RATIO])  # m has no twin
    assert per.loc[("m+tvm", "gaussian_noise"), ce.ZSL_RATIO] == pytest.approx(-40.0)
    assert per.loc[("m+tvm", "shot_noise"), ce.ZSL_DEFENSE_RATIO] == pytest.approx(-12.5)
    assert np.isnan(per.loc[("x", "gaussian_noise"), ce.ZSL_RATIO])

    out = ce.category_table(imagenet_c, None, clean, {"m+tvm": "m"})
    got = out.set_index(["model", "category", "metric"])["value"]
    assert got[("m", "noise", ce.ZSL_RATIO)] == pytest.approx(37.5)
    assert got[("m", "blur", ce.ZSL_RATIO)] == pytest.approx(0.0)
    assert got[("m+tvm", "noise", ce.ZSL_DEFENSE_RATIO)] == pytest.approx(-12.5)
    assert got[("m+tvm", "blur", ce.ZSL_DEFENSE_RATIO)] == pytest.approx(50.0)
    assert ("m", "noise", ce.ZSL_DEFENSE_RATIO) not in got.index
    assert ("x", "noise", ce.ZSL_RATIO) not in got.index
    assert set(out.loc[out["metric"] == ce.ZSL_RATIO, "source"]) == {"imagenet_c"}
    # Without clean accuracies the table is as before: no ratio rows.
    assert set(ce.category_table(imagenet_c)["metric"]) == {"accuracy", "consistency"}


def test_zsl_ratio_needs_all_five_severities():
    rows = accuracy_rows("m", "gaussian_noise", [0.6] * 5)
    imagenet_c = accuracy_table([r for r in rows if r[3] != "3"])
    per = ce.zsl_ratios(imagenet_c, {("m", "imagenet1k"): 0.8})
    assert per.empty
