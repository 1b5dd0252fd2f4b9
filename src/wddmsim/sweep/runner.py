"""One run of a sweep, as a worker process (or a Dask worker) does it.

:func:`run_one` builds the system for a validated scenario and a seed, runs it to its duration or
to a bug check, and gives back the same summary ``wddmsim run --json`` prints (a bug check adds its
``bugcheck`` table, without the crash-record file, which a sweep does not write). Whatever goes
wrong in the run comes back as an error text instead of escaping, so a failing run is one row of
the sweep and never ends it. The function takes and returns plain data only (the scenario model
pickles), so any executor can carry it.
"""

from __future__ import annotations

import traceback

__all__ = ["LATENCY", "run_one"]

#: The key under which a run's summary carries its contexts' latency histograms to the row
#: (``[[[latency ns, packets], ...] per context]``); :mod:`.rows` keeps it out of the columns.
LATENCY = "_latency"


def _build_problem(scenario, exc: Exception) -> str | None:
    """The text ``wddmsim run`` would print for a system that cannot be built, or None when
    ``exc`` is not such a refusal."""
    from ..dxgkrnl import ApiError
    from ..dxgkrnl.errors import AdapterStartError
    from ..runner.system import ConfigError

    if isinstance(exc, ConfigError):
        return "; ".join(f"{scenario.name}: {p}: {r}" for p, r in exc.problems)
    if isinstance(exc, AdapterStartError):
        return "; ".join(f"{scenario.name}: the adapter does not start: {p}" for p in exc.problems)
    if isinstance(exc, ApiError):
        return f"{scenario.name}: the scenario cannot start: {exc}"
    return None


def run_one(scenario, seed: int | None, verifier: str = "strict", max_events: int | None = None,
            latency: bool = False, stop=None) -> tuple[dict | None, str | None]:
    """Run ``scenario`` (a validated :class:`~wddmsim.scenario.Scenario`) with ``seed`` (None: the
    scenario's) and the verifier in ``verifier`` mode; ``max_events``: stop it after that many
    kernel events (:mod:`wddmsim.runner.stop`); ``stop``: a :class:`~wddmsim.runner.stop.RunStop` of this
    process whose signal flag stops the run too (the serial executor's); ``latency``: the summary
    also carries each context's latency histogram under :data:`LATENCY`.

    Returns ``(summary, error)``: the run's summary (None when the system could not even be built)
    and None, or with a bug check the summary with its ``bugcheck`` table and the text
    ``bug check 0x...: message``; an exception the model raises gives ``(None, "Type: message")``.
    A run a budget or a signal stopped gives its summary and ``stopped early: ...``.
    """
    from ..runner.stop import RunStop
    from ..dxgkrnl.errors import PolicyError
    from ..runner.system import LedgerError, System

    if stop is None and max_events is not None:
        stop = RunStop(max_events=max_events)
    elif stop is not None:
        stop.max_events = max_events

    try:
        try:
            system = System(scenario, seed=seed, verifier=verifier)
        except Exception as exc:  # noqa: BLE001 - a refusal to build is this run's error, not the sweep's
            problem = _build_problem(scenario, exc)
            if problem is None:
                raise
            return None, problem
        result = system.run(stop=stop)
    except (LedgerError, PolicyError):
        raise  # a model bug (exit status 4) or a broken policy (2) fails the whole sweep loudly, not one row
    except Exception as exc:  # noqa: BLE001 - the model failed: this run's row says how
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return None, f"{type(exc).__name__}: {exc} (at {where.name}, {where.filename.rsplit('/', 1)[-1]}:{where.lineno})"
    summary = dict(result.summary)
    # Not a figure of the summary but the runs' whole latency distributions, per context in the
    # summary's order, for the policy comparison's CDF (rows keep it out of their columns).
    if latency:
        summary[LATENCY] = [[list(b) for b in ctx.latencies.histogram()] for ctx in system.contexts]
    if result.stopped == "max_events":
        return summary, f"stopped early: --max-events {max_events} ran out at {result.end} ns of virtual time"
    if result.stopped is not None:
        return summary, f"stopped early: {result.stopped} at {result.end} ns of virtual time"
    if result.bugcheck is None:
        return summary, None
    rec = result.bugcheck
    bc = rec.to_json()["bugcheck"]
    summary["bugcheck"] = bc | {"rule": rec.rule, "message": rec.message}
    return summary, f"bug check 0x{bc['code']:X} ({bc['name']}): {rec.message}"
