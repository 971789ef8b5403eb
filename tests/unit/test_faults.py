"""Faults without a manual step (issue 23): temporaries a kill left, damaged Parquet files found by
their page checksums and by the sha256 of their provenance record, a damaged input deleted by the
job that meets it so that the next run regenerates it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.support.jobs import fake_job
from vcrbench.errors import DamagedFileError, WeightsUnavailableError
from vcrbench.files import io
from vcrbench.plan import job, paths, verify

FRAME = pd.DataFrame({"a": np.arange(2000), "b": np.linspace(0, 1, 2000)})


def dead_pid() -> int:
    """The id of a process that has ended."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def leftover(dest: Path, pid: int, host: str | None = None, ext: str = "") -> Path:
    """A temporary of ``dest`` as a writer ``pid`` on ``host`` killed mid-write leaves it."""
    host = host or socket.gethostname()
    tmp = dest.with_name(f".{dest.name}.{host}.{pid}.abc123_x.tmp{ext}")
    tmp.write_bytes(b"half written")
    return tmp


def test_a_writer_removes_the_temporaries_a_killed_writer_left(tmp_path):
    dest = tmp_path / "shard-00000.parquet"
    dead = leftover(dest, dead_pid())
    elsewhere = leftover(dest, 12345, host="another-host")
    live = leftover(dest, os.getpid())  # this process: a writer still at work
    other = leftover(tmp_path / "shard-00001.parquet", dead_pid())  # another output's
    io.write_parquet(FRAME, dest)
    assert not dead.exists() and not elsewhere.exists()
    assert live.exists() and other.exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == sorted(
        [live.name, other.name]
    )


def test_a_temporary_names_its_host_and_process(tmp_path):
    tmp = io.temporary_sibling(tmp_path / "images.npy", ".npy")
    assert tmp.name.startswith(f".images.npy.{socket.gethostname()}.{os.getpid()}.")
    assert tmp.name.endswith(".tmp.npy")


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_an_output_gets_the_mode_the_umask_gives_a_new_file(tmp_path, umask, mode):
    """The group can read results/ under umask 022: the temporary's mode survives the rename."""
    from vcrbench.datasets import loading

    old = os.umask(umask)
    try:
        io.write_parquet(FRAME, tmp_path / "t.parquet")
        io.write_csv(FRAME, tmp_path / "t.csv")
        with io.atomic_path(tmp_path / "t.txt") as tmp:
            tmp.write_text("x")
        table = loading.read_embedded_dataset().iloc[:2]
        loading.prepare_clean_set(table, tmp_path / "images.npy", tmp_path / "index.parquet")
    finally:
        os.umask(old)
    written = ["t.parquet", "t.csv", "t.txt", "images.npy", "index.parquet"]
    assert {n: oct((tmp_path / n).stat().st_mode & 0o777) for n in written} == {
        n: oct(mode) for n in written
    }


def test_the_sweep_removes_what_dead_processes_of_this_host_left(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    dead = leftover(tmp_path / "a" / "b" / "images.npy", dead_pid(), ext=".npy")
    short = dead.with_name(dead.name + ".short.npy")
    short.write_bytes(b"x")
    live = leftover(tmp_path / "a" / "x.csv", os.getpid())
    remote = leftover(tmp_path / "a" / "y.csv", dead_pid(), host="another-host")
    kept = tmp_path / "a" / ".hidden.tmp"
    kept.write_text("not ours")
    removed = io.sweep_temporaries(tmp_path)
    assert sorted(removed) == sorted([dead, short])
    assert live.exists() and remote.exists() and kept.exists()


def test_the_clean_set_of_a_killed_job_leaves_no_temporary_after_a_rerun(tmp_path):
    from vcrbench.datasets import loading

    images = tmp_path / "dataset" / "images.npy"
    images.parent.mkdir()
    stale = leftover(images, dead_pid(), ext=".npy")
    table = loading.read_embedded_dataset().iloc[:2]
    loading.prepare_clean_set(table, images, tmp_path / "dataset" / "index.parquet")
    assert sorted(p.name for p in images.parent.iterdir()) == ["images.npy", "index.parquet"]
    assert not stale.exists()


def flip_bit(path: Path, at: float = 0.5) -> None:
    """Flip one bit in the middle of a file, keeping its modification time."""
    stat = path.stat()
    data = bytearray(path.read_bytes())
    data[int(len(data) * at)] ^= 0x10
    path.write_bytes(bytes(data))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_parquet_pages_carry_checksums_that_reads_verify(tmp_path):
    path = tmp_path / "x.parquet"
    io.write_parquet(FRAME, path)
    assert io.parquet_file(path).metadata.row_group(0).column(0).statistics is not None
    flip_bit(path, 0.3)
    with pytest.raises(DamagedFileError, match=r"x.parquet is damaged .*rm .*x.parquet") as err:
        io.read_parquet(path)
    assert err.value.path == str(path)
    with pytest.raises(DamagedFileError):
        io.verify_parquet(path)


def test_a_truncated_parquet_file_is_named(tmp_path):
    path = tmp_path / "shard-00003.parquet"
    io.write_parquet(FRAME, path)
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(DamagedFileError, match="shard-00003.parquet is damaged"):
        io.read_columns(path, ["a"])


def test_shards_carry_page_checksums(tmp_path):
    import pyarrow as pa

    from vcrbench.inference.readers import shard_batches

    images = np.random.default_rng(0).integers(0, 256, (4, 8, 8, 3), dtype=np.uint8)
    schema = pa.schema(
        [("sample_id", pa.int64()), ("image_id", pa.string()), ("label", pa.int64()),
         ("dv", pa.float64()), ("height", pa.int32()), ("width", pa.int32()),
         ("image", pa.binary())]
    )  # fmt: skip
    batch = {
        "sample_id": np.arange(4), "image_id": list("abcd"), "label": np.zeros(4, int),
        "dv": np.zeros(4), "height": np.full(4, 8, np.int32), "width": np.full(4, 8, np.int32),
        "image": io.image_column(images),
    }  # fmt: skip
    path = tmp_path / "shard-00000.parquet"
    io.write_image_batches(path, schema, [batch])
    assert np.array_equal(next(shard_batches([path], 4))[1].numpy(), images)
    flip_bit(path, 0.25)  # inside the image column's page
    with pytest.raises(DamagedFileError, match="shard-00000.parquet is damaged"):
        list(shard_batches([path], 4))


def test_sidecars_hold_the_sha256_that_verify_checks(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    outputs = ["results/tables/x.csv", "results/testsets/c/shard-00000.parquet"]
    with job.run(fake_job(outputs, rule="coverage_table")):
        io.write_csv(FRAME, outputs[0])
        io.write_parquet(FRAME, outputs[1])
    rec = json.loads(Path(paths.provenance(outputs[1])).read_text())
    assert rec["sha256"] == io.file_sha256(outputs[1])
    assert verify.main([]) == 0
    assert "2 outputs checked, none damaged" in capsys.readouterr().out
    # a flipped bit in the CSV: only the record's checksum can see it
    flip_bit(Path(outputs[0]))
    # a flipped bit in the Parquet file: both see it; verify names both, and the command
    flip_bit(Path(outputs[1]), 0.3)
    assert verify.main([]) == 1
    out = capsys.readouterr().out
    assert f"damaged: {outputs[0]}: its bytes differ" in out
    assert f"damaged: {outputs[1]}" in out
    assert out.splitlines()[-1] == f"rm {outputs[0]} {outputs[1]} && make run"
    with pytest.raises(DamagedFileError):
        io.verify_parquet(outputs[1])
    assert verify.main(["--remove"]) == 1
    assert not Path(outputs[0]).exists() and not Path(outputs[1]).exists()


def test_a_job_deletes_a_damaged_input_and_says_so_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    shard = "results/testsets/c/shard-00000.parquet"
    io.write_parquet(FRAME, shard)
    flip_bit(Path(shard), 0.3)
    with (
        pytest.raises(DamagedFileError),
        job.run(fake_job(["results/tables/y.csv"], inputs=[shard], rule="coverage_table")),
    ):
        io.read_parquet(shard)
    line = capsys.readouterr().err.strip()
    assert line.startswith("vcrbench: job coverage_table failed: input " + shard)
    assert "run the same command again" in line and "\n" not in line
    assert not Path(shard).exists()


def test_a_failing_job_prints_its_error_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with (
        pytest.raises(ValueError),
        job.run(fake_job(["results/tables/y.csv"], rule="coverage_table")),
    ):
        raise ValueError("image a.jpg:\n is not an image")
    err = capsys.readouterr().err
    assert err == "vcrbench: job coverage_table failed: ValueError: image a.jpg: is not an image\n"


def test_a_job_missing_fetched_weights_says_how_to_fetch_them_again(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    record = "results/weights/m.json"
    predict = fake_job(
        ["results/predictions/m/clean.parquet"], inputs=[record], rule="predict_clean"
    )
    with pytest.raises(WeightsUnavailableError), job.run(predict):
        raise WeightsUnavailableError("model 'm': not in the cache")
    line = capsys.readouterr().err
    assert line.startswith("vcrbench: job predict_clean failed: WeightsUnavailableError: model 'm'")
    assert f"delete {record} and make it alone again (`snakemake <your options> {record}`" in line
    # a model without a fetch record (a fine-tuned one): its own error alone
    finetuned = fake_job(["results/predictions/m/clean.parquet"], rule="predict_clean")
    with pytest.raises(WeightsUnavailableError), job.run(finetuned):
        raise WeightsUnavailableError("model 'm': weights file x.pt does not exist")
    assert "fetch_weights" not in capsys.readouterr().err


def test_a_failed_script_leaves_its_traceback_in_its_log_only(tmp_path):
    """The job's one line is all its standard error holds; the script still exits with 1."""
    script = tmp_path / "script.py"
    script.write_text(
        "from tests.support.jobs import fake_job\n"
        "from vcrbench.plan import job\n"
        "with job.run(fake_job(['results/tables/y.csv'], rule='coverage_table')):\n"
        "    raise ValueError('the labels file lists no images: give one')\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[2]),
                                                        str(Path(io.__file__).parents[1])])}  # fmt: skip
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, env=env)  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr == (
        "vcrbench: job coverage_table failed: ValueError: the labels file lists no images: "
        "give one\n"
    )
    log = (tmp_path / "results/logs/r/x.log").read_text()
    assert "Traceback" in log and "ValueError: the labels file lists no images" in log


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB tmpfs at ``tmp_path/disk`` (needs root: skipped, saying why, otherwise)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs to fill needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)],
                          capture_output=True, text=True)  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    yield disk
    subprocess.run(["umount", "-l", str(disk)], check=True)  # lazy: a test's open file cannot block it


def test_a_full_disk_is_named_and_leaves_no_partial_file(small_disk):
    from vcrbench.errors import DiskFullError

    finished = small_disk / "finished.parquet"
    io.write_parquet(FRAME, finished)
    before = finished.read_bytes()
    big = pd.DataFrame({"x": np.random.default_rng(0).random(400_000)})  # 3 MB: does not fit
    with pytest.raises(DiskFullError) as err:
        io.write_parquet(big, small_disk / "big.parquet")
    assert str(err.value).startswith(
        f"no space left on the device to write {small_disk}/big.parquet"
    )
    assert "free space there" in str(err.value) and "run the same command again" in str(err.value)
    assert err.value.errno == 28
    assert sorted(p.name for p in small_disk.iterdir()) == ["finished.parquet"]
    assert finished.read_bytes() == before
    # the clean set's memory map: its blocks are reserved first, so a full device is this error,
    # not a SIGBUS that kills the job without a word
    from vcrbench.datasets import loading

    table = pd.concat([loading.read_embedded_dataset()] * 4, ignore_index=True)
    table["image_id"] = [f"{i}-{x}" for i, x in enumerate(table["image_id"])]
    with pytest.raises(DiskFullError, match=f"to write {small_disk}/images.npy"):
        loading.prepare_clean_set(table, small_disk / "images.npy", small_disk / "index.parquet")
    assert sorted(p.name for p in small_disk.iterdir()) == ["finished.parquet"]
    assert pickle_round_trip(err.value).path == str(small_disk / "big.parquet")


def pickle_round_trip(obj):
    import pickle

    return pickle.loads(pickle.dumps(obj))


def test_damaged_file_errors_survive_pickling():
    import pickle

    exc = pickle.loads(pickle.dumps(DamagedFileError("results/x.parquet", "bad page")))
    assert exc.path == "results/x.parquet" and exc.reason == "bad page"
    assert "rm results/x.parquet" in str(exc)


def test_a_killed_process_group_is_gone():
    """The helper the workflow tests rely on: a SIGKILL of a process group ends it."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                            start_new_session=True)  # fmt: skip
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not io.process_alive(proc.pid)
