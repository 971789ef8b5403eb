"""Scale rehearsal: one corruption at paper scale through the workflow, on this machine.

What it does (a script that prints figures, not a test):

1. builds a **synthetic** 50,000-image clean set: each image is one of the embedded images
   (``dataset.kind: embedded``) under a seeded random crop, flip and small brightness change,
   written as a JPEG (quality 95) into a folder with a ``file,label`` CSV. It is not ImageNet and
   its numbers say nothing about robustness: it has the size, shape and file format of the paper's
   clean set, so the workflow's cost can be measured;
2. runs the workflow (``snakemake --cores N``) on it with paper.yaml's sampling, shard size and VIF,
   for one corruption: the clean set, the full 50,000-sample VCR set (50 shards of 1,000), its
   sharded ImageNet-C comparison set and the coverage table — no inference;
3. prints the wall time, each rule's jobs with their mean run time and peak resident memory (from
   Snakemake's ``benchmark:`` files), the disk per image of every output kind, and the time
   Snakemake takes to plan config/paper.yaml with all its models (a dry run with stand-in paths).

    python benchmarks/bench_rehearsal.py [--workdir DIR] [--n-images 50000]
        [--corruption gaussian_noise] [--imagenet-c-images 5000] [--cores 2] [--json FILE]

``--imagenet-c-images`` sets ``imagenet_c.n_images`` (images per severity; 5 severities each);
the paper's full set is 50,000 per severity. The machine's load is printed: other processes share
it and the wall time scales with what they leave.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import numpy as np
import yaml
from PIL import Image

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from vcrbench.datasets.loading import load_image, read_embedded_dataset  # noqa: E402
from vcrbench.seeding import rng  # noqa: E402

SEED = 0
SIDE = 320  # the synthetic images' short side before the workflow's resize 256 / crop 224


#: Workers started fresh, not forked: a fork of a process with threads (torch's, BLAS's, a test
#: runner's) can copy a held lock into the child, which then waits forever.
SPAWN = get_context("spawn")


def _derive(args: tuple[int, np.ndarray, Path]) -> None:
    """Write synthetic image ``i``: a seeded crop, flip and brightness change of ``base``."""
    i, base, path = args
    gen = rng(SEED, "rehearsal", i)
    h, w = base.shape[:2]
    side = int(min(h, w) * gen.uniform(0.6, 1.0))
    top = int(gen.integers(0, h - side + 1))
    left = int(gen.integers(0, w - side + 1))
    crop = base[top : top + side, left : left + side]
    if gen.random() < 0.5:
        crop = crop[:, ::-1]
    crop = np.clip(crop.astype(np.float32) * gen.uniform(0.85, 1.15), 0, 255).astype(np.uint8)
    Image.fromarray(crop).resize((SIDE, SIDE), Image.BILINEAR).save(path, quality=95)


def build_synthetic_set(folder: Path, n_images: int, workers: int) -> Path:
    """The synthetic clean set (see the module docstring); returns its labels CSV."""
    labels_csv = folder.parent / "labels.csv"
    if labels_csv.is_file():
        return labels_csv
    folder.mkdir(parents=True, exist_ok=True)
    embedded = read_embedded_dataset()
    bases = [load_image(p, exif_transpose=False) for p in embedded["path"]]
    labels = embedded["label"].tolist()
    names = [f"synthetic_{i:06d}.jpg" for i in range(n_images)]
    jobs = ((i, bases[i % len(bases)], folder / names[i]) for i in range(n_images))
    with ProcessPoolExecutor(workers, mp_context=SPAWN) as pool:
        for _ in pool.map(_derive, jobs, chunksize=256):
            pass
    tmp = labels_csv.with_suffix(".tmp")
    with tmp.open("w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["file", "label"])
        out.writerows((name, labels[i % len(labels)]) for i, name in enumerate(names))
    tmp.replace(labels_csv)
    return labels_csv


def rehearsal_config(workdir: Path, folder: Path, labels: Path, args) -> Path:
    """paper.yaml's sampling, shards, VIF and coverage on the synthetic set, one corruption."""
    paper = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    for key in ("sampling", "vif", "coverage", "imagenet_c"):
        config[key] = paper[key]
    config["seed"] = paper["seed"]
    config["dataset"] = {
        "kind": "folder",
        "path": str(folder),
        "labels": str(labels),
        "resize": 256,
        "crop": 224,
    }
    config["sampling"]["n_samples"] = args.n_images
    config["corruptions"] = {args.corruption: {}}
    config["imagenet_c"] = {**config["imagenet_c"], "enabled": True}
    config["imagenet_c"]["n_images"] = args.imagenet_c_images
    path = workdir / "rehearsal.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile")]
    cmd += ["--directory", str(workdir), *args]
    env = dict(os.environ, NO_ALBUMENTATIONS_UPDATE="1")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")])
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


def rule_table(workdir: Path) -> list[dict]:
    """Per rule: jobs, mean and total run time, peak resident memory (benchmark files)."""
    rows = []
    root = workdir / "results" / "benchmarks"
    for rule_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        records = []
        for tsv in rule_dir.rglob("*.tsv"):
            with tsv.open() as fh:
                records += list(csv.DictReader(fh, delimiter="\t"))
        if not records:
            continue

        def values(key, records=records):
            return [float(r[key]) for r in records if r.get(key) not in (None, "", "NA", "-")]

        seconds = values("s")
        rss = values("max_rss")
        rows.append(
            {
                "rule": rule_dir.name,
                "jobs": len(records),
                "mean_s": float(np.mean(seconds)),
                "max_s": float(np.max(seconds)),
                "total_s": float(np.sum(seconds)),
                "peak_rss_mb": float(max(rss)) if rss else None,
            }
        )
    return rows


def disk_table(workdir: Path, n_samples: int, n_imagenet_c: int, n_images: int) -> list[dict]:
    results = workdir / "results"

    def size(pattern: str) -> int:
        return sum(p.stat().st_size for p in results.glob(pattern) if p.is_file())

    kinds = [
        ("clean set (uint8 224x224x3)", "dataset/*", n_images),
        ("VCR test set shards", "testsets/*/shard-*.parquet", n_samples),
        ("ImageNet-C shards", "imagenet-c/**/*.parquet", n_imagenet_c),
    ]
    rows = []
    for name, pattern, count in kinds:
        total = size(pattern)
        rows.append(
            {
                "output": name,
                "bytes": total,
                "items": count,
                "kib_per_item": total / 1024 / count if count else None,
            }
        )
    return rows


def paper_plan_time(workdir: Path) -> dict:
    """Wall time of ``snakemake -n`` on config/paper.yaml (stand-in dataset and weight files)."""
    config = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    stand_in = workdir / "paper-stand-ins"
    for key in ("val", "train"):
        (stand_in / key).mkdir(parents=True, exist_ok=True)
    config["dataset"]["path"] = str(stand_in / "val")
    if config.get("retrain", {}).get("pool", {}).get("path"):
        config["retrain"]["pool"]["path"] = str(stand_in / "train")
    plan_dir = stand_in / "run"
    plan_dir.mkdir(exist_ok=True)
    for entry in config["models"].values():
        if entry.get("checkpoint"):  # relative paths are read from the working directory
            weights = plan_dir / entry["checkpoint"]
            weights.parent.mkdir(parents=True, exist_ok=True)
            weights.touch()
    path = stand_in / "paper.yaml"
    path.write_text(yaml.safe_dump(config))
    start = time.perf_counter()
    proc = snakemake(plan_dir, "-n", "--quiet", "rules", "--configfile", str(path))
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"paper.yaml does not plan:\n{proc.stderr[-3000:]}")
    jobs = 0
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "total" and parts[1].isdigit():
            jobs = int(parts[1])
    return {"seconds": seconds, "jobs": jobs, "models": len(config["models"])}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--n-images", type=int, default=50_000)
    parser.add_argument("--corruption", default="gaussian_noise")
    parser.add_argument("--imagenet-c-images", type=int, default=5_000)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="vcr-rehearsal-"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"machine: {platform.node()} {os.cpu_count()} cores, {platform.processor() or '?'}")
    print(f"load at start (1/5/15 min): {os.getloadavg()}")
    print(f"workdir: {workdir}")

    start = time.perf_counter()
    labels = build_synthetic_set(workdir / "synthetic" / "images", args.n_images, args.cores)
    synth_s = time.perf_counter() - start
    print(f"synthetic clean set: {args.n_images:,} JPEGs in {synth_s:.0f} s")

    config = rehearsal_config(workdir, workdir / "synthetic" / "images", labels, args)
    for stale in ("results", ".snakemake"):  # a fresh run each time (the synthetic set is kept)
        shutil.rmtree(workdir / stale, ignore_errors=True)
    start = time.perf_counter()
    proc = snakemake(
        workdir,
        "results/tables/coverage.csv",
        "--cores",
        str(args.cores),
        "--configfile",
        str(config),
    )
    run_s = time.perf_counter() - start
    if proc.returncode != 0:
        print(proc.stdout[-4000:], proc.stderr[-4000:])
        return 1
    load = os.getloadavg()
    print(
        f"workflow (clean set + VCR set + ImageNet-C set + coverage): {run_s:.0f} s wall, "
        f"{args.cores} cores; load at end {load}"
    )

    rules = rule_table(workdir)
    n_imagenet_c = 5 * min(args.imagenet_c_images or args.n_images, args.n_images)
    disk = disk_table(workdir, args.n_images, n_imagenet_c, args.n_images)
    plan = paper_plan_time(workdir)

    print("\n| rule | jobs | mean s/job | total s | peak RSS MB |\n|---|---:|---:|---:|---:|")
    for r in rules:
        peak = f"{r['peak_rss_mb']:.0f}" if r["peak_rss_mb"] is not None else "?"
        print(f"| {r['rule']} | {r['jobs']} | {r['mean_s']:.1f} | {r['total_s']:.0f} | {peak} |")
    print("\n| output | GB | items | KiB per item |\n|---|---:|---:|---:|")
    for d in disk:
        print(
            f"| {d['output']} | {d['bytes'] / 1e9:.2f} | {d['items']:,} | {d['kib_per_item']:.1f} |"
        )
    print(
        f"\nplanning config/paper.yaml ({plan['models']} models): {plan['jobs']:,} jobs "
        f"in {plan['seconds']:.1f} s (snakemake -n)"
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "machine": {"cores": os.cpu_count(), "load_end": load},
                    "n_images": args.n_images,
                    "imagenet_c_images": args.imagenet_c_images,
                    "synthetic_s": synth_s,
                    "workflow_s": run_s,
                    "rules": rules,
                    "disk": disk,
                    "paper_plan": plan,
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
