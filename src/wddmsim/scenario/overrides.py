"""Changing a scenario from the command line: ``--set PATH=VALUE``.

PATH is spelled the way the scenario file is written: table keys joined by dots, the entries of an
array of tables by their number from 0 (``adapter.nodes.0.preemption``; the spelling of the
loader's messages, ``adapter.nodes[0].preemption``, is accepted too). VALUE is read as a TOML value
when it is one (``5``, ``2.5``, ``true``, ``"quoted text"``, ``[60, 144]``, ``{ kind = "bursty",
... }``) and taken as a plain string otherwise (``2ms``, ``dma_buffer``, ``64KiB``). A bare integer
is a :class:`~wddmsim.util.units.BareNumber`, so that ``--set duration=5`` is refused as
``duration = 5`` in the file is (a run's length needs a unit); on any other path it is assigned as
a plain ``int``.

The assignment is made on the file's parsed TOML data, before validation, so the scenario schema
checks a value set on the command line exactly as it checks one written in the file. A table the
file leaves out (``[scheduler]``, ``adapter.nodes``) is filled with what the schema gives it by
default before the assignment, so ``--set adapter.nodes.0.preemption=primitive`` works on a file
that relies on the default nodes. This module only edits data; :mod:`.loader` validates the result
and says which ``--set`` a problem comes from.
"""

from __future__ import annotations

import copy
import re
import tomllib
from dataclasses import dataclass
from typing import Any

from ..util.units import BareNumber

__all__ = ["Override", "OverrideError", "apply_overrides", "parse_override", "parse_path", "parse_value",
           "split_values"]

PathPart = str | int

_INDEX = re.compile(r"\[(\d+)\]")
_KEY = re.compile(r"[A-Za-z0-9_\-]+")


class OverrideError(ValueError):
    """An assignment that cannot be made: a malformed ``PATH=VALUE`` or a path the data does not
    have. ``str()`` is one line naming the option, the assignment and the reason."""


@dataclass(frozen=True)
class Override:
    """One assignment: ``path`` (keys as strings, array entries as ints) gets ``value``.

    ``text`` is the assignment as written (``scheduler.quantum=2ms``) and ``option`` the option it
    came from, both for messages."""

    path: tuple[PathPart, ...]
    value: Any
    text: str
    option: str = "--set"

    @property
    def label(self) -> str:
        """How a message names it: ``--set scheduler.quantum=2ms``."""
        return f"{self.option} {self.text}"

    @property
    def dotted(self) -> str:
        """The path with dots: ``adapter.nodes.0.preemption``."""
        return ".".join(str(p) for p in self.path)


def parse_value(text: str, label: str = "--set") -> Any:
    """``text`` as a TOML value when it is one (``5`` -> 5, ``true`` -> True, ``"a b"`` -> 'a b',
    ``[1, 2]`` -> [1, 2]), else the text itself (``2ms`` -> '2ms'). A bare integer is a
    :class:`~wddmsim.util.units.BareNumber` (an int that was written without a unit: a run's
    ``duration`` refuses it). A value nested deeper than the parser can follow (``[[[[...`` some
    thousand levels) is an :class:`OverrideError`."""
    try:
        value = tomllib.loads(f"v = {text}")["v"]
        return BareNumber(value) if type(value) is int else value
    except tomllib.TOMLDecodeError:
        return text
    except RecursionError:
        raise OverrideError(f"{label}: the value is nested too deeply to read") from None


def parse_path(text: str, option: str = "--set") -> tuple[PathPart, ...]:
    """A dotted path as a tuple: ``adapter.nodes.0.preemption`` and ``adapter.nodes[0].preemption``
    both give ``("adapter", "nodes", 0, "preemption")``. A part made of digits is an array entry
    number. Raises :class:`OverrideError` for an empty part or a character no TOML bare key has."""
    spelled = _INDEX.sub(r".\1", text.strip())
    if not spelled:
        raise OverrideError(f"{option} {text!r}: the path is empty")
    parts: list[PathPart] = []
    for part in spelled.split("."):
        if not part:
            raise OverrideError(f"{option} {text}: the path has an empty part")
        if not _KEY.fullmatch(part):
            raise OverrideError(f"{option} {text}: {part!r} is not a key of the scenario file")
        parts.append(int(part) if part.isdigit() else part)
    return tuple(parts)


def parse_override(text: str, option: str = "--set") -> Override:
    """``PATH=VALUE`` as an :class:`Override`; raises :class:`OverrideError` when there is no ``=``
    or the path is malformed."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise OverrideError(f"{option} {text!r}: expected PATH=VALUE (e.g. scheduler.quantum=2ms)")
    path = parse_path(key, option)
    return Override(path, parse_value(value.strip(), f"{option} {key.strip()}=..."), f"{key.strip()}={value.strip()}",
                    option)


def split_values(text: str) -> list[str]:
    """A comma-separated list of values, split only at commas outside brackets, braces and
    quotes, so ``1ms,2ms`` gives two values and ``[60,144],[60]`` two arrays. Each value is
    stripped; an empty one is kept (the caller decides whether it is allowed)."""
    out: list[str] = []
    depth = 0
    quote = ""
    start = 0
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
        i += 1
    out.append(text[start:].strip())
    return out


def _describe(path: tuple[PathPart, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out or "(top)"


def _lookup(tree: Any, path: tuple[PathPart, ...]) -> Any:
    """The value at ``path`` in ``tree`` or None."""
    for part in path:
        if isinstance(tree, dict):
            tree = tree.get(str(part))
        elif isinstance(tree, list) and isinstance(part, int) and part < len(tree):
            tree = tree[part]
        else:
            return None
    return tree


def apply_overrides(data: dict, overrides, defaults: dict | None = None) -> dict:
    """A copy of ``data`` (a scenario's TOML data) with every override assigned, in order.

    A table or array of tables on the way that ``data`` lacks is taken from ``defaults`` (the
    dump of the scenario as validated, which holds every default) when given, else made empty.
    Raises :class:`OverrideError` when a path goes through a value that is not a table, names an
    entry an array does not have, or gives a key to an array."""
    out = copy.deepcopy(data)
    for ov in overrides:
        # Only a run's length tells a number written without a unit from int nanoseconds; anywhere
        # else the value is a plain int, so none of the marker reaches a driver's or policy's settings.
        value = int(ov.value) if isinstance(ov.value, BareNumber) and ov.path != ("duration",) else ov.value
        node: Any = out
        for i, part in enumerate(ov.path):
            here = ov.path[:i]
            last = i == len(ov.path) - 1
            if isinstance(node, list):
                if not isinstance(part, int):
                    raise OverrideError(f"{ov.label}: {_describe(here)} is an array of tables: give an entry "
                                        f"number, e.g. {_describe(here + (0,))}")
                if part >= len(node):
                    count = {0: "no entries", 1: "1 entry"}.get(len(node), f"{len(node)} entries")
                    raise OverrideError(f"{ov.label}: {_describe(here)} has {count}; there is no entry {part}")
                if last:
                    node[part] = value
                    break
                child = node[part]
            elif isinstance(node, dict):
                key = str(part)
                if last:
                    node[key] = value
                    break
                child = node.get(key)
                if child is None:
                    child = copy.deepcopy(_lookup(defaults, ov.path[: i + 1]))
                    if child is None:
                        if isinstance(ov.path[i + 1], int):
                            raise OverrideError(f"{ov.label}: {_describe(ov.path[: i + 1])} has no entries; "
                                                f"there is no entry {ov.path[i + 1]}")
                        child = {}
                    node[key] = child
                elif isinstance(child, str) and here == () and key == "driver":
                    child = node[key] = {"class": child}  # driver = "mod:Class" is the table's short form
            else:
                raise OverrideError(f"{ov.label}: {_describe(here)} is a value, not a table")
            if not isinstance(child, (dict, list)):
                raise OverrideError(f"{ov.label}: {_describe(ov.path[: i + 1])} is a value, not a table")
            node = child
    return out
