#!/usr/bin/env python
"""HMRI/MRSI of Geirhos et al.'s networks against their human observers; no GPU needed.

Runs the workflow's human stages (vcrbench.humans.stages, vcrbench.humans.geirhos.stages) for the
default Geirhos references in a scratch folder and prints (1) human and network accuracy per
condition, with the values the paper prints; (2) the Δv of every condition on the clean set;
(3) R̂_a, HMRI_a and MRSI_a of each network with bootstrap intervals. With the default arguments
the numbers are those of the default workflow run (embedded clean set, seed 0). Without
--images/--index it builds the embedded clean set (images shipped by installed packages).

    python scripts/geirhos_dnn_vs_humans.py
    python scripts/geirhos_dnn_vs_humans.py --reference zero-condition   # effect of the reference
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import pandas as pd

from vcrbench import schema
from vcrbench.datasets import loading
from vcrbench.humans import mapping, stages
from vcrbench.humans.curves import HumanFit
from vcrbench.humans.geirhos import dnn, reader
from vcrbench.humans.geirhos import stages as geirhos_stages
from vcrbench.plan.humans import mapping_options, references_of
from vcrbench.settings import DatasetSettings, HumanMappingSettings, VifSettings


def accuracy_tables(dnn_aggregation: str) -> None:
    print("## Accuracy per condition (humans: pooled, range over observers; networks)\n")
    for exp in reader.EXPERIMENTS:
        h = reader.condition_accuracy(reader.read_geirhos(exp)).set_index("condition")
        d = reader.condition_accuracy(
            reader.read_geirhos(exp, "dnns", dnn_aggregation=dnn_aggregation),
            by=("participant", "condition"),
        ).pivot(index="condition", columns="participant", values="accuracy")
        table = pd.DataFrame(
            {
                "humans": h["accuracy"],
                "range": [
                    f"{a:.3f}-{b:.3f}"
                    for a, b in zip(h.participant_min, h.participant_max, strict=True)
                ],
            }
        ).join(d)
        table["published"] = [
            reader.PUBLISHED_HUMAN_ACCURACY.get((exp, c), (float("nan"),))[0] for c in table.index
        ]
        print(f"### {exp} ({reader.EXPERIMENTS[exp].parameter})\n")
        print(table.to_string(float_format="%.3f"), "\n")


def main(argv: list[str] | None = None) -> int:
    block = schema.defaults("humans")
    defaults = block["mapping"]
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--images", help="clean-set images.npy (default: build the embedded set)")
    ap.add_argument("--index", help="clean-set index.parquet")
    ap.add_argument("--resize", type=int, default=DatasetSettings().resize)
    ap.add_argument("--crop", type=int, default=DatasetSettings().crop)
    ap.add_argument("--reference", default=defaults["reference"], choices=mapping.REFERENCES)
    ap.add_argument("--draws", type=int, default=defaults["draws"], help="noise fields per image")
    ap.add_argument("--n-images", type=int, default=defaults["n_images"])
    ap.add_argument("--lowpass-sigma-scale", type=float, default=defaults["lowpass_sigma_scale"])
    ap.add_argument("--jpeg-quality", type=int, default=None, help="JPEG of the noise stimuli")
    ap.add_argument("--placement", default=block["placement"], choices=mapping.PLACEMENTS)
    ap.add_argument("--anchor", default=block["anchor"])
    ap.add_argument("--dnn-aggregation", default="mean", choices=["mean", "sum"])
    ap.add_argument("--vif-variant", default=schema.default_of("vif.variant"))
    ap.add_argument("--n-boot", type=int, default=200)
    ap.add_argument("--min-count", type=int, default=20)
    ap.add_argument("--level", type=float, default=0.95)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="keep the stage outputs (trials, conditions, curves, table) here")
    args = ap.parse_args(argv)
    try:
        anchor: float | str = float(args.anchor)
    except ValueError:
        anchor = args.anchor

    accuracy_tables(args.dnn_aggregation)
    refs = block["references"]
    humans_cfg = {
        "references": {
            **refs,
            "geirhos2018-noise": {
                **refs["geirhos2018-noise"],
                "mapping": {"jpeg_quality": args.jpeg_quality},
            },
        },
        "mapping": {
            "reference": args.reference,
            "n_images": args.n_images,
            "draws": args.draws,
            "lowpass_sigma_scale": args.lowpass_sigma_scale,
        },
    }
    humans_cfg = schema.validate_block("humans", humans_cfg)
    settings = {"n_boot": args.n_boot, "min_count": args.min_count, "level": args.level}
    work = Path(tempfile.mkdtemp(prefix="geirhos-dnn-"))
    try:
        if args.images and args.index:
            images, index = Path(args.images), Path(args.index)
        else:
            images, index = work / "dataset" / "images.npy", work / "dataset" / "index.parquet"
            embedded = DatasetSettings(resize=args.resize, crop=args.crop)
            ds = loading.load_dataset(embedded)
            loading.prepare_clean_set(ds, images, index, embedded)
        n_clean = len(loading.CleanSet.open(images, index))
        cond_paths, est_dirs = {}, {}
        references = references_of(humans_cfg["references"])
        fit = HumanFit(settings, anchor, args.placement)
        print(f"## Δv per condition ({n_clean} clean images, reference {args.reference})\n")
        for name, reference in references.items():
            ref = work / "humans" / name
            stages.ingest_reference(reference, ref / "trials.parquet")
            cdv = stages.map_conditions(
                ref / "trials.parquet", images, index, ref / "conditions.parquet",
                reference_name=name, seed=args.seed,
                settings=HumanMappingSettings.of_config(
                    mapping_options({"humans": humans_cfg}, name)
                ),
                vif_settings=VifSettings(variant=args.vif_variant),
            )  # fmt: skip
            print(f"### {name}\n")
            summary = mapping.summarise(cdv).drop(columns="corruption")
            print(summary.to_string(index=False, float_format="%.3f"), "\n")
            stages.estimate_reference(
                ref / "trials.parquet", ref / "conditions.parquet", ref, reference=reference,
                fit=fit, seed=args.seed,
            )  # fmt: skip
            cond_paths[name], est_dirs[name] = ref / "conditions.parquet", ref
        table = geirhos_stages.dnn_table(
            references, cond_paths, est_dirs, work / "geirhos_dnn_vs_humans.csv", fit=fit,
            seed=args.seed, metric_range=humans_cfg["metric_range"],
            dnn_aggregation=args.dnn_aggregation,
        )  # fmt: skip
        print(
            f"## HMRI/MRSI against the humans ({args.level:.0%} bootstrap intervals, "
            f"B = {args.n_boot})\n"
        )
        print(dnn.format_table(table, schema.default_of("figures.digits")))
        if args.out:
            shutil.copytree(work, args.out, dirs_exist_ok=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
