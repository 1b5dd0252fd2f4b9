"""Replay a capture: run the scenario rebuilt from it (:mod:`.scenario`), turn the model's
presents into PresentMon frames on the capture's clock, and compare the two (:mod:`.compare`).

The model's frames come from its event log as ``wddmsim run --presentmon`` makes them
(:func:`wddmsim.trace.presentmon.present_rows`, docs/timeline.md), moved back by the scenario's
time shift so that a model frame and the capture's frame it replays carry the same times. Each
keeps the capture's Application, ProcessID and SwapChainAddress (the scenario gives the processes
their ProcessIDs and the swap chains their addresses), so rows match.

The system itself is built by the caller (``wddmsim replay``, :mod:`wddmsim.cli.replay`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..trace.presentmon import present_rows
from .capture import Frame


@dataclass
class ReplayResult:
    """What a replay made: the model's frames on the capture's clock, the run's events and summary."""

    frames: list[Frame]
    events: list[dict]
    summary: dict
    shift: int
    bugcheck: object | None = None
    #: why the run stopped before its end time (:mod:`wddmsim.runner.stop`), None when it did not
    stopped: str | None = None
    #: the virtual ns the run ended at
    end: int = 0


def _ns(ms) -> int | None:
    return None if ms in (None, "NA") else round(float(ms) * 1e6)


def model_frames(events: list[dict], shift: int) -> list[Frame]:
    """The model's presents as capture frames, ``shift`` ns earlier (the scenario's time shift)."""
    out = []
    last_start: dict = {}
    last_display: dict = {}
    for r in present_rows(events, times=True):
        key = (r["Application"], int(r["ProcessID"]), r["SwapChainAddress"])
        present = r["_present_start"] - shift
        cpu_start = r["_frame_start"] - shift
        disp = None if r["_displayed"] is None else r["_displayed"] - shift
        gpu_start = r["_gpu_start"]
        gpu_end = r["_gpu_end"]
        prev = last_start.get(key)
        prev_disp = last_display.get(key)
        out.append(Frame(
            application=r["Application"], pid=int(r["ProcessID"]), swap_chain=r["SwapChainAddress"],
            runtime=r["PresentRuntime"], sync_interval=int(r["SyncInterval"]), present_flags=int(r["PresentFlags"]),
            allows_tearing=int(r["AllowsTearing"]), present_mode=r["PresentMode"], frame_type="Application",
            present_start=present, in_present=_ns(r["MsInPresentAPI"]), cpu_start=cpu_start,
            cpu_busy=present - cpu_start, cpu_wait=_ns(r["MsInPresentAPI"]),
            gpu_latency=None if gpu_start is None else gpu_start - r["_frame_start"],
            gpu_time=None if gpu_start is None or gpu_end is None else gpu_end - gpu_start,
            gpu_busy=r["_gpu_busy"], displayed=disp,
            until_displayed=None if disp is None else disp - present,
            between_presents=None if prev is None else present - prev,
            between_display_change=None if disp is None or prev_disp is None else disp - prev_disp,
            render_present_latency=None if gpu_end is None else gpu_end - r["_present_start"],
        ))
        last_start[key] = present
        if disp is not None:
            last_display[key] = disp
    out.sort(key=lambda f: f.present_start)
    return out


def replay(system, collected, shift: int, stop=None) -> ReplayResult:
    """Run ``system`` (built with a trace sink that feeds ``collected``, a list sink) and return the
    model's frames on the capture's clock (``shift``: the scenario's time shift). ``stop``: a
    :class:`~wddmsim.runner.stop.RunStop` that may end the run early (the result's ``stopped``)."""
    result = system.run(stop=stop)
    events = collected.events
    return ReplayResult(model_frames(events, shift), events, dict(result.summary), shift, result.bugcheck,
                        result.stopped, result.end)
