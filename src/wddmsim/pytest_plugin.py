"""wddmsim's pytest plugin: a driver team tests its own display miniport driver with pytest.

Installed with wddmsim through the ``pytest11`` entry point (name ``wddmsim``), so any pytest run in
an environment that has wddmsim loads it; ``-p no:wddmsim`` turns it off. It gives:

Command-line options (group "wddmsim")
    ``--wddm-driver SPEC``  the driver class under test, ``package.module:Class`` or
    ``path/to/file.py:Class`` (a relative path is taken from the directory pytest was started in),
    as for ``wddmsim verify``. With it, the conformance suite's cases are collected as test items too.
    ``--wddm-set KEY=VALUE``  a driver setting, repeatable, read as ``wddmsim verify --set`` reads it.
    ``--wddm-only AREA``  collect only this area (or ``area/case``) of the suite; repeatable.

Fixtures (all named ``wddm_*`` so they never clash with a project's own)
    ``wddm_driver`` (session): the ``--wddm-driver`` class, else the reference driver.
    ``wddm_settings``: the ``--wddm-set`` table, a fresh copy per test.
    ``wddm_system``: a factory; ``wddm_system(scenario)`` builds a :class:`~wddmsim.system.System`
    around ``wddm_driver`` from a scenario file path, a dict or a TOML string (verifier strict,
    events collected) and returns a :class:`WddmRun` to run it and read its event log.

The suite's items
    One item per case, node id ``wddmsim-verify::<area>/<case>``, marked ``wddm_verify``: a case
    the driver does not declare what it needs for is skipped with the reason; a failure shows what
    ``wddmsim verify`` prints for it (the rule, the bug check explained, the crossing it broke at,
    the decoded crash record, the driver's traceback). The driver is probed once per session.

Pytest conventions it follows: options in their own group, fixtures that a ``conftest.py`` may
override by name (a team's conftest can make ``wddm_driver`` return its class), ``__tracebackhide__``
in helpers so a failure points at the test, items deselectable with ``-k``, ``-m`` and
``--deselect``, a bad option a usage error (exit status 4) rather than a traceback, and nothing
added when the options are absent: the collection hook is registered only with ``--wddm-driver``,
and wddmsim itself is imported only when a fixture or an option needs it.
"""

from __future__ import annotations

import copy
import keyword
from dataclasses import dataclass, field
from pathlib import Path

import pytest

SUITE_NAME = "wddmsim-verify"
MARKER = "wddm_verify"


# ---------------------------------------------------------------------------------------- options
def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("wddmsim", "wddmsim: test a WDDM display miniport driver")
    group.addoption("--wddm-driver", metavar="SPEC", default=None,
                    help="The driver class under test ('package.module:Class' or 'path/file.py:Class'); "
                         "the wddm_* fixtures use it and the conformance suite is collected against it.")
    group.addoption("--wddm-set", metavar="KEY=VALUE", action="append", default=[],
                    help="A driver setting (its [driver] table), e.g. --wddm-set ddi_version=wddm2_7; repeatable.")
    group.addoption("--wddm-only", metavar="AREA", action="append", default=[],
                    help="Collect only this area (or AREA/CASE) of the conformance suite; repeatable.")


@dataclass
class _Setup:
    """What the options asked for, read once at configure time."""

    spec: str | None
    driver: type | None
    settings: dict
    cases: list = field(default_factory=list)
    _declared: object = None
    _probe_error: str | None = None

    def declared(self):
        """What the driver declares, probed once per session (the first item asks); a driver that
        does not start is a :class:`_DriverDoesNotStart` for every item."""
        if self._declared is None and self._probe_error is None:
            from .dxgkrnl.errors import AdapterStartError
            from .system import ConfigError
            from .verify import probe

            try:
                self._declared = probe(self.driver, self.settings)
            except AdapterStartError as e:
                self._probe_error = "the adapter does not start:\n" + "\n".join(e.problems)
            except ConfigError as e:
                self._probe_error = "the driver's settings are refused:\n" + "\n".join(
                    f"{p}: {r}" for p, r in e.problems)
        if self._probe_error is not None:
            raise _DriverDoesNotStart(f"{self.spec}: {self._probe_error}")
        return self._declared


_SETUP = pytest.StashKey[_Setup]()


def pytest_configure(config: pytest.Config) -> None:
    spec = config.getoption("wddm_driver", None)
    sets = config.getoption("wddm_set", None) or []
    only = config.getoption("wddm_only", None) or []
    if spec is None and not sets and not only:
        return
    if only and spec is None:
        raise pytest.UsageError("--wddm-only selects conformance cases, which are collected only with --wddm-driver")
    settings = _parse_settings(sets) if sets else {}
    driver = None
    if spec is not None:
        from .loader import LoadError, load_class

        try:
            driver = load_class(spec, "driver", base_dir=Path(config.invocation_params.dir))
        except LoadError as e:
            raise pytest.UsageError(f"--wddm-driver: {e}") from None
        settings = _checked_settings(driver, settings)
    setup = _Setup(spec, driver, settings)
    config.stash[_SETUP] = setup
    if spec is not None:
        from .verify import select

        try:
            setup.cases = select(only)
        except ValueError as e:
            raise pytest.UsageError(f"--wddm-only: {e}") from None
        config.addinivalue_line("markers", f"{MARKER}: a case of wddmsim's conformance suite (--wddm-driver)")
        config.pluginmanager.register(_SuiteCollection(setup), "wddmsim-verify-suite")


def _parse_settings(pairs: list[str]) -> dict:
    """``--wddm-set`` pairs as a settings table, read exactly as ``wddmsim verify --set`` reads them."""
    from .cli import UserError, parse_settings

    try:
        return parse_settings(pairs, "--wddm-set")
    except UserError as e:
        raise pytest.UsageError(e.message) from None


def _checked_settings(driver: type, settings: dict) -> dict:
    """The settings as the driver's own ``Settings`` model takes them; what it refuses is a usage error."""
    from .system import ConfigError, _validated

    try:
        _validated(driver, settings)
    except ConfigError as e:
        raise pytest.UsageError("--wddm-set: " + "; ".join(f"{p}: {r}" for p, r in e.problems)) from None
    return settings


# ---------------------------------------------------------------------------------------- the suite as items
class _SuiteCollection:
    """Registered only with ``--wddm-driver``: adds the suite's collector beside the session's own."""

    def __init__(self, setup: _Setup):
        self.setup = setup

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector):
        rep = yield
        if isinstance(collector, pytest.Session) and rep.passed and self.setup.cases:
            rep.result.append(VerifySuite.from_parent(collector, name=SUITE_NAME, nodeid=SUITE_NAME))
        return rep

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        rep = yield
        if isinstance(item, VerifyCase) and rep.skipped and isinstance(rep.longrepr, tuple):
            # A case is a node, not a line of a file: "SKIPPED [1] wddmsim-verify::tdr/adapter_reset: ..."
            rep.longrepr = (item.nodeid, None, rep.longrepr[2])
        return rep


class VerifySuite(pytest.Collector):
    """The conformance suite's cases (those ``--wddm-only`` selects) as items."""

    def collect(self):
        for case in self.config.stash[_SETUP].cases:
            yield VerifyCase.from_parent(self, name=case.id, case=case)


class _DriverDoesNotStart(Exception):
    """The probe could not start the adapter with the driver: every case fails with why."""


class _CaseFailed(Exception):
    def __init__(self, result):
        super().__init__(result.reason)
        self.result = result


class VerifyCase(pytest.Item):
    """One case of the suite, run with :func:`wddmsim.verify.run_case` against ``--wddm-driver``."""

    def __init__(self, *, case, **kw):
        super().__init__(**kw)
        self.case = case
        self.add_marker(MARKER)

    def runtest(self) -> None:
        from .verify import run_case
        from .verify.output import ranges

        setup = self.config.stash[_SETUP]
        result = run_case(self.case, setup.driver, setup.declared(), setup.settings)
        if result.rules:
            self.user_properties.append(("rules_exercised", ranges(result.rules)))
        if result.verdict == "skip":
            pytest.skip(f"not applicable: {result.reason}")
        if result.verdict == "fail":
            raise _CaseFailed(result)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, _CaseFailed):
            return render_failure(excinfo.value.result)
        if isinstance(excinfo.value, _DriverDoesNotStart):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, f"{SUITE_NAME} {self.case.id}: {self.case.title}"


def render_failure(result) -> str:
    """A failed case (a :class:`~wddmsim.verify.CaseResult`, or anything with ``case.id``,
    ``case.title`` and ``failure``) as ``wddmsim verify`` prints it, in plain text."""
    import io

    from rich.console import Console

    from .verify.output import print_failure

    out = io.StringIO()
    con = Console(file=out, color_system=None, highlight=False, soft_wrap=True, width=200)
    print_failure(con, result)
    return out.getvalue().strip("\n")


# ---------------------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="session")
def wddm_driver(pytestconfig: pytest.Config) -> type:
    """The driver class under test: ``--wddm-driver``, else wddmsim's reference driver."""
    setup = pytestconfig.stash.get(_SETUP, None)
    if setup is not None and setup.driver is not None:
        return setup.driver
    from .kmd import ReferenceDriver

    return ReferenceDriver


@pytest.fixture
def wddm_settings(pytestconfig: pytest.Config) -> dict:
    """The driver settings given with ``--wddm-set`` (empty without), a copy the test may change."""
    setup = pytestconfig.stash.get(_SETUP, None)
    return copy.deepcopy(setup.settings) if setup is not None else {}


@pytest.fixture
def wddm_system(wddm_driver, wddm_settings, request):
    """A factory: ``wddm_system(scenario, *, driver=None, settings=None, verifier="strict",
    seed=None)`` builds a System around the driver and returns a :class:`WddmRun`.

    ``scenario``: a path (``pathlib.Path``, or a one-line string ending in ``.toml``; a relative
    one is taken from the test file's directory), a dict as :func:`tomllib.loads` gives, TOML text,
    or a :class:`~wddmsim.scenario.Scenario`. ``driver``: default ``wddm_driver`` (the scenario's
    own ``[driver] class`` is not used: the tests are about the driver under test). ``settings``
    go over ``wddm_settings`` (nested tables merged), which go over the scenario's ``[driver]``
    table. A scenario with mistakes raises :class:`~wddmsim.scenario.ScenarioError`, settings the
    driver refuses :class:`~wddmsim.system.ConfigError`, a driver Windows would not start
    :class:`~wddmsim.dxgkrnl.errors.AdapterStartError`."""
    base = Path(request.path).parent

    def build(scenario, *, driver=None, settings=None, verifier: str = "strict", seed: int | None = None) -> WddmRun:
        __tracebackhide__ = True
        from .system import System
        from .trace import ListSink

        sc = _scenario(scenario, base, f"<{request.node.name}>")
        log = ListSink()
        system = System(sc, trace=log, verifier=verifier, seed=seed, driver=driver or wddm_driver,
                        settings=_merged(wddm_settings, settings or {}))
        return WddmRun(system, log)

    return build


def _scenario(scenario, base: Path, source: str):
    """The :class:`~wddmsim.scenario.Scenario` ``scenario`` stands for (see ``wddm_system``)."""
    from .scenario import Scenario, load_scenario, parse_scenario, scenario_from_dict

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


def _merged(under: dict, over: dict) -> dict:
    """``over`` laid over ``under``, tables merged key by key."""
    out = dict(under)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merged(out[key], value)
        else:
            out[key] = value
    return out


# ---------------------------------------------------------------------------------------- a run
class WddmRun:
    """A System with its event log: run it (to the end, or to a time and on from there) and ask
    the log questions in one line.

    ``run.run()`` runs to the scenario's duration or to a bug check and returns the run itself;
    ``run.run(until=...)`` stops at that virtual time (ns, or a duration such as ``"1.5ms"``) and a
    later ``run.run(...)`` goes on from there. The simulator keeps every timer's absolute time and
    order, so a run taken in steps has the same events as one taken at once; the log keeps one
    ``LogEnd``, at the time reached so far. Nothing runs after a bug check. Stepping goes no finer
    than a virtual time: the System has no call to run one DDI or one interrupt at a time.

    ``system``: the :class:`~wddmsim.system.System` (its GPU, adapter, driver, contexts).
    ``result``: the last :class:`~wddmsim.system.RunResult` (None before the first run)."""

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
            from .units import parse_duration

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
        from .verify.runner import _failure_of

        failure = _failure_of(self.bugcheck, self.log.events)
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
    from .trace import EVENT_FIELDS

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


__all__ = ["MARKER", "SUITE_NAME", "VerifyCase", "VerifySuite", "WddmRun", "render_failure"]
