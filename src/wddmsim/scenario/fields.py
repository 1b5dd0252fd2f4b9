"""What every table of a scenario is made of: the base model of the tables (strict values, unknown
keys refused, assignments validated) and the kinds of value a field holds, each with its range
(:class:`wddmsim.scenario.bounds.In`): spans of virtual time, sizes, integers, finite numbers and
list lengths, and the reasons several tables share.

The table modules (:mod:`.adapter`, :mod:`.processes`, :mod:`.workloads`, ... and :mod:`.schema`) build
their tables from these; this module imports none of them.
"""

from __future__ import annotations

from typing import Any, Annotated, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from ..util.units import format_duration, parse_duration, parse_size
from .bounds import MAX_DURATION, WHY_RUN_TIME, In

__all__ = [
    "MAX_COPY", "PAGE", "U32", "U64", "WHY_CALLS", "WHY_COPY", "WHY_COUNT", "WHY_FENCE_VALUE", "WHY_FPS",
    "WHY_LATENCY", "WHY_LIST_BIG", "WHY_PID", "WHY_SOURCE", "Duration", "Location", "Period", "ScenarioModel",
    "Size", "entries_in", "int_in", "ns", "ordered", "real_in", "size_in", "time_in",
]


def time_in(lo: int = 0, hi: int = MAX_DURATION, why: str = WHY_RUN_TIME, lo_open: bool = False) -> Any:
    """A span of virtual time in ``lo`` .. ``hi`` ns, written ``"2ms"``, ``"250us"`` or as int ns."""
    return Annotated[int, BeforeValidator(parse_duration), In(lo, hi, why, "time", lo_open)]


def size_in(lo: int, hi: int, why: str, lo_open: bool = False) -> Any:
    """A byte count in ``lo`` .. ``hi``, written ``"64KiB"``, ``"4096"`` or as an int."""
    return Annotated[int, BeforeValidator(parse_size), In(lo, hi, why, "size", lo_open)]


def int_in(lo: int | None, hi: int | None, why: str) -> Any:
    """An integer in ``lo`` .. ``hi``."""
    return Annotated[int, In(lo, hi, why)]


def real_in(lo: float, hi: float, why: str, lo_open: bool = False, hi_open: bool = False) -> Any:
    """A finite number in the range (``lo_open``/``hi_open``: the limit itself excluded)."""
    return Annotated[float, Field(allow_inf_nan=False), In(lo, hi, why, "", lo_open, hi_open)]


def entries_in(lo: int, hi: int, why: str) -> In:
    """The range of a list's length."""
    return In(lo, hi, why, "entries")


#: A span of virtual time within a run: written as ``"2ms"``, ``"250us"`` or int nanoseconds; held
#: as int ns, 0 .. 1 hour.
Duration = time_in()
#: A byte count: written as ``"64KiB"``, ``"4096"`` or an int; held as int bytes.
Size = Annotated[int, BeforeValidator(parse_size)]
#: A span of virtual time that must be longer than zero (a period, a quantum, a timeout).
Period = time_in(0, MAX_DURATION, "a span that must last, within the longest run (1 hour of virtual time)", True)

U32 = (1 << 32) - 1
U64 = (1 << 64) - 1
WHY_PID = "a Windows process id is a 32-bit number other than 0"
WHY_COUNT = ("a count that high is never reached within a run: leave it out to run until the end")
WHY_FPS = "frames per second; no display and no frame limiter goes past 1000"
WHY_SOURCE = "an index into adapter.displays, which holds at most 16"
WHY_LATENCY = "what DXGI's SetMaximumFrameLatency accepts"
WHY_FENCE_VALUE = "a monitored fence's value is a 64-bit unsigned number"
WHY_COPY = "the bytes of one fill or copy command, the largest the model builds"


#: Where a value sits in the scenario: table keys and array indexes, as pydantic reports them.
Location = tuple[Union[str, int], ...]

PAGE = 4096
MAX_COPY = 64 << 20


def ns(text: str) -> int:
    """A duration written with its unit (``"2ms"``) in ns, for the defaults of the tables."""
    return parse_duration(text)


class ScenarioModel(BaseModel):
    """Base of every scenario table: unknown keys are errors, values are taken strictly (a TOML
    string is never silently turned into a number or a boolean), and assigning a field validates
    the new value (and the table's cross-field checks) the way loading does."""

    model_config = ConfigDict(extra="forbid", strict=True, validate_assignment=True)

    def __setattr__(self, name: str, value: Any) -> None:
        # pydantic keeps a value that only the table's own checks (an after model validator) refuse
        # (pydantic issue #7105); a refused assignment leaves the table as it was.
        before = dict(self.__dict__)
        try:
            super().__setattr__(name, value)
        except ValueError:  # pydantic's ValidationError is one
            self.__dict__.clear()
            self.__dict__.update(before)
            raise


WHY_LIST_BIG = "the model's limit: a replayed capture of hours at hundreds of frames per second"


WHY_CALLS = "the model's limit on timed calls (one table each)"


def ordered(value: list, strict: bool) -> list:
    """``value`` (items with an ``at``) when their ``at`` increase (``strict``) or never decrease."""
    for i in range(1, len(value)):
        before, at = value[i - 1].at, value[i].at
        if at < before or strict and at == before:
            raise ValueError(f"[{i}].at must be {'later than' if strict else 'no earlier than'} [{i - 1}].at "
                             f"({format_duration(before)}), got {format_duration(at)}")
    return value
