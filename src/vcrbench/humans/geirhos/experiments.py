"""Geirhos et al. (2018): the release's collections, columns, experiments and conditions."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from vcrbench.humans.trial_schema import HumanDataError

#: The release this copy was made from.

SOURCE_REPOSITORY = "https://github.com/rgeirhos/generalisation-humans-DNNs"
SOURCE_COMMIT = "0b88343"
#: Collections of the compact copy, each one Parquet file.
COLLECTIONS = ("humans", "dnns", "trained")
PARQUET_FILES = {c: f"{c}.parquet" for c in COLLECTIONS}
#: ImageNet-trained networks of the ``dnns`` folders (TensorFlow-Slim weights).
PRETRAINED_NETWORKS = ("googlenet", "resnet152", "vgg19")
#: ResNet-50s trained from scratch on 16-class-ImageNet, kept from the release's training folders:
#: the paper's Figure 4 models A1–A9 (A1 the undistorted baseline) and ``specialised`` (in each
#: experiment the copy of the network trained on that experiment's distortion, renamed).
TRAINED_NETWORKS = (
    "sixteen01v4",  # A1: colour images
    "sixteen26--grayscale",  # A2
    "sixteen07--grayscale-contrast-multiple",  # A3
    "sixteen08--low-pass-multiple",  # A4
    "sixteen11--high-pass-multiple",  # A5
    "sixteen16--phase-scrambling-multiple",  # A6
    "sixteen09--rotation-multiple",  # A7
    "sixteen21--salt-and-pepper-noise-multiple",  # A8
    "sixteen03--uniform-noise-multiple",  # A9
    "specialised",
)
#: Figure 4's column names of :data:`TRAINED_NETWORKS` (``specialised`` has none).
FIGURE4_MODELS = dict(zip(TRAINED_NETWORKS[:9], (f"A{i}" for i in range(1, 10)), strict=True))

#: CSV columns of every file, and the extra columns of the ``dnns`` network files.
CSV_COLUMNS = (
    "subj",
    "session",
    "trial",
    "rt",
    "object_response",
    "category",
    "condition",
    "imagename",
)
DNN_COLUMNS = (
    "entropy_1000",
    "prob_correct_16",
    "rank_correct_16",
    "entropy_16",
    "highest_prob_16",
    "object_response_sums",
    "prob_correct_16_sums",
    "rank_correct_16_sums",
    "entropy_16_sums",
    "highest_prob_16_sums",
)
#: How each CSV column is stored (the build script and :func:`raw_frame` share this).
FLOAT_COLUMNS = (
    "rt",
    "entropy_1000",
    "prob_correct_16",
    "entropy_16",
    "highest_prob_16",
    "prob_correct_16_sums",
    "entropy_16_sums",
    "highest_prob_16_sums",
)
INT_COLUMNS = {
    "session": "int8",
    "trial": "int16",
    "rank_correct_16": "int8",
    "rank_correct_16_sums": "int8",
}
DICTIONARY_COLUMNS = ("subj", "object_response", "category", "condition", "object_response_sums")
STRING_COLUMNS = ("imagename",)
#: Text of a null float in the CSVs, unless the file's metadata entry says otherwise.
NULL_TEXT = "NaN"
#: The answer of a human who did not answer in time (counts as wrong).
NO_ANSWER = "na"
#: Decision rules of the ImageNet networks: ``sum`` = ``object_response_sums`` (summed softmax over
#: a class's ImageNet classes, the rule of the publication's figures and tables), ``mean`` =
#: ``object_response`` (mean softmax, the rule of the paper's appendix, of model-vs-human and of the
#: VCR paper). Humans and the trained networks give one answer, listed under both rules.
RULES = {"sum": "object_response_sums", "mean": "object_response"}
#: What identifies a stimulus across observers: the ImageNet source image and the condition.
STIMULUS_KEY = ("image_id", "condition_label")

_FILE_RE = re.compile(
    r"^(?P<experiment>.+)-experiment_(?P<observer>.+)_session_(?P<session>\d+)\.csv$"
)
_IMAGE_ID_RE = r"(n\d{8}_\d+)\.[A-Za-z]+$"


def _check_collection(collection: str) -> None:
    if collection not in COLLECTIONS:
        raise HumanDataError(f"collection must be one of {COLLECTIONS}, not {collection!r}")


# --------------------------------------------------------------------------- experiments


@dataclass(frozen=True)
class Experiment:
    """One experiment folder of the release.

    ``conditions`` are the condition strings in the order of increasing distortion (the
    publication's order), ``values[i]`` the parameters (:attr:`parameters`) of ``conditions[i]``.
    """

    name: str
    collections: tuple[str, ...]
    corruption: str | None
    parameters: tuple[str, ...]
    conditions: tuple[str, ...]
    values: tuple[tuple[float, ...], ...]
    image_format: str  # "JPEG" or "PNG"
    #: Side of the square stimulus the humans saw (None: no human data).
    human_image_size: int | None
    #: Side of the networks' input; first batch: the centre crop of the 256 px stimulus.
    network_image_size: int
    #: 1 = first batch (256 px, JPEG unless -png), 2 = second batch (224 px, PNG); trained: None.
    batch: int | None
    colour: str  # "colour", "greyscale", or "colour/greyscale" (by condition)
    #: Lab experiment whose human observers this (trained) experiment is compared with.
    human_reference: str | None
    #: Per condition, the sub-experiment it belongs to (eidolon: "Eidolon I/II/III"), else empty.
    groups: tuple[str, ...] = ()
    notes: str = ""
    human_observers: tuple[str, ...] = field(default=())

    @property
    def folder(self) -> str:
        return f"{self.name}-experiment"

    def label(self, raw: str) -> str:
        """The condition string of this experiment that ``raw`` denotes ('1.0' -> '1')."""
        if raw in self.conditions:
            return raw
        try:
            x = float(raw)
        except ValueError:
            x = None
        if x is not None:
            for c in self.conditions:
                try:
                    if float(c) == x:
                        return c
                except ValueError:
                    continue
        raise HumanDataError(
            f"{self.name}: condition {raw!r} is none of {', '.join(self.conditions)}"
        )

    def parameter_values(self, condition: str) -> dict[str, float]:
        """``{parameter: value}`` of one condition (a raw or canonical condition string)."""
        return dict(
            zip(
                self.parameters,
                self.values[self.conditions.index(self.label(condition))],
                strict=True,
            )
        )


def _eidolon() -> tuple[tuple[str, ...], tuple[tuple[float, ...], ...], tuple[str, ...]]:
    # Condition "reach-coherence-grain": coherence code 0/3/10 = 0.0/0.3/1.0 (Eidolon III/II/I),
    # grain 10 = 10.0 throughout. Order of the networks' files: coherence 0, 0.3, 1, reach up.
    conds, values, groups = [], [], []
    for code, coherence, group in (
        (0, 0.0, "Eidolon III"),
        (3, 0.3, "Eidolon II"),
        (10, 1.0, "Eidolon I"),
    ):
        for reach in (1, 2, 4, 8, 16, 32, 64, 128):
            conds.append(f"{reach}-{code}-10")
            values.append((float(reach), coherence, 10.0))
            groups.append(group)
    return tuple(conds), tuple(values), tuple(groups)


def _numeric(conditions: Sequence[str], scale: float = 1.0) -> tuple[tuple[float, ...], ...]:
    return tuple((float(c) * scale,) for c in conditions)


_CONTRAST = ("c100", "c50", "c30", "c15", "c10", "c05", "c03", "c01")
_CONTRAST_VALUES = tuple((int(c[1:]) / 100,) for c in _CONTRAST)
_NOISE = ("0.00", "0.03", "0.05", "0.10", "0.20", "0.35", "0.60", "0.90")
_LOWPASS = ("0", "1", "3", "5", "7", "10", "15", "40")
_HIGHPASS = ("inf", "3", "1.5", "1", "0.7", "0.55", "0.45", "0.4")
_HIGHPASS_VALUES = tuple((1.0 / float(c),) for c in _HIGHPASS)  # 1/inf = 0
_PHASE = ("0", "30", "60", "90", "120", "150", "180")
_ROTATION = ("0", "90", "180", "270")
_SALT_PEPPER = ("0.00", "0.1", "0.2", "0.35", "0.5", "0.65", "0.8", "0.95")
_EIDOLON = _eidolon()
_FIRST = "first batch: humans saw the 256 px stimulus, the networks its 224 px centre crop"
_SECOND = "second batch: 224 px stimuli (downsampled), the same for humans and networks"
_TRAINED = (
    "ResNet-50s (224 px PNG) only; the same source images and conditions as the ImageNet "
    "networks' stimuli"
)
_LAB = ("humans", "dnns")
_SIX = tuple(f"subject-0{i}" for i in range(1, 7))


def _lab(name, corruption, parameters, conditions, values, fmt, batch, colour, observers, **kw):
    return Experiment(
        name=name,
        collections=_LAB,
        corruption=corruption,
        parameters=parameters,
        conditions=conditions,
        values=values,
        image_format=fmt,
        human_image_size=256 if batch == 1 else 224,
        network_image_size=224,
        batch=batch,
        colour=colour,
        human_reference=name,
        human_observers=observers,
        notes=kw.pop("notes", _FIRST if batch == 1 else _SECOND),
        **kw,
    )


def _trained(
    name, corruption, parameters, conditions, values, colour, human_reference, notes=_TRAINED
):
    return Experiment(
        name=name,
        collections=("trained",),
        corruption=corruption,
        parameters=parameters,
        conditions=conditions,
        values=values,
        image_format="PNG",
        human_image_size=None,
        network_image_size=224,
        batch=None,
        colour=colour,
        human_reference=human_reference,
        notes=notes,
    )


#: The 11 lab folders (12 experiments: eidolon holds three), humans and ImageNet networks.
EXPERIMENTS: dict[str, Experiment] = {
    e.name: e
    for e in (
        _lab("colour", "geirhos_greyscale", ("amount",), ("cr", "bw"), ((0.0,), (1.0,)), "JPEG", 1,
             "colour/greyscale", _SIX[:3]),
        _lab("contrast", "geirhos_contrast", ("contrast",), _CONTRAST, _CONTRAST_VALUES, "JPEG", 1,
             "greyscale", ("subject-01", "subject-02", "subject-03", "subject-05", "subject-06")),
        _lab("contrast-png", "geirhos_contrast", ("contrast",), _CONTRAST, _CONTRAST_VALUES, "PNG", 1,
             "greyscale", ("subject-01", "subject-05", "subject-06"),
             notes=_FIRST + "; saved as PNG (the contrast experiment repeated by 3 of its observers)"),
        _lab("noise", "uniform_noise", ("width",), _NOISE, _numeric(_NOISE), "JPEG", 1,
             "greyscale", ("subject-01", "subject-02", "subject-03", "subject-05", "subject-06"),
             notes=_FIRST + "; contrast 30% before the noise"),
        _lab("eidolon", "geirhos_eidolon", ("reach", "coherence", "grain"), _EIDOLON[0], _EIDOLON[1],
             "JPEG", 1, "greyscale", tuple(f"subject-0{i}" for i in (3, 5, 6, 7, 8)), groups=_EIDOLON[2],
             notes=_FIRST + "; coherence 1.0/0.3/0.0 = Eidolon I/II/III (1280 trials each per "
             "observer, the 24 conditions interleaved over 3 sessions)"),
        _lab("false-colour", "geirhos_false_colour", ("amount",), ("true", "false"), ((0.0,), (1.0,)),
             "PNG", 2, "colour", _SIX),
        _lab("highpass", "geirhos_highpass", ("inv_sigma",), _HIGHPASS, _HIGHPASS_VALUES, "PNG", 2,
             "greyscale", _SIX, notes=_SECOND + "; inv_sigma = 1/σ ('inf' = the unfiltered image: 0)"),
        _lab("lowpass", "geirhos_lowpass", ("sigma",), _LOWPASS, _numeric(_LOWPASS), "PNG", 2,
             "greyscale", _SIX),
        _lab("phase-scrambling", "geirhos_phase_noise", ("width",), _PHASE, _numeric(_PHASE), "PNG", 2,
             "greyscale", _SIX, notes=_SECOND + "; width in degrees"),
        _lab("power-equalisation", "geirhos_power_equalisation", ("amount",), ("0", "pow"),
             ((0.0,), (1.0,)), "PNG", 2, "greyscale", _SIX),
        _lab("rotation", "geirhos_rotation", ("angle",), _ROTATION, _numeric(_ROTATION), "PNG", 2,
             "greyscale", _SIX, notes=_SECOND + "; angle in degrees"),
    )
}  # fmt: skip

#: The 8 test folders of the networks trained on distortions (no human data of their own).
TRAINED_EXPERIMENTS: dict[str, Experiment] = {
    e.name: e
    for e in (
        _trained("colour-png", "geirhos_greyscale", ("amount",), ("cr", "bw"), ((0.0,), (1.0,)),
                 "colour/greyscale", "colour"),
        _trained("contrast-png", "geirhos_contrast", ("contrast",), _CONTRAST, _CONTRAST_VALUES,
                 "greyscale", "contrast-png"),
        _trained("highpass", "geirhos_highpass", ("inv_sigma",), _HIGHPASS, _HIGHPASS_VALUES,
                 "greyscale", "highpass"),
        _trained("lowpass", "geirhos_lowpass", ("sigma",), _LOWPASS, _numeric(_LOWPASS), "greyscale",
                 "lowpass"),
        _trained("noise-png", "uniform_noise", ("width",), _NOISE, _numeric(_NOISE), "greyscale",
                 "noise"),
        _trained("phase-scrambling", "geirhos_phase_noise", ("width",), _PHASE, _numeric(_PHASE),
                 "greyscale", "phase-scrambling"),
        _trained("rotation", "geirhos_rotation", ("angle",), _ROTATION, _numeric(_ROTATION),
                 "greyscale", "rotation"),
        # No corruption name is assigned to salt-and-pepper noise (no human data): parameters empty;
        # the condition is the probability p of setting a pixel black or white (30% contrast first).
        _trained("salt-and-pepper-png", None, (), _SALT_PEPPER, tuple(() for _ in _SALT_PEPPER),
                 "greyscale", None, notes=_TRAINED + "; condition = probability p of a black/white pixel"),
    )
}  # fmt: skip


def experiment_info(name: str, collection: str = "humans") -> Experiment:
    """The :class:`Experiment` of ``name`` in ``collection`` ('humans'/'dnns': lab, 'trained')."""
    _check_collection(collection)
    table = TRAINED_EXPERIMENTS if collection == "trained" else EXPERIMENTS
    try:
        return table[name]
    except KeyError:
        raise HumanDataError(
            f"no Geirhos experiment {name!r} in {collection!r}; there: {', '.join(table)}"
        ) from None


def experiments_table() -> pd.DataFrame:
    """One row per experiment folder (lab, then trained): names, conditions, values, images."""
    rows = []
    for kind, table in (("lab", EXPERIMENTS), ("trained", TRAINED_EXPERIMENTS)):
        for e in table.values():
            rows.append(
                {
                    "set": kind,
                    "experiment": e.name,
                    "folder": e.folder,
                    "corruption": e.corruption,
                    "parameters": ", ".join(e.parameters),
                    "n_conditions": len(e.conditions),
                    "conditions": " ".join(e.conditions),
                    "values": " ".join(
                        "/".join(f"{v:g}" for v in vals) if vals else "-" for vals in e.values
                    ),
                    "image_format": e.image_format,
                    "human_image_size": e.human_image_size,
                    "network_image_size": e.network_image_size,
                    "batch": e.batch,
                    "colour": e.colour,
                    "human_reference": e.human_reference,
                    "human_observers": len(e.human_observers),
                    "notes": e.notes,
                }
            )
    out = pd.DataFrame(rows)
    for col in ("human_image_size", "batch", "human_observers"):
        out[col] = out[col].astype("Int64")
    return out


def conditions_table() -> pd.DataFrame:
    """One row per experiment and condition: order, greyscale or not, ``param.<name>`` values."""
    rows = []
    for kind, table in (("lab", EXPERIMENTS), ("trained", TRAINED_EXPERIMENTS)):
        for e in table.values():
            for i, (cond, vals) in enumerate(zip(e.conditions, e.values, strict=True)):
                row = {
                    "set": kind,
                    "experiment": e.name,
                    "corruption": e.corruption,
                    "condition_index": i,
                    "condition": cond,
                    "group": e.groups[i] if e.groups else "",
                    "greyscale": not (
                        e.colour == "colour" or (e.colour != "greyscale" and cond == "cr")
                    ),
                }
                row.update({f"param.{p}": v for p, v in zip(e.parameters, vals, strict=True)})
                rows.append(row)
    return pd.DataFrame(rows)
