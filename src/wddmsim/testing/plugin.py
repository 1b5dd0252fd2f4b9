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
    ``wddm_system``: a factory; ``wddm_system(scenario)`` builds a :class:`~wddmsim.runner.system.System`
    around ``wddm_driver`` from a scenario file path, a dict or a TOML string (verifier strict,
    events collected) and returns a :class:`~wddmsim.testing.run.WddmRun` to run it and read its
    event log.

The suite's items
    One item per case, node id ``wddmsim-verify::<area>/<case>``, marked ``wddm_verify``: a case
    the driver does not declare what it needs for is skipped (pytest's own outcome) with the reason
    ``n/a: <why>``, the word ``wddmsim verify`` uses for it; a failure shows what ``wddmsim verify``
    prints for it (the rule, the entry point that broke it and where its code is, the bug check
    explained, the crossing, the decoded crash record, the driver's traceback). The driver is probed
    once per session.

Pytest conventions it follows: options in their own group, fixtures that a ``conftest.py`` may
override by name (a team's conftest can make ``wddm_driver`` return its class), ``__tracebackhide__``
in helpers so a failure points at the test, items deselectable with ``-k``, ``-m`` and
``--deselect``, a bad option a usage error (exit status 4) rather than a traceback, and nothing
added when the options are absent: the collection hook is registered only with ``--wddm-driver``,
and the rest of wddmsim is imported only when a fixture or an option needs it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .run import WddmRun, build_run, merged, render_failure

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
            from ..dxgkrnl.errors import AdapterStartError
            from ..runner.system import ConfigError
            from ..verify import probe

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
        from ..dxgkrnl.loader import LoadError, load_class

        try:
            driver = load_class(spec, "driver", base_dir=Path(config.invocation_params.dir))
        except LoadError as e:
            raise pytest.UsageError(f"--wddm-driver: {e}") from None
        settings = _checked_settings(driver, settings)
    setup = _Setup(spec, driver, settings)
    config.stash[_SETUP] = setup
    if spec is not None:
        from ..verify import select

        try:
            setup.cases = select(only)
        except ValueError as e:
            raise pytest.UsageError(f"--wddm-only: {e}") from None
        config.addinivalue_line("markers", f"{MARKER}: a case of wddmsim's conformance suite (--wddm-driver)")
        config.pluginmanager.register(_SuiteCollection(setup), "wddmsim-verify-suite")


def _parse_settings(pairs: list[str]) -> dict:
    """``--wddm-set`` pairs as a settings table, read exactly as ``wddmsim verify --set`` reads them."""
    from ..cli.app import UserError, parse_settings

    try:
        return parse_settings(pairs, "--wddm-set")
    except UserError as e:
        raise pytest.UsageError(e.message) from None


def _checked_settings(driver: type, settings: dict) -> dict:
    """The settings as the driver's own ``Settings`` model takes them; what it refuses is a usage error."""
    from ..runner.system import ConfigError, validated_settings

    try:
        validated_settings(driver, settings)
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
        from ..verify import NOT_APPLICABLE, run_case
        from ..verify.output import ranges

        setup = self.config.stash[_SETUP]
        result = run_case(self.case, setup.driver, setup.declared(), setup.settings)
        if result.rules:
            self.user_properties.append(("rules_exercised", ranges(result.rules)))
        if result.verdict == NOT_APPLICABLE:
            pytest.skip(f"{NOT_APPLICABLE}: {result.reason}")
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


# ---------------------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="session")
def wddm_driver(pytestconfig: pytest.Config) -> type:
    """The driver class under test: ``--wddm-driver``, else wddmsim's reference driver."""
    setup = pytestconfig.stash.get(_SETUP, None)
    if setup is not None and setup.driver is not None:
        return setup.driver
    from ..kmd import ReferenceDriver

    return ReferenceDriver


@pytest.fixture
def wddm_settings(pytestconfig: pytest.Config) -> dict:
    """The driver settings given with ``--wddm-set`` (empty without), a copy the test may change."""
    setup = pytestconfig.stash.get(_SETUP, None)
    return copy.deepcopy(setup.settings) if setup is not None else {}


@pytest.fixture
def wddm_system(wddm_driver, wddm_settings, request):
    """A factory: ``wddm_system(scenario, *, driver=None, settings=None, verifier="strict",
    seed=None)`` builds a System around the driver and returns a
    :class:`~wddmsim.testing.run.WddmRun`.

    ``scenario``: a path (``pathlib.Path``, or a one-line string ending in ``.toml``; a relative
    one is taken from the test file's directory), a dict as :func:`tomllib.loads` gives, TOML text,
    or a :class:`~wddmsim.scenario.Scenario`. ``driver``: default ``wddm_driver`` (the scenario's
    own ``[driver] class`` is not used: the tests are about the driver under test). ``settings``
    go over ``wddm_settings`` (nested tables merged), which go over the scenario's ``[driver]``
    table. A scenario with mistakes raises :class:`~wddmsim.scenario.ScenarioError`, settings the
    driver refuses :class:`~wddmsim.runner.system.ConfigError`, a driver Windows would not start
    :class:`~wddmsim.dxgkrnl.errors.AdapterStartError`."""
    base = Path(request.path).parent

    def build(scenario, *, driver=None, settings=None, verifier: str = "strict", seed: int | None = None) -> WddmRun:
        __tracebackhide__ = True
        return build_run(scenario, driver=driver or wddm_driver, settings=merged(wddm_settings, settings or {}),
                         verifier=verifier, seed=seed, base_dir=base, source=f"<{request.node.name}>")

    return build


__all__ = ["MARKER", "SUITE_NAME", "VerifyCase", "VerifySuite"]
