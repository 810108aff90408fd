"""Plots of benchmark results, solutions and operator statistics (optional extra ``plot``).

- :func:`convergence_figure`: mean best cost against iterations or seconds, one line per
  solver, one panel per benchmark group;
- :func:`route_figure`: a solution drawn on the instance's coordinates;
- :func:`weights_figure` / :func:`synergy_figure`: operator weight and synergy heatmaps from
  benchmark runs, an evolution run directory or a :class:`glns.Result`;
- :func:`save_figure`: write a figure as PNG, SVG or PDF (from the file's suffix).

Every function returns a matplotlib Figure drawn on an Agg canvas (no display needed).
matplotlib is imported only when drawing; without it the functions raise ImportError with
the install hint (``pip install 'glns[plot]'``). The command line is ``glns plot``.
"""

from glns.plot._mpl import PLOT_HINT as PLOT_HINT
from glns.plot._mpl import save_figure as save_figure
from glns.plot.convergence import convergence_figure as convergence_figure
from glns.plot.convergence import mean_curve as mean_curve
from glns.plot.heatmaps import synergy_figure as synergy_figure
from glns.plot.heatmaps import weights_figure as weights_figure
from glns.plot.results import load_results as load_results
from glns.plot.results import run_record as run_record
from glns.plot.routes import route_figure as route_figure

__all__ = ["PLOT_HINT", "save_figure", "convergence_figure", "mean_curve", "route_figure",
           "weights_figure", "synergy_figure", "load_results", "run_record"]
