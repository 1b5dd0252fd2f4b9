"""Reading and writing the two quantities scenario files and driver settings are full of: spans of
virtual time and sizes in bytes (it imports nothing of the project, so any part may use it).

The simulator counts time in whole nanoseconds and memory in whole bytes, so both parsers return
plain ``int``. A scenario author may write either the bare integer (already in ns or bytes) or a
string with a unit: ``"2ms"``, ``"1.5 us"``, ``"64KiB"``. Decimal fractions are allowed as long as
the result is a whole number of the base unit; the arithmetic is done in :class:`~decimal.Decimal`
so ``"0.1ms"`` is exactly 100000 ns and never 99999.

Every failure raises :class:`ValueError` whose text says what was expected and what was found.

One span is stricter: a run's length (a scenario's ``duration``, ``wddmsim run --until``) written
by a person as a bare number is refused (:func:`parse_run_length`), since ``duration = 5`` reads as
5 seconds to its author and would run 5 ns. A number read from a person's text (a scenario file, a
``--set`` value) arrives as a :class:`BareNumber`, an ``int`` that remembers it had no unit; an
``int`` from Python code is nanoseconds as everywhere else.
"""

from __future__ import annotations

import re
from decimal import Decimal

__all__ = [
    "DURATION_UNITS",
    "SIZE_UNITS",
    "BareNumber",
    "bare_run_length",
    "format_duration",
    "format_size",
    "parse_duration",
    "parse_run_length",
    "parse_size",
    "time_text",
]

#: Nanoseconds in one of each duration unit. ``µs`` is accepted as MICRO SIGN (U+00B5) and as
#: GREEK SMALL LETTER MU (U+03BC), which look the same on screen.
DURATION_UNITS: dict[str, int] = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,
    "\u03bcs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
}

#: Bytes in one of each size unit: binary prefixes (KiB = 1024) and decimal ones (KB = 1000).
SIZE_UNITS: dict[str, int] = {
    "B": 1,
    "KiB": 1 << 10,
    "MiB": 1 << 20,
    "GiB": 1 << 30,
    "TiB": 1 << 40,
    "KB": 1000,
    "MB": 1000**2,
    "GB": 1000**3,
    "TB": 1000**4,
}

# A non-negative decimal number ("2", "1.5", ".5", "2.") and an optional unit word.
_QUANTITY = re.compile(r"\s*(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*(?P<unit>[^0-9\s.]*)\s*")

_DURATION_HINT = "expected a duration such as '2ms' or '250us'"
_SIZE_HINT = "expected a size such as '64KiB' or '4096'"


def _split(text: str) -> tuple[Decimal, str] | None:
    match = _QUANTITY.fullmatch(text)
    if match is None:
        return None
    return Decimal(match["number"]), match["unit"]


def _parse_quantity(value: object, *, hint: str, noun: str, base: str, units: dict[str, int],
                    bare_unit: str | None, unit_list: str) -> int:
    """The one parser behind :func:`parse_duration` and :func:`parse_size`: ``noun`` names the
    quantity ("duration", "size"), ``base`` its unit in words ("nanoseconds", "bytes"), and
    ``bare_unit`` the unit a string without one is read in (``None``: a string needs a unit)."""
    if isinstance(value, bool):
        raise ValueError(f"{hint}, got {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"a {noun} cannot be negative, got {value}")
        return value
    if isinstance(value, float):
        raise ValueError(
            f"{hint}, got the bare number {value!r} "
            f"(a bare number must be a whole number of {base}; write a unit for fractions)"
        )
    if not isinstance(value, str):
        raise ValueError(f"{hint}, got {value!r}")
    parts = _split(value)
    if parts is None:
        if value.strip().startswith("-"):
            raise ValueError(f"a {noun} cannot be negative, got {value!r}")
        raise ValueError(f"{hint}, got {value!r}")
    number, unit = parts
    if unit == "":
        if bare_unit is None:
            raise ValueError(
                f"{hint}, got {value!r} (a {noun} written as a string needs a unit: {unit_list})")
        unit = bare_unit
    if unit not in units:
        raise ValueError(f"{hint}, got {value!r} (unknown unit {unit!r}; use {unit_list})")
    amount = number * units[unit]
    if amount != amount.to_integral_value():
        raise ValueError(f"{value!r} is not a whole number of {base}")
    return int(amount)


def parse_duration(value: object) -> int:
    """A span of virtual time in whole nanoseconds.

    ``value`` is an ``int`` (nanoseconds, not negative) or a string made of a number and one of the
    units ``ns``, ``us``, ``µs``, ``ms``, ``s`` with optional spaces: ``"250ns"``, ``"1.5 us"``,
    ``"2ms"``, ``"3s"``. A string must carry a unit. Raises :class:`ValueError` otherwise, and when
    the amount is not a whole number of nanoseconds (``"1.5ns"``).
    """
    return _parse_quantity(value, hint=_DURATION_HINT, noun="duration", base="nanoseconds",
                           units=DURATION_UNITS, bare_unit=None, unit_list="ns, us, µs, ms or s")


class BareNumber(int):
    """An integer a person wrote without a unit (``duration = 5`` in a scenario file, ``--set
    duration=5``): an ``int`` in every way, so any field that takes int nanoseconds or bytes takes
    it, but :func:`parse_run_length` refuses it."""

    __slots__ = ()


def bare_run_length(number: str, quote: str = '"') -> str:
    """Why a run's length written as the bare number ``number`` (its text) is refused, with the
    spellings to write instead, each in ``quote``: ``a run's length needs a unit (ns, us, µs, ms or s),
    got the bare number 5: write "5s", or "5ns" if nanoseconds were meant``. A number that is not a
    positive whole one gets no suggestion."""
    text = f"a run's length needs a unit (ns, us, µs, ms or s), got the bare number {number}"
    if number.isdigit() and int(number) > 0:
        text += f": write {quote}{int(number)}s{quote}, or {quote}{int(number)}ns{quote} if nanoseconds were meant"
    return text


def parse_run_length(value: object) -> int:
    """A run's length in whole nanoseconds: :func:`parse_duration`, except that a number a person
    wrote without a unit (a :class:`BareNumber`) or a bare float is refused with
    :func:`bare_run_length`'s reason. A plain ``int`` (from Python code) is nanoseconds."""
    if isinstance(value, BareNumber) or isinstance(value, float):
        raise ValueError(bare_run_length(repr(int(value) if isinstance(value, BareNumber) else value)))
    return parse_duration(value)


def parse_size(value: object) -> int:
    """A size in whole bytes.

    ``value`` is an ``int`` (bytes, not negative) or a string: a bare number of bytes (``"4096"``)
    or a number with a unit: ``B``, ``KiB``, ``MiB``, ``GiB``, ``TiB`` (powers of 1024) or ``KB``,
    ``MB``, ``GB``, ``TB`` (powers of 1000), optionally separated by spaces. Raises
    :class:`ValueError` otherwise, and when the amount is not a whole number of bytes.
    """
    return _parse_quantity(value, hint=_SIZE_HINT, noun="size", base="bytes", units=SIZE_UNITS,
                           bare_unit="B", unit_list="B, KiB, MiB, GiB, TiB, KB, MB, GB or TB")


def _shortest(amount: int, units: list[tuple[str, int]]) -> str:
    """The shortest exact spelling of ``amount`` among ``units`` (largest unit first). A unit is
    only used when the amount is at least one of it, so 100ns never reads as "0.1us"; among equally
    short spellings the larger unit wins."""
    best: str | None = None
    for name, scale in units:
        if amount < scale and scale != 1:
            continue
        number = Decimal(amount) / Decimal(scale)
        digits = format(number.normalize(), "f") if number else "0"
        text = f"{digits}{name}"
        if best is None or len(text) < len(best):
            best = text
    assert best is not None
    return best


def _check_count(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} must be an int, got {value!r}")
    if value < 0:
        raise ValueError(f"{what} cannot be negative, got {value}")
    return value


def format_duration(ns: int) -> str:
    """The shortest exact readable spelling of ``ns`` nanoseconds, the inverse of
    :func:`parse_duration`: ``2_000_000`` -> ``"2ms"``, ``1500`` -> ``"1.5us"``, ``250`` ->
    ``"250ns"``, ``0`` -> ``"0ns"``."""
    ns = _check_count(ns, "a duration in nanoseconds")
    if ns == 0:
        return "0ns"
    return _shortest(ns, [("s", 10**9), ("ms", 10**6), ("us", 10**3), ("ns", 1)])


def format_size(size: int) -> str:
    """A byte count written with the largest binary unit that divides it exactly: ``65536`` ->
    ``"64KiB"``, ``4097`` -> ``"4097B"``."""
    size = _check_count(size, "a size in bytes")
    for name in ("TiB", "GiB", "MiB", "KiB"):
        scale = SIZE_UNITS[name]
        if size and size % scale == 0:
            return f"{size // scale}{name}"
    return f"{size}B"


def time_text(ns) -> str:
    """A duration in ns for a person to read: its unit and four significant digits (``1.033 s``,
    ``757.8 µs``); ``-`` for None. :func:`format_duration` writes it exactly instead."""
    if ns is None:
        return "-"
    if ns < 1000:
        return f"{round(ns)} ns"
    for scale, unit in ((1_000, "µs"), (1_000_000, "ms"), (1_000_000_000, "s")):
        v = ns / scale
        digits = 3 if v < 10 else 2 if v < 100 else 1 if v < 1000 else 0
        text = f"{v:.{digits}f}"
        if float(text) < 1000 or unit == "s":
            return f"{text} {unit}"
    raise AssertionError("unreachable")
