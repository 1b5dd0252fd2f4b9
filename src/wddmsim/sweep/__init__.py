"""Sweeps: run a scenario for every combination of settings and seeds, one row of figures per run.

:func:`sweep` is the Python API (``wddmsim sweep`` the command): it takes the settings as scenario
paths with values (:mod:`.grid`), runs the cross product here, on a process pool or on a Dask
cluster (:mod:`.executors`, each run by :mod:`.runner`), and returns the rows (:mod:`.rows`) in the
cross product's order, the same whatever executor ran them. :func:`rows_to_dataframe` makes a
pandas DataFrame of them when pandas is installed, :func:`write_csv` a CSV file, and
:mod:`wddmsim.output.sweep_plot` draws a figure against a setting. docs/sweeps.md is the guide.
"""

from .core import plan, sweep
from .executors import INSTALL_DASK, DaskMissing
from .grid import Run, Setting, SweepError, grid, parse_seeds, parse_setting, settings_from
from .rows import columns, first_failure, flatten, make_row, public, rows_to_csv, rows_to_dataframe, write_csv

__all__ = [
    "INSTALL_DASK",
    "DaskMissing",
    "Run",
    "Setting",
    "SweepError",
    "columns",
    "first_failure",
    "flatten",
    "grid",
    "make_row",
    "parse_seeds",
    "parse_setting",
    "plan",
    "public",
    "rows_to_csv",
    "rows_to_dataframe",
    "settings_from",
    "sweep",
    "write_csv",
]
