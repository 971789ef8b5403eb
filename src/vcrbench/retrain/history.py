"""The training log of a fine-tuning: loss and accuracy per epoch, as CSV and as a plot."""

from __future__ import annotations

import os

import pandas as pd

from vcrbench.files import io

COLUMNS = ["epoch", "n_images", "loss", "accuracy", "lr"]


def write_history(
    history: pd.DataFrame,
    csv_path: str | os.PathLike,
    plot_path: str | os.PathLike,
    title: str = "",
) -> None:
    """Write the history table (columns ``epoch, n_images, loss, accuracy, lr``) as CSV and a
    two-panel PNG (training loss, training accuracy against epoch), both atomically."""
    missing = sorted(set(COLUMNS) - set(history.columns))
    if missing:
        raise ValueError(f"training history lacks column(s) {missing}")
    io.write_csv(history[COLUMNS], csv_path)
    plot_history(history, plot_path, title)


def plot_history(history: pd.DataFrame, path: str | os.PathLike, title: str = "") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(8, 3.2), constrained_layout=True)
    try:
        epochs = history["epoch"].to_numpy()
        ax_loss.plot(epochs, history["loss"].to_numpy(), marker="o", color="tab:blue")
        ax_loss.set_xlabel("epoch")
        ax_loss.set_ylabel("training loss (cross-entropy)")
        ax_acc.plot(epochs, history["accuracy"].to_numpy(), marker="o", color="tab:green")
        ax_acc.set_xlabel("epoch")
        ax_acc.set_ylabel("training accuracy")
        ax_acc.set_ylim(-0.02, 1.02)
        for ax in (ax_loss, ax_acc):
            ax.set_xticks(epochs)
            ax.grid(alpha=0.3)
        if title:
            fig.suptitle(title, fontsize=10)
        with io.atomic_path(path) as tmp:
            # No software/date metadata: the same history gives the same bytes.
            fig.savefig(tmp, format="png", dpi=120, metadata={"Software": None})
    finally:
        plt.close(fig)
