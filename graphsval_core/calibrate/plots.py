"""Plots of a calibration fit (``--report``): calibrated model against
measured latency per op on log axes, and every row's residual."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from graphsval_core.calibrate.fit import Fit
from graphsval_core.datamodel.errors import shown_path
from graphsval_core.files.baseline import BaselineRow
from graphsval_core.files.calibration import CalibrationError
from graphsval_core.files.outputs import check_output_file


def plot_paths(folder: Path, key: str) -> tuple[Path, Path]:
    """The two files :func:`plot_fit` writes into ``folder``."""
    return folder / f"{key}_fit.png", folder / f"{key}_residuals.png"


def plot_fit(
    folder: Path, key: str, rows: Sequence[BaselineRow], predicted: Sequence[float], fit: Fit
) -> list[Path]:
    """Write ``<key>_fit.png`` (``predicted`` against each row's measured
    latency) and ``<key>_residuals.png`` (the fit's residuals) into
    ``folder``, creating it; return the two paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    measured = [r.latency_s for r in rows]
    fig, ax = plt.subplots(figsize=(6, 5))
    for op in sorted({r.op for r in rows}):
        idx = [i for i, r in enumerate(rows) if r.op == op]
        ax.scatter([measured[i] for i in idx], [predicted[i] for i in idx], s=14, label=op)
    lo, hi = min(measured) / 2, max(measured) * 2
    ax.plot([lo, hi], [lo, hi], "k-", lw=0.8)
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="measured (s)",
        ylabel="calibrated model (s)",
        title=f"calibration fit: {key}",
    )
    ax.legend(fontsize=7)
    scatter, bars = plot_paths(folder, key)
    for path in (scatter, bars):
        check_output_file(path, CalibrationError, f"--report {shown_path(path)}")
    fig.savefig(scatter, dpi=110, bbox_inches="tight")
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.bar(range(len(fit.residuals)), [100 * e for e in fit.residuals])
    ax.set(xlabel="calibration row", ylabel="error (%)", title=f"residuals: {key}")
    fig.savefig(bars, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return [scatter, bars]
