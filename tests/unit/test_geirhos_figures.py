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
