"""Input files are read with a bound, so no file makes a command read without end.

``/dev/zero``, a FIFO that never closes or a 2 GB file given where a scenario, a crash record or a
structure's bytes are expected used to be read whole before anything was judged (3.8 GB of memory
for ``decode X @/dev/zero``, and Ctrl-C waited for the read). Each kind of input now has a size
limit, far above what it ever needs; a file past it is refused after reading one byte more than
the limit, with one line naming the file and the limit (exit status 2):

- a scenario file (TOML): :data:`SCENARIO_MAX` (the examples are a few KiB; a scenario that
  ``replay --emit`` rebuilds from an hour-long capture is a few MiB);
- a crash record (JSON): :data:`RECORD_MAX` (it holds one structure's bytes and a traceback);
- the bytes ``decode STRUCT @FILE`` reads: :data:`STRUCT_MAX` (the largest DDI structure is a
  few KiB; a longer file is a wrong size in any case);
- one line of an event log: :data:`LOG_LINE_MAX` (a log is read line by line, so its length is
  not bounded, only each line's; the longest event, a DdiCall with its structure, is a few KiB).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["LOG_LINE_MAX", "RECORD_MAX", "SCENARIO_MAX", "STRUCT_MAX", "TooLarge", "read_bounded", "size_text"]

MIB = 1 << 20
SCENARIO_MAX = 64 * MIB
RECORD_MAX = 16 * MIB
STRUCT_MAX = 1 * MIB
LOG_LINE_MAX = 64 * MIB


class TooLarge(ValueError):
    """A file (or a line of one) longer than the limit for its kind; ``str()`` says so."""

    def __init__(self, limit: int, what: str = "the file") -> None:
        self.limit = limit
        super().__init__(f"{what} is larger than {size_text(limit)}, the limit for this input")


def size_text(n: int) -> str:
    """``n`` bytes in MiB when whole, else in bytes: ``64 MiB``."""
    return f"{n // MIB} MiB" if n % MIB == 0 else f"{n} bytes"


def read_bounded(path: str | Path, limit: int) -> bytes:
    """The bytes of ``path``, at most ``limit`` of them: :class:`TooLarge` when it holds more
    (found by reading one byte past the limit, so an endless file costs ``limit`` bytes), the
    ``OSError`` of opening or reading it otherwise."""
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(limit)
    return data
