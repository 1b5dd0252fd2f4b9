"""How PresentMon's columns follow from each other, and writing frames in its three column sets.

:func:`complete_frames` fills the Frame fields a column set does not carry from those it does (the
relations are listed in :mod:`.capture`); :func:`write_capture_csv` writes frames as a CSV.

Each column is computed from the Frame's fields as PresentMon computes it from its present events
(GameTechDev/PresentMon ``PresentMon/CsvOutput.cpp`` for the columns and formats,
``PresentMon/OutputThread.cpp`` for the metrics; see :mod:`.capture` for the relations), so that
:func:`~.capture.read_capture` of the written file gives the same frames back.

Formats, as PresentMon prints them (checked against its gold files, which this writer reproduces
byte for byte up to the order of the rows):

- a duration is first made QPC ticks (the nearest tick), then ms as ``1000.0 * ticks / frequency``
  in double precision, as ``PMTraceSession::TimestampDeltaToMilliSeconds`` does;
- ``%.14f`` (``DBL_DIG - 1`` digits) for MsBetweenPresents, MsBetweenDisplayChange,
  MsInPresentAPI, MsRenderPresentLatency and every v1 ms column (e.g. ``16.47540000000000``);
  ``%.4f`` for the rest of the current set and all of v2 (e.g. ``16.3893``);
- sums (MsBetweenAppStart/FrameTime = busy + wait, MsGPUTime = busy + wait) are summed in ms, and
  GPUWait = max(0, GPU time - GPU busy), as PresentMon does;
- ``NA`` for an unknown value, and where PresentMon prints NA for 0 (MsBetweenDisplayChange,
  MsUntilDisplayed, MsFlipDelay); v1 prints 0 instead for a dropped frame's msUntilDisplayed, a
  missing msBetweenDisplayChange, msFlipDelay or msUntilRenderStart, and always 0 for
  msSinceInput; the columns the Frame does not model (PC latency, input latencies, ...) are NA;
- SwapChainAddress ``0x%X`` (current, v2) or ``0x%016X`` (v1); the file starts with a UTF-8 BOM and
  ends rows with LF.

So a capture read from PresentMon's files round-trips exactly (its values sit on the 100 ns grid of
a 10 MHz clock); a model's arbitrary nanoseconds come back to within 100 ns, as the ``%.4f`` columns
hold 0.1 us and a QPC value one tick.

Where the two differ from PresentMon: a frame whose DisplayedTime is unknown (the chain's last
displayed frame, or one read from a v1 file) keeps its DisplayLatency in v2 with DisplayedTime NA
(PresentMon holds such a present back and writes no row); v1's TimeInSeconds counts from
``session_start_qpc`` (the capture's own when known, else the origin). A v2 row is placed by its
CPU start, so a frame without one (a chain's first frame read from a v1 file) has no v2 row, as
PresentMon writes no row for a chain's first present.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

from .capture import COLUMN_SETS
from .frame import FRAME_FIELDS, NA, ChainKey, Frame, complete_frames  # noqa: F401  (complete_frames: re-exported)

Cell = Callable[[Frame], str]


# --- writing -------------------------------------------------------------------------------------------


class _Clock:
    """Nanoseconds from the origin to QPC ticks, and ms text in PresentMon's formats."""

    def __init__(self, frequency: int, origin: int, session_start: int):
        self.frequency, self.origin, self.session_start = frequency, origin, session_start

    def ticks(self, ns: int) -> int:
        num = ns * self.frequency
        whole, rest = divmod(num, 10**9)
        return whole + (1 if 2 * rest > 10**9 or (2 * rest == 10**9 and whole % 2) else 0)

    def qpc(self, ns: int | None) -> str:
        return NA if ns is None else str(self.origin + self.ticks(ns))

    def ms(self, ns: int | None) -> float | None:
        return None if ns is None else 1000.0 * self.ticks(ns) / self.frequency

    def span(self, start: int | None, end: int | None) -> float | None:
        """end - start in ms, from their QPC values (exact on the file's clock)."""
        if start is None or end is None:
            return None
        return 1000.0 * (self.ticks(end) - self.ticks(start)) / self.frequency


def _f14(value: float | None, none: str = NA) -> str:
    return none if value is None else "%.14f" % value


def _f4(value: float | None, none: str = NA) -> str:
    return none if value is None else "%.4f" % value


def _nz(value: float | None) -> float | None:
    return value or None


def _add(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def _gpu_wait(c: _Clock, f: Frame) -> float | None:
    time, busy = c.ms(f.gpu_time), c.ms(f.gpu_busy)
    return None if time is None or busy is None else max(0.0, time - busy)


def _cpu_busy(c: _Clock, f: Frame) -> float | None:
    """From the QPC values of CPU start and present start when they give it (so that v2's present
    start, CPU start + CPUBusy, lands on the present's tick), else the field."""
    if f.cpu_start is not None and f.cpu_busy is not None and f.cpu_busy == f.present_start - f.cpu_start:
        return c.span(f.cpu_start, f.present_start)
    return c.ms(f.cpu_busy)


def _until_displayed(c: _Clock, f: Frame) -> float | None:
    if f.displayed is None:
        return None
    return c.span(f.present_start, f.displayed)


def _identity(c: _Clock, address: str, runtime: str) -> dict[str, Cell]:
    return {
        "Application": lambda f: f.application,
        "ProcessID": lambda f: str(f.pid),
        "SwapChainAddress": lambda f: address % f.swap_chain_address,
        runtime: lambda f: f.runtime,
        "SyncInterval": lambda f: str(f.sync_interval),
        "PresentFlags": lambda f: str(f.present_flags),
        "AllowsTearing": lambda f: str(f.allows_tearing),
        "PresentMode": lambda f: f.present_mode,
        "FrameType": lambda f: f.frame_type,
    }


def _cpu_gpu(c: _Clock, names: tuple[str, ...]) -> dict[str, Cell]:
    """The CPU and GPU columns both 2.x sets share, under each set's names."""
    app, busy, wait, lat, time, gbusy, gwait, video = names
    return {
        app: lambda f: _f4(_add(_cpu_busy(c, f), c.ms(f.cpu_wait))),
        busy: lambda f: _f4(_cpu_busy(c, f)),
        wait: lambda f: _f4(c.ms(f.cpu_wait)),
        lat: lambda f: _f4(c.ms(f.gpu_latency)),
        time: lambda f: _f4(_add(c.ms(f.gpu_busy), _gpu_wait(c, f))),
        gbusy: lambda f: _f4(c.ms(f.gpu_busy)),
        gwait: lambda f: _f4(_gpu_wait(c, f)),
        video: lambda f: _f4(c.ms(f.video_busy)),
    }


def _current(c: _Clock) -> dict[str, Cell]:
    cells = _identity(c, "0x%X", "PresentRuntime")
    cells.update({
        "TimeInQPC": lambda f: c.qpc(f.present_start),
        "MsBetweenPresents": lambda f: _f14(c.ms(f.between_presents)),
        "MsBetweenDisplayChange": lambda f: _f14(_nz(c.ms(f.between_display_change))),
        "MsInPresentAPI": lambda f: _f14(c.ms(f.in_present)),
        "MsRenderPresentLatency": lambda f: _f14(c.ms(f.render_present_latency)),
        "MsUntilDisplayed": lambda f: _f4(_nz(_until_displayed(c, f))),
        "CPUStartQPC": lambda f: c.qpc(f.cpu_start),
        "MsAnimationError": lambda f: _f4(c.ms(f.animation_error)),
        "AnimationTime": lambda f: _f4(c.ms(f.animation_time)),
        "MsFlipDelay": lambda f: _f4(_nz(c.ms(f.flip_delay))),
    })
    cells.update(_cpu_gpu(c, ("MsBetweenAppStart", "MsCPUBusy", "MsCPUWait", "MsGPULatency",
                              "MsGPUTime", "MsGPUBusy", "MsGPUWait", "MsVideoBusy")))
    return cells


def _display_latency(c: _Clock, f: Frame) -> float | None:
    if f.displayed is None or f.cpu_start is None:
        return None
    return max(0.0, c.span(f.cpu_start, f.displayed))


def _v2(c: _Clock) -> dict[str, Cell]:
    cells = _identity(c, "0x%X", "PresentRuntime")
    cells.update({
        "CPUStartQPC": lambda f: c.qpc(f.cpu_start),
        "DisplayLatency": lambda f: _f4(_display_latency(c, f)),
        "DisplayedTime": lambda f: _f4(_nz(c.ms(f.displayed_time)) if f.displayed is not None else None),
        "AnimationError": lambda f: _f4(c.ms(f.animation_error)),
        "AnimationTime": lambda f: _f4(c.ms(f.animation_time)),
        "MsFlipDelay": lambda f: _f4(_nz(c.ms(f.flip_delay))),
    })
    cells.update(_cpu_gpu(c, ("FrameTime", "CPUBusy", "CPUWait", "GPULatency", "GPUTime", "GPUBusy",
                              "GPUWait", "VideoBusy")))
    return cells


def _v1(c: _Clock) -> dict[str, Cell]:
    cells = _identity(c, "0x%016X", "Runtime")
    del cells["FrameType"]
    zero = "%.14f" % 0.0

    def seconds(f: Frame) -> str:
        ticks = c.origin + c.ticks(f.present_start) - c.session_start
        return "%.14f" % (0.001 * (1000.0 * ticks / c.frequency))

    cells.update({
        "Dropped": lambda f: "1" if f.displayed is None else "0",
        "TimeInSeconds": seconds,
        "msInPresentAPI": lambda f: _f14(c.ms(f.in_present)),
        "msBetweenPresents": lambda f: _f14(c.ms(f.between_presents)),
        "msUntilRenderComplete": lambda f: _f14(c.ms(f.render_present_latency)),
        "msUntilDisplayed": lambda f: _f14(_until_displayed(c, f), zero),
        "msBetweenDisplayChange": lambda f: _f14(c.ms(f.between_display_change), zero),
        "msFlipDelay": lambda f: _f14(c.ms(f.flip_delay), zero),
        "msUntilRenderStart": lambda f: _f14(c.ms(f.until_render_start), zero),
        "msGPUActive": lambda f: _f14(c.ms(f.gpu_busy)),
        "msGPUVideoActive": lambda f: _f14(c.ms(f.video_busy)),
        "msSinceInput": lambda f: zero,
        "QPCTime": lambda f: c.qpc(f.present_start),
    })
    return cells


_CELLS = {"current": _current, "v1": _v1, "v2": _v2}


def write_capture_csv(frames: Iterable[Frame], path: str | Path, column_set: str, *,
                      qpc_frequency: int = 10_000_000, qpc_origin: int = 0,
                      columns: Iterable[str] | None = None,
                      session_start_qpc: int | None = None) -> Path:
    """Write ``frames`` (in the order given) as a PresentMon CSV in ``column_set`` ("current",
    "v1" or "v2"): PresentMon's header for that set, or ``columns`` when given (e.g. the header the
    frames were read with; a column the set does not know is written NA). Times go back to QPC
    values as ``qpc_origin`` + ns * ``qpc_frequency`` / 10^9, to the nearest tick. v2 leaves out
    the frames without a CPU start. Returns the path."""
    if column_set not in COLUMN_SETS:
        raise ValueError(f"unknown column set {column_set!r}: one of {', '.join(COLUMN_SETS)}")
    if qpc_frequency <= 0:
        raise ValueError(f"qpc_frequency must be positive, got {qpc_frequency}")
    clock = _Clock(qpc_frequency, qpc_origin,
                   qpc_origin if session_start_qpc is None else session_start_qpc)
    cells = _CELLS[column_set](clock)
    header = list(COLUMN_SETS[column_set].columns if columns is None else columns)
    writers = [cells.get(name, lambda f: NA) for name in header]
    lines = [",".join(header)]
    if column_set == "v2":  # v2 places a frame by its CPU start: one without it has no row
        frames = [f for f in frames if f.cpu_start is not None and f.cpu_busy is not None]
    lines += [",".join(w(f) for w in writers) for f in frames]
    path = Path(path)
    path.write_text("\ufeff" + "\n".join(lines) + "\n", encoding="utf-8", newline="")
    return path


def write_capture(capture, path: str | Path, column_set: str | None = None) -> Path:
    """Write a :class:`~.capture.Capture` back on its own clock: its column set and header unless
    another set is named (then that set's full header)."""
    column_set = column_set or capture.column_set
    columns = capture.columns if column_set == capture.column_set else None
    return write_capture_csv(capture.frames, path, column_set, qpc_frequency=capture.qpc_frequency,
                             qpc_origin=capture.qpc_origin, columns=columns,
                             session_start_qpc=capture.session_start_qpc)
