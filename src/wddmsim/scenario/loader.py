"""Turning scenario text into a :class:`~wddmsim.scenario.schema.Scenario`, or into one error that
lists everything wrong with it.

Loading goes read -> TOML parse -> field validation -> cross-field checks. Each stage only runs
when the one before succeeded, and a failing stage reports all of its problems together, one line
each, in the form ``FILE: field.path: reason``. Field paths are spelled the way the TOML file is
written (``process[0].context[1].workload.fps``), and pydantic's own wording is replaced by
messages meant for the person editing the file. A value out of its range says the range and why
(:mod:`.bounds`); a key a table does not have names the closest key it has, when one is close
(``adapter.nodez: unknown field; did you mean 'nodes'?``). A ``duration`` the TOML text writes as a
bare integer is marked as one, so that it is refused (a run's length needs a unit), while a
``duration`` given in Python as an int is nanoseconds. What a valid scenario takes otherwise than
written is not an error: it is in the scenario's ``warnings``, named by the same source (with its
``--set`` options).
"""

from __future__ import annotations

import datetime
import re
import tomllib
import types
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from ..util.units import BareNumber

from .overrides import Override, OverrideError, apply_overrides
from .bounds import OUT_OF_RANGE
from .problems import unknown_field
from .schema import CONFLICT_ERROR, UNKNOWN_SETTING, WORKLOAD_KINDS, Location, Scenario, field_path

__all__ = ["ScenarioError", "load_scenario", "parse_scenario", "read_scenario_data", "resolve_driver_path",
           "scenario_from_dict"]


class ScenarioError(Exception):
    """A scenario that cannot be used.

    ``path`` is the file (or the ``source`` name given for text and dicts); ``problems`` holds one
    complete line per problem, ``"FILE: field.path: reason"``; ``str()`` joins them with
    newlines. ``unknown_paths`` holds the lines of the problems where an override (``--set``)
    names a field the schema does not have or a path the data cannot have (an array entry that is
    not there, a key below a plain value): a mistake in the path, not in the value.
    """

    def __init__(self, path: str, problems: list[str], unknown_paths: list[str] | None = None) -> None:
        self.path = path
        self.problems = list(problems)
        self.unknown_paths = list(unknown_paths or ())
        super().__init__("\n".join(self.problems))

    def __str__(self) -> str:
        return "\n".join(self.problems)


def load_scenario(path: str | Path, overrides: Sequence[Override] = ()) -> Scenario:
    """Read, parse and validate the scenario file at ``path``, with ``overrides`` (``--set``
    assignments, :mod:`.overrides`) made on its data before validation.

    An empty ``name`` becomes the file's stem (``games/shooter.toml`` -> ``shooter``). A driver named
    by a relative file path (``driver = "drivers/mine.py:MyDriver"``) is found next to the scenario
    file. Raises :class:`ScenarioError` when the file cannot be read, is not valid TOML, or
    describes an invalid scenario (a problem an override brings is named by that override).
    """
    source = str(path)
    scenario = scenario_from_dict(read_scenario_data(path), source, overrides)
    return resolve_driver_path(scenario, Path(path).parent)


def read_scenario_data(path: str | Path) -> dict:
    """The parsed TOML data of the scenario file at ``path``, not yet validated; raises
    :class:`ScenarioError` when the file cannot be read or is not valid TOML."""
    from ..util.inputbound import SCENARIO_MAX, TooLarge, read_bounded

    source = str(path)
    try:
        raw = read_bounded(path, SCENARIO_MAX)
    except OSError as exc:
        raise ScenarioError(source, [f"{source}: cannot read: {_os_reason(exc)}"]) from None
    except TooLarge as exc:
        raise ScenarioError(source, [f"{source}: cannot read: {exc} (a scenario file)"]) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        reason = f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})"
        raise ScenarioError(source, [f"{source}: cannot read: {reason}"]) from None
    return _parse_toml(text, source)


def resolve_driver_path(scenario: Scenario, folder: str | Path) -> Scenario:
    """Make a driver named by a relative file path (``drivers/mine.py:MyDriver``) absolute,
    relative to ``folder`` (the scenario file's), and a scheduling policy's file too when it is
    found there; returns ``scenario``, changed in place."""
    spec = scenario.driver.class_
    if spec and ":" in spec:
        where, _, name = spec.rpartition(":")
        if (where.endswith(".py") or "/" in where) and not Path(where).is_absolute():
            scenario.driver.class_ = f"{(Path(folder) / where).resolve()}:{name}"
    # A scheduling policy's file (``[scheduler] policy = "mine.py:Edf"``) likewise, when it is
    # there; else it stays as written and is found from the current folder (``--policy mine.py:Edf``).
    spec = scenario.scheduler.policy
    if ":" in spec:
        where, _, name = spec.rpartition(":")
        beside = Path(folder) / where
        if (where.endswith(".py") or "/" in where) and not Path(where).is_absolute() and beside.is_file():
            scenario.scheduler.policy = f"{beside.resolve()}:{name}"
    return scenario


def parse_scenario(text: str, source: str = "<string>") -> Scenario:
    """Parse and validate scenario TOML held in a string; ``source`` names it in messages and,
    unless written in angle brackets like the default, gives the scenario its name when the text
    has none."""
    return scenario_from_dict(_parse_toml(text, source), source)


def _parse_toml(text: str, source: str) -> dict:
    """The TOML data of ``text``; a ``duration`` written as a bare integer is marked as one
    (:class:`~wddmsim.util.units.BareNumber`) so that validation refuses it: a run's length needs a
    unit."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line, column, reason = _toml_position(exc, text)
        raise ScenarioError(source, [f"{source}: line {line}, column {column}: {reason}"]) from None
    except RecursionError:
        raise ScenarioError(source, [f"{source}: a value is nested too deeply to read (arrays or tables "
                                     f"inside each other some thousand levels down)"]) from None
    duration = data.get("duration")
    if isinstance(duration, int) and not isinstance(duration, bool):
        data["duration"] = BareNumber(duration)
    return data


def scenario_from_dict(data: Any, source: str = "<dict>", overrides: Sequence[Override] = ()) -> Scenario:
    """Validate already-parsed scenario data (the dict :func:`tomllib.loads` gives); ``source``
    as for :func:`parse_scenario`. ``overrides`` are assigned on a copy of ``data`` first (``data``
    itself is left as it is); a problem at or below an override's path is reported as
    ``--set PATH=VALUE: field.path: reason``, one the overrides cause elsewhere (a context naming
    a node an override renamed) as ``FILE with --set ...: field.path: reason``."""
    base_ok = True
    if overrides:
        data, base_ok = _with_overrides(data, source, overrides)
    try:
        scenario = Scenario.model_validate(data)
    except RecursionError:
        raise ScenarioError(source, [f"{source}: a value is nested too deeply to check (arrays or tables inside "
                                     f"each other some thousand levels down)"]) from None
    except ValidationError as exc:
        if not overrides:
            raise ScenarioError(source, _problems(exc, source)) from None
        lines, unknown = _override_problems(exc, source, overrides, base_ok)
        raise ScenarioError(source, lines, unknown) from None
    scenario._source = f"{source} with {' '.join(ov.label for ov in overrides)}" if overrides else source
    if not scenario.name and not (source.startswith("<") and source.endswith(">")):
        scenario.name = Path(source).stem
    return scenario


def _with_overrides(data: Any, source: str, overrides: Sequence[Override]) -> tuple[dict, bool]:
    """``data`` with the overrides assigned (missing tables come from the scenario's defaults),
    and whether ``data`` alone is a valid scenario."""
    if not isinstance(data, Mapping):
        raise ScenarioError(source, [f"{source}: expected a table, got {_describe(data)}"])
    try:
        defaults = Scenario.model_validate(data).model_dump(by_alias=True, exclude_none=True)
    except ValidationError:
        defaults = None  # the file has problems of its own: they are reported with the overrides'
    try:
        return apply_overrides(dict(data), overrides, defaults), defaults is not None
    except OverrideError as exc:
        raise ScenarioError(source, [str(exc)], [str(exc)]) from None


def _plain(loc: Location) -> tuple[str, ...]:
    """A location without the tag segment pydantic adds below a workload, parts as strings."""
    out: list[str] = []
    previous: str | int | None = None
    for part in loc:
        if not (previous == "workload" and part in WORKLOAD_KINDS):
            out.append(str(part))
        previous = part
    return tuple(out)


def _override_problems(exc: ValidationError, source: str, overrides: Sequence[Override],
                       base_ok: bool) -> tuple[list[str], list[str]]:
    """Problem lines, each named by the override it comes from where one is at or above it; the
    others by the file, with the overrides when the file alone is valid (they caused it). Also the
    lines where an override names an unknown field."""
    lines: list[str] = []
    unknown: list[str] = []
    paths = [(tuple(str(p) for p in ov.path), ov) for ov in overrides]
    together = " ".join(ov.label for ov in overrides)
    for loc, reason, kind in _located(exc):
        where = _plain(loc)
        owner = None
        for path, ov in paths:  # the last override of a path is the one that holds
            if where[: len(path)] == path:
                owner = ov
        path = field_path(loc)
        if owner is not None:
            line = f"{owner.label}: {path}: {reason}"
        else:
            where_text = f"{source} with {together}" if base_ok else source
            line = f"{where_text}: {path}: {reason}" if path else f"{where_text}: {reason}"
        if line not in lines:
            lines.append(line)
            if owner is not None and kind in ("extra_forbidden", UNKNOWN_SETTING):
                unknown.append(line)
    return lines, unknown


# ---------------------------------------------------------------------------------- reading


def _os_reason(exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, IsADirectoryError):
        return "it is a directory"
    if isinstance(exc, PermissionError):
        return "permission denied"
    return _lower_first(exc.strerror or str(exc))


_TOML_AT = re.compile(r"(?P<reason>.*) \(at line (?P<line>\d+), column (?P<column>\d+)\)", re.S)
_TOML_END = re.compile(r"(?P<reason>.*) \(at end of document\)", re.S)


def _toml_position(exc: tomllib.TOMLDecodeError, text: str) -> tuple[int, int, str]:
    """Line, column (both from 1) and reason of a TOML syntax error."""
    if getattr(exc, "lineno", None) is not None and getattr(exc, "msg", None):
        # Python 3.14 and later keep the parts as attributes.
        return exc.lineno, exc.colno, _lower_first(exc.msg)  # type: ignore[attr-defined]
    message = str(exc)
    match = _TOML_AT.fullmatch(message)
    if match:
        return int(match["line"]), int(match["column"]), _lower_first(match["reason"])
    match = _TOML_END.fullmatch(message)
    if match:
        line = text.count("\n") + 1
        column = len(text) - (text.rfind("\n") + 1) + 1
        return line, column, _lower_first(match["reason"])
    return 1, 1, _lower_first(message)


def _lower_first(text: str) -> str:
    """Sentence-case messages read better after a colon: "Invalid value" -> "invalid value"."""
    if len(text) >= 2 and text[0].isupper() and not text[1].isupper():
        return text[0].lower() + text[1:]
    return text


# ------------------------------------------------------------------------------ field errors


def _located(exc: ValidationError) -> list[tuple[Location, str, str]]:
    """Every problem of a validation error as (location, reason, pydantic error type)."""
    return [(loc, reason, error["type"]) for error in exc.errors(include_url=False)
            for loc, reason in _explain(error)]


def _problems(exc: ValidationError, source: str) -> list[str]:
    lines: list[str] = []
    for loc, reason, _ in _located(exc):
        path = field_path(loc)
        line = f"{source}: {path}: {reason}" if path else f"{source}: {reason}"
        if line not in lines:
            lines.append(line)
    return lines


def _describe(value: Any) -> str:
    """A value as the TOML author would recognise it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return repr(value)
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, (datetime.date, datetime.time)):
        return f"the date/time {value.isoformat()}"
    return repr(value)


def _number(value: Any) -> str:
    """A range limit without a pointless ".0": 1000.0 -> "1000", 0.5 stays "0.5"."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _kinds() -> str:
    return ", ".join(repr(kind) for kind in WORKLOAD_KINDS)


def _unwrapped(annotation: Any) -> Any:
    """A field's type without ``Annotated`` metadata and without ``| None``."""
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation = get_args(annotation)[0]
        elif origin in (Union, types.UnionType) and type(None) in get_args(annotation):
            rest = [arg for arg in get_args(annotation) if arg is not type(None)]
            annotation = rest[0] if len(rest) == 1 else Union[tuple(rest)]
        else:
            return annotation


def _keys_of(loc: Location) -> list[str]:
    """The keys the table at ``loc`` (a pydantic location from the top of the scenario) may hold,
    as the file spells them; a key that moved elsewhere (refused whatever its value) is not one.
    Empty when ``loc`` is not a table of the schema."""
    annotation: Any = Scenario
    for part in loc:
        annotation = _unwrapped(annotation)
        if isinstance(part, int) and get_origin(annotation) is list:
            annotation = get_args(annotation)[0]
        elif get_origin(annotation) in (Union, types.UnionType):  # a workload, by its kind (the tag)
            annotation = next((arg for arg in get_args(annotation) if isinstance(arg, type)
                               and issubclass(arg, BaseModel) and "kind" in arg.model_fields
                               and get_args(arg.model_fields["kind"].annotation) == (part,)), None)
        elif isinstance(annotation, type) and issubclass(annotation, BaseModel) and part in annotation.model_fields:
            annotation = annotation.model_fields[part].annotation
        else:
            return []
    annotation = _unwrapped(annotation)
    if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
        return []
    return [info.alias or name for name, info in annotation.model_fields.items() if not info.exclude]


def _explain(error: Any) -> list[tuple[Location, str]]:
    """One pydantic error as (location, reason) pairs; a cross-field error gives several."""
    kind: str = error["type"]
    loc: Location = tuple(error["loc"])
    ctx: dict[str, Any] = error.get("ctx") or {}
    value = error.get("input")
    got = _describe(value)

    if kind == OUT_OF_RANGE:
        return [(loc, str(ctx["reason"]))]
    if kind == CONFLICT_ERROR:
        return [(loc + tuple(sub), reason) for sub, reason in ctx["problems"]]
    if kind in ("value_error", "assertion_error"):
        return [(loc, str(ctx.get("error", error["msg"])))]
    if kind == "missing":
        return [(loc, "required field missing")]
    if kind == "extra_forbidden":
        return [(loc, unknown_field(loc[-1], _keys_of(loc[:-1])))]
    if kind == UNKNOWN_SETTING:
        return [(loc + (key,), reason) for key, reason in ctx["problems"]]
    if kind == "union_tag_not_found":
        return [(loc + ("kind",), f"required field missing; the workload kinds are {_kinds()}")]
    if kind == "union_tag_invalid":
        tag = value.get("kind") if isinstance(value, Mapping) else ctx.get("tag")
        return [
            (loc + ("kind",),
             f"unknown workload kind {_describe(tag)}; the workload kinds are {_kinds()}")
        ]
    if kind == "literal_error":
        return [(loc, f"must be one of {ctx['expected']}, got {got}")]

    simple = {
        "int_type": "expected an integer",
        "int_parsing": "expected an integer",
        "int_from_float": "expected a whole number",
        "float_type": "expected a number",
        "float_parsing": "expected a number",
        "bool_type": "expected true or false",
        "bool_parsing": "expected true or false",
        "string_type": "expected a string",
        "list_type": "expected an array (or [[...]] tables)",
        "model_type": "expected a table",
        "model_attributes_type": "expected a table",
        "dict_type": "expected a table",
        "finite_number": "must be a finite number",
    }
    if kind in simple:
        return [(loc, f"{simple[kind]}, got {got}")]
    if kind == "greater_than":
        return [(loc, f"must be greater than {_number(ctx['gt'])}, got {got}")]
    if kind == "greater_than_equal":
        return [(loc, f"must be at least {_number(ctx['ge'])}, got {got}")]
    if kind == "less_than":
        return [(loc, f"must be less than {_number(ctx['lt'])}, got {got}")]
    if kind == "less_than_equal":
        return [(loc, f"must be at most {_number(ctx['le'])}, got {got}")]
    if kind == "string_too_short":
        return [(loc, "must not be empty")]
    if kind == "too_short":
        need = ctx.get("min_length", 1)
        return [(loc, f"needs at least {need} {'entry' if need == 1 else 'entries'}, got "
                 f"{ctx.get('actual_length', 0) or 'none'}")]
    if kind == "too_long":
        return [(loc, f"allows at most {ctx['max_length']} entries, got "
                 f"{ctx.get('actual_length', 'more')}")]
    return [(loc, _lower_first(error["msg"]))]
