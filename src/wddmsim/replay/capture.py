"""Read a PresentMon CSV capture into frames on one integer-nanosecond clock.

PresentMon writes one row per present (per display of a present) in one of three column sets:

- ``current``: PresentMon 2.x's default (``TimeInQPC``, ``MsBetweenPresents``, ``MsUntilDisplayed``,
  ``CPUStartQPC``, ``MsCPUBusy``, ``MsGPUBusy``, ...);
- ``v1``: ``--v1_metrics``, PresentMon 1.x's columns (``TimeInSeconds``, ``msBetweenPresents``,
  ``Dropped``, ``msUntilRenderStart``, ``msGPUActive``, ``QPCTime``, ...);
- ``v2``: ``--v2_metrics`` (``CPUStartQPC``, ``FrameTime``, ``CPUBusy``, ``DisplayLatency``,
  ``DisplayedTime``, ...).

What each column means was settled from PresentMon's source (GameTechDev/PresentMon; nothing of it is
copied here) and checked on its gold captures (tests/data/presentmon):

- ``PresentMon/CsvOutput.cpp``: the headers and formats of the three sets; ``SwapChainAddress`` is
  ``0x%llX`` (current, v2) but ``0x%016llX`` (v1); ``NA`` for a value PresentMon does not have.
- ``PresentMon/OutputThread.cpp`` (``ReportMetricsHelper``, ``ReportMetrics1``): the metrics. With
  PB/PE a present's start and end (PE = PB + time in Present()), D its screen time:
  CPU start = PE of the chain's previous (application) present; CPUBusy = PB - CPU start;
  CPUWait = time in Present(); FrameTime = MsBetweenAppStart = CPUBusy + CPUWait;
  GPULatency = GPU start - CPU start; GPUBusy = the GPU's busy time (v1 ``msGPUActive``);
  GPUTime = GPUBusy + GPUWait = max(GPUBusy, GPU-ready - GPU start);
  MsRenderPresentLatency = v1 ``msUntilRenderComplete`` = GPU-ready - PB;
  v1 ``msUntilRenderStart`` = GPU start - PB (signed, 0 when there was no GPU start);
  MsUntilDisplayed = D - PB; DisplayLatency (v2) = D - CPU start;
  DisplayedTime (v2) = D of the chain's next displayed present - D;
  MsBetweenDisplayChange = D - the chain's previous D; MsBetweenPresents = PB - previous PB;
  AnimationTime = CPU start - the trace session's start; v1 TimeInSeconds = PB - session start.
  The first present of a chain only sets the baseline and has no row. The current and v2 sets hold
  a displayed present back until the chain's next displayed present (to learn DisplayedTime), so
  the last displayed present of each chain has no row there, while v1 writes it.
- ``PresentData/PresentMonTraceSession.cpp``: ms = 1000 * ticks / QPC frequency; an "unsigned"
  delta is 0 when the end is not after the start (printed ``NA`` where 0 means unknown), a signed
  one is 0 when either end is 0.
- ``README-ConsoleApplication.md``: the columns' meanings, in words.

Times are nanoseconds from the capture's origin (``Capture.qpc_origin``: by default the earliest CPU
start or present start in the file); QPC values convert exactly when the frequency divides 10^9
(10 MHz in the shipped files: one tick is 100 ns), else to the nearest nanosecond. A field the set
does not carry is derived from the ones it does (from the row, or from the chain's neighbouring
rows, e.g. v1's CPU start is the previous row's present end) or left None.
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from statistics import median
from typing import Iterable

from .frame import (  # noqa: F401  (re-exported: the reader's public names)
    FRAME_FIELDS, NA, ChainKey, Frame, complete_frames, frames_by_chain, refresh_period_ns,
)


class CaptureError(Exception):
    """A capture that cannot be read: the message names the file (and line and column) and why."""


@dataclass(frozen=True)
class ColumnSet:
    """One of PresentMon's column sets: its columns in PresentMon's order (as in the gold files),
    the ones a capture must have, the one that tells the set apart, and the Frame fields it carries
    (read from the row; the rest are derived)."""

    name: str
    columns: tuple[str, ...]
    required: tuple[str, ...]
    signature: str
    carries: frozenset[str]


def _column_set(name: str, columns: str, signature: str, optional: str, carries: str) -> ColumnSet:
    cols = tuple(columns.split())
    required = (signature,) + tuple(c for c in cols if c not in optional.split() and c != signature)
    base = "application pid swap_chain runtime sync_interval present_flags allows_tearing present_mode "
    return ColumnSet(name, cols, required, signature, frozenset((base + carries).split()))


_ID = "Application ProcessID SwapChainAddress "
COLUMN_SETS: dict[str, ColumnSet] = {cs.name: cs for cs in (
    _column_set(
        "current",
        _ID + "PresentRuntime SyncInterval PresentFlags AllowsTearing PresentMode FrameType TimeInQPC "
        "MsBetweenSimulationStart MsBetweenPresents MsBetweenDisplayChange MsInPresentAPI "
        "MsRenderPresentLatency MsUntilDisplayed MsPCLatency CPUStartQPC MsBetweenAppStart MsCPUBusy "
        "MsCPUWait MsGPULatency MsGPUTime MsGPUBusy MsGPUWait MsVideoBusy MsAnimationError AnimationTime "
        "MsFlipDelay MsAllInputToPhotonLatency MsClickToPhotonLatency MsInstrumentedLatency",
        "MsBetweenPresents",
        "FrameType MsBetweenSimulationStart MsPCLatency MsBetweenAppStart MsGPUWait MsVideoBusy "
        "MsAnimationError AnimationTime MsFlipDelay MsAllInputToPhotonLatency MsClickToPhotonLatency "
        "MsInstrumentedLatency",
        "frame_type present_start in_present between_presents between_display_change "
        "render_present_latency until_displayed displayed cpu_start cpu_busy cpu_wait gpu_latency "
        "gpu_time gpu_busy video_busy animation_error animation_time flip_delay"),
    _column_set(
        "v1",
        _ID + "Runtime SyncInterval PresentFlags Dropped TimeInSeconds msInPresentAPI msBetweenPresents "
        "AllowsTearing PresentMode msUntilRenderComplete msUntilDisplayed msBetweenDisplayChange "
        "msFlipDelay msUntilRenderStart msGPUActive msGPUVideoActive msSinceInput QPCTime",
        "msBetweenPresents",
        "msUntilRenderComplete msFlipDelay msUntilRenderStart msGPUActive msGPUVideoActive msSinceInput "
        "QPCTime",
        "present_start in_present between_presents render_present_latency until_displayed displayed "
        "between_display_change flip_delay until_render_start gpu_busy video_busy"),
    _column_set(
        "v2",
        _ID + "PresentRuntime SyncInterval PresentFlags AllowsTearing PresentMode FrameType CPUStartQPC "
        "FrameTime CPUBusy CPUWait GPULatency GPUTime GPUBusy GPUWait VideoBusy DisplayLatency "
        "DisplayedTime AnimationError AnimationTime MsFlipDelay AllInputToPhotonLatency "
        "ClickToPhotonLatency InstrumentedLatency",
        "FrameTime",
        "FrameType GPUWait VideoBusy AnimationError AnimationTime MsFlipDelay AllInputToPhotonLatency "
        "ClickToPhotonLatency InstrumentedLatency",
        "frame_type present_start in_present cpu_start cpu_busy cpu_wait gpu_latency gpu_time gpu_busy "
        "video_busy displayed until_displayed displayed_time animation_error animation_time flip_delay"),
)}


@dataclass
class Capture:
    """A capture as read: frames sorted by present start (ties in file order)."""

    path: Path
    column_set: str
    columns: tuple[str, ...]  #: the header as read
    frames: list[Frame]
    qpc_frequency: int  #: Hz, inferred from the file (10 MHz in the shipped files)
    qpc_origin: int  #: the QPC value of time 0
    session_start_qpc: int | None = None  #: the trace session's start (from TimeInSeconds/AnimationTime)

    def chains(self) -> dict[ChainKey, list[Frame]]:
        """The frames of each swap chain, keyed (application, pid, swap_chain) in first-seen order."""
        return frames_by_chain(self.frames)

    def refresh_period_ns(self, key: ChainKey | None = None) -> int | None:
        """See :func:`refresh_period_ns`."""
        return refresh_period_ns(self.frames, key)


# --- reading -------------------------------------------------------------------------------------

_NUMBER = re.compile(r"[+-]?(\d{1,15}(\.\d{0,30})?|\.\d{1,30})([eE][+-]?\d{1,2})?")  # bounded, so no huge integers
_INT = re.compile(r"[+-]?\d{1,20}")  # 64-bit values
_HEX = re.compile(r"0[xX][0-9a-fA-F]+")
_MS_TO_NS = Decimal(1_000_000)


class _Row:
    """One data row: the cells by column, and where it is, for messages."""

    def __init__(self, where: str, line: int, cells: dict[str, str]):
        self.where, self.line, self.cells = where, line, cells

    def error(self, column: str, reason: str) -> CaptureError:
        return CaptureError(f"{self.where} line {self.line}: column {column}: {reason}")

    def text(self, column: str) -> str:
        return self.cells[column]

    def _value(self, column: str, pattern: re.Pattern, what: str, optional: bool) -> str | None:
        text = self.cells.get(column, NA)
        if text == NA:
            if optional:
                return None
            raise self.error(column, f"a value is required, got {text!r}")
        if not pattern.fullmatch(text):
            raise self.error(column, f"{text!r} is not {what}")
        return text

    def int(self, column: str, optional: bool = False) -> int | None:
        text = self._value(column, _INT, "an integer", optional)
        return None if text is None else int(text)

    def qpc(self, column: str, optional: bool = False) -> int | None:
        value = self.int(column, optional)
        if value is not None and value < 0:
            raise self.error(column, f"{self.cells[column]!r} is not a QPC value (negative)")
        return value

    def ms(self, column: str, optional: bool = True) -> int | None:
        """A millisecond value as integer nanoseconds (exact decimal, rounded half-even)."""
        text = self._value(column, _NUMBER, "a number", optional)
        if text is None:
            return None
        return int((Decimal(text) * _MS_TO_NS).to_integral_value(ROUND_HALF_EVEN))

    def address(self, column: str) -> str:
        text = self.cells[column]
        if not _HEX.fullmatch(text):
            raise self.error(column, f"{text!r} is not a hexadecimal address")
        return text


def _nonzero(value: int | None) -> int | None:
    """PresentMon v1 prints 0 for a value it does not have."""
    return value or None


def _base(row: _Row, runtime_column: str) -> dict:
    return dict(application=row.text("Application"), pid=row.int("ProcessID"),
                swap_chain=row.address("SwapChainAddress"), runtime=row.text(runtime_column),
                sync_interval=row.int("SyncInterval"), present_flags=row.int("PresentFlags"),
                allows_tearing=row.int("AllowsTearing"), present_mode=row.text("PresentMode"),
                frame_type=row.cells.get("FrameType", "Application"))


def _parse_current(row: _Row) -> tuple[dict, dict]:
    f = _base(row, "PresentRuntime")
    f.update(in_present=row.ms("MsInPresentAPI", optional=False),
             between_presents=row.ms("MsBetweenPresents"),
             between_display_change=row.ms("MsBetweenDisplayChange"),
             render_present_latency=row.ms("MsRenderPresentLatency"),
             until_displayed=row.ms("MsUntilDisplayed"), cpu_busy=row.ms("MsCPUBusy"),
             cpu_wait=row.ms("MsCPUWait"), gpu_latency=row.ms("MsGPULatency"),
             gpu_time=row.ms("MsGPUTime"), gpu_busy=row.ms("MsGPUBusy"), video_busy=row.ms("MsVideoBusy"),
             animation_error=row.ms("MsAnimationError"), animation_time=row.ms("AnimationTime"),
             flip_delay=row.ms("MsFlipDelay"))
    return f, dict(present=row.qpc("TimeInQPC"), cpu=row.qpc("CPUStartQPC", optional=True))


def _parse_v2(row: _Row) -> tuple[dict, dict]:
    f = _base(row, "PresentRuntime")
    f.update(cpu_busy=row.ms("CPUBusy", optional=False), cpu_wait=row.ms("CPUWait", optional=False),
             gpu_latency=row.ms("GPULatency"), gpu_time=row.ms("GPUTime"), gpu_busy=row.ms("GPUBusy"),
             video_busy=row.ms("VideoBusy"), displayed_time=row.ms("DisplayedTime"),
             animation_error=row.ms("AnimationError"), animation_time=row.ms("AnimationTime"),
             flip_delay=row.ms("MsFlipDelay"))
    f["in_present"] = f["cpu_wait"]
    return f, dict(cpu=row.qpc("CPUStartQPC"), display_latency=row.ms("DisplayLatency"))


def _parse_v1(row: _Row) -> tuple[dict, dict]:
    f = _base(row, "Runtime")
    dropped = row.int("Dropped")
    if dropped not in (0, 1):
        raise row.error("Dropped", f"{row.text('Dropped')!r} is not 0 or 1")
    f.update(in_present=row.ms("msInPresentAPI", optional=False),
             between_presents=row.ms("msBetweenPresents"),
             render_present_latency=row.ms("msUntilRenderComplete"),
             until_displayed=None if dropped else _nonzero(row.ms("msUntilDisplayed")),
             between_display_change=_nonzero(row.ms("msBetweenDisplayChange")),
             flip_delay=_nonzero(row.ms("msFlipDelay")),
             until_render_start=_nonzero(row.ms("msUntilRenderStart")),
             gpu_busy=row.ms("msGPUActive"), video_busy=row.ms("msGPUVideoActive"))
    seconds = row._value("TimeInSeconds", _NUMBER, "a number", False)
    return f, dict(present=row.qpc("QPCTime", optional=True), seconds=Decimal(seconds))


_PARSERS = {"current": _parse_current, "v1": _parse_v1, "v2": _parse_v2}


def detect_column_set(header: Iterable[str], where: str = "capture") -> ColumnSet:
    """The column set whose required columns the header has; CaptureError naming, for each set,
    a column it misses when there is none."""
    have = set(header)
    missing = []
    for cs in COLUMN_SETS.values():
        lacking = [c for c in cs.required if c not in have]
        if not lacking:
            return cs
        more = f" and {len(lacking) - 1} more" if len(lacking) > 1 else ""
        missing.append(f"missing column {lacking[0]!r}{more} of the {cs.name} set")
    raise CaptureError(f"{where}: not a PresentMon capture: the header has none of the three known "
                       f"column sets ({', '.join(missing)})")


def _read_rows(path: Path) -> tuple[list[str], list[_Row]]:
    where = str(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise CaptureError(f"{where}: cannot read the file: {e.strerror or e}") from None
    nul = data.find(b"\0")
    if nul >= 0:
        raise CaptureError(f"{where}: not a text file: a NUL byte at offset {nul}")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise CaptureError(f"{where}: not a text file: byte 0x{data[e.start]:02X} at offset "
                           f"{e.start} is not UTF-8") from None
    reader = csv.reader(text.splitlines(keepends=True), strict=True)
    try:
        header = next(reader, None)
        while header is not None and not any(c.strip() for c in header):
            header = next(reader, None)
        if header is None:
            raise CaptureError(f"{where}: empty file: no header line")
        header = [c.strip() for c in header]
        seen = Counter(header)
        twice = [c for c in header if seen[c] > 1]
        if twice:
            raise CaptureError(f"{where}: column {twice[0]!r} appears twice in the header")
        rows = []
        for cells in reader:
            if not any(c.strip() for c in cells):
                continue
            if len(cells) != len(header):
                raise CaptureError(f"{where} line {reader.line_num}: {len(cells)} fields, the header "
                                   f"has {len(header)}")
            rows.append(_Row(where, reader.line_num, dict(zip(header, (c.strip() for c in cells)))))
    except csv.Error as e:
        raise CaptureError(f"{where} line {reader.line_num}: not CSV: {e}") from None
    return header, rows


# QPC frequencies Windows machines report: 10 MHz (Windows 10 and later on x64), the ACPI PM timer,
# the HPET, ARM64 system counters, and 1 GHz.
_KNOWN_FREQUENCIES = (10_000_000, 3_579_545, 14_318_180, 19_200_000, 24_000_000, 1_000_000_000)


def _estimate_frequency(pairs: list[tuple[int, int]]) -> int | None:
    """QPC ticks per second from (ticks, nanoseconds) pairs of the same interval: the pairs within
    0.1% of the median ratio, summed; snapped to a known frequency within 100 ppm (4-decimal ms
    values over a short capture are good to a few ppm), else rounded to 1 Hz."""
    pairs = [(t, ns) for t, ns in pairs if t > 0 and ns > 0]
    if not pairs:
        return None
    mid = median(t / ns for t, ns in pairs)
    kept = [(t, ns) for t, ns in pairs if abs(t / ns / mid - 1) < 1e-3]
    estimate = sum(t for t, _ in kept) * 1e9 / sum(ns for _, ns in kept)
    known = [f for f in _KNOWN_FREQUENCIES if abs(estimate / f - 1) < 1e-4]
    if known:
        return known[0]
    return round(estimate) if 1e3 <= estimate <= 1e11 else None  # else not a clock: the default


def _chain_pairs(parsed, qpc_name: str, ms_name: str, shift: int = 0) -> list[tuple[int, int]]:
    """(QPC delta, ms value) pairs between consecutive rows of each chain: the value of row i+shift."""
    chains: dict = {}
    for f, q in parsed:
        if q.get(qpc_name) is not None:
            chains.setdefault((f["application"], f["pid"], f["swap_chain"]), []).append((f, q))
    pairs = []
    for rows in chains.values():
        rows.sort(key=lambda r: r[1][qpc_name])
        for (f0, q0), (f1, q1) in zip(rows, rows[1:]):
            value = (f0, f1)[shift].get(ms_name)
            if value is not None:
                pairs.append((q1[qpc_name] - q0[qpc_name], value))
    return pairs


def _frequency(column_set: str, parsed) -> int | None:
    if column_set == "v1":
        timed = sorted((q["present"], q["seconds"]) for _, q in parsed if q["present"] is not None)
        if len(timed) > 1 and timed[-1][1] > timed[0][1]:
            ticks, seconds = timed[-1][0] - timed[0][0], timed[-1][1] - timed[0][1]
            return _estimate_frequency([(ticks, int(seconds * 10**9))])
        return None
    if column_set == "current":
        pairs = _chain_pairs(parsed, "present", "between_presents", shift=1)
        return _estimate_frequency(pairs) or _estimate_frequency(
            [(q["present"] - q["cpu"], f["cpu_busy"]) for f, q in parsed
             if q["cpu"] is not None and f["cpu_busy"]])
    # v2: FrameTime of row i spans its CPU start to the next row's
    return _estimate_frequency([(t, ns) for t, ns in _chain_pairs(parsed, "cpu", "frame_time")])


def read_capture(path: str | Path, *, qpc_origin: int | None = None,
                 qpc_frequency: int | None = None) -> Capture:
    """Read a PresentMon CSV (any of the three column sets; BOM, extra columns and NA tolerated).

    ``qpc_origin``/``qpc_frequency`` override the inferred ones (e.g. to put the three files of one
    capture on the same clock). Every bad input raises CaptureError with a message for the user.
    """
    path = Path(path)
    header, rows = _read_rows(path)
    cs = detect_column_set(header, str(path))
    if not rows:
        raise CaptureError(f"{path}: no frames: the file has a header but no rows")
    parse = _PARSERS[cs.name]
    parsed = []
    for row in rows:
        f, q = parse(row)
        if cs.name == "v2":
            f["frame_time"] = row.ms("FrameTime")
        parsed.append((f, q))
    freq = qpc_frequency or _frequency(cs.name, parsed) or 10_000_000
    session = None
    if cs.name == "v1":
        for f, q in parsed:  # without QPCTime, TimeInSeconds is the clock (session start = 0)
            ticks = int((q["seconds"] * freq).to_integral_value(ROUND_HALF_EVEN))
            if q["present"] is None:
                q["present"] = ticks
            if session is None:
                session = q["present"] - ticks
    else:
        for f, q in parsed:
            if f["animation_time"] is not None and q["cpu"] is not None:
                session = q["cpu"] - round(f["animation_time"] * freq / 10**9)
                break
    starts = [v for _, q in parsed for v in (q.get("present"), q.get("cpu")) if v is not None]
    origin = min(starts) if qpc_origin is None else qpc_origin

    def ns(qpc: int) -> int:
        num = (qpc - origin) * 10**9
        whole, rest = divmod(num, freq)
        return whole + (1 if 2 * rest > freq or (2 * rest == freq and whole % 2) else 0)

    frames = []
    for f, q in parsed:
        f.pop("frame_time", None)
        if q.get("cpu") is not None:
            f["cpu_start"] = ns(q["cpu"])
        if cs.name == "v2":
            f["present_start"] = f["cpu_start"] + f["cpu_busy"]
            if q["display_latency"] is not None:
                f["displayed"] = f["cpu_start"] + q["display_latency"]
        else:
            f["present_start"] = ns(q["present"])
        if f.get("until_displayed") is not None:
            f["displayed"] = f["present_start"] + f["until_displayed"]
        elif f.get("displayed") is not None:
            f["until_displayed"] = f["displayed"] - f["present_start"]
        frames.append(Frame(**f))

    frames = complete_frames(frames, carried=cs.carries)
    frames.sort(key=lambda fr: fr.present_start)  # stable: ties stay in file order
    return Capture(path, cs.name, tuple(header), frames, freq, origin, session)
