"""Reader for the Geirhos et al. (2018) trial data shipped with VCR-Bench.

Geirhos, Temme, Rauber, Schütt, Bethge, Wichmann: *Generalisation in humans and deep neural
networks*, NeurIPS 2018; data CC-BY-4.0 (``vcrbench/data/geirhos2018/``, licence and citation in
its README), read from the compact copy (:mod:`vcrbench.humans.geirhos`), which gives back
each release CSV exactly. One CSV per observer and session with columns
``subj, session, trial, rt, object_response, category, condition, imagename``; the DNN files add
entropy/probability columns. ``object_response`` is ``na`` where a human gave no answer: that trial
counts as wrong, as in the paper.

Experiments placed on the Δv axis: ``noise`` (greyscale, contrast 30%, additive uniform noise of
width w; the VCR paper's ``uniform_noise``) and ``lowpass`` (greyscale, Gaussian filter of σ; our
``geirhos_lowpass``). The ``dnns/`` folders of the release also hold copies of the human files;
:func:`read_geirhos` keeps only the observers asked for.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from vcrbench.humans import geirhos as gd
from vcrbench.humans.trial_schema import HumanDataError, correct, validate_trials

#: Networks of the release (TensorFlow-Slim ImageNet weights, 16-class decision by summed softmax).
DNN_OBSERVERS = gd.PRETRAINED_NETWORKS
_CSV_COLUMNS = gd.CSV_COLUMNS
#: The columns of a CSV that :func:`read_geirhos` makes trials of (the summed-rule answers too).
_TRIAL_SOURCE_COLUMNS = (*_CSV_COLUMNS, "object_response_sums")
_FILE_OBSERVER_RE = re.compile(r"^.+-experiment_(.+)_session_\d+\.csv$")
_SOURCE_IMAGE_RE = re.compile(r"(n\d{8}_\d+)\.[A-Za-z]+$")


@dataclass(frozen=True)
class Experiment:
    """One Geirhos experiment: where its CSVs are and what its condition means."""

    name: str
    directory: str
    corruption: str
    parameter: str
    conditions: tuple[float, ...]
    image_size: int
    description: str


_DESCRIPTIONS = {
    "noise": "greyscale (skimage rgb2gray), contrast 30%, + U[-w, w] per pixel, clipped to [0, 1]",
    "lowpass": (
        "greyscale (skimage rgb2gray), scipy.ndimage.gaussian_filter(σ, mode='constant', "
        "cval=0.4423, truncate=4), clipped to [0, 1]"
    ),
}

#: Experiments that cannot be placed on the Δv axis, and why (docs/corruptions.md).
NOT_PLACEABLE = {
    "rotation": (
        "rotation is not a visual degradation in the VIF sense: Δv compares pixel-aligned images, "
        "so a rotated image measures as an almost total loss (median Δv .975) although nothing "
        "was lost"
    ),
    "eidolon": (
        "Eidolon I/II/III need Koenderink et al.'s Eidolon toolbox, which no installable package "
        "provides, so their stimuli cannot be made faithfully on this dataset's images"
    ),
}


def _experiment(name: str) -> Experiment:
    info = gd.experiment_info(name)
    (parameter,) = info.parameters
    return Experiment(
        name=name,
        directory=info.folder,
        corruption=info.corruption,
        parameter=parameter,
        conditions=tuple(v for (v,) in info.values),
        # First batch: humans saw the 256x256 stimulus, the DNNs its 224x224 centre crop;
        # second batch: 224x224 for humans and DNNs alike.
        image_size=info.human_image_size,
        description=_DESCRIPTIONS.get(name, info.notes),
    )


#: Every experiment whose manipulation can be applied to this dataset's images (a registered
#: corruption, or ``geirhos_lowpass``): all of the release but rotation and eidolon.
EXPERIMENTS = {n: _experiment(n) for n in gd.EXPERIMENTS if n not in NOT_PLACEABLE}

#: Human accuracies that the paper states as numbers (the rest are plotted in its Figure 3):
#: Figure 4's "human observers" column and the text of Figure 8 (two digits only).
PUBLISHED_HUMAN_ACCURACY = {
    ("noise", "0.35"): (0.456, 0.0005, "Fig. 4, uniform noise (0.35): 45.6%"),
    ("noise", "0.10"): (0.75, 0.005, "Fig. 8 caption: width 0.1, human accuracy 0.75"),
    ("lowpass", "7"): (0.485, 0.0005, "Fig. 4, low-pass (std=7): 48.5%"),
}


def data_root() -> Path:
    """Folder of the shipped Geirhos data (``vcrbench/data/geirhos2018``)."""
    return gd.data_root()


def experiment(name: str) -> Experiment:
    """The placeable experiment ``name``; an unplaceable or unknown one raises, saying why."""
    if name in NOT_PLACEABLE:
        raise HumanDataError(
            f"Geirhos experiment {name!r} cannot be placed on the Δv axis: {NOT_PLACEABLE[name]}; "
            f"placeable: {', '.join(EXPERIMENTS)}"
        )
    try:
        return EXPERIMENTS[name]
    except KeyError:
        raise HumanDataError(
            f"unknown Geirhos experiment {name!r}; placeable: {', '.join(EXPERIMENTS)} "
            f"(not placeable: {', '.join(NOT_PLACEABLE)})"
        ) from None


def csv_files(
    experiment_name: str, observers: str = "humans", root: str | os.PathLike | None = None
) -> list[Path]:
    """The CSV files of one experiment, for ``observers`` 'humans' or 'dnns' (sorted).

    Without ``root``, the names of the files in the shipped compact copy
    (:mod:`vcrbench.humans.geirhos`), as paths relative to its folder; with ``root``, the
    CSV files in ``root/{experiment}-experiment/`` (a downloaded release).
    """
    if observers not in ("humans", "dnns"):
        raise HumanDataError(f"observers must be 'humans' or 'dnns', not {observers!r}")
    exp = experiment(experiment_name)
    if root is None:
        names = gd.csv_files(observers, exp.name)
        return [Path(observers) / exp.directory / n for n in names]
    folder = Path(root) / exp.directory
    files = sorted(folder.glob("*.csv"))
    if not files:
        raise HumanDataError(f"no Geirhos CSV files in {folder}")
    return files


def _read_csv(path: Path, observers: str, experiment_name: str, stored: bool) -> pd.DataFrame:
    if stored:
        # exactly what pandas reads from the release's CSV (tested on every file), of the columns
        # that trials are made of
        df = gd.raw_frame(observers, experiment_name, path.name, columns=_TRIAL_SOURCE_COLUMNS)
    else:
        try:
            df = pd.read_csv(path, dtype=str, keep_default_na=False)
        except (OSError, ValueError, pd.errors.ParserError) as exc:
            raise HumanDataError(f"cannot read Geirhos CSV {path}: {exc}") from exc
    missing = [c for c in _CSV_COLUMNS if c not in df.columns]
    if missing:
        raise HumanDataError(
            f"{path}: missing Geirhos column(s) {missing}; found {list(df.columns)}"
        )
    return df


def _source_image(imagename: pd.Series, path: Path) -> list[str]:
    out = []
    for i, name in enumerate(imagename.tolist()):
        m = _SOURCE_IMAGE_RE.search(name)
        if m is None:
            raise HumanDataError(
                f"{path}, row {i + 1} (line {i + 2}), column 'imagename': {name!r} does not end in "
                "an ImageNet image id (nXXXXXXXX_N.ext)"
            )
        out.append(m.group(1))
    return out


def read_geirhos(
    experiment_name: str,
    observers: str = "humans",
    root: str | os.PathLike | None = None,
    subjects: list[str] | None = None,
    dnn_aggregation: str = "mean",
) -> pd.DataFrame:
    """Read one Geirhos experiment into the canonical trials table.

    Parameters
    ----------
    experiment_name : {'noise', 'lowpass'}
    observers : {'humans', 'dnns'}
        Which release folder; ``'dnns'`` keeps only :data:`DNN_OBSERVERS`.
    root : path, optional
        Folder holding ``{experiment}-experiment/`` (default: the shipped data, ``humans/`` or
        ``dnns/``).
    subjects : list of str, optional
        Keep only these observers (e.g. ``['resnet152']``); an unknown name is an error.
    dnn_aggregation : {'mean', 'sum'}
        Which 16-class decision of the DNN files to use: ``object_response`` (mean softmax over a
        class's ImageNet classes, the rule derived in the paper's appendix and the one VCR-Bench
        uses for its own models) or ``object_response_sums`` (summed probabilities, the rule of
        the paper's figures). Ignored for humans.

    Returns
    -------
    DataFrame
        :mod:`~vcrbench.humans.trial_schema` columns; ``participant`` is the observer, ``image_id``
        the ImageNet source image (``n04111531_5828``), ``condition`` the CSV's condition string,
        ``param.<width|sigma>`` its value, ``clean_response`` not recorded (Geirhos never showed
        an observer the same image twice). Rows are in file order.
    """
    exp = experiment(experiment_name)
    if dnn_aggregation not in ("mean", "sum"):
        raise HumanDataError(f"dnn_aggregation must be 'mean' or 'sum', not {dnn_aggregation!r}")
    files = csv_files(experiment_name, observers, root)
    present = sorted({m.group(1) for f in files if (m := _FILE_OBSERVER_RE.match(f.name))})
    if observers == "dnns":
        present = [p for p in present if p in DNN_OBSERVERS]
    if subjects is not None:
        files = _observer_files(files, subjects)
    frames = []
    for path in files:
        frame = _file_trials(path, observers, exp, dnn_aggregation, stored=root is None)
        if frame is not None:
            frames.append(frame)
    if not frames and subjects is None:
        raise HumanDataError(
            f"no {observers} trials found for Geirhos experiment {experiment_name!r}"
        )
    trials = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame({"participant": []})
    if subjects is not None:
        trials = _subjects_trials(trials, subjects, present, experiment_name, observers)
    return trials


def _observer_files(files: list[Path], subjects: list[str]) -> list[Path]:
    """The files that may hold ``subjects``' trials.

    File names carry the observer ({experiment}_{observer}_session_N.csv): the others are skipped
    unread. Files named otherwise are kept, to be filtered by their `subj` column.
    """
    return [
        f
        for f in files
        if not _FILE_OBSERVER_RE.match(f.name) or any(f"_{s}_" in f.name for s in subjects)
    ]


def _file_trials(
    path: Path, observers: str, exp: Experiment, dnn_aggregation: str, stored: bool
) -> pd.DataFrame | None:
    """The validated trials of one CSV file (None: a DNN file without any network's trials)."""
    df = _read_csv(path, observers, exp.name, stored=stored)
    if observers == "dnns":
        df = df[df["subj"].isin(DNN_OBSERVERS)].reset_index(drop=True)
        if df.empty:
            return None
        if dnn_aggregation == "sum":
            if "object_response_sums" not in df:
                raise HumanDataError(f"{path}: no column 'object_response_sums'")
            df["object_response"] = df["object_response_sums"]
    params = _parameter_values(df["condition"], exp, path)
    raw = pd.DataFrame(
        {
            "participant": df["subj"],
            "image_id": _source_image(df["imagename"], path),
            "label": df["category"],
            "response": df["object_response"],
            "corruption": exp.corruption,
            "condition": df["condition"],
            f"param.{exp.parameter}": params,
            "session": df["session"],
            "trial": df["trial"],
            # DNN files have rt = NaN.
            "rt": df["rt"].replace({"NaN": "", "nan": ""}),
        }
    )
    return validate_trials(raw, str(path), csv=True)


def _subjects_trials(
    trials: pd.DataFrame,
    subjects: list[str],
    present: list[str],
    experiment_name: str,
    observers: str,
) -> pd.DataFrame:
    """The trials of ``subjects`` only; a subject without any trial is an error naming those
    ``present``."""
    unknown = sorted(set(subjects) - set(trials["participant"]))
    if unknown:
        raise HumanDataError(
            f"observer(s) {unknown} not in Geirhos {experiment_name} {observers}; "
            f"present: {sorted(set(present) | set(trials['participant']))}"
        )
    return trials[trials["participant"].isin(subjects)].reset_index(drop=True)


def _parameter_values(conditions: pd.Series, exp: Experiment, path: Path) -> pd.Series:
    """The parameter value of every row's condition string (``"c05"`` -> 0.05, ``"inf"`` -> 0)."""
    info = gd.experiment_info(exp.name)
    values = {}
    for cond in conditions.unique():
        try:
            values[cond] = info.parameter_values(cond)[exp.parameter]
        except HumanDataError as exc:
            raise HumanDataError(f"{path}, column 'condition': {exc}") from None
    return conditions.map(values).astype(float)


#: The condition of the lab's experiments shown unmanipulated: the colour experiment's colour
#: images (``cr``), the original image (Δv = 0).
FULL_SIGNAL = ("colour", "cr")


def full_signal_trials(
    observers: str = "humans",
    root: str | os.PathLike | None = None,
    subjects: list[str] | None = None,
    dnn_aggregation: str = "mean",
) -> pd.DataFrame:
    """Trials on unmanipulated images (:data:`FULL_SIGNAL`; humans: 3 observers, 1,920 trials),
    the anchor s(0) with data really at Δv = 0 for every experiment of the lab."""
    subjects = None if subjects is None else tuple(subjects)
    return _full_signal_trials(observers, root, subjects, dnn_aggregation).copy()


@functools.lru_cache(maxsize=4)
def _full_signal_trials(observers, root, subjects, dnn_aggregation) -> pd.DataFrame:
    """:func:`full_signal_trials`, read once per process (every experiment's table anchors on
    them; callers get copies)."""
    experiment_name, condition = FULL_SIGNAL
    subjects = None if subjects is None else list(subjects)
    trials = read_geirhos(experiment_name, observers, root, subjects, dnn_aggregation)
    return trials[trials["condition"] == condition].reset_index(drop=True)


def condition_accuracy(trials: pd.DataFrame, by: tuple[str, ...] = ("condition",)) -> pd.DataFrame:
    """Accuracy per condition (and per any other ``by`` column), with per-participant range.

    Returns columns ``*by, n, n_correct, n_no_answer, accuracy, participant_min,
    participant_max`` sorted numerically by condition where conditions are numbers.
    """
    df = trials.assign(correct=correct(trials), no_answer=trials["response"].to_numpy() < 0)
    keys = list(by)
    agg = df.groupby(keys, sort=False).agg(
        n=("correct", "size"), n_correct=("correct", "sum"), n_no_answer=("no_answer", "sum")
    )
    agg["accuracy"] = agg["n_correct"] / agg["n"]
    per_p = df.groupby([*keys, "participant"], sort=False)["correct"].mean()
    spread = per_p.groupby(level=list(range(len(keys))), sort=False).agg(["min", "max"])
    agg["participant_min"] = spread["min"]
    agg["participant_max"] = spread["max"]
    out = agg.reset_index().sort_values(keys, key=_numeric_condition, kind="stable")
    out = out.reset_index(drop=True)
    out[["n", "n_correct", "n_no_answer"]] = out[["n", "n_correct", "n_no_answer"]].astype("int64")
    return out


def _numeric_condition(col: pd.Series) -> pd.Series:
    """Sort key: conditions by value where they are numbers ("0.35" before "7" before "40")."""
    if col.name != "condition":
        return col
    numeric = pd.to_numeric(col, errors="coerce")
    return numeric if numeric.notna().all() else col
