"""Lazy matplotlib access: an Agg figure without pyplot, and saving by the file's suffix.

matplotlib is the optional extra ``plot``; nothing in glns imports it at module level, so
``import glns.plot`` works without it and only drawing raises the ImportError with the hint.
Figures are built on an Agg canvas directly (no pyplot, no display, the caller's backend
untouched).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = ["PLOT_HINT", "FORMATS", "new_figure", "save_figure"]

#: what to do when matplotlib is missing
PLOT_HINT = "plotting needs matplotlib: pip install 'glns[plot]'"

#: file formats written by save_figure (from the suffix of the output file)
FORMATS = ("png", "svg", "pdf")


def new_figure(width: float, height: float) -> Any:
    """A matplotlib Figure on an Agg canvas; ImportError with the install hint without matplotlib."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError(PLOT_HINT) from exc
    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig


def save_figure(fig: Any, path: str | os.PathLike) -> Path:
    """Write `fig` to `path` in the format its suffix names (.png, .svg or .pdf)."""
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    if fmt not in FORMATS:
        raise ValueError(f"cannot tell the image format of {str(path)!r}: "
                         f"use a file name ending in {', '.join('.' + f for f in FORMATS)}")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format=fmt, dpi=150 if fmt == "png" else "figure")
    return path
