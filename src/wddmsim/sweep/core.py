"""A sweep from start to rows: load the scenario, check every combination of settings, run the
cross product on an executor, and make one row per run in the cross product's order.

Each combination of settings is validated once in this process, with the same schema as a
scenario file: a path the scenario does not have (an unknown field, an entry an array lacks) stops
the sweep before anything runs (:class:`~wddmsim.sweep.grid.SweepError`), and so does a problem of
the file itself that no setting mends; a value the schema refuses makes an error row for every seed
of that combination, and only valid scenarios are sent to the executor.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ..scenario import Scenario, ScenarioError, read_scenario_data, resolve_driver_path, scenario_from_dict
from .executors import run_dask, run_pool, run_serial
from .grid import Run, SweepError, grid, parse_seeds, settings_from
from .rows import make_row

__all__ = ["cpu_count", "plan", "sweep"]

VERIFIER_MODES = ("strict", "report", "off")


def _source(scenario) -> tuple[dict, str, Path | None]:
    """The scenario's TOML data, its name for messages and the folder relative driver paths are
    found in."""
    if isinstance(scenario, (str, os.PathLike)):
        try:
            return read_scenario_data(scenario), str(scenario), Path(scenario).parent
        except ScenarioError as e:
            raise SweepError("\n".join(e.problems)) from None
    if isinstance(scenario, Scenario):
        return scenario.model_dump(by_alias=True, exclude_none=True), scenario.name or "<scenario>", None
    if isinstance(scenario, Mapping):
        return dict(scenario), str(scenario.get("name") or "<scenario>"), None
    raise TypeError(f"scenario: expected a file path, a Scenario or its TOML data as a dict, got {type(scenario).__name__}")


def cpu_count() -> int:
    """The CPUs this process may run on (its affinity where the platform tells it), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return os.cpu_count() or 1


def plan(scenario, sets=None, seeds=None, option: str = "--set") -> tuple[list[Run], dict[int, Any]]:
    """The sweep's runs and, per run, what it runs: a validated scenario, or the error text that
    makes it an error row. Raises :class:`SweepError` for malformed settings or seeds and for a
    path the scenario does not have. ``scenario``, ``sets`` and ``seeds`` as for :func:`sweep`."""
    data, source, folder = _source(scenario)
    settings = settings_from(sets, option)
    seed_list = None if seeds is None else parse_seeds(seeds)
    runs = grid(settings, seed_list)
    checked: dict[tuple, Any] = {}
    work: dict[int, Any] = {}
    for run in runs:
        key = tuple(id(ov) for ov in run.overrides)
        if key not in checked:
            try:
                sc = scenario_from_dict(data, source, run.overrides)
                checked[key] = resolve_driver_path(sc, folder) if folder is not None else sc
            except ScenarioError as e:
                if e.unknown_paths:
                    raise SweepError("\n".join(e.unknown_paths)) from None
                own = [line for line in e.problems if line.startswith(f"{source}: ")]
                if own or not run.overrides:
                    raise SweepError("\n".join(own or e.problems)) from None  # the file itself is wrong
                checked[key] = "; ".join(e.problems)
        work[run.index] = checked[key]
    return runs, work


def sweep(scenario, sets: Mapping[str, Any] | Iterable[str] | None = None, seeds=None, *, workers: int | None = None,
          dask=None, verifier: str = "strict", progress: Callable[[int, int], None] | None = None,
          max_events: int | None = None, stop=None, on_warning: Callable[[str], None] | None = None,
          latency: bool = False) -> list[dict]:
    """Run ``scenario`` for every combination of ``sets`` and every seed; one row per run.

    ``scenario``: a scenario file's path, a :class:`~wddmsim.scenario.Scenario` or its TOML data as
    a dict. ``sets``: ``{"scheduler.quantum": ["1ms", "2ms"], "adapter.nodes.0.preemption":
    "primitive"}`` (a path as in the scenario file, to a value or a list of values taken as they
    are) or command-line texts (``["scheduler.quantum=1ms,2ms"]``). ``seeds``: ints, or text as
    ``--seeds`` takes it (``"1-10"``, ``"1,3,5"``); None runs each combination once with the
    scenario's seed. ``workers``: processes of the pool (1: run here, one after the other; None:
    one per CPU this process may use, :func:`cpu_count`). ``dask``: a Dask scheduler's address or a ``distributed.Client``; the runs
    go there instead (``workers`` is then not used). ``verifier``: ``strict``, ``report`` or
    ``off``, as ``wddmsim run --verifier``. ``progress(done, total)`` is called as runs finish.
    ``max_events``: each run stops after that many kernel events (its row's ``error`` then says
    ``stopped early``). ``stop``: a :class:`~wddmsim.runner.stop.RunStop` whose signal flag ends the
    sweep early; the rows are then those of the runs that finished (and of the settings the schema
    refused), in the same order, and ``stop.runs`` is set to ``(rows returned, rows of the whole
    sweep)``.
    ``latency``: each row that ran also carries ``_latency``, its contexts' whole latency
    histograms (not a column; what the policy comparison draws exact distributions from, kept off
    by default since a large sweep holds every row in memory).
    ``on_warning(line)`` is called, before anything runs, once for each distinct warning of the
    runs' scenarios (:attr:`Scenario.warnings <wddmsim.scenario.schema.Scenario.warnings>`: a value
    taken otherwise than written).

    Returns the rows (see :mod:`wddmsim.sweep.rows`) in the order of the cross product: the first
    setting varies slowest, the seeds fastest. Raises :class:`~wddmsim.sweep.grid.SweepError` before
    running anything for malformed settings or seeds or a path the scenario does not have, and
    :class:`~wddmsim.sweep.executors.DaskMissing` when ``dask`` is given without Dask installed.
    """
    if verifier not in VERIFIER_MODES:
        raise SweepError(f"verifier: must be one of {', '.join(VERIFIER_MODES)}, got {verifier!r}")
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise SweepError(f"workers: must be a whole number, 1 or more, got {workers!r}")
    runs, work = plan(scenario, sets, seeds)
    if on_warning is not None:
        seen: set[str] = set()
        for sc in work.values():
            for line in [] if isinstance(sc, str) else sc.warnings:
                if line not in seen:
                    seen.add(line)
                    on_warning(line)
    todo = [r for r in runs if not isinstance(work[r.index], str)]
    tasks = [(work[r.index], r.seed, verifier, max_events, latency) for r in todo]
    skipped = len(runs) - len(todo)
    tick = None
    if progress is not None:
        def tick(done: int, total: int) -> None:
            progress(done + skipped, len(runs))
        if skipped:
            progress(skipped, len(runs))
    if not tasks:
        results = []
    elif dask is not None:
        results = run_dask(tasks, dask, tick, stop=stop)
    elif (workers or cpu_count()) == 1 or len(tasks) == 1:
        results = run_serial(tasks, tick, stop=stop)
    else:
        results = run_pool(tasks, workers or cpu_count(), tick, stop=stop)
    by_index = {r.index: res for r, res in zip(todo, results)}
    rows = []
    for run in runs:
        if run.index in by_index:
            if by_index[run.index] is None:
                continue  # a sweep stopped early: this run did not finish
            summary, error = by_index[run.index]
        elif not isinstance(work[run.index], str):
            continue  # a sweep stopped early: this run did not start
        else:
            summary, error = None, work[run.index]
        seed = run.seed
        if seed is None and not isinstance(work[run.index], str):
            seed = work[run.index].seed  # the scenario's own seed (an --set may have changed it)
        rows.append(make_row(run.settings, seed, summary, error))
    if stop is not None:
        stop.runs = (len(rows), len(runs))
    return rows
