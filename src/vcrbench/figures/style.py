"""Figure style: the ``figures`` config block, family colours, matplotlib settings, saving.

Every figure is built with matplotlib's object API (``matplotlib.figure.Figure``, no pyplot, so no
global figure state) inside :func:`Style.context`, which fixes the rcParams that decide how a
figure looks (font, sizes, dpi). :func:`save` writes each requested format atomically and with
the metadata that carries timestamps or version strings removed, so the same inputs give the same
bytes.
"""

from __future__ import annotations

import colorsys
import contextlib
import dataclasses
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless, deterministic raster output (no display backend)

from matplotlib import colors as mcolors  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from vcrbench.errors import FigureConfigError  # noqa: E402
from vcrbench.figures.options import DEFAULT_FAMILY, check_options, defaults  # noqa: E402
from vcrbench.files import io  # noqa: E402

#: The ``figures`` block's defaults (the config schema's).
DEFAULTS = defaults()

__all__ = ["DEFAULT_FAMILY", "FigureConfigError", "Style", "new_figure", "save"]

#: Colours of the model families (the paper's Fig. 6 categories), colour-blind safe (Okabe-Ito);
#: ``human`` is red as in the paper. A family not listed takes a colour from FALLBACK_COLORS.
FAMILY_COLORS: dict[str, str] = {
    "human": "#d55e00",
    "vit": "#7b3294",
    "supervised": "#0072b2",
    "swsl": "#009e73",
    "adversarial": "#e69f00",
    "clip": "#cc79a7",
    "other": "#7f7f7f",
}
#: Display names of the families in legends.
FAMILY_LABELS: dict[str, str] = {
    "human": "Human",
    "vit": "Vision Transformer",
    "supervised": "Supervised",
    "swsl": "SWSL",
    "adversarial": "Adversarial training",
    "clip": "CLIP",
    "other": "Other",
}
#: Colours for families without a configured colour, given in sorted order of family name.
FALLBACK_COLORS = ("#56b4e9", "#8c564b", "#bcbd22", "#17becf", "#1b9e77", "#666666")


@dataclasses.dataclass(frozen=True)
class Style:
    """The ``figures`` config block, checked, with defaults filled in."""

    formats: tuple[str, ...] = tuple(DEFAULTS["formats"])
    dpi: int = DEFAULTS["dpi"]
    font_size: float = DEFAULTS["font_size"]
    font_family: str = DEFAULTS["font_family"]
    width: float = DEFAULTS["width"]
    label_space: str = DEFAULTS["label_space"]
    curves_label_space: str = DEFAULTS["curves_label_space"]
    family_colors: Mapping[str, str] = dataclasses.field(default_factory=dict)
    model_bands: bool = DEFAULTS["model_bands"]
    band_alpha: float = DEFAULTS["band_alpha"]
    digits: int = DEFAULTS["digits"]
    leaderboard_sort: str = DEFAULTS["leaderboard_sort"]

    @classmethod
    def from_config(cls, block: Mapping | None) -> Style:
        """Build from the config's ``figures`` block (checked; missing keys take
        the schema's defaults)."""
        values = check_options(block)
        return cls(
            formats=tuple(values["formats"]),
            dpi=int(values["dpi"]),
            font_size=float(values["font_size"]),
            font_family=str(values["font_family"]),
            width=float(values["width"]),
            label_space=str(values["label_space"]),
            curves_label_space=str(values["curves_label_space"]),
            family_colors=values["family_colors"],
            model_bands=bool(values["model_bands"]),
            band_alpha=float(values["band_alpha"]),
            digits=int(values["digits"]),
            leaderboard_sort=str(values["leaderboard_sort"]),
        )

    @property
    def scale(self) -> float:
        """How much taller than at the default font size a figure must be (never shorter)."""
        return max(1.0, self.font_size / DEFAULTS["font_size"])

    # ------------------------------------------------------------------ colours

    def family_color(self, family: str, families: Sequence[str] = ()) -> str:
        """Colour of ``family``: the config's, else the default, else a fallback colour chosen
        by the family's position among the unknown ones in ``families`` (so a figure's colours
        do not depend on which other figures exist)."""
        if family in self.family_colors:
            return mcolors.to_hex(self.family_colors[family])
        if family in FAMILY_COLORS:
            return FAMILY_COLORS[family]
        unknown = sorted({f for f in (*families, family) if f not in FAMILY_COLORS})
        unknown = [f for f in unknown if f not in self.family_colors]
        return FALLBACK_COLORS[unknown.index(family) % len(FALLBACK_COLORS)]

    def model_colors(self, families: Mapping[str, str]) -> dict[str, str]:
        """One colour per model: its family's hue, in shades that tell the family's members
        apart (sorted by model name, so a model keeps its shade across figures)."""
        all_fams = sorted(set(families.values()))
        out: dict[str, str] = {}
        for fam in all_fams:
            members = sorted(m for m, f in families.items() if f == fam)
            base = self.family_color(fam, all_fams)
            for i, model in enumerate(members):
                out[model] = shade(base, i, len(members))
        return out

    # ------------------------------------------------------------------ matplotlib

    def rc(self) -> dict:
        """rcParams of every figure (fixed fonts and sizes: the look does not depend on the
        user's matplotlibrc)."""
        return {
            "font.family": "sans-serif",
            "font.sans-serif": [self.font_family, "DejaVu Sans"],
            "font.size": self.font_size,
            "axes.titlesize": self.font_size + 1,
            "axes.labelsize": self.font_size,
            "xtick.labelsize": self.font_size - 0.5,
            "ytick.labelsize": self.font_size - 0.5,
            "legend.fontsize": self.font_size - 0.5,
            "legend.title_fontsize": self.font_size,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            "grid.color": "#DDDDDD",
            "grid.linewidth": 0.6,
            "axes.axisbelow": True,
            "lines.linewidth": 1.4,
            "figure.dpi": 100,
            "savefig.dpi": self.dpi,
            "pdf.fonttype": 42,  # TrueType: text stays text (editable, searchable) in PDFs
            "ps.fonttype": 42,
            "svg.fonttype": "path",
            "svg.hashsalt": "vcrbench",  # fixed ids: SVG bytes do not change between runs
            "mathtext.default": "regular",
        }

    @contextlib.contextmanager
    def context(self) -> Iterator[None]:
        with matplotlib.rc_context(self.rc()):
            yield


def new_figure(width: float, height: float) -> Figure:
    """A figure on an Agg canvas, with constrained layout (call inside :meth:`Style.context`)."""
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def shade(color: str, i: int, n: int) -> str:
    """The ``i``-th of ``n`` shades of ``color`` (lightness spread ±0.18 around the colour's)."""
    if n <= 1:
        return mcolors.to_hex(color)
    r, g, b = mcolors.to_rgb(color)
    h, lum, s = colorsys.rgb_to_hls(r, g, b)
    spread = min(0.18, 0.06 * (n - 1))
    offset = -spread + 2 * spread * i / (n - 1)
    # keep the whole spread inside [0.1, 0.9]: very dark or light colours still get shades
    lum = min(max(lum, 0.1 + spread), 0.9 - spread) + offset
    return mcolors.to_hex(colorsys.hls_to_rgb(h, lum, s))


def family_label(family: str) -> str:
    return FAMILY_LABELS.get(family, family[:1].upper() + family[1:])


def family_order(families) -> list[str]:
    """Families in legend order: the paper's order first, then others alphabetically."""
    known = [f for f in FAMILY_COLORS if f in set(families)]
    return known + sorted(set(families) - set(known))


#: Metadata that would make bytes differ between runs or versions, removed per format.
_METADATA = {
    "png": {"Software": None},
    "pdf": {"Creator": None, "Producer": None, "CreationDate": None},
    "svg": {"Creator": None, "Date": None},
}


def save(fig: Figure, paths: Sequence[str | os.PathLike], style: Style) -> list[Path]:
    """Write ``fig`` to every path (format from the suffix), atomically and reproducibly."""
    written = []
    with style.context():
        for path in paths:
            path = Path(path)
            fmt = path.suffix.lstrip(".").lower()
            if fmt not in _METADATA:
                raise ValueError(f"{path}: figure format must be one of {', '.join(_METADATA)}")
            with io.atomic_path(path) as tmp:
                fig.savefig(tmp, format=fmt, dpi=style.dpi, metadata=_METADATA[fmt])
            written.append(path)
    return written
