"""A shipped config (config/*.yaml) made to validate on this machine: its site-specific paths (the
dataset folder, the retraining pool) and its weights files point at empty stand-ins."""

from __future__ import annotations

from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def shipped_config(name: str, tmp_path: Path) -> dict:
    """``config/<name>`` as a dict, not yet validated, with stand-ins under ``tmp_path``."""
    cfg = yaml.safe_load((REPO / "config" / name).read_text())
    if cfg["dataset"].get("path"):
        cfg["dataset"]["path"] = str(tmp_path)  # the paper's ImageNet folder is site-specific
    if (cfg.get("retrain") or {}).get("pool", {}).get("path"):
        cfg["retrain"]["pool"]["path"] = str(tmp_path)
    for model, entry in cfg["models"].items():  # weights files must exist (checked up front)
        if entry.get("checkpoint"):
            entry["checkpoint"] = str(tmp_path / f"{model}.pt")
            (tmp_path / f"{model}.pt").touch()
    return cfg
