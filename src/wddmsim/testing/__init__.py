"""Testing a driver with wddmsim: :mod:`.run` (a System with its event log, run at once or in
steps and queried in one line) and :mod:`.plugin`, the pytest plugin that hands it to tests and
collects the conformance suite as test items (docs/testing.md); :mod:`.fuzz` makes the random
inputs of wddmsim's own fuzz tests and of ``tools/fuzz.py`` (not imported here).

This package imports nothing of wddmsim until it is used: pytest loads the plugin in every run of
an environment that has wddmsim installed.
"""

from .run import WddmRun, build_run, render_failure

__all__ = ["WddmRun", "build_run", "render_failure"]
