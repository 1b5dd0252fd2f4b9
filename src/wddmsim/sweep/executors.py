"""Where a sweep's runs execute: in this process, in a pool of worker processes, or on a Dask
cluster. Each executor takes the same tasks, ``(scenario, seed, verifier)`` for
:func:`~wddmsim.sweep.runner.run_one`, and gives back their results in the tasks' order, whatever
order they finish in; ``progress(done, total)`` is called as each one finishes.

* :func:`run_serial`: one after the other in this process.
* :func:`run_pool`: :class:`concurrent.futures.ProcessPoolExecutor` with ``workers`` processes.
  On Linux, while this process runs a single thread, the workers are forked from it (they start
  in milliseconds with the simulator already imported; the pool forks them all before its own
  manager thread starts). Otherwise (threads running, other platforms) they are forked from a
  fork server, a clean process that imports the simulator once, or spawned where there is none.
* :func:`run_dask`: a Dask distributed scheduler (``distributed.Client(ADDRESS)``), an optional
  dependency (``pip install 'wddmsim[cluster]'``). The workers need wddmsim installed, and the
  files of a driver named by a path where the scenario says.

A worker that dies (killed, out of memory) or a task the executor loses gives that run an error
text instead of ending the sweep.
"""

from __future__ import annotations

import multiprocessing
import sys
import threading
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from .runner import run_one

__all__ = ["DaskMissing", "INSTALL_DASK", "run_dask", "run_pool", "run_serial"]

Task = tuple[Any, int | None, str]
Result = tuple[dict | None, str | None]
Progress = Callable[[int, int], None] | None

#: How to get the optional Dask dependency.
INSTALL_DASK = "pip install 'wddmsim[cluster]' (or, in a clone, uv sync --extra cluster)"


class DaskMissing(ImportError):
    """``--dask`` was asked for and Dask's ``distributed`` is not installed."""


def _lost(exc: BaseException) -> Result:
    return None, f"the run was lost by the executor: {type(exc).__name__}: {exc}"


def run_serial(tasks: Sequence[Task], progress: Progress = None) -> list[Result]:
    """Run every task here, in order."""
    out: list[Result] = []
    for task in tasks:
        out.append(run_one(*task))
        if progress:
            progress(len(out), len(tasks))
    return out


def _context():
    """Fork on Linux while this process runs no other thread (a fork copies the simulator already
    imported, so the pool starts in milliseconds); else a fork server, else spawn."""
    methods = multiprocessing.get_all_start_methods()
    if sys.platform.startswith("linux") and "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["wddmsim.sweep.runner", "wddmsim.system"])
        return ctx
    return multiprocessing.get_context("spawn")


def run_pool(tasks: Sequence[Task], workers: int, progress: Progress = None) -> list[Result]:
    """Run the tasks on a pool of ``workers`` processes (at most one per task)."""
    results: list[Result | None] = [None] * len(tasks)
    done = 0
    with ProcessPoolExecutor(max_workers=max(1, min(workers, len(tasks))), mp_context=_context()) as pool:
        try:
            futures = {pool.submit(run_one, *task): i for i, task in enumerate(tasks)}
            for fut in as_completed(futures):
                try:
                    results[futures[fut]] = fut.result()
                except Exception as exc:  # noqa: BLE001 - a dead worker costs its run, not the sweep
                    results[futures[fut]] = _lost(exc)
                done += 1
                if progress:
                    progress(done, len(tasks))
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)  # Ctrl-C: do not start the runs left
            raise
    return results  # type: ignore[return-value]


def _distributed():
    try:
        import distributed
    except ImportError:
        raise DaskMissing(f"Dask is not installed: {INSTALL_DASK}") from None
    return distributed


def run_dask(tasks: Sequence[Task], dask, progress: Progress = None) -> list[Result]:
    """Run the tasks on a Dask cluster: ``dask`` is a scheduler's address (``tcp://host:8786``),
    for which a client is opened and closed here, or a ``distributed.Client`` already open."""
    distributed = _distributed()
    own = not isinstance(dask, distributed.Client)
    client = distributed.Client(dask, timeout="20s") if own else dask
    try:
        tag = uuid.uuid4().hex[:12]
        futures = [client.submit(run_one, *task, key=f"wddmsim-run-{tag}-{i}", pure=False)
                   for i, task in enumerate(tasks)]
        where = {fut.key: i for i, fut in enumerate(futures)}
        results: list[Result | None] = [None] * len(tasks)
        done = 0
        for fut in distributed.as_completed(futures):
            try:
                results[where[fut.key]] = fut.result()
            except Exception as exc:  # noqa: BLE001 - a lost worker costs its run, not the sweep
                results[where[fut.key]] = _lost(exc)
            done += 1
            if progress:
                progress(done, len(tasks))
            fut.release()
        return results  # type: ignore[return-value]
    finally:
        if own:
            client.close()
