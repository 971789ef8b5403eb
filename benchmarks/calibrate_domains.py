"""Measure Δv at both ends of every corruption's domain and at its ImageNet-C severities.

Prints, per corruption, Δv (median, min, max over the embedded images) along the 1-D path of
Δv-uniform sampling (identity → domain end) and at the ImageNet-C severities; with ``--write`` it
stores these measurements under ``measured`` in ``vcrbench/data/corruption_domains.yaml`` (the
domains and their reasons are kept as they are written there).

    python benchmarks/calibrate_domains.py [--write] [--corruptions a,b] [--points 11]

Δv is the real ``vcrbench.vif.delta_v`` (variant ``kumar``) on the embedded clean set (224², the
images that ship inside installed packages).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.resources
import tempfile
from pathlib import Path

import numpy as np
import yaml

from vcrbench.corruptions import domains, get_corruption, list_corruptions
from vcrbench.datasets.loading import CleanSet, prepare_clean_set, read_embedded_dataset
from vcrbench.files import io
from vcrbench.settings import VifSettings
from vcrbench.vif import delta_v

HEADER = """\
# Parameter domains of the built-in corruptions, calibrated on measured Δv.
#
# domain:   {parameter: [low, high]}, the box C that sampling draws from (a config entry's
#           `domain` overrides it). Each parameter also has an identity value (no change), set in
#           code; the 1-D path of dv-uniform sampling runs from it to the domain's ends.
# reason:   why these ends.
# measured: Δv (vcrbench.vif.delta_v, variant kumar) over the embedded clean set (224x224),
#           written by benchmarks/calibrate_domains.py: median / min / max over images at the
#           mild end (the path at t = 0) and the severe end (t = 1; `upper`/`lower` for parameters
#           whose identity lies inside the domain, i.e. signed shifts), and at the ImageNet-C
#           severities 1 and 5 where the corruption has them.
"""


def stats(dv: np.ndarray) -> dict:
    return {
        "median": round(float(np.median(dv)), 4),
        "min": round(float(dv.min()), 4),
        "max": round(float(dv.max()), 4),
    }


def measure(
    c, clean: np.ndarray, params: dict, within: str = "domain", seed: int = 7
) -> np.ndarray:
    out = np.stack([c.apply(img, params, seed + i, within=within) for i, img in enumerate(clean)])
    return delta_v(clean, out, VifSettings(variant="kumar"))[1]


def at_path(c, t: float, side: float | None) -> dict:
    sides = None if side is None else {p: np.array([side]) for p in c.param_names}
    return {k: float(v[0]) for k, v in c.path(np.array([t]), sides).items()}


def calibrate(name: str, clean: np.ndarray, points: int) -> dict:
    c = get_corruption(name)
    signed = any(c.domain[p.name][0] < p.identity < c.domain[p.name][1] for p in c.params)
    ends = {"upper": 0.0, "lower": 0.999999} if signed else {"": None}
    result: dict = {"dv_mild": stats(measure(c, clean, at_path(c, 0.0, None)))}
    severe = {}
    for label, side in ends.items():
        for t in np.linspace(0, 1, points):
            params = at_path(c, float(t), side)
            s = stats(measure(c, clean, params))
            text = ", ".join(f"{k}={v:.4g}" for k, v in params.items())
            print(f"{name:22s} {label:5s} t={t:4.2f} {text:60s} dv {s}", flush=True)
        severe[label or "end"] = stats(measure(c, clean, at_path(c, 1.0, side)))
    result["dv_severe"] = severe["end"] if not signed else severe
    if c.imagenet_c:
        result["imagenet_c"] = {
            "severity_1": stats(measure(c, clean, c.imagenet_c[0], "limits")),
            "severity_5": stats(measure(c, clean, c.imagenet_c[4], "limits")),
        }
    print(f"{name}: {result}", flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="store the measurements")
    parser.add_argument("--corruptions", default=None, help="comma-separated names (default all)")
    parser.add_argument("--points", type=int, default=11, help="points printed along each path")
    args = parser.parse_args()
    names = args.corruptions.split(",") if args.corruptions else list_corruptions()
    with tempfile.TemporaryDirectory() as tmp:
        prepare_clean_set(read_embedded_dataset(), f"{tmp}/images.npy", f"{tmp}/index.parquet")
        clean_set = CleanSet.open(f"{tmp}/images.npy", f"{tmp}/index.parquet")
        clean = clean_set.images(clean_set.image_ids)
        results = {name: calibrate(name, clean, args.points) for name in names}
    if args.write:
        path = Path(str(importlib.resources.files("vcrbench") / "data" / domains.DOMAINS_FILE))
        data = yaml.safe_load(path.read_text())
        stamp = {
            "images": "embedded clean set, 224x224, one seed per image",
            "vif_variant": "kumar",
            "date": datetime.date.today().isoformat(),
        }
        for name, measured in results.items():
            data[name]["measured"] = {**measured, **stamp}
        text = HEADER + yaml.safe_dump(
            data, sort_keys=False, width=100, allow_unicode=True, default_flow_style=None
        )
        io.write_text(text, path)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
