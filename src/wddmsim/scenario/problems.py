"""Where a problem in a scenario sits, and how a table reports several at once.

A problem is located the way pydantic locates it, a tuple of table keys and array indexes
(:data:`~.fields.Location`); :func:`field_path` writes one the way the TOML file spells it
(``process[0].context[2].workload.fps``). The checks that need more than one field (an adapter's
unique node names, a scenario's contexts naming nodes that exist) find every problem first and
report them together in one pydantic error of type :data:`CONFLICT_ERROR` (:func:`conflicts`),
whose context carries each problem with its own location; :mod:`wddmsim.scenario.loader` unpacks
them into one message each. A key the table does not have is an ``unknown field``, followed by the
closest key it does have when one is close (:func:`unknown_field`): ``unknown field; did you mean
'nodes'?``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

from pydantic_core import PydanticCustomError

from .fields import Location
from .workloads import WORKLOAD_KINDS

__all__ = ["CONFLICT_ERROR", "UNKNOWN_FIELD", "UNKNOWN_SETTING", "conflicts", "field_path", "quoted", "unknown_field"]

#: The pydantic error type that carries every cross-field problem of one model at once.
CONFLICT_ERROR = "scenario_conflict"

#: The error kind of a ``[scheduler]`` key the named policy does not take: located at the key, and
#: counted as an unknown field (scenario/loader.py).
UNKNOWN_SETTING = "unknown_setting"


#: What a key the table does not have is called, at the start of its message.
UNKNOWN_FIELD = "unknown field"


def unknown_field(key: object, known: Iterable[str], reason: str = UNKNOWN_FIELD) -> str:
    """``reason`` (which starts ``unknown field``) for the key ``key``, with the closest of the
    ``known`` keys suggested after ``unknown field`` when one is close enough
    (:func:`difflib.get_close_matches`): ``unknown field; did you mean 'nodes'?``."""
    close = difflib.get_close_matches(str(key), list(known), n=1)
    if not close or not reason.startswith(UNKNOWN_FIELD):
        return reason
    return f"{UNKNOWN_FIELD}; did you mean {close[0]!r}?{reason[len(UNKNOWN_FIELD):]}"


def quoted(names: Sequence[str]) -> str:
    """Names in quotes, joined by commas: ``'3D', 'Copy'``."""
    return ", ".join(repr(n) for n in names)


def field_path(loc: Sequence[str | int]) -> str:
    """A pydantic location written the way the TOML file spells it: ``process[0].context[2]
    .workload.fps``. The tag segment pydantic inserts below a workload (``frame_loop``) is left
    out, since the file has no table of that name."""
    out = ""
    previous: str | int | None = None
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif previous == "workload" and part in WORKLOAD_KINDS:
            pass
        else:
            out += f".{part}" if out else part
        previous = part
    return out


def conflicts(problems: list[tuple[Location, str]]) -> PydanticCustomError:
    """One pydantic error holding several cross-field problems, each with its location relative
    to the model that found them."""
    summary = "; ".join(f"{field_path(loc) or '(top)'}: {msg}" for loc, msg in problems)
    return PydanticCustomError(
        CONFLICT_ERROR, "{summary}", {"summary": summary, "problems": tuple(problems)}
    )
