#!/usr/bin/env python
"""HMRI/MRSI of Geirhos et al.'s networks against their human observers; no GPU needed.

Prints (1) human and network accuracy per condition of the uniform-noise and low-pass experiments,
with the values the paper prints; (2) the Δv of every condition on the clean set; (3) the table of
R̂_a, HMRI_a and MRSI_a with bootstrap intervals. Without --images/--index it builds the embedded
clean set (images shipped by installed packages) in a temporary folder.

    python scripts/geirhos_dnn_vs_humans.py --n-boot 200
    python scripts/geirhos_dnn_vs_humans.py --reference zero-condition   # effect of the reference
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import pandas as pd

from vcrbench import datasets, io
from vcrbench.humans import dnn, geirhos, mapping


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--images", help="clean-set images.npy (default: build the embedded set)")
    ap.add_argument("--index", help="clean-set index.parquet")
    ap.add_argument("--resize", type=int, default=256)
    ap.add_argument("--crop", type=int, default=224)
    ap.add_argument("--reference", default="original", choices=mapping.REFERENCES)
    ap.add_argument("--draws", type=int, default=4, help="noise draws per image and width")
    ap.add_argument("--n-images", type=int, default=None)
    ap.add_argument("--lowpass-sigma-scale", type=float, default=1.0)
    ap.add_argument("--jpeg-quality", type=int, default=None)
    ap.add_argument("--placement", default="draw", choices=mapping.PLACEMENTS)
    ap.add_argument("--anchor", default="zero-condition")
    ap.add_argument("--dnn-aggregation", default="mean", choices=["mean", "sum"])
    ap.add_argument("--vif-variant", default="kumar")
    ap.add_argument("--n-boot", type=int, default=200)
    ap.add_argument("--min-count", type=int, default=20)
    ap.add_argument("--level", type=float, default=0.95)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="folder for conditions-*.parquet and the table as CSV")
    args = ap.parse_args(argv)
    pd.set_option("display.width", 200)

    print("## Accuracy per condition (humans; networks with the mean rule)\n")
    for exp in geirhos.EXPERIMENTS:
        h = geirhos.condition_accuracy(geirhos.read_geirhos(exp)).set_index("condition")
        d = geirhos.condition_accuracy(
            geirhos.read_geirhos(exp, "dnns", dnn_aggregation=args.dnn_aggregation),
            by=("participant", "condition"),
        ).pivot(index="condition", columns="participant", values="accuracy")
        table = pd.DataFrame(
            {
                "humans": h["accuracy"],
                "range": h.apply(
                    lambda r: f"{r.participant_min:.3f}-{r.participant_max:.3f}", axis=1
                ),
            }
        ).join(d)
        table["published"] = [
            geirhos.PUBLISHED_HUMAN_ACCURACY.get((exp, c), (float("nan"),))[0] for c in table.index
        ]
        print(f"### {exp} ({geirhos.EXPERIMENTS[exp].parameter})\n")
        print(table.to_string(float_format="%.3f"), "\n")

    with tempfile.TemporaryDirectory() as tmp:
        if args.images and args.index:
            clean = datasets.CleanSet.open(args.images, args.index)
        else:
            ds = datasets.load_dataset("embedded")
            images, index = Path(tmp) / "images.npy", Path(tmp) / "index.parquet"
            datasets.prepare_clean_set(ds, images, index, resize=args.resize, crop=args.crop)
            clean = datasets.CleanSet.open(images, index)
        cdv = dnn.geirhos_condition_dv(
            clean, vif_variant=args.vif_variant, seed=args.seed, reference=args.reference,
            n_images=args.n_images, draws=args.draws, lowpass_sigma_scale=args.lowpass_sigma_scale,
            jpeg_quality=args.jpeg_quality,
        )  # fmt: skip
    print(f"## Δv per condition ({len(clean)} clean images, reference {args.reference})\n")
    for exp, table in cdv.items():
        print(f"### {exp}\n")
        print(
            mapping.summarise(table)
            .drop(columns="corruption")
            .to_string(index=False, float_format="%.3f"),
            "\n",
        )

    settings = {"n_boot": args.n_boot, "min_count": args.min_count, "level": args.level}
    table = dnn.dnn_vs_humans(
        cdv, settings, args.seed, anchor=args.anchor, placement=args.placement,
        dnn_aggregation=args.dnn_aggregation,
    )  # fmt: skip
    print(
        f"## HMRI/MRSI against the humans ({args.level:.0%} bootstrap intervals, B = {args.n_boot})\n"
    )
    print(dnn.format_table(table))
    if args.out:
        out = Path(args.out)
        for exp, t in cdv.items():
            io.write_parquet(t, out / f"conditions-{exp}.parquet", metadata=t.attrs)
        io.write_csv(table, out / "geirhos_dnn_vs_humans.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
