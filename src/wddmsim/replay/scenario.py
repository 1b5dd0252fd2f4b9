"""A scenario rebuilt from a PresentMon capture: what the machine ran, as inputs to the model.

What is taken from the capture (the applications' own doing, and the machine's display):

- the display: one VidPn source per dwm.exe swap chain, its refresh period and vsync phase fitted
  to the times its flips reached the screen (a least-squares line through the display times
  against their vsync numbers); without dwm.exe, fitted to every displayed frame;
- the time base: capture times move by a constant so that the first display's vsyncs fall on the
  model's vsync grid (whole periods from 0) and the earliest frame starts after the first vsync;
- a process per ProcessID with its Application name and ProcessID; a ``swap_chain`` workload per
  SwapChainAddress, with its runtime, sync interval, present flags, tearing, its swap effect and
  whether it covers the display (from the present modes it was seen in: a copy mode means the blt
  model, Composed or Independent Flip the flip model, a Hardware: Independent Flip a window covering
  the display, a Legacy Flip outside dwm.exe an exclusive swap chain), and its frames: when each
  frame's CPU work started, its CPU time to the present call (MsCPUBusy), its GPU busy time
  (MsGPUBusy), and when its rendering reached the GPU (MsGPULatency, if within the CPU time);
- the compositor (dwm.exe) with its ProcessID and swap chain, and a desktop update at the vsync
  before each of its presents that no captured window's frame explains (:func:`desktop_updates`:
  what changed on the machine's desktop then is not in a capture; that dwm.exe presented is), with
  that present's CPU time after the vsync and GPU busy time; a capture without dwm.exe (filtered to
  some processes) still gets a compositor, with no updates of its own;
- the driver's overlay planes: two (the reference driver at WDDM 2.1) when the capture has a
  "Hardware Composed: Independent Flip" present, none otherwise, so the model puts a window on a
  plane only where the machine could.

What is not taken: every present mode, present call duration, display time and dropped frame, and
the compositor's presents that showed a window's frame (the model's compositor presents when a
window's frame is new, :mod:`wddmsim.workloads.compositor`, so its cadence is the model's); those
are the model's answers (:mod:`wddmsim.replay.run` compares them with the capture).

The scenario can be written as TOML (:func:`scenario_toml`) to edit and run again.
"""

from __future__ import annotations

import bisect
import statistics
from collections import Counter


#: PresentMon's present modes, by the swap effect that produces them
COPY_MODES = ("Composed: Copy with GPU GDI", "Composed: Copy with CPU GDI", "Hardware: Legacy Copy to front buffer",
              "Composed: Composition Atlas")
FLIP_MODES = ("Composed: Flip", "Hardware: Independent Flip", "Hardware Composed: Independent Flip")
#: the modes of a window covering the display (one on an overlay plane is a window, not the display)
INDEPENDENT_MODES = ("Hardware: Independent Flip",)
#: a window on an overlay plane: the capture's machine had planes, so the replay's driver does too
OVERLAY_MODE = "Hardware Composed: Independent Flip"
LEGACY_FLIP = "Hardware: Legacy Flip"

#: fallback refresh period when the capture shows no display times (60 Hz)
DEFAULT_PERIOD_NS = 16_666_667
#: display times closer than this are one vsync (a display refreshes at most 1000 times a second)
SAME_VSYNC_NS = 1_000_000


def format_duration(ns: int) -> str:
    """``ns`` as an exact duration in milliseconds ("16.680493ms", "2ms"), the unit PresentMon's
    columns use, so an emitted scenario reads like the capture."""
    if ns % 1_000_000 == 0:
        return f"{ns // 1_000_000}ms"
    return f"{ns / 1e6:.6f}".rstrip("0") + "ms"


def chains(frames) -> dict:
    """The frames of each swap chain, keyed ``(application, pid, swap_chain)`` in first-seen order."""
    out: dict = {}
    for f in frames:
        out.setdefault((f.application, f.pid, f.swap_chain), []).append(f)
    return out


def is_compositor(key) -> bool:
    return key[0].lower() == "dwm.exe"


def vsync_grid(displayed: list[int]) -> tuple[int, int]:
    """(period, phase) in ns of the vsyncs ``displayed`` times fall on: a first guess of the period
    from the median gap between display changes, then the least-squares line through the times
    against their vsync numbers. Phase: the time of vsync number 0 (the first display)."""
    times = []
    for t in sorted(displayed):
        if not times or t - times[-1] >= SAME_VSYNC_NS:
            times.append(t)  # frames of several swap chains shown at one vsync count once
    if len(times) < 2:
        return DEFAULT_PERIOD_NS, times[0] if times else 0
    gaps = sorted(b - a for a, b in zip(times, times[1:]))
    # The short gaps are single periods (the median may be two when frames often skip a refresh);
    # the shortest tenth, not the very shortest, names them, so one odd gap does not.
    base = gaps[len(gaps) // 10]
    singles = [g for g in gaps if 0.5 * base <= g < 1.5 * base]
    guess = statistics.median(singles) if singles else statistics.median(gaps)
    t0 = times[0]
    ks = [round((t - t0) / guess) for t in times]
    period, phase = _line(ks, times, guess, t0)
    # Once more without the times off the first line by more than a quarter period (an odd
    # present shown between vsyncs), so they do not tilt it.
    kept = [(k, t) for k, t in zip(ks, times) if abs(t - phase - k * period) <= period / 4]
    if 2 <= len(kept) < len(times):
        period, phase = _line([k for k, _ in kept], [t for _, t in kept], period, phase)
    return round(period), round(phase)


def _line(ks: list[int], times: list[int], period: float, phase: float) -> tuple[float, float]:
    """Least squares of ``times`` against vsync numbers ``ks``: (period, time of vsync 0); the
    given ones when the numbers do not vary."""
    n = len(times)
    mk = sum(ks) / n
    mt = sum(times) / n
    var = sum((k - mk) ** 2 for k in ks)
    if not var:
        return period, phase
    period = sum((k - mk) * (t - mt) for k, t in zip(ks, times)) / var
    return period, mt - period * mk


def time_shift(frames, period: int, phase: int) -> int:
    """The ns to add to capture times so that vsync ``phase`` lands on the model's grid and the
    earliest frame starts at least one period into the run."""
    earliest = min(min(f.present_start, f.cpu_start if f.cpu_start is not None else f.present_start) for f in frames)
    m = max(0, -(-(phase - earliest) // period)) + 1
    return m * period - phase


def display_grid(frames) -> tuple[int, int]:
    """(period, phase) of the first display: fitted to the display times of the first dwm.exe
    swap chain, else of every displayed frame that did not tear (then the refresh is the shortest
    regular interval between display changes: a capture of one 30 fps application without dwm.exe
    looks like a 30 Hz display)."""
    by_chain = chains(frames)
    dwm = [k for k in by_chain if is_compositor(k)]
    # An immediate flip (tearing allowed) is shown between vsyncs: it says nothing of the grid.
    shown = [f.displayed for k in (dwm[:1] or by_chain) for f in by_chain[k]
             if f.displayed is not None and not f.allows_tearing]
    return vsync_grid(shown)


def capture_shift(capture) -> int:
    """The ns the scenario rebuilt from ``capture`` adds to the capture's times."""
    period, phase = display_grid(capture.frames)
    return time_shift(capture.frames, period, phase)


def _majority(values, default):
    values = [v for v in values if v is not None]
    return Counter(values).most_common(1)[0][0] if values else default


def _swap_effect(key, frames) -> tuple[str, bool]:
    modes = [f.present_mode for f in frames if f.present_mode in COPY_MODES + FLIP_MODES + (LEGACY_FLIP,)]
    mode = _majority(modes, "Composed: Copy with GPU GDI")
    fullscreen = any(m in INDEPENDENT_MODES for m in modes)
    if mode in FLIP_MODES:
        return "flip", fullscreen
    if mode == LEGACY_FLIP:
        return "exclusive", False
    return "copy", False


def _runtime(frames) -> str:
    rt = _majority([f.runtime for f in frames], "Other")
    return rt if rt in ("DXGI", "D3D9") else "Other"


def _frame_table(frames, shift: int) -> list[dict]:
    """The ``frames`` of a swap_chain workload (model times) from the capture's frames."""
    out = []
    prev_start = 0
    prev_return = None
    for f in frames:
        present = f.present_start + shift
        if f.cpu_start is not None:
            start = f.cpu_start + shift
        elif f.cpu_busy is not None:
            start = present - f.cpu_busy
        elif prev_return is not None:
            start = min(prev_return, present)
        else:
            start = present
        start = max(start, prev_start, 0)
        cpu = max(0, present - start)
        row = {"start": start, "cpu": cpu, "gpu": max(0, f.gpu_busy or 0)}
        if f.gpu_latency is not None and 0 <= f.gpu_latency < cpu:
            row["submit"] = f.gpu_latency
        out.append(row)
        prev_start = start
        prev_return = present + (f.in_present or 0)
    return out


def build_scenario(capture, name: str = "") -> dict:
    """The scenario (a dict of TOML tables, as :func:`wddmsim.scenario.scenario_from_dict` takes)
    that replays ``capture`` (a :class:`wddmsim.replay.capture.Capture`)."""
    frames = capture.frames
    if not frames:
        raise ValueError(f"{capture.path}: the capture has no presents")
    by_chain = chains(frames)
    dwm = [k for k in by_chain if is_compositor(k)]
    period, phase = display_grid(frames)
    shift = time_shift(frames, period, phase)
    end = max(max(f.present_start + (f.in_present or 0), f.displayed or 0) for f in frames) + shift
    duration = -(-(end + 4 * period) // 1_000_000) * 1_000_000
    scenario: dict = {
        "name": name or "replay",
        "description": f"replay of the PresentMon capture {capture.path}",
        "duration": format_duration(duration),
        "adapter": {"displays": [round(1e9 / period, 6)] * max(1, len(dwm))},
        "compositor": [],
        "process": [],
        # Overlay planes only where the machine put a window on one (docs/replay.md).
        "driver": ({"ddi_version": "wddm2_1", "overlay_planes": 2}
                   if any(f.present_mode == OVERLAY_MODE for f in frames) else {"overlay_planes": 0}),
    }
    composed = composed_displays(frames)
    for i, key in enumerate(dwm):
        scenario["compositor"].append(_compositor(key, by_chain[key], i, shift, period, composed))
    if not dwm:
        # Windows always composes the desktop; a capture filtered to some processes just does not
        # show it. A compositor with no desktop updates of its own composes the windows' frames.
        scenario["compositor"].append({"process": "dwm.exe", "vidpn_source": 0})
    procs: dict = {}
    for key, fs in by_chain.items():
        if is_compositor(key):
            continue
        app, pid, address = key
        proc = procs.get(pid)
        if proc is None:
            proc = procs[pid] = {"name": app, "pid": pid, "context": []}
            scenario["process"].append(proc)
        effect, fullscreen = _swap_effect(key, fs)
        workload = {
            "kind": "swap_chain", "runtime": _runtime(fs), "swap_effect": effect, "fullscreen": fullscreen,
            "sync_interval": max(-1, min(4, _majority([f.sync_interval for f in fs], 1))),
            "allows_tearing": any(f.allows_tearing for f in fs),
            "present_flags": _majority([f.present_flags for f in fs], 0),
            "address": address,
            "frames": [{k: format_duration(v) for k, v in row.items()} for row in _frame_table(fs, shift)],
        }
        proc["context"].append({"name": f"swapchain{len(proc['context'])}", "node": "3D", "workload": workload})
    if not scenario["process"]:
        # Only the compositor presented: a scenario needs a process, so an idle one stands in.
        scenario["process"].append({"name": "idle.exe", "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "compute_batch", "work": "1us", "count": 1}}]})
    return scenario


def composed_displays(frames) -> list[int]:
    """The screen times (capture clock, sorted) of the applications' frames the compositor showed:
    every displayed frame of a swap chain outside dwm.exe in a composed present mode
    ("Composed: ..."). A dwm.exe present shown at one of these vsyncs composed a window's frame."""
    return sorted(f.displayed for f in frames
                  if not is_compositor(f.key) and f.displayed is not None and f.present_mode.startswith("Composed"))


def _shows_a_window(f, composed: list[int]) -> bool:
    """Whether dwm.exe present ``f`` was shown at the vsync a window's composed frame was."""
    if f.displayed is None:
        return False
    i = bisect.bisect_left(composed, f.displayed - SAME_VSYNC_NS)
    return i < len(composed) and composed[i] <= f.displayed + SAME_VSYNC_NS


def desktop_updates(frames, composed: list[int]) -> list:
    """The dwm.exe presents (``frames``, one swap chain) that no application's frame explains: the
    ones not shown with a composed frame of a captured window. What changed on the desktop then is
    not in the capture (a window PresentMon does not see, the cursor), only that dwm.exe presented;
    the rest of its presents are the model's answer to the windows' frames."""
    return [f for f in frames if not _shows_a_window(f, composed)]


def _compositor(key, frames, source: int, shift: int, period: int, composed: list[int] = ()) -> dict:
    """The [[compositor]] table of a dwm.exe swap chain: its CPU time after the vsync and GPU time
    (the medians of its presents), and a desktop update at the vsync before each of its presents
    that no window's frame explains (:func:`desktop_updates`), with that present's CPU and GPU
    time."""
    app, pid, address = key
    updates = []
    for f in desktop_updates(frames, list(composed)):
        t = f.present_start + shift
        at = t // period * period
        update = {"at": format_duration(at), "cpu": format_duration(t - at)}
        if f.gpu_busy is not None:
            update["work"] = format_duration(max(0, f.gpu_busy))
        updates.append(update)
    cpus = [f.present_start + shift - (f.present_start + shift) // period * period for f in frames]
    works = [f.gpu_busy for f in frames if f.gpu_busy is not None]
    return {"process": app, "pid": pid, "vidpn_source": source, "address": address,
            "cpu": format_duration(round(statistics.median(cpus))),
            "work": format_duration(round(statistics.median(works)) if works else 500_000),
            "update": updates}


# -- TOML ---------------------------------------------------------------------------------------------------

def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"no TOML for {type(v).__name__}")


def _table(lines: list[str], header: str, table: dict, long_lists: tuple[str, ...]) -> None:
    lines.append(header)
    later = []
    for k, v in table.items():
        if k in long_lists:
            later.append((k, v))
        else:
            lines.append(f"{k} = {_value(v)}")
    for k, v in later:
        lines.append(f"{k} = [")
        lines.extend(f"  {_value(x)}," for x in v)
        lines.append("]")


def scenario_toml(scenario: dict, header: str = "") -> str:
    """``scenario`` (as :func:`build_scenario` makes it) as TOML text, one frame or update a line."""
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    for k in ("name", "description", "duration", "seed"):
        if k in scenario:
            lines.append(f"{k} = {_value(scenario[k])}")
    if "adapter" in scenario:
        lines.append("")
        _table(lines, "[adapter]", scenario["adapter"], ())
    if "driver" in scenario:
        lines.append("")
        _table(lines, "[driver]", scenario["driver"], ())
    for comp in scenario.get("compositor", []):
        lines.append("")
        _table(lines, "[[compositor]]", comp, ("update",))
    for proc in scenario["process"]:
        lines.append("")
        _table(lines, "[[process]]", {k: v for k, v in proc.items() if k != "context"}, ())
        for ctx in proc["context"]:
            lines.append("")
            _table(lines, "[[process.context]]", {k: v for k, v in ctx.items() if k != "workload"}, ())
            lines.append("")
            _table(lines, "[process.context.workload]", ctx["workload"], ("frames",))
    return "\n".join(lines) + "\n"
