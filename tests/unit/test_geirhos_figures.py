"""The figure of Geirhos et al.'s networks against their humans."""

from __future__ import annotations

import pandas as pd

from tests.support.figure_checks import drawn_texts, overlapping_pairs, text_bboxes
from vcrbench.figures import build
from vcrbench.figures.geirhos import dnn_vs_humans_figure
from vcrbench.figures.style import Style


def _table() -> pd.DataFrame:
    rows = []
    for i, exp in enumerate(["noise", "lowpass", "contrast", "phase-scrambling"]):
        for j, net in enumerate(["googlenet", "resnet152", "vgg19"]):
            h, m = 0.8 + 0.03 * i + 0.01 * j, 0.05 + 0.01 * j
            rows.append(
                {"experiment": exp, "network": net, "HMRI": h, "HMRI_lo": h - 0.05,
                 "HMRI_hi": h + 0.04, "MRSI": m, "MRSI_lo": 0.0, "MRSI_hi": m + 0.05}
            )  # fmt: skip
    return pd.DataFrame(rows)


def test_one_row_per_experiment_one_marker_per_network_no_overlapping_text():
    style = Style.from_config({})
    with style.context():
        fig = dnn_vs_humans_figure(_table(), style)
        left, right = fig.get_axes()
        assert [t.get_text() for t in left.get_yticklabels()] == [
            "noise", "lowpass", "contrast", "phase-scrambling",
        ]  # fmt: skip
        assert len(left.containers) == len(right.containers) == 3
        texts = drawn_texts(fig)
        assert {"GoogLeNet", "ResNet-152", "VGG-19"} <= {t.get_text() for t in texts}
        assert overlapping_pairs(text_bboxes(fig, texts)) == []


def test_plot_from_the_csv(tmp_path):
    csv = tmp_path / "geirhos_dnn_vs_humans.csv"
    _table().to_csv(csv, index=False)
    out = build.plot_geirhos_dnn(csv, [tmp_path / "f.png", tmp_path / "f.pdf"], style={})
    assert [p.name for p in out] == ["f.png", "f.pdf"] and all(p.stat().st_size > 0 for p in out)


def test_trained_heatmap(tmp_path):
    rows = []
    for i, model in enumerate(["A1", "A2", "A3"]):
        for j, test in enumerate(["noise-png", "lowpass"]):
            h = 0.6 + 0.1 * i + 0.05 * j
            rows.append(
                {"model": model, "trained_on": ["none", "grey", "noise"][i], "test": test,
                 "own_distortion": (i, j) == (2, 0), "HMRI": h, "dHMRI": h - 0.6 - 0.05 * j,
                 "dHMRI_lo": -0.01, "dHMRI_hi": 0.2}
            )  # fmt: skip
    csv = tmp_path / "t.csv"
    pd.DataFrame(rows).to_csv(csv, index=False)
    style = Style.from_config({})
    with style.context():
        from vcrbench.figures.geirhos import trained_heatmap

        fig = trained_heatmap(pd.read_csv(csv), style)
        texts = {t.get_text() for t in drawn_texts(fig)}
        assert {"A1: none", "A3: noise", "noise-png", "0.80"} <= texts
        assert len(fig.get_axes()[0].patches) == 1  # the own distortion, boxed
    out = build.plot_geirhos_trained(csv, [tmp_path / "h.png"], style={})
    assert out[0].stat().st_size > 0


def test_consistency_figure(tmp_path):
    rows = []
    for exp in ("noise", "colour"):
        for k, net in enumerate(("googlenet", "resnet152")):
            for i, dv in enumerate((0.2, 0.5, 0.9)):
                rows.append(
                    {"experiment": exp, "network": net, "condition": str(i), "dv_median": dv,
                     "kappa_pooled": 0.4 - 0.4 * dv + 0.05 * k, "n_pairs": 20 + i}
                )  # fmt: skip
    csv = tmp_path / "ec.csv"
    pd.DataFrame(rows).to_csv(csv, index=False)
    style = Style.from_config({})
    with style.context():
        from vcrbench.figures.geirhos import consistency_figure

        fig = consistency_figure(pd.read_csv(csv), style)
        texts = {t.get_text() for t in drawn_texts(fig)}
        assert {"noise (63 pairs)", "colour (63 pairs)", "GoogLeNet", "ResNet-152"} <= texts
    out = build.plot_geirhos_consistency(csv, [tmp_path / "e.png"], style={})
    assert out[0].stat().st_size > 0
