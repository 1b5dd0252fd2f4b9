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
text instead of ending the sweep. Each executor takes a :class:`~wddmsim.runner.stop.RunStop` whose
signal flag (SIGINT, SIGTERM: ``wddmsim sweep`` sets it) ends the sweep early: the pool kills its
workers, which ignore both signals themselves, within :data:`POLL_S`; the serial executor stops the
run under way; Dask cancels what is left when the next run finishes. The runs that did not finish
have no result (None).
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
import threading
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, as_completed, wait
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


def run_serial(tasks: Sequence[Task], progress: Progress = None, stop=None) -> list[Result]:
    """Run every task here, in order. ``stop``: a :class:`~wddmsim.runner.stop.RunStop` whose signal
    flag stops the run under way (its result is dropped) and the rest; the results of the runs
    that finished come back, in order."""
    out: list[Result] = []
    for task in tasks:
        if stop is not None and stop.reason is not None:
            break
        result = run_one(*task, stop=stop) if stop is not None else run_one(*task)
        if stop is not None and stop.reason == "interrupted":
            break
        out.append(result)
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
        ctx.set_forkserver_preload(["wddmsim.sweep.runner", "wddmsim.runner.system"])
        return ctx
    return multiprocessing.get_context("spawn")


def _worker_start() -> None:
    """A pool worker ignores SIGINT and SIGTERM (a terminal's Ctrl-C reaches the whole process
    group): the sweep's process decides what stops, and stops its workers itself."""
    for name in ("SIGINT", "SIGTERM"):
        sig = getattr(signal, name, None)
        if sig is not None:
            signal.signal(sig, signal.SIG_IGN)


#: Wall seconds between two looks at the stop flag while the pool's runs go on.
POLL_S = 0.1


def run_pool(tasks: Sequence[Task], workers: int, progress: Progress = None, stop=None) -> list[Result | None]:
    """Run the tasks on a pool of ``workers`` processes (at most one per task). ``stop``: a
    :class:`~wddmsim.runner.stop.RunStop` whose signal flag ends the pool at once: the runs under way
    are killed, the rest not started, and their results are None."""
    results: list[Result | None] = [None] * len(tasks)
    done = 0
    pool = ProcessPoolExecutor(max_workers=max(1, min(workers, len(tasks))), mp_context=_context(),
                               initializer=_worker_start)
    stopped = False
    try:
        futures = {pool.submit(run_one, *task): i for i, task in enumerate(tasks)}
        if stop is None:
            waiting = as_completed(futures)
        pending = set(futures)
        while pending:
            if stop is None:
                finished = [next(waiting)]
            else:
                finished, _ = wait(pending, timeout=POLL_S, return_when=FIRST_COMPLETED)
            for fut in finished:
                pending.discard(fut)
                try:
                    results[futures[fut]] = fut.result()
                except Exception as exc:  # noqa: BLE001 - a dead worker costs its run, not the sweep
                    results[futures[fut]] = _lost(exc)
                done += 1
                if progress:
                    progress(done, len(tasks))
            if stop is not None and stop.reason is not None and pending:
                stopped = True
                break
    except BaseException:
        stopped = True
        raise
    finally:
        if stopped:  # do not start the runs left, and end the ones under way now
            workers_now = list((pool._processes or {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for proc in workers_now:
                proc.kill()
        pool.shutdown(wait=True)
    return results


def _distributed():
    try:
        import distributed
    except ImportError:
        raise DaskMissing(f"Dask is not installed: {INSTALL_DASK}") from None
    return distributed


def run_dask(tasks: Sequence[Task], dask, progress: Progress = None, stop=None) -> list[Result | None]:
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
            if stop is not None and stop.reason is not None:  # looked at as each run finishes
                client.cancel([f for f in futures if not f.done()])
                break
        return results  # type: ignore[return-value]
    finally:
        if own:
            client.close()
