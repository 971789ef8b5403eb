"""Table 2 of the paper as a check: Δv coverage of ImageNet-C and of VCR test sets drawn as the
paper drew them (c ~ U(C) on its authors' domains, the domain set ``paper``), for its 9 corruptions.

On any images (the embedded clean set by default, 10 images; ``--dataset folder --path DIR
--labels CSV`` for a folder, e.g. the ILSVRC2012 validation set with a ``file,label`` CSV of
WordNet ids; ``--images K`` draws K of them) and scaled down:

- **VCR**: ``--n`` parameter-uniform samples per corruption on the paper's domains (motion blur:
  ``motion_blur_line``, the line kernel the toolbox generated it with; glass blur:
  ``glass_blur_toolbox``, its corner-only glass blur; ``--own-vcr-sets``: ImageNet-C's
  ``motion_blur`` and ``glass_blur`` instead; ``--toolbox-variants``: each VCR set with the
  toolbox's own function and draw where it has one, ``variant: toolbox`` as config/paper.yaml
  sets it), every one corrupted and measured. Printed: the coverage of those samples (threshold 20 scaled to N, as the
  workflow scales it: at least 1), and the expected coverage of the paper's N = 50,000 with its
  threshold 20, from the bin probabilities the samples estimate (a bin they never hit counts as
  uncovered, so rare bins make it an underestimate).
- **ImageNet-C**: every image at the five severities, coverage at the same threshold as the VCR
  column (the workflow's rule): the paper's set has 250,000 samples of 50,000 images.
  ``--imagenet-c-jpeg 85`` also measures them saved as JPEG at quality 85, as the released
  ImageNet-C files are.

Pipelines, all measured on the same draws: ``--resolution crop`` (the 224² the models see, the
workflow's default) and/or ``stored`` (the VCR authors' pipeline, ``dataset.resolution: stored``:
the stored image, longer side at most ``--max-side``, corrupted and measured there); ``--grey
float`` and/or ``uint8`` (OpenCV's rounded grey, ``vif.grey``); ``--cast round`` and/or
``truncate`` (the corrupted image's float pixels rounded or truncated to uint8, ``sampling.cast``);
``--metric`` for both columns and ``--imagenet-c-metric`` for the ImageNet-C column only:
``vif`` (Δv = 1 − VIF(clean, corrupted)), ``vif-swapped`` (VIF(corrupted, clean)), ``vif-unit``
(both grey images divided by 255 first, as [0, 1] tensors would be), ``vif-swapped-unit`` (both),
``ssim`` (1 − SSIM as the toolbox's older ``bootstrap/bootstrapper.py``: scikit-image's
``rgb2gray`` of both uint8 images, ``data_range = g1.max() − g2.min()``) and ``ssim-mixed``
(the same with the corrupted image's grey on the 0-255 scale, as that code passes the float
output of a corruption). One table per pipeline.

Images: ``--human-classes`` keeps only the images of the 207 ImageNet classes of the 16 human
classes (after ``--images``). Thresholds: ``--imagenet-c-share S`` counts a bin of the ImageNet-C
column as covered at the paper's 20 images in S × 250,000 samples, scaled to the samples here (as
if the paper's set had been a share S of ImageNet-C, e.g. RobustBench's 5,000 images per
severity: 0.1); without it, both columns use the VCR column's threshold. ``--json`` keeps every
Δv and the image ids, for thresholds and subsets chosen afterwards.

Coverage: 40 bins, bins 0..38 counted (k/39). Single threads per worker process.

    python benchmarks/bench_table2.py [--n 1000] [--workers 2] [--corruptions a,b] [--json out.json]
        [--dataset folder --path DIR --labels CSV [--images K]] [--resolution crop,stored]
        [--max-side 512] [--grey float,uint8] [--imagenet-c-jpeg 85 [--imagenet-c-jpeg-only]]
        [--own-vcr-sets] [--cast round,truncate] [--metric vif,ssim]
        [--imagenet-c-metric vif-swapped,vif-unit] [--human-classes] [--imagenet-c-share 0.1]
        [--toolbox-variants]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

# The script's own process: one BLAS/OpenMP thread (an importer keeps its own; workers: _init).
if __name__ == "__main__":
    for _key in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ.setdefault(_key, "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from bench_sampling import PAPER_VCR, _init  # noqa: E402
from PIL import Image  # noqa: E402
from scipy.stats import binom  # noqa: E402

from vcrbench.bins import counts_per_bin, scaled_min_count  # noqa: E402
from vcrbench.corruptions import get_corruption, list_variants  # noqa: E402
from vcrbench.datasets.loading import (  # noqa: E402
    CleanSet,
    load_dataset,
    prepare_clean_set,
    read_embedded_dataset,
    select_images,
)
from vcrbench.labels import imagenet_to_16  # noqa: E402
from vcrbench.seeding import derive_seed  # noqa: E402
from vcrbench.settings import DatasetSettings, VifSettings  # noqa: E402
from vcrbench.testsets import coverage, measure, sampling  # noqa: E402
from vcrbench.vif import GREY_CONVERSIONS  # noqa: E402
from vcrbench.vocab import (  # noqa: E402
    CASTS,
    COVERAGE_DENOMINATOR,
    DEFAULT_CAST,
    N_BINS,
    PAIRED_VCR_SETS,
)

#: The paper's ImageNet-C coverage (Table 2, the ImageNet-C column).
PAPER_IMAGENET_C = {
    "brightness": 0.590,
    "gaussian_blur": 0.564,
    "defocus_blur": 0.538,
    "shot_noise": 0.462,
    "frost": 0.436,
    "gaussian_noise": 0.436,
    "impulse_noise": 0.385,
    "motion_blur": 0.333,
    "glass_blur": 0.333,
}
PAPER_N, PAPER_MIN_COUNT = 50_000, 20
#: ImageNet-C's validation set: 50,000 images at five severities.
IMAGENET_C_N = 250_000


#: Workers started fresh, not forked: a fork of a process with threads (torch's, BLAS's, a test
#: runner's) can copy a held lock into the child, which then waits forever.
SPAWN = get_context("spawn")


def expected_coverage_at(p: np.ndarray, n: int, min_count: int) -> float:
    """E[coverage] of n iid samples with bin probabilities p and a fixed threshold."""
    covered = binom.sf(min_count - 1, n, p[:COVERAGE_DENOMINATOR])
    return float(covered.sum() / COVERAGE_DENOMINATOR)


#: What a pipeline is: where the image is corrupted and measured (``crop``: the 224² the model
#: sees; ``stored``: the stored image, longer side bounded by ``--max-side``, as the VCR authors'
#: generator did) and the grey conversion before VIF (``float`` or ``uint8``, OpenCV's).
RESOLUTIONS, GREYS = ("crop", "stored"), GREY_CONVERSIONS
#: How Δv is measured (module docstring); the VIF ones use the pipeline's grey conversion.
METRICS = ("vif", "vif-swapped", "vif-unit", "vif-swapped-unit", "ssim", "ssim-mixed")


def pipeline_key(
    resolution: str,
    grey: str,
    jpeg: int | None = None,
    cast: str = DEFAULT_CAST,
    metric: str = "vif",
) -> str:
    """``resolution/grey``; ``resolution/jpegQ/grey`` for ImageNet-C re-encoded at quality Q; a
    cast other than rounding after the resolution and a metric other than ``vif`` at the end
    (``crop/truncate/jpeg85/float/vif-swapped``); the SSIM metrics name no grey conversion."""
    parts = [resolution, cast if cast != DEFAULT_CAST else None, f"jpeg{jpeg}" if jpeg else None]
    if metric.startswith("vif"):
        parts += [grey, metric if metric != "vif" else None]
    else:
        parts.append(metric)
    return "/".join(p for p in parts if p)


def delta_v_by(metric: str, clean: np.ndarray, shown: np.ndarray, grey: str) -> float:
    """Δv of one uint8 pair by ``metric`` (:data:`METRICS`), clipped to [0, 1]."""
    if metric == "vif":
        settings = VifSettings(grey=grey)
        return float(measure.visual_change(clean[None], shown[None], settings)[1][0])
    if metric.startswith("vif"):
        from vcrbench import vif

        a, b = vif.grey(clean, grey), vif.grey(shown, grey)
        if "unit" in metric:
            a, b = a / 255.0, b / 255.0
        if "swapped" in metric:
            a, b = b, a
        return float(np.clip(1.0 - vif.vif(a, b), 0.0, 1.0))
    if metric in ("ssim", "ssim-mixed"):
        from skimage.color import rgb2gray
        from skimage.metrics import structural_similarity

        g1 = rgb2gray(clean)  # uint8 -> [0, 1]
        g2 = rgb2gray(shown if metric == "ssim" else shown.astype(np.float64))  # 0-255 if mixed
        with np.errstate(invalid="ignore", divide="ignore"):
            # data_range 0 (a saturated image whose minimum is the clean maximum) gives NaN:
            # the toolbox never kept such a draw (its loop draws again); table() drops them
            ssim = structural_similarity(g1, g2, data_range=g1.max() - g2.min())
        return float(np.clip(1.0 - ssim, 0.0, 1.0))
    raise ValueError(f"metric must be one of {list(METRICS)}, not {metric!r}")


class Images:
    """The bench's clean images by id: the 224² clean set (``crop``) and, where prepared, the
    clean set of ``dataset.resolution: stored`` (``stored``: each image at its stored resolution,
    :meth:`vcrbench.datasets.loading.CleanSet.stored_image`)."""

    def __init__(self, folder: str):
        self.clean = CleanSet.open(f"{folder}/images.npy", f"{folder}/index.parquet")
        stored = Path(folder, "stored")
        self.stored = (
            CleanSet.open(stored / "images.npy", stored / "index.parquet")
            if stored.is_dir()
            else None
        )

    def get(self, resolution: str, image_id: str) -> np.ndarray:
        if resolution == "crop":
            return self.clean.image(image_id)
        return self.stored.stored_image(image_id)


def jpeg_roundtrip(image: np.ndarray, quality: int) -> np.ndarray:
    """The image saved as JPEG at ``quality`` and read back (ImageNet-C's released files are
    JPEG, quality 85: hendrycks/robustness ``make_imagenet_c.py``)."""
    buf = io.BytesIO()
    Image.fromarray(image).save(buf, format="JPEG", quality=quality)
    buf.seek(0)
    return np.asarray(Image.open(buf).convert("RGB"))


def measure_all(
    c, images: Images, image_id, params, seed, pipelines, within, jpeg=(), metrics=("vif",),
    casts=(DEFAULT_CAST,), plain=True,
) -> dict:  # fmt: skip
    """Δv of one sample under every pipeline ``(resolution, grey)``: corrupted once per
    resolution and cast (``c`` with each cast of ``casts``), measured once per grey conversion
    and metric (and per JPEG quality in ``jpeg``; ``plain=False``: only those)."""
    out = {}
    for resolution in dict.fromkeys(r for r, _ in pipelines):
        clean = images.get(resolution, image_id)
        for cast in casts:
            corrupted = c.get(cast).apply(clean, params, int(seed), within=within)
            for quality in ((None,) if plain else ()) + tuple(jpeg):
                shown = corrupted if quality is None else jpeg_roundtrip(corrupted, quality)
                for metric in metrics:
                    greys = [g for r, g in pipelines if r == resolution]
                    for grey in greys if metric.startswith("vif") else greys[:1]:
                        key = pipeline_key(resolution, grey, quality, cast, metric)
                        out[key] = delta_v_by(metric, clean, shown, grey)
    return out


def corruption_casts(name: str, casts, options=None) -> dict:
    """The corruption ``name`` on the paper's domains (with ``options``, e.g. its variant), once
    per cast: ``{cast: Corruption}``."""
    options = {"domain_set": "paper", **(options or {})}
    return {k: get_corruption(name, {**options, "cast": k}) for k in casts}


def imagenet_c_dv(c, images: Images, pipelines, jpeg, measures=None) -> dict[str, list[float]]:
    """Δv of every clean image at the five severities, per pipeline (``measures``: the keyword
    arguments of :func:`measure_all` beyond ``jpeg``; ``c``: a Corruption or ``{cast: ...}``)."""
    c = c if isinstance(c, dict) else {DEFAULT_CAST: c}
    measures = {"casts": tuple(c), **(measures or {})}
    any_c = next(iter(c.values()))
    out: dict[str, list[float]] = {}
    for severity, params in enumerate(any_c.imagenet_c, start=1):
        for i in images.clean.image_ids:
            seed = derive_seed(0, "imagenet-c", any_c.name, severity, i)
            dvs = measure_all(
                c, images, i, dict(params), seed, pipelines, "limits", jpeg, **measures
            )
            for key, dv in dvs.items():
                out.setdefault(key, []).append(dv)
    return out


def job(
    name: str, folder: str, n: int, pipelines, jpeg, paired: bool = True, casts=(DEFAULT_CAST,),
    metrics=("vif",), inc_metrics=(), plain_inc: bool = True, toolbox: bool = False,
) -> dict:  # fmt: skip
    images = Images(folder)
    c = corruption_casts(name, casts)
    # a row's VCR set: Table 2's pair (vocab.PAIRED_VCR_SETS), or its own with --own-vcr-sets;
    # with --toolbox-variants the toolbox's own function and draw where it has one
    vcr_name = PAIRED_VCR_SETS.get(name, name) if paired else name
    variant = {"variant": "toolbox"} if toolbox and "toolbox" in list_variants(vcr_name) else {}
    v = corruption_casts(vcr_name, casts, variant)
    v0 = next(iter(v.values()))
    start = time.perf_counter()
    m = sampling.make_manifest(v0, images.clean, n, n, seed=21, mode="parameter-uniform")
    values = {p: m[f"param.{p}"].to_numpy() for p in v0.param_names}
    ids, seeds = m["image_id"].to_numpy(), m["seed"].to_numpy()
    vcr: dict[str, list[float]] = {}
    for k in range(len(m)):
        params = {p: float(x[k]) for p, x in values.items()}
        dvs = measure_all(
            v, images, ids[k], params, seeds[k], pipelines, "domain", metrics=metrics, casts=casts
        )
        for key, dv in dvs.items():
            vcr.setdefault(key, []).append(dv)
    inc_measures = {"metrics": tuple(dict.fromkeys((*metrics, *inc_metrics))), "plain": plain_inc}
    return {
        "name": name,
        "vcr_corruption": v0.name,
        "vcr_variant": v0.variant,
        "domain": {k: list(x) for k, x in v0.domain.items()},
        "vcr_dv": vcr,
        "vcr_ids": [str(i) for i in ids],
        "imagenet_c_dv": imagenet_c_dv(c, images, pipelines, jpeg, inc_measures),
        "imagenet_c_ids": [str(i) for i in images.clean.image_ids] * len(c[casts[0]].imagenet_c),
        "seconds": time.perf_counter() - start,
    }


def prepare_images(folder: str, dataset=None, max_side: int | None = None) -> int:
    """Write the bench's images to ``folder``: the 224² clean set of ``dataset`` (a dataset table;
    None: the embedded images) and, with ``max_side``, the clean set with the stored images
    (``dataset.resolution: stored``, :func:`vcrbench.datasets.loading.prepare_clean_set`) in
    ``folder/stored``. Returns the number of images."""
    table = read_embedded_dataset() if dataset is None else dataset
    index = prepare_clean_set(table, f"{folder}/images.npy", f"{folder}/index.parquet")
    if max_side is not None:
        sub = Path(folder, "stored")
        sub.mkdir(exist_ok=True)
        stored = DatasetSettings(resolution="stored", stored_max_side=max_side)
        prepare_clean_set(table, sub / "images.npy", sub / "index.parquet", stored)
    return len(index)


def per_corruption(job, names: list[str], workers: int, *args, dataset=None, max_side=None):
    """``job(name, images folder, *args)`` for every corruption, on the embedded clean set at 224²
    (or ``dataset``'s, a dataset table; with ``max_side`` also the stored images,
    :func:`prepare_images`), in ``workers`` single-threaded processes."""
    with tempfile.TemporaryDirectory() as tmp:
        prepare_images(tmp, dataset, max_side)
        with ProcessPoolExecutor(workers, initializer=_init, mp_context=SPAWN) as ex:
            k = len(names)
            return list(ex.map(job, names, [tmp] * k, *[[a] * k for a in args]))


def finish(start: float, args, payload) -> None:
    """Print the wall time and the load; write ``payload`` to ``--json`` if given."""
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\nwall {time.perf_counter() - start:.0f} s, {args.workers} workers; load at end {load}")
    if args.json:
        Path(args.json).write_text(json.dumps(payload))


def _parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="VCR samples per corruption")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", default=None, help="also write the results here")
    parser.add_argument(
        "--corruptions", default=None, help="comma-separated rows of Table 2 (default all nine)"
    )
    parser.add_argument("--dataset", choices=("embedded", "folder"), default="embedded")
    parser.add_argument("--path", default=None, help="folder of images (--dataset folder)")
    parser.add_argument(
        "--labels", default=None, help="CSV file,label (--dataset folder; WordNet ids or indices)"
    )
    parser.add_argument(
        "--images", type=int, default=None, help="use this many images, drawn at random (seed 0)"
    )
    parser.add_argument(
        "--resolution",
        default="crop",
        help="where to corrupt and measure, comma-separated: crop (the 224² models see) and/or "
        "stored (the stored image, longer side at most --max-side: the VCR authors' pipeline)",
    )
    parser.add_argument(
        "--max-side",
        type=int,
        default=DatasetSettings().stored_max_side,
        help="bound of --resolution stored (the schema's dataset.stored_max_side)",
    )
    parser.add_argument(
        "--grey", default="float", help="grey conversion before VIF, comma-separated: float, uint8"
    )
    parser.add_argument(
        "--imagenet-c-jpeg",
        default="",
        help="also measure the ImageNet-C samples saved as JPEG at these qualities (comma-separated;"
        " the released sets: 85)",
    )
    parser.add_argument(
        "--own-vcr-sets",
        action="store_true",
        help="draw every row's VCR set from its own corruption (no motion_blur_line or "
        "glass_blur_toolbox)",
    )
    parser.add_argument(
        "--toolbox-variants",
        action="store_true",
        help="draw the VCR sets with the toolbox's own function and draw where the corruption has "
        "one (variant: toolbox, as config/paper.yaml); the ImageNet-C sets are ImageNet-C's",
    )
    parser.add_argument(
        "--imagenet-c-jpeg-only",
        action="store_true",
        help="measure the ImageNet-C samples only as JPEG (--imagenet-c-jpeg), not as corrupted",
    )
    parser.add_argument(
        "--cast",
        default=DEFAULT_CAST,
        help="corrupted image to uint8, comma-separated: round, truncate",
    )
    parser.add_argument(
        "--metric", default="vif", help=f"Δv of both columns, comma-separated: {', '.join(METRICS)}"
    )
    parser.add_argument(
        "--imagenet-c-metric", default="", help="further Δv metrics of the ImageNet-C column only"
    )
    parser.add_argument(
        "--human-classes",
        action="store_true",
        help="only the images of the 16 human classes' 207 ImageNet classes (after --images)",
    )
    parser.add_argument(
        "--imagenet-c-share",
        type=float,
        default=None,
        help="ImageNet-C threshold: 20 images in this share of 250,000 samples, scaled (0.1: "
        "RobustBench's 5,000 images per severity); default: the VCR column's threshold",
    )
    args = parser.parse_args(argv)
    args.names = args.corruptions.split(",") if args.corruptions else list(PAPER_VCR)
    unknown = sorted(set(args.names) - set(PAPER_VCR))
    if unknown:
        parser.error(f"not in Table 2: {unknown}; its rows: {', '.join(PAPER_VCR)}")
    for option, allowed in (
        ("resolution", RESOLUTIONS), ("grey", GREYS), ("cast", CASTS), ("metric", METRICS),
        ("imagenet_c_metric", METRICS),
    ):  # fmt: skip
        picked = [x for x in getattr(args, option).split(",") if x]
        if bad := sorted(set(picked) - set(allowed)):
            flag = option.replace("_", "-")
            parser.error(f"--{flag}: {bad} unknown; choose from {', '.join(allowed)}")
        setattr(args, option, picked)
    if not args.metric:
        parser.error("--metric: give at least one")
    if args.imagenet_c_jpeg_only and not args.imagenet_c_jpeg:
        parser.error("--imagenet-c-jpeg-only needs --imagenet-c-jpeg")
    if args.imagenet_c_share is not None and not 0 < args.imagenet_c_share <= 1:
        parser.error("--imagenet-c-share must be in (0, 1]")
    args.pipelines = [(r, g) for r in args.resolution for g in args.grey]
    args.jpeg = [int(q) for q in args.imagenet_c_jpeg.split(",") if q]
    if args.dataset == "folder" and not (args.path and args.labels):
        parser.error("--dataset folder needs --path and --labels")
    return args


def imagenet_c_min_count(n_vcr: int, n_imagenet_c: int, share: float | None) -> int:
    """The ImageNet-C column's threshold: the VCR column's (``share`` None), or the paper's 20
    images in ``share`` × 250,000 samples scaled to ``n_imagenet_c`` (at least 1)."""
    if share is None:
        return coverage.threshold(n_vcr)
    return scaled_min_count(n_imagenet_c, PAPER_MIN_COUNT, round(share * IMAGENET_C_N))


def table(args, results: dict, key: str, inc_key: str) -> list[dict]:
    """Print and return the rows of Table 2 for one pipeline (``key`` for the VCR column,
    ``inc_key`` for the ImageNet-C column)."""
    m = coverage.threshold(args.n)
    n_inc = len(next(iter(results.values()))["imagenet_c_dv"][inc_key])
    m_inc = imagenet_c_min_count(args.n, n_inc, args.imagenet_c_share)
    print(
        f"\n## VCR {key}, ImageNet-C {inc_key}; threshold {m} image(s) per bin (ImageNet-C {m_inc})"
    )
    print(
        f"{'corruption':15s} {'IN-C here':>9s} {'paper':>6s}   {'VCR here':>8s} "
        f"{'E@50k':>6s} {'paper':>6s}  Δv range here"
    )
    rows = []
    for name in args.names:
        r = results[name]
        vcr, inc = np.asarray(r["vcr_dv"][key]), np.asarray(r["imagenet_c_dv"][inc_key])
        # SSIM's undefined draws (NaN, delta_v_by) are dropped and counted
        dropped = (int(np.isnan(vcr).sum()), int(np.isnan(inc).sum()))
        vcr, inc = vcr[~np.isnan(vcr)], inc[~np.isnan(inc)]
        cov_vcr = coverage.coverage(vcr, min_count=m)["coverage"]
        cov_inc = coverage.coverage(inc, min_count=m_inc)["coverage"]
        p = counts_per_bin(vcr, N_BINS) / len(vcr)
        expected = expected_coverage_at(p, PAPER_N, PAPER_MIN_COUNT)
        rows.append(
            {
                "corruption": name,
                "vcr_corruption": r["vcr_corruption"],
                "pipeline": key,
                "imagenet_c_pipeline": inc_key,
                "imagenet_c": cov_inc,
                "paper_imagenet_c": PAPER_IMAGENET_C[name],
                "vcr": cov_vcr,
                "vcr_expected_50k": expected,
                "paper_vcr": PAPER_VCR[name],
                "vcr_dv_min": float(vcr.min()),
                "vcr_dv_max": float(vcr.max()),
                "imagenet_c_dv_min": float(inc.min()),
                "imagenet_c_dv_max": float(inc.max()),
                "min_count": m,
                "imagenet_c_min_count": m_inc,
                "undefined_dropped": dropped,
                "domain": r["domain"],
                "seconds": r["seconds"],
            }
        )
        print(
            f"{name:15s} {cov_inc:9.3f} {PAPER_IMAGENET_C[name]:6.3f}   {cov_vcr:8.3f} "
            f"{expected:6.3f} {PAPER_VCR[name]:6.3f}  {vcr.min():.2f}-{vcr.max():.2f}"
            + (
                f"  (undefined, dropped: VCR {dropped[0]}, IN-C {dropped[1]})"
                if any(dropped)
                else ""
            ),
            flush=True,
        )
    near = [
        sum(abs(x[k] - x[f"paper_{k}"]) <= 0.05 + 1e-9 for x in rows) for k in ("imagenet_c", "vcr")
    ]
    print(
        f"within .05 of the paper: ImageNet-C {near[0]} of {len(rows)}, VCR {near[1]} of {len(rows)}"
    )
    return rows


def main(argv=None) -> None:
    args = _parse_args(argv)
    dataset = None
    if args.dataset == "folder":
        dataset = load_dataset(DatasetSettings(kind="folder", path=args.path, labels=args.labels))
        if args.images is not None:
            dataset = select_images(dataset, n_images=args.images, seed=0)
    elif args.images is not None:
        dataset = select_images(read_embedded_dataset(), n_images=args.images, seed=0)
    if args.human_classes:
        dataset = read_embedded_dataset() if dataset is None else dataset
        dataset = dataset[imagenet_to_16(dataset["label"].to_numpy()) >= 0].reset_index(drop=True)
        if dataset.empty:
            raise SystemExit("--human-classes: none of the images is in the 16 human classes")
    max_side = args.max_side if "stored" in args.resolution else None
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"# Table 2 check: paper domains, parameter-uniform, N = {args.n}; {args.dataset} images"
        f"{' (16 human classes)' if args.human_classes else ''}; pipelines {args.pipelines}; "
        f"casts {args.cast}; metrics {args.metric} (ImageNet-C also {args.imagenet_c_metric}); "
        f"ImageNet-C JPEG {args.jpeg or 'no'}; load {load}"
    )
    start = time.perf_counter()
    plain = not args.imagenet_c_jpeg_only
    found = per_corruption(
        job, args.names, args.workers, args.n, args.pipelines, args.jpeg, not args.own_vcr_sets,
        tuple(args.cast), tuple(args.metric), tuple(args.imagenet_c_metric), plain,
        args.toolbox_variants, dataset=dataset, max_side=max_side,
    )  # fmt: skip
    results = {r["name"]: r for r in found}
    if args.json:  # the measurements first: a table that fails loses nothing
        Path(args.json).write_text(json.dumps({"n": args.n, "results": found}))
    n_inc = len(next(iter(results.values()))["imagenet_c_ids"])
    print(f"\nImageNet-C: {n_inc // 5} images x 5 severities")
    rows = []
    qualities = ((None,) if plain else ()) + tuple(args.jpeg)
    for res, grey in args.pipelines:
        for cast in args.cast:
            for metric in dict.fromkeys((*args.metric, *args.imagenet_c_metric)):
                # an ImageNet-C-only metric beside the VCR column's first metric
                vcr_metric = metric if metric in args.metric else args.metric[0]
                if not metric.startswith("vif") and grey != args.grey[0]:
                    continue  # SSIM has no grey conversion: one table
                key = pipeline_key(res, grey, None, cast, vcr_metric)
                for quality in qualities:
                    inc_key = pipeline_key(res, grey, quality, cast, metric)
                    rows += table(args, results, key, inc_key)
    payload = {
        "n": args.n,
        "min_count": coverage.threshold(args.n),
        "imagenet_c_share": args.imagenet_c_share,
        "human_classes": args.human_classes,
        "rows": rows,
        "results": found,
    }
    finish(start, args, payload)


if __name__ == "__main__":
    sys.exit(main())
