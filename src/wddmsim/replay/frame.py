"""One present as PresentMon reports it (:class:`Frame`), on a nanosecond clock, and the fields
that follow from others (:func:`complete_frames`): what the capture reader, the writer and the
comparison share.

Spec: PresentMon's console-application README and its CSV output code (GameTechDev/PresentMon:
``PresentMon/CsvOutput.cpp``, ``PresentMon/OutputThread.cpp``), read for what each column means.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Iterable

NA = "NA"
ChainKey = tuple[str, int, str]


@dataclass(frozen=True, kw_only=True)
class Frame:
    """One present (one row of a capture), times in integer nanoseconds.

    Absolute times (``present_start``, ``cpu_start``, ``displayed``) count from the capture's
    origin; the others are durations. None: the capture does not have the value (PresentMon's NA).
    """

    application: str  #: Application: the presenting process's executable name
    pid: int  #: ProcessID
    swap_chain: str  #: SwapChainAddress, the text exactly as in the file
    runtime: str  #: PresentRuntime (v1: Runtime): DXGI, D3D9 or Other
    sync_interval: int  #: SyncInterval (-1: D3D9's default)
    present_flags: int = 0  #: PresentFlags
    allows_tearing: int = 0  #: AllowsTearing
    present_mode: str  #: PresentMode, e.g. "Hardware: Legacy Flip"
    frame_type: str = "Application"  #: FrameType ("Application" where the set has none)
    present_start: int  #: when Present() was called (TimeInQPC, v1 QPCTime)
    in_present: int  #: time inside Present() (MsInPresentAPI)
    cpu_start: int | None = None  #: when the CPU started the frame: the previous present's end
    cpu_busy: int | None = None  #: MsCPUBusy: CPU start to present start
    cpu_wait: int | None = None  #: MsCPUWait: time in Present() (0 on a generated frame's row)
    gpu_latency: int | None = None  #: MsGPULatency: CPU start to the frame's first GPU work
    gpu_time: int | None = None  #: MsGPUTime: GPU start to GPU ready, at least gpu_busy
    gpu_busy: int | None = None  #: MsGPUBusy (v1 msGPUActive): time the GPU worked on the frame
    video_busy: int | None = None  #: MsVideoBusy (v1 msGPUVideoActive)
    displayed: int | None = None  #: when it reached the screen; None: not displayed (dropped)
    until_displayed: int | None = None  #: MsUntilDisplayed: present start to displayed
    between_presents: int | None = None  #: MsBetweenPresents: from the chain's previous present start
    between_display_change: int | None = None  #: MsBetweenDisplayChange: from the chain's previous display
    displayed_time: int | None = None  #: v2 DisplayedTime: until the chain's next display
    render_present_latency: int | None = None  #: MsRenderPresentLatency: present start to GPU ready
    until_render_start: int | None = None  #: v1 msUntilRenderStart: present start to GPU start (signed)
    flip_delay: int | None = None  #: MsFlipDelay
    animation_error: int | None = None  #: MsAnimationError (signed)
    animation_time: int | None = None  #: AnimationTime: CPU start from the trace session's start

    @property
    def key(self) -> ChainKey:
        """The swap chain: (application, pid, swap_chain)."""
        return (self.application, self.pid, self.swap_chain)

    @property
    def swap_chain_address(self) -> int:
        """The swap chain's address as a number (v1 pads it to 16 digits, the others do not)."""
        return int(self.swap_chain, 16)

    @property
    def dropped(self) -> bool:
        """Not displayed (v1's Dropped, NA MsUntilDisplayed in the others)."""
        return self.displayed is None


FRAME_FIELDS = tuple(f.name for f in fields(Frame))


def frames_by_chain(frames: Iterable[Frame]) -> dict[ChainKey, list[Frame]]:
    """The frames of each swap chain, keyed (application, pid, swap_chain) in first-seen order."""
    chains: dict[ChainKey, list[Frame]] = {}
    for f in frames:
        chains.setdefault(f.key, []).append(f)
    return chains


def refresh_period_ns(frames: Iterable[Frame], key: ChainKey | None = None) -> int | None:
    """The display's refresh period: the median (nearest-rank: the lower middle of an even count)
    MsBetweenDisplayChange of the chain ``key``; without a key, of the dwm.exe chains (the
    compositor presents at most once a refresh, and mostly on consecutive ones while anything on
    the desktop changes), else of all frames."""
    frames = list(frames)
    if key is not None:
        pool = [f for f in frames if f.key == key]
    else:
        pool = [f for f in frames if f.application.lower() == "dwm.exe"] or frames
    values = sorted(f.between_display_change for f in pool if f.between_display_change)
    return values[(len(values) + 1) // 2 - 1] if values else None


# --- deriving fields from each other ----------------------------------------------------------------

def _gpu_start(f: dict) -> int | None:
    if f["until_render_start"] is not None:
        return f["present_start"] + f["until_render_start"]
    if f["gpu_latency"] and f["cpu_start"] is not None:
        return f["cpu_start"] + f["gpu_latency"]
    ready = _ready(f, with_gpu=False)
    if ready is not None and f["gpu_time"] is not None and f["gpu_time"] > (f["gpu_busy"] or 0):
        return ready - f["gpu_time"]
    return None


def _ready(f: dict, with_gpu: bool = True) -> int | None:
    if f["render_present_latency"]:
        return f["present_start"] + f["render_present_latency"]
    if with_gpu and f["gpu_latency"] and f["cpu_start"] is not None and f["gpu_time"] is not None \
            and f["gpu_time"] > (f["gpu_busy"] or 0):
        return f["cpu_start"] + f["gpu_latency"] + f["gpu_time"]
    return None


def complete_frames(frames: Iterable[Frame], carried: Iterable[str] = ()) -> list[Frame]:
    """Fill the fields that are None and not in ``carried`` from the others, as PresentMon relates
    them (listed in :mod:`.capture`'s docstring), within each swap chain in present order: e.g. the
    CPU start from the previous present's end, MsBetweenDisplayChange and DisplayedTime from the
    neighbouring displayed frames. Returns the frames in the order given. A model's frames with
    only the basic times (present start, time in Present(), displayed, GPU busy) get the rest."""
    carried = frozenset(carried)
    frames = list(frames)
    out: list[Frame | None] = [None] * len(frames)
    chains: dict[ChainKey, list[int]] = {}
    for i, fr in enumerate(frames):
        chains.setdefault(fr.key, []).append(i)
    for indices in chains.values():
        indices.sort(key=lambda i: frames[i].present_start)
        rows = [{n: getattr(frames[i], n) for n in FRAME_FIELDS} for i in indices]

        def fill(f: dict, name: str, value) -> None:
            if f[name] is None and name not in carried and value is not None:
                f[name] = value

        prev = None
        for f in rows:
            if prev is not None:
                # the row before is the chain's previous present (to 1 us: the ms text's rounding)
                adjacent = f["between_presents"] is None or \
                    abs(prev["present_start"] - (f["present_start"] - f["between_presents"])) <= 1000
                if adjacent:  # v1: the CPU start is the previous present's end
                    fill(f, "cpu_start", prev["present_start"] + prev["in_present"])
                fill(f, "between_presents", max(0, f["present_start"] - prev["present_start"]))
            if f["cpu_start"] is not None:
                fill(f, "cpu_busy", max(0, f["present_start"] - f["cpu_start"]))
            fill(f, "cpu_wait", f["in_present"])
            if f["displayed"] is not None:
                fill(f, "until_displayed", f["displayed"] - f["present_start"])
            gpu_start, ready = _gpu_start(f), _ready(f)
            if gpu_start is not None:
                fill(f, "until_render_start", gpu_start - f["present_start"])
            if ready is not None:
                fill(f, "render_present_latency", ready - f["present_start"])
            if f["gpu_busy"] is not None:
                if f["cpu_start"] is not None:
                    fill(f, "gpu_latency", max(0, gpu_start - f["cpu_start"]) if gpu_start is not None else 0)
                duration = ready - gpu_start if ready is not None and gpu_start is not None else 0
                fill(f, "gpu_time", max(f["gpu_busy"], duration))
            if f["present_start"] != (prev or {}).get("present_start"):
                prev = f
        shown = [f for f in rows if f["displayed"] is not None]
        for before, after in zip(shown, shown[1:]):
            gap = after["displayed"] - before["displayed"]
            fill(after, "between_display_change", gap if gap > 0 else None)
            fill(before, "displayed_time", gap if gap > 0 else None)
        for i, f in zip(indices, rows):
            out[i] = Frame(**f)
    return out  # type: ignore[return-value]
