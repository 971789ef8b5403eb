"""Tests of vcrbench.figures: style options, every figure on small synthetic inputs, readability
at 25 models (no overlapping text, legends off the data), byte-identical output, and the file-level
entry points the workflow calls."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest

from vcrbench import estimation
from vcrbench.estimation import Estimate
from vcrbench.estimation.storage import HumanEstimate, write_human_estimate
from vcrbench.figures import build, layout, options
from vcrbench.figures.bars import hmri_mrsi_figure
from vcrbench.figures.curves import curves_figure
from vcrbench.figures.histograms import dv_histogram_figure
from vcrbench.figures.humans import human_similarity_figure, similarity_table
from vcrbench.figures.scatter import imagenet_c_scatter_figure, scatter_data
from vcrbench.figures.style import FAMILY_COLORS, Style, save
from vcrbench.files import io
from vcrbench.settings import EstimationSettings

from ..support import figure_checks

FAMILIES = ["vit", "supervised", "swsl", "adversarial", "clip", "other", "retrained"]
METRICS = ["R_a", "R_p", "HMRI_a", "MRSI_a", "HMRI_p", "MRSI_p"]


# --------------------------------------------------------------------------- synthetic inputs


def model_names(n):
    """n names, some long (the paper's longest is ~40 characters)."""
    return [
        f"{FAMILIES[i % len(FAMILIES)]}_model_{i:02d}"
        + ("_ConvNeXt-L-ConvStem" if i % 5 == 0 else "")
        for i in range(n)
    ]


def families_of(names):
    return {n: n.split("_model_")[0] for n in names}


def metrics_table(names, corruption="gaussian_noise", seed=0, reference="ref-a", consistency=True):
    rng = np.random.default_rng(seed)
    rows = []
    for name in names:
        for space in ("imagenet1k", "geirhos16"):
            row = {"model": name, "corruption": corruption, "label_space": space}
            for m in METRICS:
                v = rng.uniform(0.2, 0.95)
                row.update({m: v, f"{m}_lo": v - 0.03, f"{m}_hi": min(1.0, v + 0.03)})
            human = ["HMRI_a", "MRSI_a"] + (["HMRI_p", "MRSI_p"] if consistency else [])
            for m in ["HMRI_a", "MRSI_a", "HMRI_p", "MRSI_p"]:
                if space != "geirhos16" or m not in human or reference is None:
                    row.update({m: np.nan, f"{m}_lo": np.nan, f"{m}_hi": np.nan})
            row["human_reference"] = reference
            row["reference_how"] = "own" if reference else None
            rows.append(row)
    return pd.DataFrame(rows)


def curve_rows(names, space="geirhos16", seed=0):
    rng = np.random.default_rng(seed)
    v = np.linspace(0, 1, 101)
    frames = []
    for name in names:
        slope, turn = rng.uniform(4, 12), rng.uniform(0.4, 0.9)
        s = 1 / (1 + np.exp(slope * (v - turn)))
        for prop in ("accuracy", "consistency"):
            frames.append(
                pd.DataFrame(
                    {
                        "model": name,
                        "label_space": space,
                        "property": prop,
                        "v": v,
                        "s": s,
                        "lo": np.clip(s - 0.05, 0, 1),
                        "hi": np.clip(s + 0.05, 0, 1),
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)


def human_curve(turn=0.8):
    v = np.linspace(0, 1, 101)
    s = 0.9 / (1 + np.exp(10 * (v - turn)))
    return pd.DataFrame({"v": v, "s": s, "lo": s * 0.95, "hi": np.minimum(s * 1.05, 1)})


def estimate(turn, seed, n_boot=50, width=0.02):
    """A synthetic Estimate: a logistic curve and replicates around it (no fitting: fast)."""
    grid = np.linspace(0, 1, 201)
    values = 0.9 / (1 + np.exp(12 * (grid - turn)))
    rng = np.random.default_rng(seed)
    reps = (values + rng.normal(0, width, (n_boot, 1))).astype(np.float32)
    lo, hi = (np.quantile(reps, q, axis=0) if n_boot else values for q in (0.025, 0.975))
    return Estimate(
        bins=pd.DataFrame(),
        grid=grid,
        values=values,
        lo=lo,
        hi=hi,
        level=0.95,
        area=float(values.mean()),
        area_lo=np.nan,
        area_hi=np.nan,
        replicates=reps.reshape(n_boot, len(grid)),
        anchor0=0.9,
        anchor1=None,
        lam=1.0,
        min_count=3,
        weighting="uniform",
        n=1000,
        n_missing=0,
        n_groups=None,
        seed=seed,
    )


def histograms(corruption="gaussian_noise"):
    rows = []
    edges = np.linspace(0, 1, 41)
    for source, weights in (
        ("vcr", np.ones(40)),
        ("imagenet-c", np.r_[np.zeros(15), np.ones(15), np.zeros(10)]),
    ):
        frac = weights / weights.sum()
        for b in range(40):
            rows.append(
                (corruption, source, b, edges[b], edges[b + 1], int(frac[b] * 200), frac[b])
            )
    return pd.DataFrame(
        rows, columns=["corruption", "source", "bin", "dv_low", "dv_high", "count", "fraction"]
    )


# --------------------------------------------------------------------------- readability checks


def all_texts(fig):
    """Every text the figure shows (titles, labels, ticks, legends, notes)."""
    return figure_checks.drawn_texts(fig)


def assert_readable(fig, texts=None):
    """No two texts overlap, and every text lies inside the figure."""
    texts = all_texts(fig) if texts is None else texts
    boxes = figure_checks.text_bboxes(fig, texts)
    pairs = figure_checks.overlapping_pairs(boxes)
    shown = [(texts[i].get_text(), texts[j].get_text()) for i, j in pairs[:5]]
    assert not pairs, f"overlapping texts: {shown}"
    fig_box = fig.bbox
    outside = [
        t.get_text()
        for t, b in zip(texts, boxes, strict=True)
        if b.x0 < fig_box.x0 - 1
        or b.x1 > fig_box.x1 + 1
        or b.y0 < fig_box.y0 - 1
        or b.y1 > fig_box.y1 + 1
    ]
    assert not outside, f"texts outside the figure: {outside[:5]}"


def assert_legends_off_axes(fig):
    renderer = fig.canvas.get_renderer()
    fig.draw_without_rendering()
    legends = fig.findobj(lambda a: a.__class__.__name__ == "Legend")
    assert legends
    for leg in legends:
        lb = leg.get_window_extent(renderer)
        for ax in fig.get_axes():
            ab = ax.get_window_extent(renderer)
            assert not lb.overlaps(ab), "a legend covers an axes"


# --------------------------------------------------------------------------- options and style


def test_options_fill_defaults_and_name_bad_keys():
    assert options.check_options(None) == {**options.defaults(), "formats": ["png", "pdf"]}
    with pytest.raises(options.FigureConfigError, match="figures.formats"):
        options.check_options({"formats": ["pdf"]})
    with pytest.raises(options.FigureConfigError, match="figures.formats"):
        options.check_options({"formats": ["png", "jpg"]})
    with pytest.raises(options.FigureConfigError, match="figures.family_colors.vit"):
        options.check_options({"family_colors": {"vit": "not-a-colour"}})
    with pytest.raises(options.FigureConfigError, match="figures.dpis"):
        options.check_options({"dpis": 100})
    with pytest.raises(options.FigureConfigError, match="figures.leaderboard_sort"):
        options.check_options({"leaderboard_sort": "HMRI"})


def test_family_colours_are_stable_and_configurable():
    style = Style.from_config({"family_colors": {"vit": "black"}})
    assert style.family_color("vit") == "#000000"
    assert style.family_color("supervised") == FAMILY_COLORS["supervised"]
    # unknown families: a fallback colour chosen by sorted position among the unknown ones
    a = style.family_color("zeta", ["alpha", "zeta"])
    assert a == style.family_color("zeta", ["zeta", "alpha", "vit"])
    assert a != style.family_color("alpha", ["alpha", "zeta"])
    colours = style.model_colors({"m1": "vit", "m2": "vit", "m3": "vit", "x": "clip"})
    assert len({colours["m1"], colours["m2"], colours["m3"]}) == 3  # shades tell members apart
    assert colours["x"] == FAMILY_COLORS["clip"]


def test_figure_targets_of_the_default_config():
    from vcrbench import plan
    from vcrbench.plan.figures import figure_targets

    config = plan.load("config/config.yaml")
    targets = figure_targets(config)
    assert "results/figures/curves/frost.png" in targets
    assert "results/figures/curves/frost.pdf" in targets
    assert "results/figures/hmri_mrsi/gaussian_noise.png" in targets
    # brightness has no human reference: no HMRI chart
    assert not any("hmri_mrsi/brightness" in t for t in targets)
    assert "results/figures/humans/similarity.png" in targets
    assert "results/tables/paper/leaderboard/frost.tex" in targets
    assert "results/tables/imagenet_c_accuracy.csv" in targets
    assert len(targets) == len(set(targets))
    config["figures"] = {"formats": ["png", "svg"]}
    assert "results/figures/curves/frost.svg" in figure_targets(config)
    assert "results/figures/curves/frost.pdf" not in figure_targets(config)


# --------------------------------------------------------------------------- figures


def test_hmri_mrsi_bars_sorted_coloured_and_readable_at_25_models():
    names = model_names(25)
    style = Style()
    with style.context():
        fig = hmri_mrsi_figure(metrics_table(names), "gaussian_noise", families_of(names), style)
        axes = fig.get_axes()
        assert len(axes) == 4
        labels = [t.get_text() for t in axes[0].get_yticklabels()]
        assert sorted(labels) == sorted(names)
        rows = metrics_table(names)
        hmri = rows[rows.label_space == "geirhos16"].set_index("model")["HMRI_a"]
        # best on top: y positions decrease with rank
        ranked = sorted(names, key=lambda m: -hmri[m])
        ys = {t.get_text(): t.get_position()[1] for t in axes[0].get_yticklabels()}
        assert [m for m, _ in sorted(ys.items(), key=lambda kv: -kv[1])] == ranked
        # bar colours follow the families
        bar = axes[0].patches[0]
        assert bar.get_facecolor()[:3] != (0, 0, 0)
        assert_readable(fig)
        assert_legends_off_axes(fig)
        # height grows with the number of models
        small = hmri_mrsi_figure(
            metrics_table(names[:5]), "gaussian_noise", families_of(names), style
        )
        assert fig.get_figheight() > small.get_figheight() + 2


def test_hmri_mrsi_without_consistency_or_reference_says_so():
    names = model_names(4)
    style = Style()
    with style.context():
        fig = hmri_mrsi_figure(
            metrics_table(names, consistency=False), "gaussian_noise", families_of(names), style
        )
        assert len(fig.get_axes()) == 2  # the consistency panels are left out ...
        texts = " ".join(t.get_text() for t in all_texts(fig))
        assert "no consistency curve" in texts  # ... with a note
        assert_readable(fig)
        none = hmri_mrsi_figure(
            metrics_table(names, reference=None), "frost", families_of(names), style
        )
        assert none.get_axes() == []
        assert "No human reference" in " ".join(t.get_text() for t in all_texts(none))


def test_hmri_mrsi_marks_models_without_values():
    names = model_names(4)
    table = metrics_table(names)
    table.loc[(table.model == names[1]) & (table.label_space == "geirhos16"), "MRSI_a"] = np.nan
    style = Style()
    with style.context():
        fig = hmri_mrsi_figure(table, "gaussian_noise", families_of(names), style)
        assert "n/a" in [t.get_text() for t in fig.get_axes()[1].texts]


def test_curves_figure_with_human_band_and_25_models():
    names = model_names(25)
    style = Style()
    with style.context():
        fig = curves_figure(
            curve_rows(names),
            families_of(names),
            style,
            corruption="gaussian_noise",
            label_space="geirhos16",
            human={"accuracy": human_curve()},
            human_name="ref-a",
            human_level=0.95,
        )
        ax_a, ax_p = fig.get_axes()
        assert len(ax_a.get_lines()) == 26  # 25 models + the human curve
        assert len(ax_a.collections) >= 1  # the human band
        assert "no human curve" in ax_p.get_title(loc="left")
        assert ax_a.get_xlabel() and ax_a.get_ylabel()
        legend_texts = [t.get_text() for t in fig.legends[0].get_texts()]
        assert set(names) <= set(legend_texts)
        assert_readable(fig)
        assert_legends_off_axes(fig)


def test_curves_figure_lists_models_without_the_label_space():
    names = model_names(3)
    rows = pd.concat([curve_rows(names[:2]), curve_rows(names[2:], space="imagenet1k")])
    style = Style(model_bands=True)
    with style.context():
        fig = curves_figure(
            rows, families_of(names), style, corruption="c", label_space="geirhos16"
        )
        assert len(fig.get_axes()[0].get_lines()) == 2
        assert names[2] in " ".join(t.get_text() for t in all_texts(fig))


def test_dv_histograms_two_panels_with_coverage():
    cov = pd.DataFrame(
        {
            "corruption": ["gaussian_noise"] * 2,
            "source": ["vcr", "imagenet-c"],
            "coverage": [0.974, 0.564],
        }
    )
    style = Style()
    with style.context():
        fig = dv_histogram_figure(histograms(), "gaussian_noise", style, coverage=cov)
        left, right = fig.get_axes()
        assert "ImageNet-C" in left.get_title(loc="left") and "0.564" in left.get_title(loc="left")
        assert "VCR" in right.get_title(loc="left") and "0.974" in right.get_title(loc="left")
        assert left.get_ylabel().startswith("images (%")
        heights = [p.get_height() for p in right.patches]
        assert sum(heights) == pytest.approx(100)
        assert_readable(fig)
        with pytest.raises(ValueError, match="frost"):
            dv_histogram_figure(histograms(), "frost", style)


def test_dv_histograms_show_a_stratified_sets_first_n_uniform_draws_between():
    rows = histograms()
    draws = rows[rows["source"] == "imagenet-c"].assign(source="vcr-parameter-uniform")
    style = Style()
    with style.context():
        fig = dv_histogram_figure(pd.concat([rows, draws]), "gaussian_noise", style)
        titles = [ax.get_title(loc="left") for ax in fig.get_axes()]
        assert [t.split("\n")[0] for t in titles] == [
            "ImageNet-C (5 severities)",
            "VCR, first N draws c ~ U(C)",
            "VCR test set",
        ]
        assert_readable(fig)


def test_imagenet_c_scatter_labels_do_not_overlap_at_25_models():
    names = model_names(25)
    rng = np.random.default_rng(3)
    inc = pd.DataFrame(
        {
            "model": names,
            "corruption": "gaussian_noise",
            "label_space": "imagenet1k",
            "severity": "mean",
            "accuracy": rng.uniform(0.3, 0.7, 25),
        }
    )
    metrics = metrics_table(names)
    data = scatter_data(inc, metrics, "gaussian_noise", "imagenet1k")
    assert len(data) == 25
    style = Style()
    with style.context():
        fig = imagenet_c_scatter_figure(
            inc, metrics, "gaussian_noise", families_of(names), style, label_space="imagenet1k"
        )
        for ax in fig.get_axes():
            labels = [t for t in ax.texts if t.get_text() in names]
            assert len(labels) == 25
            assert "Spearman" in ax.get_title(loc="left")
        assert_readable(fig)
        assert_legends_off_axes(fig)


def test_label_points_separates_coincident_points():
    style = Style()
    with style.context():
        from vcrbench.figures.style import new_figure

        fig = new_figure(4, 3)
        ax = fig.add_subplot()
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        labels = layout.label_points(ax, [0.3] * 6, [0.5] * 6, [f"model {i}" for i in range(6)])
        boxes = figure_checks.text_bboxes(fig, labels)
        assert not figure_checks.overlapping_pairs(boxes)
        # one right and one left of the point at its height; the other four moved, with leaders
        assert sum(a.arrow_patch is not None for a in labels) == 4


def test_similarity_table_and_figure():
    est = {
        "ref-noise": {"accuracy": estimate(0.8, 1)},
        "ref-noise2": {"accuracy": estimate(0.8, 2)},
        "ref-blur": {"accuracy": estimate(0.45, 3)},
        "ref-none": {"accuracy": estimate(0.6, 4, n_boot=0)},
    }
    info = {
        "ref-noise": {"corruption": "uniform_noise", "similarity_class": "noise"},
        "ref-noise2": {"corruption": "gaussian_noise", "similarity_class": "noise"},
        "ref-blur": {"corruption": "geirhos_lowpass", "similarity_class": "blur"},
        "ref-none": {"corruption": "frost", "similarity_class": None},
    }
    table = similarity_table(est, info, level=0.83, band="pointwise")
    assert len(table) == 6
    pair = table.set_index(["reference_a", "reference_b"])
    assert bool(pair.loc[("ref-noise", "ref-noise2"), "similar"])
    assert not bool(pair.loc[("ref-blur", "ref-noise"), "similar"])
    assert 0 < pair.loc[("ref-blur", "ref-noise"), "first_gap_v"] < 0.45
    assert np.isnan(pair.loc[("ref-blur", "ref-none"), "similar"])
    style = Style()
    with style.context():
        fig = human_similarity_figure(est, info, style, level=0.83, band="pointwise")
        titles = [ax.get_title(loc="left") for ax in fig.get_axes()]
        # blur class, no class, noise class, and all references
        assert len(titles) == 4
        assert any("similar" in t and "noise class" in t for t in titles)
        assert_readable(fig)
    with pytest.raises(ValueError, match="no human references"):
        human_similarity_figure({}, {}, style, level=0.83, band="pointwise")


# --------------------------------------------------------------------------- saving


def figure_bytes(tmp_path, name, fmt):
    names = model_names(6)
    style = Style()
    path = tmp_path / f"{name}.{fmt}"
    with style.context():
        fig = hmri_mrsi_figure(metrics_table(names), "gaussian_noise", families_of(names), style)
        save(fig, [path], style)
    return path.read_bytes()


@pytest.mark.parametrize("fmt", ["png", "pdf", "svg"])
def test_same_inputs_give_identical_bytes(tmp_path, fmt):
    first = figure_bytes(tmp_path, "a", fmt)
    second = figure_bytes(tmp_path, "b", fmt)
    assert hashlib.sha256(first).hexdigest() == hashlib.sha256(second).hexdigest()
    assert b"CreationDate" not in first and b"Matplotlib v" not in first


def test_save_checks_format_and_leaves_no_partial_file(tmp_path):
    style = Style()
    with style.context():
        from vcrbench.figures.style import new_figure

        fig = new_figure(2, 2)
        with pytest.raises(ValueError, match="figure format"):
            save(fig, [tmp_path / "x.jpg"], style)
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- file-level entry points


def test_build_functions_write_every_format(tmp_path):
    from PIL import Image

    names = model_names(3)
    fams = families_of(names)
    metrics_csv = tmp_path / "vcr_metrics.csv"
    metrics_table(names).to_csv(metrics_csv, index=False)
    style = {"dpi": 100, "width": 6.0}
    outs = [tmp_path / "bars.png", tmp_path / "bars.pdf"]
    build.plot_hmri_mrsi(metrics_csv, outs, corruption="gaussian_noise", families=fams, style=style)
    assert all(p.stat().st_size > 1000 for p in outs)
    assert outs[1].read_bytes().startswith(b"%PDF")
    with Image.open(outs[0]) as img:
        assert img.size[0] == 600  # width 6 in at 100 dpi

    curve_paths = []
    for name in names:
        path = tmp_path / "estimates" / name / "gaussian_noise" / "curves.parquet"
        rows = curve_rows([name]).drop(columns="model")
        io.write_parquet(rows, path, {"model": name})
        curve_paths.append(path)
    ref = tmp_path / "humans" / "ref-a"
    rng = np.random.default_rng(0)
    dv = rng.uniform(0, 1, 2000)
    human = estimation.estimate(
        dv, rng.uniform(size=2000) < 0.9 - 0.7 * dv, 0.9, EstimationSettings(n_boot=10), seed=0
    )
    write_human_estimate(HumanEstimate(curves={"accuracy": human}, anchor="fixed 0.9"), ref)
    build.plot_curves(
        curve_paths,
        [tmp_path / "curves.png"],
        corruption="gaussian_noise",
        families=fams,
        style=style,
        reference_dir=ref,
        reference_name="ref-a",
    )
    assert (tmp_path / "curves.png").stat().st_size > 1000

    hist_csv, cov_csv = tmp_path / "h.csv", tmp_path / "c.csv"
    histograms().to_csv(hist_csv, index=False)
    pd.DataFrame({"corruption": ["gaussian_noise"], "source": ["vcr"], "coverage": [1.0]}).to_csv(
        cov_csv, index=False
    )
    build.plot_dv_histograms(
        hist_csv,
        [tmp_path / "h.svg", tmp_path / "h.png"],
        corruption="gaussian_noise",
        coverage_csv=cov_csv,
        style={"formats": ["png", "svg"]},
    )
    assert (tmp_path / "h.svg").read_text().lstrip().startswith("<?xml")


def test_curves_label_space_choice():
    auto = Style()
    assert build.curves_label_space(auto, "imagenet1k", True) == "geirhos16"
    assert build.curves_label_space(auto, "imagenet1k", False) == "imagenet1k"
    assert build.curves_label_space(Style(curves_label_space="dataset"), "cub200", True) == "cub200"


def test_readability_checks_catch_overlaps_and_covering_legends():
    """The checks above can fail: two texts on one spot, a text off the figure, a legend on data."""
    style = Style()
    with style.context():
        from vcrbench.figures.style import new_figure

        fig = new_figure(3, 2)
        ax = fig.add_subplot()
        ax.plot([0, 1], [0, 1], label="a line")
        ax.text(0.5, 0.5, "one label")
        ax.text(0.5, 0.5, "another label")
        with pytest.raises(AssertionError, match="overlapping texts"):
            assert_readable(fig)
        fig2 = new_figure(3, 2)
        ax2 = fig2.add_subplot()
        ax2.text(1.5, 0.5, "far outside the figure", transform=ax2.transAxes).set_in_layout(False)
        with pytest.raises(AssertionError, match="outside the figure"):
            assert_readable(fig2)
        ax.legend(loc="upper left")
        with pytest.raises(AssertionError, match="legend covers"):
            assert_legends_off_axes(fig)


@pytest.mark.parametrize(
    ("font_size", "width"), [(11.0, 7.0), (8.0, 5.0)], ids=["big-font", "narrow"]
)
def test_restyled_figures_stay_readable(font_size, width):
    """A larger font or a narrower figure must not make texts collide or leave the figure."""
    names = model_names(25)
    fams = families_of(names)
    style = Style.from_config({"font_size": font_size, "width": width})
    inc = pd.DataFrame(
        {
            "model": names,
            "corruption": "gaussian_noise",
            "label_space": "imagenet1k",
            "severity": "mean",
            "accuracy": np.random.default_rng(5).uniform(0.3, 0.7, 25),
        }
    )
    with style.context():
        figures = [
            hmri_mrsi_figure(
                metrics_table(names, consistency=False), "gaussian_noise", fams, style
            ),
            curves_figure(
                curve_rows(names),
                fams,
                style,
                corruption="gaussian_noise",
                label_space="geirhos16",
                human={"accuracy": human_curve()},
                human_name="ref-a",
            ),
            dv_histogram_figure(histograms(), "gaussian_noise", style),
            imagenet_c_scatter_figure(
                inc, metrics_table(names), "gaussian_noise", fams, style, label_space="imagenet1k"
            ),
        ]
        for fig in figures:
            assert_readable(fig)
