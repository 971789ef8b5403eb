"""Settings of every pytest process (the xdist workers included)."""

from __future__ import annotations

import os


def pytest_configure(config):
    """Under pytest-xdist, each worker's torch takes its share of the cores: with 2 workers on
    2 cores, one thread each. Without it every worker's torch starts a thread per core, and the
    workers' threads wait for each other on the shared cores (a tiny model's training step took
    5 times as long on this 2-core machine). Processes the tests start (Snakemake, its jobs)
    keep their own settings: nothing is put into the environment."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0") or 0)
    if workers < 2:
        return
    import torch

    torch.set_num_threads(max(1, (os.cpu_count() or 1) // workers))
