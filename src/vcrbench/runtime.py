"""Where and how torch runs: the device, the autocast precision, threads and cuDNN settings, one
policy shared by inference and fine-tuning.

Precision. A model entry's own ``precision`` (other than ``auto``) wins over the job's, since it
records what that model allows. ``auto`` is fp32 on the CPU and bf16 on a GPU that supports it;
on a GPU without bf16, inference uses fp16 (its rounding does not accumulate over one forward
pass), while training stays in fp32 (fp16 gradients need loss scaling and can diverge).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import torch

#: The autocast dtype of each precision (None: no autocast).
DTYPES = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}


def resolve_device(device: str | torch.device | None) -> torch.device:
    """The device ``inference.device`` or ``retrain.device`` names: ``auto`` (or None) is the GPU
    where there is one, else the CPU."""
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device 'cuda' was asked for but torch sees no GPU here")
    return device


#: Set (to 1) where a scheduler's GPU is not one torch can use (a test cluster's count-only
#: GPU): a job that asked for a GPU then runs on the CPU instead of failing.
ALLOW_NO_GPU = "VCRBENCH_ALLOW_NO_GPU"


def require_gpu(job: str) -> None:
    """Fail, naming ``job``, where it was given a GPU by a scheduler but torch sees none (a
    missing driver, a wrong partition, CUDA_VISIBLE_DEVICES emptied): such a job would otherwise
    run on the CPU, for hours, with ``device: auto``."""
    if torch.cuda.is_available() or os.environ.get(ALLOW_NO_GPU) == "1":
        return
    raise RuntimeError(
        f"job {job} asked its scheduler for a GPU (resources gpu=1) but torch sees none here "
        f"(torch {torch.__version__}, CUDA build {torch.version.cuda}, CUDA_VISIBLE_DEVICES="
        f"{os.environ.get('CUDA_VISIBLE_DEVICES')!r}); it stops rather than run on the CPU. Check "
        "the node's GPU driver and the partition; to run inference on CPUs on purpose set "
        "inference.device: cpu (no GPU is then asked for)"
    )


def resolve_precision(
    requested: str, model_precision: str, device: torch.device, *, training: bool = False
) -> str:
    """The precision a job runs in (the module docstring's policy); names are checked by the
    caller, against :data:`vcrbench.vocab.PRECISIONS`."""
    name = model_precision if model_precision != "auto" else requested
    if name != "auto":
        return name
    if device.type != "cuda":
        return "fp32"
    if torch.cuda.is_bf16_supported():
        return "bf16"
    return "fp32" if training else "fp16"


@contextlib.contextmanager
def cudnn_benchmark(device: torch.device) -> Iterator[None]:
    """cuDNN picks its fastest kernels for the block (fixed input shapes), on a GPU only."""
    if device.type != "cuda":
        yield
        return
    before = torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = True
    try:
        yield
    finally:
        torch.backends.cudnn.benchmark = before


@contextlib.contextmanager
def deterministic(device: torch.device) -> Iterator[None]:
    """Deterministic kernels for the block (strict on a CPU, warn-only on a GPU); restores the
    previous settings after."""
    before = (
        torch.are_deterministic_algorithms_enabled(),
        torch.is_deterministic_algorithms_warn_only_enabled(),
        torch.backends.cudnn.benchmark,
    )
    if device.type == "cuda":
        # cuBLAS needs this to be deterministic; it only takes effect before cuBLAS starts.
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.backends.cudnn.benchmark = False
    torch.use_deterministic_algorithms(True, warn_only=device.type != "cpu")
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(before[0], warn_only=before[1])
        torch.backends.cudnn.benchmark = before[2]


@contextlib.contextmanager
def seeded(seed: int, device: torch.device) -> Iterator[None]:
    """torch's generators seeded for the block, and restored after it (no global state leaks)."""
    devices = [device] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed % 2**63)
        yield
