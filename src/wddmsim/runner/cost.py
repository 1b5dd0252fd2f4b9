"""What a run cost on the machine that ran it: wall time, the real-time factor and peak memory.

These figures change from one run to the next (another program on the machine, a slower disk), so
they are kept out of everything a run must reproduce byte for byte: the summary (``--json``) and
the event log. ``wddmsim run`` and ``wddmsim demo`` print them on standard error after the run.

- The real-time factor is virtual seconds per wall second: 2.0 means the model ran two seconds of
  the GPU's time in each second of the machine's; below 1 it runs slower than real time. The wall
  time is the run itself (building the system and printing are not in it).
- Peak memory is the process's peak resident set size (``VmHWM`` on Linux, else ``getrusage``'s
  ``ru_maxrss``, which Linux carries over from the process that started this one): the whole
  process, the Python interpreter and every loaded module included, so a small run shows the
  interpreter's own size (some 60 to 80 MiB). It costs nothing to read, unlike ``tracemalloc``,
  which slows a run several times over and counts only Python's own allocations. ``ru_maxrss`` is
  in KiB on Linux and in bytes on macOS; Windows has no ``resource`` module, and the figure is
  then not available. With ``--events`` the log is encoded and written by a writer process of its
  own (:mod:`wddmsim.trace.writer`); its peak is printed beside the run's.
"""

from __future__ import annotations

import sys

MIB = 1 << 20


def real_time_factor(virtual_ns: int, wall_s: float) -> float | None:
    """Virtual seconds per wall second (None when no wall time was measured)."""
    if wall_s <= 0:
        return None
    return virtual_ns / 1e9 / wall_s


def timing_line(virtual_ns: int, wall_s: float) -> str:
    """One line for standard error: the run's wall time and its real-time factor."""
    rtf = real_time_factor(virtual_ns, wall_s)
    factor = "-" if rtf is None else f"{rtf:.3g}"
    return (f"wall time {wall_s:.3f} s for {virtual_ns / 1e6:.3f} ms of virtual time: "
            f"real-time factor {factor} (virtual s per wall s)")


def peak_rss_bytes() -> int | None:
    """The process's peak resident set size so far, in bytes; None where the platform does not
    report it. On Linux it is ``VmHWM`` of ``/proc/self/status``: ``ru_maxrss`` there keeps the peak
    of the process that started this one (the kernel carries it across ``fork`` and ``exec``), so a
    run started by a large process (a test session, a sweep's parent) would report that process's
    peak. Elsewhere ``ru_maxrss``."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024  # kB
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def writer_peak_rss_bytes() -> int | None:
    """The peak resident set size of the largest child process this process has waited for, in
    bytes (``RUSAGE_CHILDREN``'s ``ru_maxrss``): after a streamed event log is closed, its writer
    process's peak. None where the platform does not report it."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def memory_line(peak: int | None, before: int | None, writer: int | None = None) -> str:
    """One line for standard error: the peak resident memory, and the peak before the run began
    (loading and building), both from :func:`peak_rss_bytes`; with ``writer``, the event log's writer
    process's own peak beside it (the two together bound what the run held at once)."""
    if peak is None:
        return "peak memory: not available on this platform (no getrusage)"
    text = f"peak memory {peak / MIB:.1f} MiB resident (the whole process"
    if before is not None:
        text += f"; {before / MIB:.1f} MiB before the run began"
    if writer is not None:
        text += f"; the event log's writer process {writer / MIB:.1f} MiB"
    return text + ")"
