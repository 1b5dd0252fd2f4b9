"""What every ``wddmsim`` command shares: the error that turns bad input into one line on stderr
with exit status 2, the console, checks that a path can be written, reading a scenario file with
its ``--set`` changes, building the system, loading a driver class and reading an event log.

The command modules (:mod:`wddmsim.cli`, :mod:`wddmsim.cli.sweep`, :mod:`wddmsim.cli.replay`) import
these from here; nothing here imports a command module, so the commands form no import circle.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from gettext import gettext
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["ModelBug", "ScenarioProblems", "UserError", "WddmsimGroup", "build_system", "check_directory", "check_writable", "console",
           "escape_unencodable", "load_driver", "load_scenario_file", "parse_duration_option", "parse_settings",
           "parse_size_option", "read_log", "show_warnings", "with_failures"]


class UserError(click.ClickException):
    """A mistake in what the person asked for: one line on stderr, exit status 2."""

    exit_code = 2

    def show(self, file=None) -> None:
        click.echo(f"wddmsim: error: {self.message}", err=True)


class ScenarioProblems(UserError):
    """Every problem of a scenario file, one per line."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems

    def show(self, file=None) -> None:
        for line in self.problems:
            click.echo(f"wddmsim: error: {line}", err=True)


class ModelBug(click.ClickException):
    """A bug of the model itself (:class:`~wddmsim.trace.ledger.LedgerError`): "internal error: the
    model lost track of ...", each offending item's history, exit status 4."""

    exit_code = 4

    def __init__(self, error):
        super().__init__(str(error))
        self.error = error

    def show(self, file=None) -> None:
        click.echo(f"wddmsim: internal error: {self.error}", err=True)
        click.echo(self.error.describe(), err=True)
        click.echo("wddmsim: this is a bug of the model, not of the scenario or the driver; please report it "
                   "with the scenario and seed", err=True)


class WddmsimGroup(click.Group):
    """The ``wddmsim`` command group: a :class:`~wddmsim.trace.ledger.LedgerError` from any
    command (a run, a sweep's rows, a replay, a verify case, the demo) becomes a :class:`ModelBug`;
    a research policy that broke its protocol (:class:`~wddmsim.policies.protocol.PolicyError`)
    or an output that cannot be written (:class:`~wddmsim.trace.output.WriteFailed`), one line
    and exit status 2.
    A Ctrl-C that reaches a command outside a run (which stops cleanly, :mod:`wddmsim.runner.stop`),
    e.g. while a scenario is read, ends it with one line and exit status 130, not click's
    "Aborted!" and 1.

    ``lazy_commands`` (name -> ``("package.module:attribute", short help)``) are commands whose
    module is imported only when the command is looked up to run (or for its own ``--help``), so
    that ``wddmsim --version`` or ``wddmsim run`` does not import what ``rules`` or ``decode`` need.
    ``wddmsim --help`` lists them with the short help from the table: the first sentence of the
    command's help, which click shortens exactly as it shortens the whole help text (a test checks
    that the two agree)."""

    def __init__(self, *args, lazy_commands: dict[str, tuple[str, str]] | None = None, **kw):
        super().__init__(*args, **kw)
        self.lazy_commands = dict(lazy_commands or {})

    def list_commands(self, ctx) -> list[str]:
        return sorted({*self.commands, *self.lazy_commands})

    def get_command(self, ctx, cmd_name: str):
        if cmd_name not in self.commands and cmd_name in self.lazy_commands:
            module, _, attribute = self.lazy_commands[cmd_name][0].partition(":")
            self.add_command(getattr(importlib.import_module(module), attribute), cmd_name)
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx, args):
        try:
            return super().resolve_command(ctx, args)
        except click.exceptions.NoSuchCommand as e:
            # click suggests close names from the commands imported so far: suggest from them all
            raise click.exceptions.NoSuchCommand(e.command_name, possibilities=self.list_commands(ctx),
                                                 ctx=ctx) from None

    def format_commands(self, ctx, formatter) -> None:
        """click's list of commands, with a command not yet imported standing in by its short help."""
        commands = []
        for name in self.list_commands(ctx):
            cmd = self.commands.get(name)
            if cmd is None:
                cmd = click.Command(name, help=self.lazy_commands[name][1])
            if not cmd.hidden:
                commands.append((name, cmd))
        if commands:
            limit = formatter.width - 6 - max(len(name) for name, _ in commands)
            rows = [(name, cmd.get_short_help_str(limit)) for name, cmd in commands]
            with formatter.section(gettext("Commands")):
                formatter.write_dl(rows)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except KeyboardInterrupt:
            click.echo("wddmsim: interrupted by SIGINT", err=True)
            raise SystemExit(130) from None
        except Exception as e:
            translated = _translated(e)
            if translated is None:
                raise
            raise translated from None


def _translated(error: Exception) -> click.ClickException | None:
    """The :class:`ModelBug` or :class:`UserError` that ``error`` from a command becomes, or None:
    an output that could not be written (:class:`~wddmsim.trace.output.WriteFailed`, from a command
    that does not catch it itself) is its one line, exit status 2.
    The exception classes are imported here, on the way out, so that a command that needs
    neither module (``--version``, ``rules``, ``decode``) does not import them; when they cannot be
    imported, the error stands as it is."""
    try:
        from ..policies.protocol import PolicyError
        from ..trace.ledger import LedgerError
        from ..trace.output import WriteFailed
    except Exception:  # noqa: BLE001 - the original error is the one to show
        return None
    if isinstance(error, LedgerError):
        return ModelBug(error)
    if isinstance(error, (PolicyError, WriteFailed)):
        return UserError(str(error))
    return None


def console(wide: bool = False) -> Console:
    """Rich console; when stdout is not a terminal, as wide as ``COLUMNS`` says (the terminal the
    output is piped to, as a shell exports it), else wide enough that no member name is cut; with
    ``wide``, wide enough that no column of the summary's ``--wide`` tables is squeezed. Text
    stdout's encoding cannot hold is written escaped (:func:`escape_unencodable`)."""
    from rich.console import Console

    escape_unencodable(sys.stdout)

    con = Console(highlight=False)
    if not con.is_terminal:
        columns = os.environ.get("COLUMNS", "")
        width = int(columns) if columns.isdigit() and int(columns) >= 40 and not wide else (400 if wide else 200)
        con = Console(highlight=False, width=width)
    return con


def escape_unencodable(stream) -> None:
    """Make ``stream`` (standard output) write what its encoding cannot hold as a backslash escape
    instead of raising: a lone surrogate (a byte that was not UTF-8 on the command line, carried
    in a scenario's name) shows as ``\\udce9``, as the files of :mod:`wddmsim.trace.output` write
    it, not as a UnicodeEncodeError after the run. A stream that already escapes (Python's
    ``surrogateescape`` under the C locale) or cannot be reconfigured is left as it is."""
    if getattr(stream, "errors", None) != "strict" or not callable(getattr(stream, "reconfigure", None)):
        return
    try:
        stream.reconfigure(errors="backslashreplace")
    except (ValueError, OSError):
        pass


def check_writable(path: str) -> None:
    """A :class:`UserError` unless ``path`` can be opened for writing (it is created if missing)."""
    try:
        with open(path, "a"):
            pass
    except OSError as e:
        raise UserError(f"{path}: cannot write: {e.strerror}") from None


def check_directory(path: str) -> None:
    """Create the report folder ``path`` (and its parents), or a :class:`UserError` saying why not."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise UserError(f"{path}: cannot create the report folder: {e.strerror}") from None


def with_failures(status: int, failed: list[str]) -> int:
    """Show each output that could not be written (``failed``: ``PATH: cannot write: REASON``, the
    text of a :class:`~wddmsim.trace.output.WriteFailed`), one line each as a :class:`UserError`
    shows it, and return the command's exit status: its own ``status`` when that is not 0 (a bug
    check's 3 stands), else 2 when an output failed."""
    for line in failed:
        UserError(line).show()
    return status if status or not failed else UserError.exit_code


def load_scenario_file(path: str, sets=(), until: tuple[int, str] | None = None):
    """The scenario file at ``path`` with the ``--set PATH=VALUE`` assignments ``sets`` made on
    it (see :mod:`wddmsim.scenario.overrides`), or the error listing its problems (exit 2).

    ``until``: ``(ns, as written)`` of a ``--until`` option. A run to past the file's duration
    lasts that long, so the scenario is checked with that duration (``--until`` as the last
    override): every bound that depends on the run's length (a storm's interrupts, a repeat
    against the time left) holds for the run that is made, as for a file that says it."""
    from ..scenario import Override, OverrideError, ScenarioError, load_scenario, parse_override

    try:
        overrides = [parse_override(text) for text in sets]
        scenario = load_scenario(path, overrides)
        if until is not None and until[0] > scenario.duration:
            scenario = load_scenario(path, [*overrides, Override(("duration",), until[0], until[1], "--until")])
    except OverrideError as e:
        raise UserError(str(e)) from None
    except ScenarioError as e:
        raise ScenarioProblems(e.problems) from None
    show_warnings(scenario.warnings)
    return scenario


def show_warnings(lines) -> None:
    """Each of a scenario's warnings (a value taken otherwise than written, a fault after the end of
    the run) on stderr, ``wddmsim: warning: FILE: field.path: what happens``."""
    for line in lines:
        click.echo(f"wddmsim: warning: {line}", err=True)


def parse_duration_option(text: str | None, option: str) -> int | None:
    """A run's length given as an option (``--until 500ms``) in ns, None when not given, or a
    :class:`UserError` naming ``option``: one that is not a duration, a bare number (refused as a
    scenario's ``duration = 5`` is: :func:`wddmsim.util.units.bare_run_length`), or one outside the
    range of a scenario's ``duration`` (above 0, at most 1 hour of virtual time)."""
    from ..scenario import parse_duration
    from ..scenario.bounds import RUN_DURATION
    from ..util.units import bare_run_length

    if text is None:
        return None
    if re.fullmatch(r"\s*(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*", text):
        raise UserError(f"{option}: {bare_run_length(text.strip(), quote='')}")
    try:
        value = parse_duration(text)
    except ValueError as e:
        raise UserError(f"{option}: {e}") from None
    problem = RUN_DURATION.problem(value)
    if problem:
        raise UserError(f"{option}: {problem}")
    return value


def parse_size_option(text: str | None, option: str) -> int | None:
    """A size option's value (``200MB``, ``1GiB``, ``4096``) in bytes, None when not given, or a
    :class:`UserError` naming ``option``."""
    from ..util.units import parse_size

    if text is None:
        return None
    try:
        return parse_size(text)
    except ValueError as e:
        raise UserError(f"{option}: {e}") from None


def build_system(scenario, **kw):
    """A :class:`~wddmsim.runner.system.System`, or the :class:`UserError` that says why it cannot be
    built: a scenario or driver setting the driver refuses, a driver Windows would not start, an
    application call that fails at creation."""
    from ..dxgkrnl import ApiError
    from ..dxgkrnl.errors import AdapterStartError
    from ..runner.system import ConfigError, System

    try:
        return System(scenario, **kw)
    except ConfigError as e:
        raise ScenarioProblems([f"{scenario.name}: {p}: {r}" for p, r in e.problems]) from None
    except AdapterStartError as e:
        raise ScenarioProblems([f"{scenario.name}: the adapter does not start: {p}" for p in e.problems]) from None
    except ApiError as e:
        raise UserError(f"{scenario.name}: the scenario cannot start: {e}") from None


def load_driver(spec: str):
    """The driver class ``spec`` names, or a :class:`UserError` saying why it cannot be loaded."""
    from ..dxgkrnl.loader import LoadError, load_class

    try:
        return load_class(spec, "driver")
    except LoadError as e:
        raise UserError(str(e)) from None


def parse_settings(pairs, option: str = "--set") -> dict:
    """``KEY=VALUE`` pairs as a settings table: a dotted key makes nested tables
    (``engines.Copy.ring_size=4096``), a value is read as TOML (``true``, ``4096``, ``"64KiB"``) or,
    when it is not TOML, taken as a string (``win7``)."""
    import tomllib

    out: dict = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise UserError(f"{option} {pair!r}: expected KEY=VALUE")
        try:
            value = tomllib.loads(f"v = {text}")["v"]
        except tomllib.TOMLDecodeError:
            value = text
        except RecursionError:
            raise UserError(f"{option} {key.strip()}=...: the value is nested too deeply to read") from None
        parts = key.strip().split(".")
        table = out
        for part in parts[:-1]:
            table = table.setdefault(part, {})
            if not isinstance(table, dict):
                raise UserError(f"{option} {pair!r}: {part} is not a table")
        table[parts[-1]] = value
    return out


def read_log(events_file: str) -> list[dict]:
    """The events of the log ``events_file`` (written with ``--events``), or a :class:`UserError`
    when it cannot be read or is not a wddmsim event log. A last line cut mid-way (the run was
    killed while it wrote) is left out with a warning on stderr; a partial log (a run stopped early
    or cut short, :mod:`wddmsim.trace.ending`) is read whole, with a line on stderr saying so."""
    from ..trace.ending import log_ending
    from ..trace.records import read_events_cut

    try:
        events, cut = read_events_cut(events_file)
    except OSError as e:
        raise UserError(f"{events_file}: cannot read: {e.strerror}") from None
    except (ValueError, KeyError) as e:
        raise UserError(f"{events_file}: not a wddmsim event log: {e}") from None
    if not events or not isinstance(events[0], dict) or events[0].get("event") != "LogStart":
        raise UserError(f"{events_file}: not a wddmsim event log (the first line is not LogStart)")
    if cut:
        click.echo(f"wddmsim: warning: {events_file}: {cut}", err=True)
    ending = log_ending(events)
    if ending.partial:
        click.echo(f"wddmsim: {events_file}: {ending.describe()}", err=True)
    return events
