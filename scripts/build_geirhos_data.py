#!/usr/bin/env python
"""Build the compact copy of the Geirhos et al. (2018) trial data (Parquet) from the CSV release.

Geirhos, Temme, Rauber, Schütt, Bethge, Wichmann: *Generalisation in humans and deep neural
networks*, NeurIPS 2018. Data: https://github.com/rgeirhos/generalisation-humans-DNNs (CC-BY-4.0),
converted from commit 0b88343. Download the release first, e.g.

    git clone https://github.com/rgeirhos/generalisation-humans-DNNs
    git -C generalisation-humans-DNNs checkout 0b88343
    python scripts/build_geirhos_data.py --source generalisation-humans-DNNs

``--source`` is either a checkout of that repository (``raw-data/humans``, ``raw-data/TF``,
``raw-data/fine-tuning``) or a folder holding the same three folders as ``geirhos2018-humans``,
``geirhos2018-dnns``, ``geirhos2018-trained``. Both give identical bytes.

Writes ``humans.parquet``, ``dnns.parquet``, ``trained.parquet`` (one row per trial; see
:mod:`vcrbench.humans.geirhos` for the columns) and ``README.md`` into ``--out`` (default:
``src/vcrbench/data/geirhos2018``), and copies the release's ``LICENSE.txt`` there. What is kept:
every CSV of the 11 human experiment folders; of the network folders (``TF``) the files of
GoogLeNet, ResNet-152 and VGG-19 (the human files repeated there are checked to be byte-identical
to ``humans`` and stored once; ``histogram/`` is not trial data); of the training folders
(``fine-tuning``) the networks of :data:`~vcrbench.humans.geirhos.TRAINED_NETWORKS`.

Deterministic: files in name order, rows in file order, sorted dictionaries, no pandas metadata,
no timestamps; the same input gives the same bytes (with the same pyarrow). Every file is read
back and compared with its CSV before the script reports success.
"""

from __future__ import annotations

import argparse
import decimal
import hashlib
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from vcrbench.files import io
from vcrbench.humans import geirhos as gd

ZSTD_LEVEL = 19
MAPPING_FILE = "MSCOCO_to_ImageNet_category_mapping.txt"
LAYOUTS = {
    "release copy": {
        "humans": "geirhos2018-humans",
        "dnns": "geirhos2018-dnns",
        "trained": "geirhos2018-trained",
    },
    "repository": {
        "humans": "raw-data/humans",
        "dnns": "raw-data/TF",
        "trained": "raw-data/fine-tuning",
    },
}
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "src" / "vcrbench" / "data" / "geirhos2018"


class BuildError(RuntimeError):
    pass


def source_folders(source: Path) -> dict[str, Path]:
    for layout in LAYOUTS.values():
        folders = {c: source / sub for c, sub in layout.items()}
        if all(p.is_dir() for p in folders.values()):
            return folders
    raise BuildError(
        f"{source}: neither a checkout of generalisation-humans-DNNs (raw-data/humans, raw-data/TF, "
        "raw-data/fine-tuning) nor a folder with geirhos2018-humans, geirhos2018-dnns, "
        "geirhos2018-trained"
    )


def read_csv(path: Path) -> pd.DataFrame:
    # Exactly how vcrbench.humans.geirhos reads a release CSV: every cell as text.
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def select_files(collection: str, folder: Path, humans: Path) -> tuple[list[Path], list[str]]:
    """(files to store, notes on the files left out) of one collection folder."""
    keep, notes, skipped = [], [], {}
    for exp_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
        if not exp_dir.name.endswith("-experiment"):
            notes.append(f"{collection}: {exp_dir.name}/ left out (not an experiment folder)")
            continue
        for path in sorted(exp_dir.glob("*.csv")):
            m = gd._FILE_RE.match(path.name)
            if m is None or f"{m['experiment']}-experiment" != exp_dir.name:
                raise BuildError(
                    f"{path}: file name is not {exp_dir.name}_<observer>_session_<n>.csv"
                )
            observer = m["observer"]
            if collection == "humans":
                if not observer.startswith("subject-"):
                    raise BuildError(f"{path}: not a human observer")
                keep.append(path)
            elif collection == "dnns":
                if observer in gd.PRETRAINED_NETWORKS:
                    keep.append(path)
                elif observer.startswith("subject-"):
                    twin = humans / exp_dir.name / path.name
                    if not twin.is_file() or twin.read_bytes() != path.read_bytes():
                        raise BuildError(f"{path}: no byte-identical copy in {humans}")
                else:
                    raise BuildError(f"{path}: unknown observer {observer!r}")
            elif observer in gd.TRAINED_NETWORKS:
                keep.append(path)
            else:
                skipped[observer] = skipped.get(observer, 0) + 1
    if collection == "dnns":
        # every human file must be repeated there (the reader serves them as dnns files)
        for exp_dir in sorted(p for p in humans.iterdir() if p.is_dir()):
            for path in sorted(exp_dir.glob("*.csv")):
                if not (folder / exp_dir.name / path.name).is_file():
                    raise BuildError(f"{path.name} is not repeated in {folder / exp_dir.name}")
    if skipped:
        notes.append(
            f"{collection}: {sum(skipped.values())} files of {len(skipped)} networks not in "
            f"TRAINED_NETWORKS left out: {', '.join(sorted(skipped))}"
        )
    return keep, notes


def _dictionary(values: list, index_type: pa.DataType) -> pa.DictionaryArray:
    arr = np.asarray(values, dtype=object)
    present = arr[arr != None]  # noqa: E711 (elementwise)
    dictionary = sorted(set(present.tolist()))
    lookup = {v: i for i, v in enumerate(dictionary)}
    indices = pa.array([None if v is None else lookup[v] for v in arr.tolist()], type=index_type)
    return pa.DictionaryArray.from_arrays(indices, pa.array(dictionary, type=pa.string()))


def _index_type(n: int) -> pa.DataType:
    return pa.int8() if n <= 127 else pa.int16() if n <= 32767 else pa.int32()


def decimal_parts(values: list, where: str) -> tuple[pa.Array, pa.Array]:
    """Mantissa (float64 holding an integer below 2**53) and exponent (int8) of decimal texts.

    A text that is not a finite decimal number (``NaN``, empty) becomes null.
    """
    mantissa, exponent = [], []
    for text in values:
        try:
            d = decimal.Decimal(text) if text not in (None, "") else None
        except decimal.InvalidOperation:
            raise BuildError(f"{where}: {text!r} is not a number") from None
        if d is None or not d.is_finite():
            mantissa.append(None)
            exponent.append(None)
            continue
        sign, digits, exp = d.as_tuple()
        m = int("".join(map(str, digits))) * (-1 if sign else 1)
        if abs(m) >= 2**53 or not -128 <= exp <= 127:
            raise BuildError(f"{where}: {text!r} needs more than 53 bits or a wider exponent")
        mantissa.append(float(m))
        exponent.append(exp)
    return pa.array(mantissa, type=pa.float64()), pa.array(exponent, type=pa.int8())


def convert(collection: str, paths: list[Path]) -> tuple[pa.Table, dict]:
    """One Arrow table of every trial in ``paths`` (in that order) and its null-text exceptions."""
    frames, null_text = [], {}
    columns = gd.CSV_COLUMNS + (gd.DNN_COLUMNS if collection == "dnns" else ())
    for path in paths:
        df = read_csv(path)
        expected = gd.CSV_COLUMNS + (
            gd.DNN_COLUMNS
            if collection == "dnns" and df["subj"].iloc[0] in gd.PRETRAINED_NETWORKS
            else ()
        )
        if tuple(df.columns) != expected:
            raise BuildError(f"{path}: columns {list(df.columns)}, expected {list(expected)}")
        if df.empty:
            raise BuildError(f"{path}: no trials")
        key = f"{path.parent.name.removesuffix('-experiment')}/{path.name}"
        for col in gd.FLOAT_COLUMNS:
            if col in df:
                nulls = set(df[col][~df[col].str.match(r"^-?[0-9.]+(e[-+]?\d+)?$")])
                if len(nulls) > 1:
                    raise BuildError(
                        f"{path}, column {col!r}: several texts for a missing value {nulls}"
                    )
                if nulls and nulls != {gd.NULL_TEXT}:
                    null_text.setdefault(key, {})[col] = nulls.pop()
        df.insert(0, "file", path.name)
        df.insert(0, "experiment", path.parent.name.removesuffix("-experiment"))
        frames.append(df)
    df = pd.concat(frames, ignore_index=True)
    arrays, fields = [], []
    for col in ("experiment", "file", *columns):
        values = df[col].astype(object).where(df[col].notna(), None).tolist()
        if col in ("experiment", "file") or col in gd.DICTIONARY_COLUMNS:
            n = len({v for v in values if v is not None})
            arr = _dictionary(values, _index_type(n))
        elif col in gd.INT_COLUMNS:
            as_int = np.array([int(v) for v in values], dtype=np.int64)
            if any(str(i) != v for i, v in zip(as_int.tolist(), values, strict=True)):
                raise BuildError(
                    f"{collection}, column {col!r}: a value does not print back as its text"
                )
            info = np.iinfo(gd.INT_COLUMNS[col])
            if as_int.min() < info.min or as_int.max() > info.max:
                raise BuildError(
                    f"{collection}, column {col!r}: values beyond {gd.INT_COLUMNS[col]}"
                )
            arr = pa.array(as_int.astype(gd.INT_COLUMNS[col]))
        elif col in gd.FLOAT_COLUMNS:
            mantissa, exponent = decimal_parts(values, f"{collection}, column {col!r}")
            for name, arr in (
                (gd.MANTISSA.format(col), mantissa),
                (gd.EXPONENT.format(col), exponent),
            ):
                arrays.append(arr)
                fields.append(pa.field(name, arr.type))
            continue
        else:
            arr = pa.array(values, type=pa.string())
        arrays.append(arr)
        fields.append(pa.field(col, arr.type))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields)), null_text


def write(table: pa.Table, meta: dict, path: Path) -> None:
    table = table.replace_schema_metadata({b"vcrbench": json.dumps(meta, sort_keys=True).encode()})
    # Mantissas: byte-stream split (their high bytes compress well; readable since pyarrow 2).
    split = [c for c in table.column_names if c.endswith(".mantissa")]
    with io.atomic_path(path) as tmp:
        pq.write_table(
            table,
            tmp,
            compression="zstd",
            compression_level=ZSTD_LEVEL,
            use_dictionary=[c for c in table.column_names if c not in split],
            column_encoding=dict.fromkeys(split, "BYTE_STREAM_SPLIT"),
            write_statistics=False,
            row_group_size=max(len(table), 1),
            dictionary_pagesize_limit=1 << 24,
        )


def verify(collection: str, paths: list[Path], out: Path) -> None:
    """Every stored file must read back as exactly what pandas reads from its CSV."""
    gd._stored.cache_clear()
    gd._file_slices.cache_clear()
    for path in paths:
        exp = path.parent.name.removesuffix("-experiment")
        got = gd.raw_frame(collection, exp, path.name, root=out)
        pd.testing.assert_frame_equal(got, read_csv(path), check_exact=True)


WHAT = {
    "humans": "human observers, 12 experiments (11 folders)",
    "dnns": "GoogLeNet, ResNet-152, VGG-19 on the same experiments",
    "trained": "ResNet-50s trained on distortions, 8 test experiments",
}
README = """\
# Geirhos et al. (2018): trial data of the 12 lab experiments and of the trained networks

Compact copy (Parquet) of the data release of

> Geirhos, R., Temme, C. R. M., Rauber, J., Schütt, H. H., Bethge, M., Wichmann, F. A.
> *Generalisation in humans and deep neural networks.* NeurIPS 2018.
> Data: https://github.com/rgeirhos/generalisation-humans-DNNs, commit {commit}.

Licence: Creative Commons Attribution 4.0 International (CC-BY-4.0), full text in `LICENSE.txt`
(the release's). Changes: the CSV files were converted to Parquet, losslessly (below); nothing
else was altered. Cite the paper above when you use these data.

| file | what | files | trials | bytes |
|---|---|---|---|---|
{rows}

- `humans.parquet`: every CSV of the release's `raw-data/humans/` (11 folders, 12 experiments:
  `eidolon` holds Eidolon I, II and III).
- `dnns.parquet`: of `raw-data/TF/`, the files of GoogLeNet, ResNet-152 and VGG-19 (with the
  softmax entropy/probability columns and `object_response_sums`). The human files that the
  release repeats in those folders are byte-identical to `raw-data/humans/` and are stored once;
  `raw-data/TF/histogram/` (not trial data) is left out.
- `trained.parquet`: of `raw-data/fine-tuning/`, the ResNet-50s {trained}: the paper's
  Figure 4 models A1–A9 and, per experiment, `specialised`, the renamed copy of the network
  trained on that experiment's distortion.
  Networks of those folders not listed here are left out (the build prints them).
{extra}
One row per trial, files in name order, rows in file order. Columns: `experiment` (folder name
without `-experiment`), `file` (CSV name), then the CSV's own columns: strings
dictionary-encoded; `session`, `trial`, `rank_*` integers; `rt` and the networks' entropies and
probabilities as the decimals the CSV prints (`<column>.mantissa` × 10^`<column>.exponent`: the
CSV's own digits, read back as the float64 each text denotes); a missing `rt` is null (the CSV's
`NaN`, or nothing in the `specialised` files, as recorded in the metadata). Zstandard level {level}.
`vcrbench.humans.geirhos.raw_frame` gives back any CSV exactly as
`pandas.read_csv(path, dtype=str, keep_default_na=False)` reads it; the build checked that for
every file.

Built by `scripts/build_geirhos_data.py --source <checkout of the repository>`; the Parquet files'
metadata (key `vcrbench`) record the source, the commit and the SHA-256 of every source CSV.
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", required=True, type=Path, help="the downloaded release")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"default: {DEFAULT_OUT}")
    ap.add_argument("--commit", default=gd.SOURCE_COMMIT, help="commit of the release (recorded)")
    args = ap.parse_args(argv)
    try:
        folders = source_folders(args.source)
        licence = next(
            (
                p
                for p in (args.source / "LICENSE.txt", folders["humans"] / "LICENSE.txt")
                if p.is_file()
            ),
            None,
        )
        if licence is None:
            raise BuildError(f"no LICENSE.txt in {args.source} or {folders['humans']}")
        args.out.mkdir(parents=True, exist_ok=True)
        rows, notes = [], []
        for collection in gd.COLLECTIONS:
            paths, left_out = select_files(collection, folders[collection], folders["humans"])
            notes += left_out
            table, null_text = convert(collection, paths)
            meta = {
                "source": gd.SOURCE_REPOSITORY,
                "commit": args.commit,
                "collection": collection,
                "built_by": "scripts/build_geirhos_data.py",
                "licence": "CC-BY-4.0",
                "null_text": null_text,
                "repeats_human_files": collection == "dnns",
                "files": {
                    f"{p.parent.name}/{p.name}": hashlib.sha256(p.read_bytes()).hexdigest()
                    for p in paths
                },
            }
            path = gd.parquet_path(collection, args.out)
            write(table, meta, path)
            path.chmod(0o644)  # package data: readable by all (the temporary file was 0600)
            verify(collection, paths, args.out)
            size = path.stat().st_size
            rows.append(
                f"| `{path.name}` | {WHAT[collection]} | {len(paths)} | {table.num_rows:,} | "
                f"{size:,} |"
            )
            print(f"{path}: {len(paths)} files, {table.num_rows} trials, {size} bytes (verified)")
        shutil.copyfile(licence, args.out / "LICENSE.txt")
        trained = ", ".join(
            f"`{n}` ({gd.FIGURE4_MODELS[n]})" if n in gd.FIGURE4_MODELS else f"`{n}`"
            for n in gd.TRAINED_NETWORKS
        )
        extra = ""
        if (args.out / MAPPING_FILE).is_file():
            extra = (
                f"\nAlso here: `{MAPPING_FILE}` (from the same release: the 16 classes and "
                "their ImageNet\nWordNet IDs, used by `vcrbench.labels` for the 16-class "
                "decision).\n"
            )
        io.write_text(
            README.format(
                commit=args.commit,
                rows="\n".join(rows),
                trained=trained,
                extra=extra,
                level=ZSTD_LEVEL,
            ),
            args.out / "README.md",
        )
        (args.out / "README.md").chmod(0o644)
        for n in notes:
            print("note:", n)
    except (BuildError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
