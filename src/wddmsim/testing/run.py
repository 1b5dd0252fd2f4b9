"""A System with its event log, for tests: :class:`WddmRun` runs it (at once or in steps) and
answers questions about the log in one line; :func:`build_run` makes one from a scenario path, dict,
TOML text or model; :func:`render_failure` writes a failure as ``wddmsim verify`` prints it.

The pytest plugin (:mod:`wddmsim.testing.plugin`) hands these to tests through the ``wddm_system``
fixture; nothing here needs pytest. Everything of wddmsim is imported when first used, so importing
this module costs nothing to a pytest run that never builds a system.
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass
from pathlib import Path


def render_failure(result) -> str:
    """A failed case (a :class:`~wddmsim.verify.CaseResult`, or anything with ``case.id``,
    ``case.title`` and ``failure``) as ``wddmsim verify`` prints it, in plain text."""
    import io

    from rich.console import Console

    from ..verify.output import print_failure

    out = io.StringIO()
    con = Console(file=out, color_system=None, highlight=False, soft_wrap=True, width=200)
    print_failure(con, result)
    return out.getvalue().strip("\n")


def load(scenario, base: Path, source: str = "<dict>"):
    """The :class:`~wddmsim.scenario.Scenario` ``scenario`` stands for: a path (``pathlib.Path``, or a
    one-line string ending in ``.toml``; a relative one is taken from ``base``), a dict as
    :func:`tomllib.loads` gives, TOML text, or a ``Scenario`` itself. ``source`` names a dict or text
    in messages."""
    from ..scenario import Scenario, load_scenario, parse_scenario, scenario_from_dict

    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, dict):
        return scenario_from_dict(scenario, source)
    if isinstance(scenario, str) and ("\n" in scenario or not scenario.rstrip().endswith(".toml")):
        return parse_scenario(scenario, source)
    if isinstance(scenario, (str, Path)):
        path = Path(scenario)
        return load_scenario(path if path.is_absolute() else base / path)
    raise TypeError(f"a scenario is a path, a dict, TOML text or a Scenario, not {type(scenario).__name__}")


def merged(under: dict, over: dict) -> dict:
    """``over`` laid over ``under``, tables merged key by key."""
    out = dict(under)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merged(out[key], value)
        else:
            out[key] = value
    return out


def build_run(scenario, *, driver=None, settings=None, verifier: str = "strict", seed: int | None = None,
              base_dir: Path | None = None, source: str = "<dict>") -> WddmRun:
    """A :class:`WddmRun` around a new System: the scenario (see :func:`load`), the driver class
    (None: the scenario's ``[driver] class``, else the reference driver), settings over the
    scenario's ``[driver]`` table, the verifier mode and seed; events collected."""
    __tracebackhide__ = True
    from ..runner.system import System
    from ..trace import ListSink

    log = ListSink()
    system = System(load(scenario, base_dir or Path.cwd(), source), trace=log, verifier=verifier, seed=seed,
                    driver=driver, settings=settings)
    return WddmRun(system, log)


class WddmRun:
    """A System with its event log: run it (to the end, or to a time and on from there) and ask
    the log questions in one line.

    ``run.run()`` runs to the scenario's duration or to a bug check and returns the run itself;
    ``run.run(until=...)`` stops at that virtual time (ns, or a duration such as ``"1.5ms"``) and a
    later ``run.run(...)`` goes on from there. The simulator keeps every timer's absolute time and
    order, so a run taken in steps has the same events as one taken at once; the log keeps one
    ``LogEnd``, at the time reached so far. Nothing runs after a bug check. Stepping goes no finer
    than a virtual time: the System has no call to run one DDI or one interrupt at a time.

    ``system``: the :class:`~wddmsim.runner.system.System` (its GPU, adapter, driver, contexts).
    ``result``: the last :class:`~wddmsim.runner.system.RunResult` (None before the first run)."""

    def __init__(self, system, log):
        self.system = system
        self.log = log
        self.result = None

    # -- running ----------------------------------------------------------------------------------
    @property
    def now(self) -> int:
        """Where virtual time is, in ns."""
        return self.system.sim.now

    @property
    def duration(self) -> int:
        """The scenario's duration in ns: where ``run()`` stops when nothing stops it first."""
        return self.system.scenario.duration

    def run(self, until: int | str | None = None) -> WddmRun:
        """Run to ``until`` (virtual ns or a duration string; default the scenario's duration) or to a
        bug check; returns ``self``."""
        __tracebackhide__ = True
        if self.bugcheck is not None:
            raise RuntimeError(f"the run stopped with {self.bugcheck.bugcheck} at {self.result.end} ns: "
                               f"nothing runs after a bug check")
        if until is None:
            limit = self.duration
        else:
            from ..util.units import parse_duration

            limit = parse_duration(until)
        if limit < self.now:
            raise ValueError(f"cannot run back to {limit} ns: the run is at {self.now} ns already")
        events = self.log.events
        if events and events[-1]["event"] == "LogEnd":
            events.pop()  # the run goes on: the log ends once, where it ends now
        self.result = self.system.run(until=limit)
        return self

    @property
    def bugcheck(self):
        """The :class:`~wddmsim.dxgkrnl.crash.CrashRecord` of the bug check that stopped the run, or None."""
        return self.result.bugcheck if self.result is not None else None

    @property
    def summary(self) -> dict:
        """The run's summary (what ``wddmsim run --json`` prints), as of the time reached."""
        if self.result is None:
            raise RuntimeError("the system has not run yet: call run() first")
        return self.result.summary

    def context(self, full_name: str) -> dict:
        """The summary's entry for the context ``"process/context"``."""
        for c in self.summary["contexts"]:
            if c["context"] == full_name:
                return c
        raise KeyError(f"no context {full_name!r}; contexts: {', '.join(c['context'] for c in self.summary['contexts'])}")

    def explain(self) -> str:
        """The bug check as ``wddmsim verify`` shows a failure (rule, bug check explained, the crossing
        it broke at, decoded crash record, driver traceback); ``""`` when the run did not stop. Made
        for ``assert run.bugcheck is None, run.explain()``."""
        if self.bugcheck is None:
            return ""
        from ..verify.runner import failure_of

        failure = failure_of(self.bugcheck, self.log.events)
        return render_failure(_Stopped(_Named(self.system.scenario.name or "scenario",
                                              f"stopped at {self.bugcheck.time} ns"), failure))

    # -- the event log ----------------------------------------------------------------------------
    @property
    def all_events(self) -> list[dict]:
        """Every event so far, as dicts (docs/events.md)."""
        return self.log.events

    def events(self, *names: str, **fields) -> list[dict]:
        """The events named ``names`` (any name when none is given) whose fields match ``fields``.

        A field matches when it equals the value given, or when the value is a callable that
        returns true for it. ``a__b`` reaches into nested members (``args__InterruptType``); a
        field named by a Python keyword may be written with a trailing underscore (``for_``). An
        event or top-level field the log does not have is an error, so a typo cannot pass as
        "none found"."""
        __tracebackhide__ = True
        wanted = set(names)
        paths = [(_field_path(key), value) for key, value in fields.items()]
        _check_query(wanted, paths)
        out = []
        for e in self.log.events:
            if wanted and e["event"] not in wanted:
                continue
            if all(_matches(e, path, value) for path, value in paths):
                out.append(e)
        return out

    def count(self, *names: str, **fields) -> int:
        """How many events :meth:`events` finds."""
        __tracebackhide__ = True
        return len(self.events(*names, **fields))

    def first(self, *names: str, **fields) -> dict | None:
        """The first event :meth:`events` finds, or None."""
        __tracebackhide__ = True
        found = self.events(*names, **fields)
        return found[0] if found else None

    def last(self, *names: str, **fields) -> dict | None:
        """The last event :meth:`events` finds, or None."""
        __tracebackhide__ = True
        found = self.events(*names, **fields)
        return found[-1] if found else None

    def times(self, *names: str, **fields) -> list[int]:
        """The virtual times (ns) of the events :meth:`events` finds."""
        __tracebackhide__ = True
        return [e["t"] for e in self.events(*names, **fields)]

    def __repr__(self) -> str:
        state = "not run" if self.result is None else (
            f"stopped by {self.bugcheck.bugcheck}" if self.bugcheck is not None else f"at {self.now} ns")
        return f"<WddmRun {self.system.scenario.name!r} {state}, {len(self.log.events)} events>"


@dataclass
class _Named:
    id: str
    title: str


@dataclass
class _Stopped:
    case: _Named
    failure: object


_MISSING = object()


def _field_path(key: str) -> tuple[str, ...]:
    parts = key.split("__")
    if parts[0].endswith("_") and keyword.iskeyword(parts[0][:-1]):
        parts[0] = parts[0][:-1]
    return tuple(parts)


def _check_query(names: set[str], paths) -> None:
    from ..trace import EVENT_FIELDS

    unknown = sorted(n for n in names if n not in EVENT_FIELDS)
    if unknown:
        raise ValueError(f"no event called {', '.join(unknown)} (docs/events.md); events: {', '.join(EVENT_FIELDS)}")
    allowed = {"t", "event"}
    for n in names or EVENT_FIELDS:
        allowed.update(EVENT_FIELDS[n])
    for path, _ in paths:
        if path[0] not in allowed:
            what = ", ".join(sorted(names)) if names else "any event"
            raise ValueError(f"{what} has no field {path[0]!r}; fields: {', '.join(sorted(allowed))}")


def _matches(event: dict, path: tuple[str, ...], value) -> bool:
    got = event
    for part in path:
        if not isinstance(got, dict):
            return False
        got = got.get(part, _MISSING)
        if got is _MISSING:
            return False
    return bool(value(got)) if callable(value) else got == value


__all__ = ["WddmRun", "build_run", "load", "merged", "render_failure"]
