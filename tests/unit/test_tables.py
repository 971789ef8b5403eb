"""Tests of vcrbench.tables: the paper's table layouts, formatting, CSV/Markdown/LaTeX output and
the ImageNet-C accuracy table, on small synthetic inputs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vcrbench import tables
from vcrbench.settings import TableSettings

METRICS = ["R_a", "R_p", "HMRI_a", "MRSI_a", "HMRI_p", "MRSI_p"]


def metric_rows(values: dict, corruption="gaussian_noise", reference="geirhos2018-noise"):
    """Metrics table rows: ``values`` maps model -> {metric: value}; imagenet1k and geirhos16 rows,
    HMRI/MRSI only on geirhos16 (as evaluate writes them)."""
    rows = []
    for model, vals in values.items():
        for space in ("imagenet1k", "geirhos16"):
            row = {"model": model, "corruption": corruption, "label_space": space}
            for m in METRICS:
                v = vals.get(m, np.nan)
                if m.startswith(("HMRI", "MRSI")) and (space != "geirhos16" or reference is None):
                    v = np.nan
                row.update({m: v, f"{m}_lo": v - 0.01, f"{m}_hi": v + 0.01})
            row["human_reference"] = reference
            row["reference_how"] = "similarity-class" if reference else None
            rows.append(row)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- formatting


def test_fmt_and_intervals():
    assert tables.fmt(0.12345, 3) == "0.123"
    assert tables.fmt(0.12345, 1) == "0.1"
    assert tables.fmt(np.nan, 3) == tables.MISSING
    assert tables.fmt(None, 3) == tables.MISSING
    assert tables.fmt_interval(0.5, 0.4, 0.6, 3) == "0.500 [0.400, 0.600]"
    assert tables.fmt_interval(0.5, 0.4, 0.6, 1) == "0.5 [0.4, 0.6]"
    assert tables.fmt_interval(0.5, np.nan, 0.6, 3) == "0.500"
    assert tables.fmt_interval(np.nan, 0.4, 0.6, 3) == tables.MISSING


def test_latex_text_escapes_and_spells_out_unicode():
    assert tables.latex_text("efficientnet_lite0 & 50%") == r"efficientnet\_lite0 \& 50\%"
    assert tables.latex_text("R̂_a over Δv") == r"$\hat{\mathcal{R}}_a$ over $\Delta_v$"
    assert tables.latex_text("a → b") == r"a $\rightarrow$ b"
    assert tables.latex_text(tables.MISSING) == "--"
    assert tables.display_corruption("gaussian_noise") == "Gaussian noise"


# --------------------------------------------------------------------------- Table 2


def coverage_rows():
    return pd.DataFrame(
        {
            "corruption": ["gaussian_blur", "gaussian_blur", "frost", "frost", "blur"],
            "source": ["vcr", "imagenet-c", "vcr", "imagenet-c", "vcr"],
            "n_images": [50000, 250000, 50000, 250000, 50000],
            "coverage": [38 / 39, 22 / 39, 1.0, 17 / 39, 0.9],
            "covered_bins": [38, 22, 39, 17, 35],
            "bins": 40,
            "min_count": 20,
            "denominator": 39,
        }
    )


def test_coverage_table_layout_of_table_2():
    table = tables.table2_coverage(coverage_rows())
    # sorted by ImageNet-C coverage; a corruption without ImageNet-C comes last
    assert list(table.data["corruption"]) == ["gaussian_blur", "frost", "blur"]
    assert table.data.loc[0, "imagenet_c"] == pytest.approx(0.564)
    assert table.data.loc[0, "vcr"] == pytest.approx(0.974)
    assert int(table.data.loc[0, "vcr_covered_bins"]) == 38
    assert list(table.display.iloc[0]) == ["Gaussian blur", "0.564", "0.974"]
    assert table.display.iloc[2, 1] == tables.MISSING
    md = table.to_markdown()
    assert "| Gaussian blur" in md and "/ 39" in md
    tex = table.to_latex()
    assert r"\begin{tabular}{lrr}" in tex and "Blur & -- & 0.900" in tex
    assert r"\label{tab:coverage}" in tex and "$\\Delta_v$" in tex
    with pytest.raises(tables.TableError, match="covered_bins"):
        tables.table2_coverage(coverage_rows().drop(columns="covered_bins"))


def test_table_2_beside_imagenet_c_the_first_n_draws_of_a_stratified_set():
    rows = coverage_rows()
    draws = rows[rows["source"] == "vcr"].assign(
        source="vcr-parameter-uniform", coverage=[0.5, 0.6, 0.4], covered_bins=[20, 23, 16]
    )
    table = tables.table2_coverage(pd.concat([rows, draws], ignore_index=True))
    assert list(table.display.columns) == [
        "Corruption",
        "ImageNet-C",
        "VCR, first N draws c ~ U(C)",
        "VCR test set",
    ]
    assert list(table.display.iloc[0]) == ["Gaussian blur", "0.564", "0.500", "0.974"]
    assert int(table.data.loc[0, "vcr_parameter_uniform_covered_bins"]) == 20
    assert "first N draws" in table.caption
    # without such rows the table keeps its layout (the default run's bytes)
    plain = tables.table2_coverage(rows)
    assert "vcr_parameter_uniform" not in plain.data and "vcr_set" not in plain.data


@pytest.mark.parametrize(
    ("row", "vcr_set", "display"),
    [
        ("motion_blur", "motion_blur_line", "Motion blur"),
        ("glass_blur", "glass_blur_toolbox", "Glass blur"),
    ],
)
def test_table_2_pairs_imagenet_c_sets_with_the_toolboxs_vcr_set(row, vcr_set, display):
    """The paper's VCR sets of motion and glass blur are the toolbox generator's functions."""
    rows = pd.DataFrame(
        {
            "corruption": [row, row, vcr_set],
            "source": ["vcr", "imagenet-c", "vcr"],
            "n_images": [50000, 250000, 50000],
            "coverage": [0.5, 13 / 39, 38 / 39],
            "covered_bins": [20, 13, 38],
            "bins": 40,
            "min_count": 20,
            "denominator": 39,
        }
    )
    table = tables.table2_coverage(rows)
    assert table.data["corruption"].tolist() == [row]  # one row, the paper's
    got = table.data.iloc[0]
    assert got["vcr"] == pytest.approx(0.974) and got["imagenet_c"] == pytest.approx(0.333)
    assert got["vcr_set"] == vcr_set
    assert table.display.iloc[0, 0] == f"{display} (VCR: {vcr_set})"
    # without ImageNet-C's sets of the row nothing is paired
    alone = tables.table2_coverage(rows[rows["source"] == "vcr"])
    assert sorted(alone.data["corruption"]) == [row, vcr_set]


# --------------------------------------------------------------------------- metrics and leaderboards


def test_metrics_table_prints_intervals_and_references():
    rows = metric_rows({"m1": {"R_a": 0.61, "R_p": 0.7, "HMRI_a": 0.8, "MRSI_a": 0.05}})
    table = tables.metrics_table(rows)
    geirhos = table.display[table.display["Labels"] == "geirhos16"].iloc[0]
    assert geirhos["HMRI_a"] == "0.800 [0.790, 0.810]"
    assert geirhos["HMRI_p"] == tables.MISSING
    assert geirhos["Human reference"] == "geirhos2018-noise (similarity-class)"
    assert table.data["R_a"].iloc[0] == 0.61  # numbers in the CSV
    assert r"HMRI$_a$" in table.to_latex()
    # figures.digits, through the tables' settings: the cells and the CSV's numbers
    one = tables.metrics_table(rows, TableSettings(digits=1))
    assert one.display[one.display["Labels"] == "geirhos16"].iloc[0]["HMRI_a"] == "0.8 [0.8, 0.8]"
    assert one.data["R_a"].iloc[0] == 0.6
    built = tables.paper_tables(rows, coverage_rows(), ["gaussian_noise"], TableSettings(digits=1))
    board = built["leaderboard/gaussian_noise"]
    assert board.data["R_a"].iloc[0] == 0.6 and built["table2_coverage"].data.equals(
        tables.table2_coverage(coverage_rows(), TableSettings(digits=1)).data
    )


def test_leaderboard_ranks_and_ties():
    rows = metric_rows(
        {
            "b": {"R_a": 0.5, "R_p": 0.9, "HMRI_a": 0.7},
            "a": {"R_a": 0.5, "R_p": 0.8, "HMRI_a": 0.9},
            "c": {"R_a": 0.7, "R_p": 0.1, "HMRI_a": 0.6},
        }
    )
    board = tables.leaderboard(
        rows,
        "gaussian_noise",
        families={"a": "vit"},
        settings=TableSettings(label_space="imagenet1k"),
    )
    assert list(board.data["model"]) == ["c", "a", "b"]  # ties by name
    assert list(board.data["rank"]) == [1, 2, 2]
    assert list(board.data["family"]) == ["other", "vit", "other"]
    assert board.data.loc[0, "HMRI_a"] == 0.6  # from the geirhos16 rows
    assert "HMRI_p" not in board.display  # no values: no column
    by_hmri = tables.leaderboard(
        rows,
        "gaussian_noise",
        settings=TableSettings(label_space="imagenet1k", leaderboard_sort="HMRI_a"),
    )
    assert list(by_hmri.data["model"]) == ["a", "b", "c"]


def test_leaderboard_without_human_reference_ranks_by_r_a():
    rows = metric_rows({"x": {"R_a": 0.2}, "y": {"R_a": 0.4}}, corruption="frost", reference=None)
    board = tables.leaderboard(
        rows, "frost", settings=TableSettings(label_space="imagenet1k", leaderboard_sort="HMRI_a")
    )
    assert list(board.data["model"]) == ["y", "x"]
    assert not any(c.startswith(("HMRI", "MRSI")) for c in board.display.columns)
    assert "no human reference" in board.caption
    with pytest.raises(tables.TableError, match="'snow'"):
        tables.leaderboard(rows, "snow")
    with pytest.raises(tables.TableError, match="cub200"):
        tables.leaderboard(rows, "frost", settings=TableSettings(label_space="cub200"))


# --------------------------------------------------------------------------- Table 3


def test_retraining_table_layout_and_improvements():
    rows = pd.concat(
        [
            metric_rows({"base": {"R_a": 0.5, "R_p": 0.6, "HMRI_a": 0.6, "MRSI_a": 0.01}}),
            metric_rows({"tuned": {"R_a": 0.6, "R_p": 0.55, "HMRI_a": 0.7, "MRSI_a": 0.01}}),
            metric_rows({"base": {"R_a": 0.4, "R_p": 0.5}}, corruption="frost", reference=None),
            metric_rows({"tuned": {"R_a": 0.45, "R_p": 0.5}}, corruption="frost", reference=None),
            metric_rows({"base": {"R_a": 0.3, "R_p": 0.3}}, corruption="snow", reference=None),
        ]
    )
    table = tables.retraining_table(
        rows, {"tuned": "base"}, settings=TableSettings(label_space="imagenet1k")
    )
    # snow has no fine-tuned results: left out
    assert list(table.data["corruption"].unique()) == ["frost", "gaussian_noise"]
    assert list(table.data["phase"]) == ["before", "after", "before", "after"]
    noise = table.data[table.data["corruption"] == "gaussian_noise"].set_index("phase")
    assert noise.loc["after", "HMRI_a"] == 0.7 and noise.loc["before", "R_a"] == 0.5
    assert table.display.shape == (2, 13)  # corruption + 2 phases x 2 properties x 3 metrics
    bold = table.bold.set_axis(table.display.columns, axis=1)
    group = "base → tuned"
    assert bold.loc[1, f"{group}|after|a|R"] and bold.loc[1, f"{group}|after|a|HMRI"]
    assert not bold.loc[1, f"{group}|after|p|R"]  # 0.55 < 0.6: no improvement
    assert not bold.loc[1, f"{group}|after|a|MRSI"]  # equal
    assert not bold.loc[1, f"{group}|before|a|R"]
    md = table.to_markdown()
    assert "**0.600**" in md and "R̂_a before" in md and "base → tuned" in md
    tex = table.to_latex()
    assert r"\textbf{0.700}" in tex and r"\multicolumn{6}{c}{Before retraining}" in tex
    assert r"\multicolumn{3}{c}{Prediction consistency}" in tex
    with pytest.raises(tables.TableError, match="'ghost'"):
        tables.retraining_table(rows, {"ghost": "base"})
    with pytest.raises(tables.TableError, match="no .*pairs"):
        tables.retraining_table(rows, {})


def test_retraining_table_one_fine_tuned_model_per_corruption():
    """The paper's Table 3: each base fine-tuned once per corruption; a row shows the model
    trained on that row's corruption, under one column group per base."""
    parts = []
    for c, before, after in (("frost", 0.4, 0.5), ("glass_blur", 0.3, 0.45)):
        parts.append(metric_rows({"R50": {"R_a": before, "R_p": 0.5}}, corruption=c))
        for tuned_on in ("frost", "glass_blur"):
            value = after if tuned_on == c else before - 0.1  # the other run does worse here
            parts.append(
                metric_rows({f"R50_ft_{tuned_on}": {"R_a": value, "R_p": 0.5}}, corruption=c)
            )
    rows = pd.concat(parts)
    pairs = {"R50_ft_frost": "R50", "R50_ft_glass_blur": "R50"}
    trained_on = {"R50_ft_frost": ["frost"], "R50_ft_glass_blur": ["glass_blur"]}
    table = tables.retraining_table(
        rows, pairs, trained_on=trained_on, settings=TableSettings(label_space="imagenet1k")
    )
    assert table.display.shape == (2, 13)  # one group: the base
    after = table.display.set_index("corruption")["R50|after|a|R"]
    assert list(after) == ["0.500", "0.450"]
    assert list(table.data["finetuned_model"]) == ["R50_ft_frost"] * 2 + ["R50_ft_glass_blur"] * 2
    assert "R50_ft_frost on frost" in table.caption
    # without trained_on the rows are ambiguous: one group per fine-tuned model
    wide = tables.retraining_table(rows, pairs, settings=TableSettings(label_space="imagenet1k"))
    assert wide.display.shape == (2, 25)


# --------------------------------------------------------------------------- writing


def test_write_table_is_byte_stable_and_checks_suffixes(tmp_path):
    table = tables.table2_coverage(coverage_rows())
    first = tables.write_table(table, [tmp_path / "a.csv", tmp_path / "a.md", tmp_path / "a.tex"])
    again = tables.write_table(table, [tmp_path / "b.csv", tmp_path / "b.md", tmp_path / "b.tex"])
    for p, q in zip(first, again, strict=True):
        assert p.read_bytes() == q.read_bytes()
    assert pd.read_csv(first[0])["vcr_covered_bins"].tolist() == [38, 39, 35]
    with pytest.raises(tables.TableError, match="a.xlsx"):
        tables.write_table(table, [tmp_path / "a.xlsx"])
    assert not (tmp_path / "a.xlsx").exists()


def test_write_tables_by_name(tmp_path):
    built = tables.paper_tables(
        metric_rows({"m": {"R_a": 0.5, "R_p": 0.5}}),
        coverage_rows(),
        ["gaussian_noise"],
        settings=TableSettings(label_space="imagenet1k"),
    )
    assert set(built) == {"table2_coverage", "metrics", "leaderboard/gaussian_noise"}
    paths = [tmp_path / "table2_coverage.md", tmp_path / "leaderboard" / "gaussian_noise.tex"]
    tables.write_tables(built, paths, root=tmp_path)
    assert all(p.is_file() for p in paths)
    with pytest.raises(tables.TableError, match="leaderboard/frost"):
        tables.write_tables(built, [tmp_path / "leaderboard" / "frost.csv"], root=tmp_path)


def test_r_hat_beside_hmri_is_in_the_humans_label_space():
    rows = metric_rows({"m": {"R_a": 0.5, "R_p": 0.6, "HMRI_a": 0.8}, "n": {"R_a": 0.4}})
    rows = pd.concat([rows, metric_rows({"m": {"R_a": 0.3}}, corruption="frost", reference=None)])
    in16 = rows["label_space"] == "geirhos16"
    for c in ("R_a", "R_a_lo", "R_a_hi"):
        rows.loc[in16, c] -= 0.2  # the 16-class R̂ differs from the ImageNet-1k one
    board = tables.leaderboard(
        rows, "gaussian_noise", settings=TableSettings(label_space="imagenet1k")
    ).data
    m = board.set_index("model").loc["m"]
    assert m["R_a"] == pytest.approx(0.3) and m["R_a_imagenet1k"] == pytest.approx(0.5)
    assert m["R_a_imagenet1k_lo"] == pytest.approx(0.49) and m["R_label_space"] == "geirhos16"
    shown = tables.leaderboard(
        rows, "gaussian_noise", settings=TableSettings(label_space="imagenet1k")
    ).display
    assert "R̂_a (imagenet1k)" in shown.columns
    frost = tables.leaderboard(rows, "frost", settings=TableSettings(label_space="imagenet1k")).data
    assert frost.loc[0, "R_a"] == pytest.approx(0.3) and "R_a_imagenet1k" not in frost
    assert frost.loc[0, "R_label_space"] == "imagenet1k"
    same = tables.leaderboard(
        rows, "gaussian_noise", settings=TableSettings(label_space="geirhos16")
    ).data
    assert "R_a_geirhos16" not in same and (same["R_label_space"] == "geirhos16").all()
    table3 = tables.retraining_table(
        pd.concat([rows, rows.assign(model=rows["model"] + "-ft")]), {"m-ft": "m"}, settings=TableSettings(label_space="imagenet1k"),
    ).data.set_index(["corruption", "phase"])  # fmt: skip
    assert table3.loc[("gaussian_noise", "before"), "R_a"] == pytest.approx(0.3)
    assert table3.loc[("gaussian_noise", "before"), "R_a_imagenet1k"] == pytest.approx(0.5)
    assert table3.loc[("frost", "before"), "R_a"] == pytest.approx(0.3)


def test_table3_changes_of_r_hat_follow_its_label_space():
    rows = metric_rows({"m": {"R_a": 0.5, "HMRI_a": 0.8}})
    rows = pd.concat([rows, metric_rows({"m": {"R_a": 0.3}}, corruption="frost", reference=None)])
    rows = pd.concat([rows, rows.assign(model="m-ft")])

    def diff(corruption, space, value):
        return {
            "model_a": "m-ft", "model_b": "m", "relation": "fine-tuned vs base",
            "corruption": corruption, "label_space": space, "metric": "R_a",
            "diff": value, "diff_lo": value - 0.01, "diff_hi": value + 0.01,
        }  # fmt: skip

    differences = pd.DataFrame(
        [
            diff("gaussian_noise", "imagenet1k", 0.1),
            diff("gaussian_noise", "geirhos16", 0.2),
            diff("frost", "imagenet1k", 0.3),
            diff("frost", "geirhos16", 0.4),
        ]
    )
    data = tables.retraining_table(
        rows,
        {"m-ft": "m"},
        differences=differences,
        settings=TableSettings(label_space="imagenet1k"),
    ).data.set_index(["corruption", "phase"])
    assert data.loc[("gaussian_noise", "change"), "R_a"] == pytest.approx(0.2)  # beside HMRI
    assert data.loc[("frost", "change"), "R_a"] == pytest.approx(0.3)  # no human reference
