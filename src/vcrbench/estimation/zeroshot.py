"""Zero-shot protocols along Δv: per-class mean accuracy, seen and unseen accuracy, their harmonic
mean H, the per-class table and the class-transition table.

Protocols (Xian et al. 2019, "Zero-shot learning — a comprehensive evaluation of the good, the bad
and the ugly"): accuracy is the mean of per-class top-1 accuracies; generalised zero-shot learning
predicts over all classes and reports the per-class mean accuracy on images of seen classes (S),
on images of unseen classes (U), and H = 2 S U / (S + U).

Along Δv each of them is a curve estimated with Alg. 1 (:func:`vcrbench.estimation.estimate`):

- per-class mean accuracy in Δv bin j is the mean over the classes present in the bin of their
  accuracy in the bin. Each sample of class c in bin j gets the weight n_j / (C_j n_cj) (n_j samples
  and C_j classes in the bin, n_cj of class c): the weighted rate of the bin is exactly that mean,
  and the weights of a bin sum to n_j, so the bin keeps its sample count for Alg. 1's minimum
  count and the spline's binomial weights (:func:`balance_weights`). The clean anchor s(0) is the
  per-class mean of the clean outcomes (weights N / (C n_c)). The bootstrap resamples images and
  keeps each sample's weight.
- S and U are the same estimate over the samples of seen (unseen) classes;
- H(v) = 2 S(v) U(v) / (S(v) + U(v)) pointwise, on the point curves and on each pair of bootstrap
  replicates (seen and unseen images are disjoint, so their replicates are independent draws and
  pairing replicate b with replicate b is a draw of H); R̂_H is the area under H.

Class transitions (Yucel et al., "How robust are discriminatively trained zero-shot learning
models?"): for each sample, its clean prediction against its corrupted one — CF (clean correct,
corrupted false), FC (clean false, corrupted correct), FF (clean false, corrupted another false
class), and among changed predictions the share that went to a seen or an unseen class, by the
sample's own class group (seen, unseen) and Δv bin (:func:`transition_table`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from vcrbench import estimation
from vcrbench.bins import bin_edges, bin_index
from vcrbench.estimation.area import area
from vcrbench.estimation.bootstrap import percentile_interval
from vcrbench.estimation.counts import bins_frame
from vcrbench.vocab import (
    ZERO_SHOT_CLASS_COLUMNS,
    ZERO_SHOT_PROPERTIES,
    ZERO_SHOT_TRANSITION_COLUMNS,
)

#: Group of a class in a zero-shot split.
SEEN, UNSEEN = "seen", "unseen"


def balance_weights(labels: np.ndarray, bins: np.ndarray | None = None) -> np.ndarray:
    """Weights that make a (bin's) weighted accuracy the mean of its classes' accuracies.

    With ``bins``: ``n_j / (C_j n_cj)`` per sample (module docstring), summing to n_j in each bin;
    without: ``N / (C n_c)`` over all samples.
    """
    labels = np.asarray(labels, dtype=np.int64)
    if len(labels) == 0:
        return np.zeros(0)
    bins = np.zeros(len(labels), dtype=np.int64) if bins is None else np.asarray(bins, np.int64)
    cell = pd.DataFrame({"bin": bins, "label": labels})
    n_cj = cell.groupby(["bin", "label"])["label"].transform("size").to_numpy(np.float64)
    n_j = cell.groupby("bin")["label"].transform("size").to_numpy(np.float64)
    c_j = cell.groupby("bin")["label"].transform("nunique").to_numpy(np.float64)
    return n_j / (c_j * n_cj)


def harmonic(s, u):
    """2 s u / (s + u), 0 where both are 0."""
    s, u = np.asarray(s, np.float64), np.asarray(u, np.float64)
    total = s + u
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, 2 * s * u / np.where(total > 0, total, 1.0), 0.0)


def harmonic_estimate(seen: estimation.Estimate, unseen: estimation.Estimate, weighting=None):
    """The estimate of H from the seen and unseen estimates (module docstring)."""
    reps = harmonic(seen.replicates, unseen.replicates)
    values = harmonic(seen.values, unseen.values)
    lo, hi = percentile_interval(reps, seen.level)
    rep_areas = np.atleast_1d(area(reps, weighting, seen.grid))
    area_lo, area_hi = percentile_interval(rep_areas, seen.level)
    bs, bu = seen.bins, unseen.bins
    count = (bs["count"] + bu["count"]).to_numpy(np.float64)
    sum_dv = np.nan_to_num(bs["v_mean"] * bs["count"]) + np.nan_to_num(bu["v_mean"] * bu["count"])
    rate = harmonic(bs["rate"].fillna(0), bu["rate"].fillna(0))
    table = bins_frame(count, rate * count, np.asarray(sum_dv), len(bs), seen.min_count)
    table["used"] = (bs["used"] & bu["used"]).to_numpy()
    return estimation.Estimate(
        bins=table,
        grid=seen.grid,
        values=values,
        lo=np.asarray(lo, np.float64),
        hi=np.asarray(hi, np.float64),
        level=seen.level,
        area=area(values, weighting, seen.grid),
        area_lo=float(area_lo),
        area_hi=float(area_hi),
        replicates=reps.astype(np.float32),
        anchor0=float(harmonic(seen.anchor0, unseen.anchor0)),
        anchor1=None,
        lam=float("nan"),
        min_count=seen.min_count,
        weighting=seen.weighting,
        n=seen.n + unseen.n,
        n_missing=seen.n_missing + unseen.n_missing,
        n_groups=(seen.n_groups or 0) + (unseen.n_groups or 0) or None,
        seed=seen.seed,
    )


def _clean_join(preds: pd.DataFrame, clean: pd.DataFrame) -> np.ndarray:
    clean_pred = clean.drop_duplicates("image_id").set_index("image_id")["pred"]
    missing = ~preds["image_id"].isin(clean_pred.index)
    if missing.any():
        raise ValueError(
            f"{int(missing.sum())} samples have no clean prediction "
            f"(e.g. image {preds.loc[missing, 'image_id'].iloc[0]!r})"
        )
    return clean_pred.loc[preds["image_id"]].to_numpy()


def class_groups(num_classes: int, seen: Sequence[int], unseen: Sequence[int]) -> np.ndarray:
    """``"seen"``, ``"unseen"`` or ``""`` per class index."""
    out = np.full(num_classes, "", dtype=object)
    out[list(seen)] = SEEN
    out[list(unseen)] = UNSEEN
    return out


def zero_shot_estimates(
    preds: pd.DataFrame,
    clean: pd.DataFrame,
    *,
    seen: Sequence[int] | None,
    unseen: Sequence[int] | None,
    settings: Mapping,
    seed_of,
    progress: bool = False,
) -> dict[str, estimation.Estimate]:
    """``{property name: Estimate}`` of the zero-shot properties (:data:`ZERO_SHOT_PROPERTIES`)
    of one model on one corruption, in the dataset's label space.

    ``preds``/``clean``: prediction tables (``image_id, label, dv, pred``) on the test set and
    on the clean images; ``seen``/``unseen``: class indices of the split (None: only the
    per-class mean); ``settings``: the config's ``estimation`` block; ``seed_of(name)``: the
    estimate's seed.
    """
    est_settings = estimation.EstimationSettings.of_config(settings)
    n_bins = est_settings.bins
    lab = preds["label"].to_numpy() >= 0
    clean = clean.drop_duplicates("image_id")
    clean_lab = clean["label"].to_numpy() >= 0
    label, dv = preds["label"].to_numpy()[lab], preds["dv"].to_numpy(np.float64)[lab]
    y = (preds["pred"].to_numpy()[lab] == label).astype(np.float64)
    images = preds["image_id"].astype(str).to_numpy()[lab]
    c_label = clean["label"].to_numpy()[clean_lab]
    c_y = (clean["pred"].to_numpy()[clean_lab] == c_label).astype(np.float64)
    c_images = clean["image_id"].astype(str).to_numpy()[clean_lab]
    subsets = {"class_mean_accuracy": None}
    if seen is not None and unseen is not None:
        subsets.update({"seen_accuracy": list(seen), "unseen_accuracy": list(unseen)})
    out: dict[str, estimation.Estimate] = {}
    for name, classes in subsets.items():
        keep = np.ones(len(label), bool) if classes is None else np.isin(label, classes)
        c_keep = np.ones(len(c_label), bool) if classes is None else np.isin(c_label, classes)
        if not keep.any() or not c_keep.any():
            continue
        out[name] = estimation.estimate(
            dv[keep],
            y[keep],
            c_y[c_keep],
            est_settings,
            groups=images[keep],
            anchor_groups=c_images[c_keep],
            weights=balance_weights(label[keep], bin_index(dv[keep], n_bins)),
            anchor_weights=balance_weights(c_label[c_keep]),
            seed=seed_of(name),
            progress=progress,
        )
    if "seen_accuracy" in out and "unseen_accuracy" in out:
        out["harmonic_mean"] = harmonic_estimate(
            out["seen_accuracy"], out["unseen_accuracy"], settings.get("weighting")
        )
    assert set(out) <= set(ZERO_SHOT_PROPERTIES.values())
    return out


# --------------------------------------------------------------------------- tables


def _bins(dv: np.ndarray, n_bins: int):
    lo, hi, _ = bin_edges(n_bins)
    j = bin_index(dv, n_bins)
    return j, lo, hi


def class_table(
    preds: pd.DataFrame,
    clean: pd.DataFrame,
    *,
    model: str,
    corruption: str,
    class_names: Sequence[str] | None,
    groups: np.ndarray | None = None,
    n_bins: int,
) -> pd.DataFrame:
    """Per class and Δv bin: samples, correct ones and accuracy, with the class's clean accuracy
    (:data:`ZERO_SHOT_CLASS_COLUMNS`; bins without samples of a class are left out)."""
    lab = preds[preds["label"] >= 0]
    j, lo, hi = _bins(lab["dv"].to_numpy(np.float64), n_bins)
    frame = pd.DataFrame(
        {"class": lab["label"].to_numpy(), "bin": j, "ok": lab["pred"].to_numpy() == lab["label"]}
    )
    per = frame.groupby(["class", "bin"])["ok"].agg(n="size", correct="sum").reset_index()
    c = clean.drop_duplicates("image_id")
    c = c[c["label"] >= 0]
    clean_per = (
        pd.DataFrame({"class": c["label"].to_numpy(), "ok": c["pred"].to_numpy() == c["label"]})
        .groupby("class")["ok"]
        .agg(clean_n="size", clean_accuracy="mean")
        .reset_index()
    )
    per = per.merge(clean_per, on="class", how="left")
    per["accuracy"] = per["correct"] / per["n"]
    per["v_lo"], per["v_hi"] = lo[per["bin"]], hi[per["bin"]]
    cls = per["class"].to_numpy()
    per["class_name"] = [class_names[k] for k in cls] if class_names is not None else ""
    per["group"] = groups[cls] if groups is not None else ""
    per["model"], per["corruption"] = model, corruption
    per["clean_n"] = per["clean_n"].fillna(0).astype("int64")
    per["correct"] = per["correct"].astype("int64")
    return per[ZERO_SHOT_CLASS_COLUMNS]


def _transition_row(ok, clean_ok, changed, to_seen, to_unseen) -> dict:
    n_cc, n_cf = int(clean_ok.sum()), int((~clean_ok).sum())
    n_changed = int(changed.sum())

    def share(num, den):
        return float(num) / den if den else np.nan

    return {
        "n": len(ok),
        "n_clean_correct": n_cc,
        "n_clean_false": n_cf,
        "CF": share((clean_ok & ~ok).sum(), n_cc),
        "FC": share((~clean_ok & ok).sum(), n_cf),
        "FF": share((~clean_ok & ~ok & changed).sum(), n_cf),
        "n_changed": n_changed,
        "to_seen": share((changed & to_seen).sum(), n_changed),
        "to_unseen": share((changed & to_unseen).sum(), n_changed),
    }


def transition_table(
    preds: pd.DataFrame,
    clean: pd.DataFrame,
    *,
    model: str,
    corruption: str,
    groups: np.ndarray | None = None,
    n_bins: int,
) -> pd.DataFrame:
    """Class transitions between each labelled sample's clean and corrupted prediction
    (:data:`ZERO_SHOT_TRANSITION_COLUMNS`), for all samples and per class group (seen, unseen), over
    all of Δv (``bin = -1``, ``v_lo = 0``, ``v_hi = 1``) and per Δv bin with samples. CF, FC and FF
    are shares of the clean-correct / clean-false samples; ``to_seen``/``to_unseen`` shares of the
    changed predictions (NaN without a split)."""
    lab = preds[preds["label"] >= 0].reset_index(drop=True)
    label, pred = lab["label"].to_numpy(), lab["pred"].to_numpy()
    clean_pred = _clean_join(lab, clean)
    ok, clean_ok, changed = pred == label, clean_pred == label, pred != clean_pred
    if groups is not None:
        to_seen, to_unseen = groups[pred] == SEEN, groups[pred] == UNSEEN
        own = groups[label]
    else:
        to_seen = to_unseen = np.zeros(len(lab), bool)
        own = np.full(len(lab), "", dtype=object)
    j, lo, hi = _bins(lab["dv"].to_numpy(np.float64), n_bins)
    rows = []
    names = ["all"] + ([SEEN, UNSEEN] if groups is not None else [])
    for group in names:
        in_group = np.ones(len(lab), bool) if group == "all" else own == group
        for b in [-1, *sorted(set(j[in_group]))]:
            at = in_group & (j == b) if b >= 0 else in_group
            if not at.any():
                continue
            row = _transition_row(ok[at], clean_ok[at], changed[at], to_seen[at], to_unseen[at])
            if groups is None:
                row["to_seen"] = row["to_unseen"] = np.nan
            v = (0.0, 1.0) if b < 0 else (lo[b], hi[b])
            rows.append({"model": model, "corruption": corruption, "group": group, "bin": b,
                         "v_lo": v[0], "v_hi": v[1], **row})  # fmt: skip
    return pd.DataFrame(rows, columns=ZERO_SHOT_TRANSITION_COLUMNS)


def write_zero_shot_tables(
    predictions: Mapping[tuple[str, str], Sequence[str]],
    clean: Mapping[str, str],
    classes_out: str,
    transitions_out: str,
    *,
    class_names: Sequence[str] | None,
    num_classes: int,
    seen: Sequence[int] | None = None,
    unseen: Sequence[int] | None = None,
    n_bins: int,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The per-class table and the class-transition table of every model and corruption.

    ``predictions``: ``{(model, corruption): [prediction files]}``; ``clean``: ``{model: clean
    prediction file}``. Both CSVs are written atomically, rows sorted by model and corruption.
    """
    from vcrbench.files import io
    from vcrbench.vocab import PREDICTION_COLUMNS

    def read(path):  # the decision columns only (not top-5, 16-class vector or logprobs)
        return io.read_columns(path, PREDICTION_COLUMNS)

    groups = None if seen is None or unseen is None else class_groups(num_classes, seen, unseen)
    per_class, transitions = [], []
    for (model, corruption), files in sorted(predictions.items()):
        preds = pd.concat([read(f) for f in files], ignore_index=True)
        preds = preds.sort_values("sample_id", kind="stable").reset_index(drop=True)
        ref = read(clean[model])
        common = {"model": model, "corruption": corruption, "groups": groups, "n_bins": n_bins}
        per_class.append(class_table(preds, ref, class_names=class_names, **common))
        transitions.append(transition_table(preds, ref, **common))
    classes = pd.concat(per_class, ignore_index=True)
    trans = pd.concat(transitions, ignore_index=True)
    io.write_csv(classes, classes_out)
    io.write_csv(trans, transitions_out)
    return classes, trans
