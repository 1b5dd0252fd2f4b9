"""The workload tables of a scenario (a context's ``workload``): what a context submits, told apart
by ``kind`` (frame_loop, swap_chain, compute_batch, copy_stream, memory_pressure, bursty, script,
chain); :mod:`wddmsim.workloads` runs them. Each table checks its own fields; what needs the rest of
the scenario (a fence a script names, a repeat against the run's duration) is checked by
:mod:`.consistency`.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union, get_args

from pydantic import Field, field_validator, model_validator

from ..util.units import format_duration, format_size
from .bounds import MAX_COUNT
from .fields import (MAX_COPY, U32, U64, WHY_CALLS, WHY_COPY, WHY_COUNT, WHY_FENCE_VALUE, WHY_FPS, WHY_LATENCY,
                     WHY_LIST_BIG, WHY_SOURCE, Duration, Period, ScenarioModel, entries_in, int_in, ns, ordered,
                     real_in, size_in)

__all__ = [
    "WORKLOAD_KINDS", "AllocationCall", "Bursty", "Chain", "ComputeBatch", "CopyStream", "FpsChange", "FrameLoop",
    "MemoryPressure", "Script", "ScriptPacket", "SwapChain", "SwapFrame", "Workload",
]



class _Workload(ScenarioModel):
    #: when the generator starts, from the beginning of the run
    start: Duration = 0
    #: how many units (frames, batches, copies, bursts) to submit; None runs until the end
    count: int_in(1, MAX_COUNT, WHY_COUNT) | None = None


class FpsChange(ScenarioModel):
    """A change of a frame loop's target rate (a game leaving its menu, a frame limiter)."""

    #: from when, measured from the workload's ``start``: frame slots from then on are 1/fps apart
    at: Duration
    fps: real_in(0, 1000, WHY_FPS, lo_open=True)


class FrameLoop(_Workload):
    """A game or renderer: frames at a target rate, each a few packets, usually ending in a
    present. ``count`` is a number of frames."""

    kind: Literal["frame_loop"] = "frame_loop"
    fps: real_in(0, 1000, WHY_FPS, lo_open=True)
    packets_per_frame: int_in(1, 1000, "the model's limit on one frame's packets") = 1
    #: GPU time each packet takes
    work: Duration
    #: relative random variation of ``work``: 0.1 lets a packet take 90% to 110% of it
    jitter: real_in(0, 1, "a relative variation: 0 (none) up to, not including, 1 (work never goes to 0)",
                  hi_open=True) = 0.0
    present: bool = True
    #: how a frame reaches the screen: "blt" (DxgkDdiPresent copies to the primary), "flip"
    #: (DxgkDdiPresent flips the back buffer; the engine waits for the vsync), "flip_no_wait" (the
    #: flip waits in the display's flip registers instead), "composed" (a copy into the
    #: compositor's surface, Flags.RedirectedPresent)
    present_mode: Literal["blt", "flip", "flip_no_wait", "composed"] = "blt"
    #: vsyncs per flip (the FlipInterval): 0 immediate, 1..4
    sync_interval: int_in(0, 4, "a present's FlipInterval: immediate (0) or up to four vsyncs (D3DDDI_FLIPINTERVAL_FOUR)") = 1
    #: the VidPn source (index into adapter.displays) the frames go to
    vidpn_source: int_in(0, 15, WHY_SOURCE) = 0
    #: frames that may be queued (presented, not yet retired) before the present blocks
    max_frame_latency: int_in(1, 16, WHY_LATENCY) = 3
    #: later target rates, in increasing ``at`` order
    fps_changes: Annotated[list[FpsChange], entries_in(0, 64, "the model's limit on one frame loop's rate changes")] = \
        Field(default_factory=list)

    @field_validator("fps_changes")
    @classmethod
    def _in_order(cls, value: list[FpsChange]) -> list[FpsChange]:
        return ordered(value, strict=True)


class SwapFrame(ScenarioModel):
    """One frame of a swap chain's application: when its CPU work starts, how long the CPU works
    before the present call, when during that the frame's rendering is submitted, and how much GPU
    time the rendering takes (a replayed capture gives these per frame)."""

    #: when the frame's CPU work starts, from the workload's ``start`` (the application starts it
    #: then, or as soon as its previous present call returned, whichever is later)
    start: Duration
    #: CPU time from the frame's start to its present call (PresentMon's MsCPUBusy)
    cpu: Duration = 0
    #: GPU time of the frame's rendering (0: the frame renders nothing before its present)
    gpu: Duration = 0
    #: when the rendering is submitted, from the frame's start (at most ``cpu``; default: at the
    #: present call)
    submit: Duration | None = None


class SwapChain(_Workload):
    """An application presenting through a graphics runtime's swap chain, whose present mode the
    OS and the compositor decide (see :mod:`wddmsim.workloads.swapchain`): frames at ``fps`` (each
    ``cpu`` then ``work``), or the explicit ``frames`` of a replayed capture. ``count`` is a
    number of frames (with ``fps``)."""

    kind: Literal["swap_chain"] = "swap_chain"
    #: the runtime that presents: "DXGI", "D3D9", or "Other" (one PresentMon sees no present
    #: calls of: OpenGL, Vulkan, GDI)
    runtime: Literal["DXGI", "D3D9", "Other"] = "DXGI"
    #: how the swap chain presents: "flip" (flip model: the compositor takes its buffers, or they
    #: flip to the screen when it steps aside), "copy" (blt model: each present is a copy into the
    #: window's redirection surface), "exclusive" (a full-screen exclusive swap chain that flips
    #: itself and owns the display)
    swap_effect: Literal["flip", "copy", "exclusive"] = "flip"
    #: the window covers the whole display (a flip-model swap chain may then flip independently)
    fullscreen: bool = False
    #: the application's sync interval: -1 (the runtime's default, which PresentMon shows for
    #: D3D9 and other runtimes that do not report one), 0 (do not wait for a vsync), 1..4
    sync_interval: int_in(-1, 4, "DXGI's SyncInterval (0: no wait, up to 4 vsyncs), or -1 for the runtime's default") = 1
    #: DXGI_PRESENT_ALLOW_TEARING: with sync interval 0, an independent flip is immediate
    allows_tearing: bool = False
    #: the application's present flags, reported as PresentMon's PresentFlags
    present_flags: int_in(0, U32, "PresentMon's PresentFlags: a 32-bit mask") = 0
    #: the swap chain's address as PresentMon shows it (e.g. "0x1BF098B1ED0"); default: made from
    #: the context handle and the VidPn source
    address: str | None = Field(default=None, pattern=r"^0x[0-9A-Fa-f]{1,16}$")
    #: the VidPn source (index into adapter.displays) it presents to
    vidpn_source: int_in(0, 15, WHY_SOURCE) = 0
    #: frames that may be queued (presented, not yet retired) before the present blocks
    max_frame_latency: int_in(1, 16, WHY_LATENCY) = 3
    #: frames per second (with ``cpu`` and ``work``), when ``frames`` is empty
    fps: real_in(0, 1000, WHY_FPS, lo_open=True) | None = None
    cpu: Duration = 0
    work: Duration = 0
    #: explicit frames (a replayed capture), in increasing ``start`` order
    frames: Annotated[list[SwapFrame], entries_in(0, 1_000_000, WHY_LIST_BIG)] = Field(default_factory=list)

    @model_validator(mode="after")
    def _frames_or_fps(self) -> SwapChain:
        if not self.frames and self.fps is None:
            raise ValueError("a swap chain needs fps (frames at a rate) or frames (explicit frames)")
        if self.frames and self.fps is not None:
            raise ValueError("give fps or frames, not both")
        for i in range(1, len(self.frames)):
            if self.frames[i].start < self.frames[i - 1].start:
                raise ValueError(f"frames[{i}].start must not be earlier than frames[{i - 1}].start")
        for i, f in enumerate(self.frames):
            if f.submit is not None and f.submit > f.cpu:
                raise ValueError(f"frames[{i}].submit ({format_duration(f.submit)}) is after the present call "
                                 f"(cpu = {format_duration(f.cpu)})")
        return self


class ComputeBatch(_Workload):
    """A compute job: flushes of ``batch`` packets, the next flush waiting for the previous to
    finish plus ``interval``. ``count`` is a number of batches."""

    kind: Literal["compute_batch"] = "compute_batch"
    batch: int_in(1, 100_000, "the model's limit on one flush") = 8
    work: Duration
    interval: Duration = 0
    #: wait for the batch's last packet before the interval (false: submit the next batch after
    #: the interval whatever the GPU did, a deep asynchronous queue)
    sync: bool = True
    #: at most this many of its packets in flight: before each submission, wait for the packet
    #: ``window`` back to retire (a sliding window, drm_sched's interleaved submitters); None: no limit
    window: int_in(1, 1_000_000, "the model's limit on packets in flight") | None = None


class CopyStream(_Workload):
    """A transfer of ``size`` bytes every ``interval``, such as streaming uploads. ``count`` is a
    number of copies."""

    kind: Literal["copy_stream"] = "copy_stream"
    size: size_in(1, MAX_COPY, WHY_COPY)
    interval: Duration = ns("1ms")



class AllocationCall(ScenarioModel):
    """An application call on some of its workload's allocations at a time."""

    at: Duration
    #: the allocations, by their index in the workload (0 is the first)
    allocations: Annotated[list[int_in(0, 255, "an index into the workload's allocations (256 at most)")],
                           entries_in(1, 256, "a call names each of the workload's allocations at most once")]


class MemoryPressure(_Workload):
    """An application whose allocations do not all fit in video memory: each packet fills
    ``touch`` of its ``allocations`` (taken in turn) with a pattern of their own, then does ``work``,
    so VidMm keeps evicting and paging in. ``count`` is a number of packets."""

    kind: Literal["memory_pressure"] = "memory_pressure"
    allocations: int_in(1, 256, "the model's limit on one workload's allocations")
    size: size_in(4, MAX_COPY, "one fill command fills the allocation in 4-byte words, and 64MiB is the largest command")
    touch: int_in(1, 256, "allocations one packet fills, no more than allocations") = 1
    work: Duration = 0
    interval: Duration = ns("1ms")
    #: where the allocations prefer to live: "memory" (video memory, moved by TRANSFERs) or
    #: "aperture" (system memory the GPU reaches through the aperture, mapped and unmapped)
    segment: Literal["memory", "aperture"] = "memory"
    #: D3DKMTOfferAllocations at these times: the offered allocations are not touched until
    #: reclaimed, and VidMm may evict them without keeping their content
    offer: Annotated[list[AllocationCall], entries_in(0, 10_000, WHY_CALLS)] = Field(default_factory=list)
    #: D3DKMTReclaimAllocations2 at these times (each result is in the ReclaimAllocations event)
    reclaim: Annotated[list[AllocationCall], entries_in(0, 10_000, WHY_CALLS)] = Field(default_factory=list)

    @model_validator(mode="after")
    def _touch_fits(self) -> MemoryPressure:
        if self.touch > self.allocations:
            raise ValueError(f"touch ({self.touch}) cannot exceed allocations ({self.allocations})")
        for name in ("offer", "reclaim"):
            for i, call in enumerate(getattr(self, name)):
                bad = [x for x in call.allocations if not 0 <= x < self.allocations]
                if bad:
                    raise ValueError(f"{name}[{i}].allocations: index {bad[0]} names no allocation "
                                     f"(0..{self.allocations - 1})")
        if self.size <= 0 or self.size % 4 or self.size > MAX_COPY:
            raise ValueError(f"size must be a positive multiple of 4 bytes up to {format_size(MAX_COPY)}")
        return self


class Bursty(_Workload):
    """Bursts of packets separated by idle gaps drawn from an exponential distribution, such as
    UI or browser work. ``count`` is a number of bursts."""

    kind: Literal["bursty"] = "bursty"
    burst: int_in(1, 100_000, "the model's limit on one burst") = 4
    work: Duration
    #: mean of the exponentially distributed idle time between bursts
    mean_gap: Period


class ScriptPacket(ScenarioModel):
    """One hand-placed submission of a script workload."""

    #: submit time, from the workload's ``start``
    at: Duration
    work: Duration
    #: how many identical packets to submit at that moment
    repeat: int_in(1, None, "packets at that moment: above 1,000,000 it is cut to the submissions the run "
                          "has time for, or refused when more than that fit") = 1
    #: submit with Flags.NullRendering: the fence completes, the GPU executes none of it
    null_rendering: bool = False
    #: the packet waits until the monitored fence ``wait_fence`` (a [[fence]] name) reaches
    #: ``wait_value`` (GPU virtual addressing): ``wait_by`` "os" holds it in the OS
    #: (D3DKMTWaitForSynchronizationObjectFromGpu), "gpu" puts a WAIT command at its head
    #: (hardware scheduling only)
    wait_fence: str | None = Field(default=None, min_length=1)
    wait_value: int_in(0, U64, WHY_FENCE_VALUE) = 0
    wait_by: Literal["os", "gpu"] = "os"
    #: the packet's buffer ends with the GPU's write of ``signal_value`` to ``signal_fence`` (of a
    #: native fence: its CurrentValue, with the CPU interrupt only above its MonitoredValue)
    signal_fence: str | None = Field(default=None, min_length=1)
    signal_value: int_in(0, U64, WHY_FENCE_VALUE) = 0
    #: each repeat signals ``signal_step`` more than the one before (``signal_value`` first)
    signal_step: int_in(0, U32, "the step between repeats' signals: a 32-bit number") = 0

    def fences(self) -> list[str]:
        return [f for f in (self.wait_fence, self.signal_fence) if f is not None]


class Script(_Workload):
    """An exact list of submissions, for reproducing a situation by hand. Takes no ``count``."""

    kind: Literal["script"] = "script"
    packets: Annotated[list[ScriptPacket], entries_in(1, 100_000, "the model's limit on one script's "
                                                                 "hand-placed submissions")]

    @field_validator("count")
    @classmethod
    def _no_count(cls, value: int | None) -> int | None:
        if value is not None:
            raise ValueError("a script workload takes no count; its packets list is the whole of it")
        return value


class Chain(_Workload):
    """One member of a chain of GPU work passed along through a monitored fence (GPU virtual
    addressing): the chain's packets are numbered 0, 1, 2, ... and dealt round robin to its
    ``members`` contexts; this context runs those at ``position``, ``position + members``, ... .
    Packet k waits until the ``fence`` reaches k, does ``work``, and its buffer ends with the
    GPU's write of k + 1. With two members it is a ping-pong. Everything is submitted at once (the
    OS or the GPU holds each packet until its turn) unless ``window`` bounds the member's packets
    in flight; ``count`` is how many packets this member runs. ``wait``: "os" (D3DKMTWaitForSynchronizationObjectFromGpu: the OS holds the context's or
    queue's later buffers) or "gpu" (a WAIT command at the head of the buffer: the engine, or under
    hardware scheduling the queue, stalls on it)."""

    kind: Literal["chain"] = "chain"
    fence: str = Field(min_length=1)
    members: int_in(1, 64, "the model's limit on one chain's contexts")
    position: int_in(0, 63, "a member's place in its chain, below members")
    work: Duration
    wait: Literal["os", "gpu"] = "os"
    #: at most this many of the member's packets in flight: before each submission, wait for its
    #: packet ``window`` back to retire (a long chain submitted as it runs); None: all at once
    window: int_in(1, 1_000_000, "the model's limit on packets in flight") | None = None

    @model_validator(mode="after")
    def _position_fits(self) -> Chain:
        if self.position >= self.members:
            raise ValueError(f"position ({self.position}) must be below members ({self.members})")
        if self.count is None:
            raise ValueError("a chain member needs count (how many packets it runs)")
        return self


#: Any workload, told apart by its ``kind`` key.
Workload = Annotated[
    Union[FrameLoop, SwapChain, ComputeBatch, CopyStream, MemoryPressure, Bursty, Script, Chain], Field(discriminator="kind")
]

#: The values ``kind`` may take in a workload table.
WORKLOAD_KINDS: tuple[str, ...] = tuple(
    get_args(member.model_fields["kind"].annotation)[0]
    for member in get_args(get_args(Workload)[0])
)
