"""Why a machine cannot be built from a scenario: :class:`ConfigError` (a scenario or a driver
settings table that cannot be used: ``(field path, reason)`` pairs) and the reasons an adapter does
not start when the driver's own code ends abnormally before the system can run: its constructor (or
its user-mode half's) raising anything, ``SystemExit`` included, or a stop while the adapter
starts (a driver fault in DxgkDdiStartDevice, an entry point's value that is not an integer: the
reason names the bug check Windows makes). Each such reason carries the driver's traceback.

Follows :class:`wddmsim.runner.system.System`'s documented refusals (its class docstring) and
docs/driver.md (a constructor that raises does not load: exit status 2 with the exception's message
and traceback).
"""

from __future__ import annotations

from ..dxgkrnl.crash import CrashRecord
from ..dxgkrnl.errors import AdapterStartError
from ..dxgkrnl.watchdog import NothingRan


def _traceback(e: BaseException, user_only: bool = False) -> str:
    """``e``'s traceback without this frame; with ``user_only``, without any frame of wddmsim's own."""
    import os
    import traceback

    if not user_only:
        return "".join(traceback.format_exception(type(e), e, e.__traceback__.tb_next if e.__traceback__ else None))
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # the wddmsim package
    te = traceback.TracebackException.from_exception(e)
    te.stack = traceback.StackSummary.from_list([f for f in te.stack
                                                 if not f.filename.startswith((here, "wddmsim" + os.sep))])
    return "".join(te.format())


def _construct(cls, info, who: str):
    """``cls(info)``, the user's constructor (DriverEntry and AddDevice, or the user-mode half's):
    whatever it raises, ``SystemExit`` (``sys.exit()``) included, means the driver does not load,
    an :class:`AdapterStartError` naming the exception with the constructor's traceback. Only
    ``KeyboardInterrupt`` (a person's Ctrl-C) passes through."""
    try:
        return cls(info)
    except (KeyboardInterrupt, NothingRan):
        raise  # a person's Ctrl-C (before the run began: NothingRan), not the constructor's failure
    except BaseException as e:  # noqa: BLE001 - the user's constructor failed: the driver does not load
        raise AdapterStartError([f"{who} raised {_said(e)}\n" + _traceback(e)]) from None


def _said(e: BaseException) -> str:
    """``ValueError: bad``, ``SystemExit: 0``; the type alone when the exception says nothing
    (``sys.exit()``)."""
    said = str(e)
    return f"{type(e).__name__}: {said}" if said else type(e).__name__


def _start_stop(record: CrashRecord) -> str:
    """The reason an adapter does not start when the driver made Windows stop during the start
    (an exception in DxgkDdiStartDevice, a status that is not an NTSTATUS...): the stop's message
    and bug check, with the driver's traceback after it for a driver fault."""
    text = f"{record.message} (Windows stops with {record.bugcheck} while it starts the adapter)"
    return text + ("\n" + record.traceback if record.traceback else "")


class ConfigError(Exception):
    """The scenario cannot be built: ``problems`` are ``(field path, reason)`` pairs."""

    def __init__(self, problems: list[tuple[str, str]]):
        super().__init__("; ".join(f"{p}: {r}" for p, r in problems))
        self.problems = problems
