"""Writing an output file, and the one error that says it could not be written.

Every file a command writes from a run (the event log, the Chrome trace, the PresentMon CSV, the
report folder's files) is written through :func:`open_text` or reports its failure as a
:class:`WriteFailed`: an :class:`OSError` whose text is the one line the command line shows,
``PATH: cannot write: REASON`` (REASON is the system's words, ``No space left on device``,
``Permission denied``, ``Is a directory``). The commands catch it, write every other output they
can, and say in that one line what could not be written (exit status 2, or the run's own status
when that is not 0: a bug check's 3 stands). Each file that was written is said too, one line per
file on standard error (:func:`written_line`: ``wrote PATH: WHAT``), so a person sees where every
output went.

Text is written as UTF-8 with ``errors="backslashreplace"``: a string that holds a byte which was
not UTF-8 where it came from (Python carries such a byte from a command line or a file name as a
lone surrogate, ``'caf\\udce9'``) is written as the escape ``\\udce9``. In a JSON string that is
JSON's own escape, which reads back as the very same string; in Markdown or CSV it is the visible
text ``\\udce9``. Any other text is written as UTF-8, unchanged: an encoding failure never leaves
an output short or empty.
"""

from __future__ import annotations

import errno as _errno
import os
from typing import IO

__all__ = ["ENCODING", "ERRORS", "WriteFailed", "encoded_size", "open_text", "reason", "written_line"]

#: How every text output is encoded (see the module doc).
ENCODING = "utf-8"
ERRORS = "backslashreplace"


def written_line(path, what: str | None = None) -> str:
    """The line a command shows on standard error for a file it wrote: ``wrote PATH: WHAT``
    (``wrote PATH`` without ``what``)."""
    return f"wrote {path}: {what}" if what else f"wrote {path}"


def reason(error: OSError) -> str:
    """The system's words for ``error`` (``No space left on device``), or its text when it has none."""
    return error.strerror or str(error) or type(error).__name__


class WriteFailed(OSError):
    """``path`` could not be written: ``str()`` is ``PATH: cannot write: REASON``, the line a
    command shows (after ``wddmsim: error:``). ``errno`` and ``strerror`` (REASON) are those of
    the error that stopped it (or ``error`` itself, given as text); ``action`` replaces ``cannot
    write`` where more is to be said (``cannot create the report folder``)."""

    def __init__(self, path, error: OSError | str, action: str = "cannot write"):
        text = error if isinstance(error, str) else reason(error)
        code = getattr(error, "errno", None) or _errno.EIO
        super().__init__(code, text, os.fspath(path))
        self.path = os.fspath(path)
        self.action = action

    def __str__(self) -> str:
        return f"{self.path}: {self.action}: {self.strerror}"

    def __reduce__(self):
        return (type(self), (self.path, self.strerror, self.action))


def open_text(path: str, *, newline: str | None = None, buffering: int = -1) -> IO[str]:
    """``path`` opened for writing text (see the module doc for the encoding)."""
    return open(path, "w", encoding=ENCODING, errors=ERRORS, newline=newline, buffering=buffering)


def encoded_size(text: str) -> int:
    """The bytes ``text`` takes in a file :func:`open_text` opened."""
    return len(text) if text.isascii() else len(text.encode(ENCODING, ERRORS))
