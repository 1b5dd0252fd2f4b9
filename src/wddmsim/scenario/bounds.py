"""The range of every quantity a scenario file holds, and the reason for it.

Every number, span of time, size and list length of a scenario has a lower and an upper limit,
declared on its field in :mod:`.schema` with :class:`In`, which checks the value and says, when it
refuses one, the value, the range and why the range is what it is. docs/scenarios.md lists every
field's range; ``tools/scenario_ranges.py`` writes that table from these declarations and
tests/test_scenario_bounds.py keeps the two equal.

The ceilings come from three places:

* virtual time: the simulator counts whole nanoseconds; a run lasts at most :data:`MAX_DURATION`
  (one hour), and every time in a scenario (a start, an ``at``, a gap, a period) lies within a run,
  so it is bounded the same way. An event log of a busy run grows by about 3 MB per virtual second
  (the examples), so an hour is already some gigabytes of log;
* what Windows' interfaces can carry: 32-bit fence ids and process ids, 64-bit fence values,
  priorities -7..7, the D3DDDI limits on the objects one call names;
* what a GPU can do and the model's own limits: no interrupt storm finer than
  :data:`MIN_STORM_INTERVAL` (each interrupt costs the simulated CPU an ISR and a DPC of about a
  microsecond, so a finer storm only piles up work it never catches up with), no display above
  1000 Hz, no segment above 1 TiB; where a limit is only the model's, its reason says so.

Values that depend on other fields (a storm's number of interrupts, a repeat count against the
time left, a fault after the end of the run) are checked once the whole scenario is read, by
:func:`wddmsim.scenario.consistency.cross_field_problems` and :func:`.consistency.scenario_clamps`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_core import PydanticCustomError, core_schema

from ..util.units import format_duration, format_size

__all__ = [
    "MAX_COUNT", "MAX_DURATION", "MAX_REPEAT", "MAX_STORM_INTERRUPTS", "MIN_STORM_INTERVAL", "OUT_OF_RANGE",
    "In", "RUN_DURATION", "SECOND", "WHY_CPU", "WHY_DURATION", "WHY_RUN_TIME", "range_text", "show",
]

SECOND = 1_000_000_000
#: The longest run, and so the latest time a scenario may name: one hour of virtual time.
MAX_DURATION = 3600 * SECOND
#: The shortest gap between two interrupts of an interrupt storm: 1 µs.
MIN_STORM_INTERVAL = 1_000
#: The most interrupts one storm may raise (its duration over its interval).
MAX_STORM_INTERRUPTS = 1_000_000
#: The most packets one script entry submits (``repeat``; a larger one is cut to what the run sees).
MAX_REPEAT = 1_000_000
#: The most units (frames, batches, copies, bursts, calls) a ``count`` may ask for.
MAX_COUNT = 1_000_000_000

#: The pydantic error type of a value outside its range; its context holds the whole message.
OUT_OF_RANGE = "out_of_range"

WHY_RUN_TIME = "a time within a run, and a run lasts at most 1 hour of virtual time"
WHY_CPU = "CPU time of one driver callback: longer than 1s would be a hang, not a cost"

WHY_DURATION = ("an event log of a busy run grows about 3 MB per virtual second, so an hour is already gigabytes "
                "of log")


def show(value: Any, unit: str) -> str:
    """``value`` the way a scenario author writes it: ``2ms`` for a time, ``64KiB`` for a size, the
    number otherwise (``1000`` not ``1000.0``)."""
    if value == 0 and unit in ("time", "size"):
        return "0"
    if isinstance(value, int) and value >= 1 << 32 and (value + 1) & value == 0:
        return f"2**{value.bit_length()}-1"
    if unit == "time" and isinstance(value, int):
        return format_duration(value)
    if unit == "size" and isinstance(value, int):
        return format_size(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int) and abs(value) >= 10**15:
        return f"{value:.3g}"
    if isinstance(value, int) and abs(value) >= 10_000:
        return f"{value:_}".replace("_", ",")
    return str(value)


def range_text(lo: Any, hi: Any, unit: str = "", lo_open: bool = False, hi_open: bool = False) -> str:
    """A range in words: ``1 .. 64``, ``above 0 .. 1000``, ``0 .. below 1``, ``at least 1``."""
    left = "" if lo is None else ("above " if lo_open else "") + show(lo, unit)
    right = "" if hi is None else ("below " if hi_open else "") + show(hi, unit)
    if left and right:
        return f"{left} .. {right}"
    if left:
        return f"{'more than' if lo_open else 'at least'} {show(lo, unit)}"
    return f"{'less than' if hi_open else 'at most'} {show(hi, unit)}"


@dataclass(frozen=True)
class In:
    """The range of a field, as ``Annotated`` metadata: ``lo`` to ``hi`` (``None``: no limit on that
    side; ``lo_open``/``hi_open``: the limit itself is outside), ``why`` the reason in words, and
    ``unit``: ``"time"`` (ns, shown as ``2ms``), ``"size"`` (bytes, shown as ``64KiB``),
    ``"entries"`` (the range is a list's length) or ``""`` (a plain number)."""

    lo: int | float | None
    hi: int | float | None
    why: str
    unit: str = ""
    lo_open: bool = False
    hi_open: bool = False

    @property
    def text(self) -> str:
        """The range in words (:func:`range_text`)."""
        return range_text(self.lo, self.hi, "" if self.unit == "entries" else self.unit, self.lo_open, self.hi_open)

    def problem(self, value: Any, written: Any = None) -> str | None:
        """Why ``value`` is outside the range (one line naming the value, the range and the reason),
        or None when it is inside; ``written``: the number as the file wrote it, if it differs (the
        integer 2000 a float field holds as 2000.0)."""
        entries = self.unit == "entries"
        n = len(value) if entries else value
        unit = "" if entries else self.unit
        if self.lo is not None and (n <= self.lo if self.lo_open else n < self.lo):
            limit, low = self.lo, True
            bound = f"{'greater than' if self.lo_open else 'at least'} {show(self.lo, unit)}"
        elif self.hi is not None and (n >= self.hi if self.hi_open else n > self.hi):
            limit, low = self.hi, False
            bound = f"{'less than' if self.hi_open else 'at most'} {show(self.hi, unit)}"
        else:
            return None
        why = f"(range: {self.text}; {self.why})"
        if entries:
            noun = "entry" if limit == 1 else "entries"
            if low:
                return f"needs {bound} {noun}, got {n or 'none'} {why}"
            return f"allows {bound} {noun}, got {n} {why}"
        if isinstance(written, (int, float)) and not isinstance(written, bool) and written == n:
            n = written
        got = repr(n) if isinstance(n, float) else show(n, unit)  # a number as written: 1.0 stays 1.0
        return f"must be {bound}, got {got} {why}"

    def _check(self, written: Any, inner: Any) -> Any:
        value = inner(written)
        reason = None if value is None else self.problem(value, written)
        if reason is not None:
            raise PydanticCustomError(OUT_OF_RANGE, "{reason}", {"reason": reason})
        return value

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> core_schema.CoreSchema:
        return core_schema.no_info_wrap_validator_function(self._check, handler(source))


#: The range of a run's length: a scenario's ``duration`` and ``wddmsim run --until``.
RUN_DURATION = In(0, MAX_DURATION, WHY_DURATION, "time", lo_open=True)
