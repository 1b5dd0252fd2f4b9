"""The shape of a scenario: pydantic models for every table a scenario file may contain.

A scenario describes one simulated machine and what runs on it: the adapter (DDI version, engines
as nodes, memory segments, CPU costs of the driver's callbacks), the OS scheduler's policy, and the
processes with their GPU contexts, each driven by a workload generator. The field names here are
the TOML keys, one for one, and the simulator reads these models directly.

Three layers of checking happen here:

* per field: types (strict, so ``"5"`` is not an integer), ranges, enumerations, and the unit
  syntax of durations and sizes (:mod:`wddmsim.units`), which arrive as ``int``
  nanoseconds and bytes;
* per adapter: names that must be unique and the node and segment kinds an adapter must have;
* per scenario, once every field is valid: contexts naming nodes that exist and names that must
  be unique among processes and among a process's contexts.

The two cross-field layers report every problem they find in one pydantic error of type
:data:`CONFLICT_ERROR`, whose context carries the individual problems with their own field
locations; :mod:`wddmsim.scenario.loader` unpacks them into one message each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Annotated, Literal, Union, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PrivateAttr, field_validator, model_validator
from pydantic_core import PydanticCustomError

from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.ddi.versions import VERSIONS

from ..units import format_duration, format_size, parse_duration, parse_size
from .bounds import (MAX_COUNT, MAX_DURATION, MAX_REPEAT, MAX_STORM_INTERRUPTS, MIN_STORM_INTERVAL, RUN_DURATION,
                     SECOND, WHY_CPU, WHY_RUN_TIME, In, show)

__all__ = [
    "CALL_APIS",
    "CONFLICT_ERROR",
    "DDI_VERSION_NAMES",
    "ENGINES",
    "PROCESS_PRIORITIES",
    "WORKLOAD_KINDS",
    "AdapterTable",
    "Bursty",
    "Call",
    "ComputeBatch",
    "Context",
    "CopyStream",
    "CpuCostTable",
    "Duration",
    "FrameLoop",
    "Location",
    "Node",
    "ProcessTable",
    "Scenario",
    "Scheduler",
    "Script",
    "ScriptPacket",
    "Segment",
    "Size",
    "SwapChain",
    "SwapFrame",
    "Compositor",
    "Workload",
    "cross_field_problems",
    "field_path",
]


def _time(lo: int = 0, hi: int = MAX_DURATION, why: str = WHY_RUN_TIME, lo_open: bool = False) -> Any:
    """A span of virtual time in ``lo`` .. ``hi`` ns, written ``"2ms"``, ``"250us"`` or as int ns."""
    return Annotated[int, BeforeValidator(parse_duration), In(lo, hi, why, "time", lo_open)]


def _size(lo: int, hi: int, why: str, lo_open: bool = False) -> Any:
    """A byte count in ``lo`` .. ``hi``, written ``"64KiB"``, ``"4096"`` or as an int."""
    return Annotated[int, BeforeValidator(parse_size), In(lo, hi, why, "size", lo_open)]


def _int(lo: int | None, hi: int | None, why: str) -> Any:
    """An integer in ``lo`` .. ``hi``."""
    return Annotated[int, In(lo, hi, why)]


def _real(lo: float, hi: float, why: str, lo_open: bool = False, hi_open: bool = False) -> Any:
    """A finite number in the range (``lo_open``/``hi_open``: the limit itself excluded)."""
    return Annotated[float, Field(allow_inf_nan=False), In(lo, hi, why, "", lo_open, hi_open)]


def _entries(lo: int, hi: int, why: str) -> In:
    """The range of a list's length."""
    return In(lo, hi, why, "entries")


#: A span of virtual time within a run: written as ``"2ms"``, ``"250us"`` or int nanoseconds; held
#: as int ns, 0 .. 1 hour.
Duration = _time()
#: A byte count: written as ``"64KiB"``, ``"4096"`` or an int; held as int bytes.
Size = Annotated[int, BeforeValidator(parse_size)]
#: A span of virtual time that must be longer than zero (a period, a quantum, a timeout).
Period = _time(0, MAX_DURATION, "a span that must last, within the longest run (1 hour of virtual time)", True)

_U32 = (1 << 32) - 1
_U64 = (1 << 64) - 1
_WHY_PID = "a Windows process id is a 32-bit number other than 0"
_WHY_COUNT = ("a count that high is never reached within a run: leave it out to run until the end")
_WHY_GPU_TIME = WHY_RUN_TIME
_WHY_FPS = "frames per second; no display and no frame limiter goes past 1000"
_WHY_SOURCE = "an index into adapter.displays, which holds at most 16"
_WHY_LATENCY = "what DXGI's SetMaximumFrameLatency accepts"
_WHY_FENCE_VALUE = "a monitored fence's value is a 64-bit unsigned number"
_WHY_COPY = "the bytes of one fill or copy command, the largest the model builds"

#: Where a value sits in the scenario: table keys and array indexes, as pydantic reports them.
Location = tuple[Union[str, int], ...]

#: The pydantic error type that carries every cross-field problem of one model at once.
CONFLICT_ERROR = "scenario_conflict"

#: The ``DXGKDDI_INTERFACE_VERSION`` names an adapter may declare, oldest first.
DDI_VERSION_NAMES: tuple[str, ...] = (
    tuple(VERSIONS) if isinstance(VERSIONS, Mapping) else tuple(v.name for v in VERSIONS)
)

EngineKind = Literal[
    "3d", "compute", "copy", "video_decode", "video_encode", "video_processing", "other"
]
ProcessPriority = Literal["idle", "below_normal", "normal", "above_normal", "high", "realtime"]

#: The engine kinds a node may have.
ENGINES: tuple[str, ...] = get_args(EngineKind)
#: The scheduling priority classes a process may have, lowest first.
PROCESS_PRIORITIES: tuple[str, ...] = get_args(ProcessPriority)

_PAGE = 4096
_MAX_COPY = 64 << 20


def _ns(text: str) -> int:
    return parse_duration(text)


def _quoted(names: Sequence[str]) -> str:
    return ", ".join(repr(n) for n in names)


def field_path(loc: Sequence[str | int]) -> str:
    """A pydantic location written the way the TOML file spells it: ``process[0].context[2]
    .workload.fps``. The tag segment pydantic inserts below a workload (``frame_loop``) is left
    out, since the file has no table of that name."""
    out = ""
    previous: str | int | None = None
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif previous == "workload" and part in WORKLOAD_KINDS:
            pass
        else:
            out += f".{part}" if out else part
        previous = part
    return out


def _conflicts(problems: list[tuple[Location, str]]) -> PydanticCustomError:
    """One pydantic error holding several cross-field problems, each with its location relative
    to the model that found them."""
    summary = "; ".join(f"{field_path(loc) or '(top)'}: {msg}" for loc, msg in problems)
    return PydanticCustomError(
        CONFLICT_ERROR, "{summary}", {"summary": summary, "problems": tuple(problems)}
    )


class ScenarioModel(BaseModel):
    """Base of every scenario table: unknown keys are errors, values are taken strictly (a TOML
    string is never silently turned into a number or a boolean), and assigning a field validates
    the new value (and the table's cross-field checks) the way loading does."""

    model_config = ConfigDict(extra="forbid", strict=True, validate_assignment=True)

    def __setattr__(self, name: str, value: Any) -> None:
        # pydantic keeps a value that only the table's own checks (an after model validator) refuse
        # (pydantic issue #7105); a refused assignment leaves the table as it was.
        before = dict(self.__dict__)
        try:
            super().__setattr__(name, value)
        except ValueError:  # pydantic's ValidationError is one
            self.__dict__.clear()
            self.__dict__.update(before)
            raise


# --------------------------------------------------------------------------------------- adapter


_Cpu = _time(0, SECOND, WHY_CPU)


class CpuCostTable(ScenarioModel):
    """The ``[adapter.cpu_cost]`` table: CPU time the kernel-mode side spends in each driver
    callback, charged to the simulated CPU whenever the callback runs. Every cost may be zero."""

    render: _Cpu = _ns("5us")  #: building one command buffer (DxgkDdiRender)
    patch: _Cpu = _ns("1us")  #: patching allocation addresses into a DMA buffer
    submit: _Cpu = _ns("2us")  #: handing a DMA buffer to the hardware queue
    isr: _Cpu = _ns("1us")  #: the interrupt service routine
    dpc: _Cpu = _ns("2us")  #: the deferred procedure call after an interrupt
    present: _Cpu = _ns("5us")  #: queuing a present (flip or blit)


def _moved(key: str, where: str = ""):
    """A former adapter key, now the driver's: any value is an error saying where it goes."""
    def refuse(value):
        raise ValueError(f"the driver's setting now, not the adapter's: write it in the [driver] table as "
                         f"{where}{key} (the OS learns it from the driver's DXGK_DRIVERCAPS and node metadata)")
    return Annotated[Any, BeforeValidator(refuse), Field(default=None, exclude=True)]


_WHY_QUEUE_DEPTH = "the model's limit on a hardware queue (VidSch's queue of submitted packets)"


class Node(ScenarioModel):
    """One GPU engine the scheduler sees as a node with its own hardware queue."""

    name: str = Field(min_length=1)
    engine: EngineKind
    #: packets the hardware queue holds; None takes the adapter's ``hw_queue_depth``
    hw_queue_depth: _int(1, 64, _WHY_QUEUE_DEPTH) | None = None
    #: bytes per nanosecond the engine moves in fill and copy commands
    copy_bandwidth: _real(0, 10_000, "bytes per nanosecond; 10000 (10 TB/s) is past any GPU's "
                                     "memory", lo_open=True) = 16.0
    #: time the engine spends fetching and decoding one command packet
    command_cost: _time(0, SECOND, "engine time per command packet: longer than 1s would be a hang") = _ns("100ns")
    #: where a preemption request stops the engine: "none" (runs everything queued), "dma_buffer"
    #: (finishes the running DMA buffer), "primitive" (finishes the running command) or
    #: "interval" (stops a WORK command at the next multiple of preemption_interval) or
    #: "instruction" (stops a WORK command where it is)
    preemption: Literal["none", "dma_buffer", "primitive", "interval", "instruction"] = "dma_buffer"
    preemption_interval: Period = _ns("100us")
    #: time the engine spends saving the state of a buffer it stopped mid-way (busy time, before
    #: the preemption is reported)
    preemption_save: Duration = 0
    #: VidSch's first SubmissionFenceId on this node (a 32-bit id, which wraps to 0 after
    #: 2**32 - 1): start near the top to run across the wrap
    first_fence_id: _int(1, _U32, "a SubmissionFenceId is 32 bits and 0 is never one") = 1
    #: hardware scheduling: how many hardware queues the engine's scheduler can hold mapped at once
    #: (its slots); more queues than slots are mapped and unmapped as they go idle. Unset: no limit
    hw_queue_slots: _int(1, 1024, "hardware queues an engine's scheduler holds mapped at once: the model's "
                                  "limit, past any GPU's") | None = None
    # Moved to the driver's settings ([driver.engines.<name>]):
    ring_size: _moved("ring_size", "engines.<node name>.")
    ring_buffer_fence_release: _moved("ring_buffer_fence_release", "engines.<node name>.")
    max_in_flight_hw_queue_buffers: _moved("max_in_flight_hw_queue_buffers", "engines.<node name>.")


_WHY_SEGMENT = ("DXGK_SEGMENTDESCRIPTOR.Size is a SIZE_T of whole 4KiB pages; the model stops at 1TiB, past any "
                "GPU's memory")


class Segment(ScenarioModel):
    """One memory segment the video memory manager places allocations in."""

    name: str = Field(min_length=1)
    kind: Literal["memory", "aperture"]
    size: _size(_PAGE, 1 << 40, _WHY_SEGMENT)
    cpu_visible: bool = False
    #: how much of the segment VidMm may use (its residency budget); unset: all of it
    budget: _size(_PAGE, 1 << 40, _WHY_SEGMENT) | None = None

    @model_validator(mode="after")
    def _budget_fits(self) -> Segment:
        if self.budget is not None and (self.budget <= 0 or self.budget % _PAGE or self.budget > self.size):
            raise ValueError(f"budget must be a positive multiple of 4096 bytes no larger than size ({self.size})")
        return self

    @field_validator("size")
    @classmethod
    def _whole_pages(cls, value: int) -> int:
        if value <= 0 or value % _PAGE:
            raise ValueError(f"must be a positive multiple of 4096 bytes, got {value}")
        return value


def _default_nodes() -> list[Node]:
    return [
        Node(name="3D", engine="3d"),
        Node(name="Compute", engine="compute"),
        Node(name="Copy", engine="copy"),
    ]


def _default_segments() -> list[Segment]:
    return [
        Segment(name="VRAM", kind="memory", size=256 << 20, cpu_visible=False),
        Segment(name="Aperture", kind="aperture", size=64 << 20, cpu_visible=True),
    ]


_BandTime = _time(0, 60 * SECOND, "a band's grace period or quantum; a minute is far past the TDR delay "
                                      "(2s by default), the model's limit")


class BandTimes(ScenarioModel):
    """One time per priority band (DXGK_SCHEDULING_PRIORITY_BAND)."""

    idle: _BandTime = 0
    normal: _BandTime = 0
    focus: _BandTime = 0
    realtime: _BandTime = 0


def _quanta() -> "BandTimes":
    return BandTimes(idle=2_000_000, normal=2_000_000, focus=2_000_000, realtime=2_000_000)


class Bands(ScenarioModel):
    """DXGKARG_SETUPPRIORITYBANDS (hardware scheduling); times are rounded down to 100 ns."""

    #: grace period when a context of this band preempts a lower band (ignored for idle)
    grace: BandTimes = Field(default_factory=BandTimes)
    #: default quantum between processes inside the band
    quantum: BandTimes = Field(default_factory=_quanta)
    #: grace period when processes inside the band preempt each other
    process_grace: BandTimes = Field(default_factory=BandTimes)
    #: targetNormalBandPercentage: share of the GPU kept for the normal band when focus starves it
    normal_share: _int(0, 50, "targetNormalBandPercentage: the model keeps at most half the GPU for the normal band") = 10


class AdapterTable(ScenarioModel):
    """The ``[adapter]`` table, the display adapter: the GPU (its nodes, segments and displays) and
    the OS's settings for it (scheduling, GPU virtual addressing, VidSch's queue depth, modelled CPU
    costs). The driver's own settings are in the scenario's ``[driver]`` table: the OS learns the
    driver's capabilities from the driver, at adapter start."""

    #: packets each node's hardware queue holds (VidSch)
    hw_queue_depth: _int(1, 64, _WHY_QUEUE_DEPTH) = 2
    cpu_cost: CpuCostTable = Field(default_factory=CpuCostTable)
    #: the VidPn sources: one display per entry, its refresh rate in Hz
    displays: Annotated[list[_real(0, 1000, "a refresh rate in Hz; no display refreshes past 1000 Hz",
                                   lo_open=True)],
                        _entries(1, 16, "VidPn sources: the model's limit on displays per adapter")] = Field(
        default_factory=lambda: [60.0])
    #: the display controller's pending-flip registers per source (what a driver reports as
    #: DXGK_DRIVERCAPS.MaxQueuedFlipOnVSync)
    max_queued_flips: _int(1, 16, "DXGK_DRIVERCAPS.MaxQueuedFlipOnVSync: pending-flip registers per "
                                  "source, the model's limit") = 1
    #: every submission sets Flags.NullRendering: an infinitely fast GPU, leaving the submission
    #: path's own cost
    null_rendering: bool = False
    nodes: Annotated[list[Node], _entries(1, 64, "engines an adapter reports as nodes: the model's "
                                                 "limit")] = Field(default_factory=_default_nodes)
    segments: Annotated[list[Segment], _entries(0, 32, "DXGK_QUERYSEGMENTOUT's segments: 32 at most (the "
                                                       "model's limit); an adapter needs a memory and an aperture "
                                                       "segment")] = Field(
        default_factory=_default_segments)
    #: "software": the OS's scheduler picks packets (DxgkDdiSubmitCommand, or
    #: DxgkDdiSubmitCommandVirtual with gpu_va); "hardware": WDDM 2.x hardware scheduling with GPU
    #: virtual addresses, hardware queues and monitored fences (DxgkDdiSubmitCommandToHwQueue; the
    #: driver must report ContextSchedulingSupported on every node, WDDM 2.5 or later)
    scheduling: Literal["software", "hardware"] = "software"
    #: GPU virtual addressing (WDDM 2.0 GpuMmu): per-process page tables, command buffers at GPU
    #: virtual addresses submitted through DxgkDdiSubmitCommandVirtual, monitored fences (the
    #: driver must report VirtualAddressingSupported). Unset: on with hardware scheduling (which
    #: needs it), off otherwise
    gpu_va: bool | None = None
    #: hardware scheduling: the priority bands' grace periods and quanta
    bands: Bands = Field(default_factory=Bands)
    #: "timed": each engine runs its work in its modelled time; "stepped": an engine runs nothing
    #: until a StepEngine call (``[[call]]``) lets it through the next submissions, each at once
    #: (the manual-advance GPU of scheduler tests)
    engine_mode: Literal["timed", "stepped"] = "timed"
    #: stop the adapter's GPU scheduler at this time, with whatever work is pending (the OS's
    #: adapter stop, dxgkrnl/adapterstop.py): queued packets are cancelled, the driver's are reset,
    #: every device goes to error. Software scheduler only
    stop_at: Duration | None = None
    # Moved to the driver's settings ([driver]):
    ddi_version: _moved("ddi_version")
    multi_engine_aware: _moved("multi_engine_aware")
    ring_size: _moved("ring_size")
    dma_buffer_size: _moved("dma_buffer_size")
    preemption_aware: _moved("preemption_aware")
    per_engine_reset: _moved("per_engine_reset")
    cancel_aware: _moved("cancel_aware")
    no64bit_atomics: _moved("no64bit_atomics")

    @model_validator(mode="after")
    def _consistent(self) -> AdapterTable:
        problems: list[tuple[Location, str]] = []
        first_node: dict[str, int] = {}
        first_3d: int | None = None
        for i, node in enumerate(self.nodes):
            if node.name in first_node:
                problems.append(
                    (("nodes", i, "name"),
                     f"duplicate node name {node.name!r} (nodes[{first_node[node.name]}] has it)")
                )
            else:
                first_node[node.name] = i
            if node.engine == "3d":
                if first_3d is None:
                    first_3d = i
                else:
                    problems.append(
                        (("nodes", i, "engine"),
                         f"a second node with engine '3d' (nodes[{first_3d}] is one already); "
                         "an adapter has exactly one")
                    )
        if first_3d is None:
            problems.append(
                (("nodes",), "an adapter needs exactly one node with engine '3d', found none")
            )
        if self.scheduling == "hardware" and self.stop_at is not None:
            problems.append((("stop_at",), "an adapter stop is modelled under the software scheduler only; "
                                           "remove stop_at or use scheduling = \"software\""))
        if self.scheduling == "hardware" and self.gpu_va is False:
            problems.append((("gpu_va",), "hardware scheduling always uses GPU virtual addresses; "
                                          "remove gpu_va = false or use scheduling = \"software\""))
        first_segment: dict[str, int] = {}
        for i, segment in enumerate(self.segments):
            if segment.name in first_segment:
                problems.append(
                    (("segments", i, "name"),
                     f"duplicate segment name {segment.name!r} "
                     f"(segments[{first_segment[segment.name]}] has it)")
                )
            else:
                first_segment[segment.name] = i
        kinds = {segment.kind for segment in self.segments}
        for kind in ("memory", "aperture"):
            if kind not in kinds:
                problems.append(
                    (("segments",), f"an adapter needs at least one segment of kind {kind!r}")
                )
        if problems:
            raise _conflicts(problems)
        return self

    def node(self, name: str) -> Node:
        """The node called ``name``; :class:`KeyError` when there is none."""
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(name)


class Scheduler(ScenarioModel):
    """The OS GPU scheduler's policy for choosing among contexts that have work on a node."""

    policy: Literal["strict_priority", "priority_quantum"] = "priority_quantum"
    #: longest time a context runs before a context of equal priority gets its turn
    quantum: Period = _ns("2ms")


# ------------------------------------------------------------------------------------- workloads


class _Workload(ScenarioModel):
    #: when the generator starts, from the beginning of the run
    start: Duration = 0
    #: how many units (frames, batches, copies, bursts) to submit; None runs until the end
    count: _int(1, MAX_COUNT, _WHY_COUNT) | None = None


_WHY_LIST_BIG = "the model's limit: a replayed capture of hours at hundreds of frames per second"


def _ordered(value: list, strict: bool) -> list:
    """``value`` (items with an ``at``) when their ``at`` increase (``strict``) or never decrease."""
    for i in range(1, len(value)):
        before, at = value[i - 1].at, value[i].at
        if at < before or strict and at == before:
            raise ValueError(f"[{i}].at must be {'later than' if strict else 'no earlier than'} [{i - 1}].at "
                             f"({format_duration(before)}), got {format_duration(at)}")
    return value


class FpsChange(ScenarioModel):
    """A change of a frame loop's target rate (a game leaving its menu, a frame limiter)."""

    #: from when, measured from the workload's ``start``: frame slots from then on are 1/fps apart
    at: Duration
    fps: _real(0, 1000, _WHY_FPS, lo_open=True)


class FrameLoop(_Workload):
    """A game or renderer: frames at a target rate, each a few packets, usually ending in a
    present. ``count`` is a number of frames."""

    kind: Literal["frame_loop"] = "frame_loop"
    fps: _real(0, 1000, _WHY_FPS, lo_open=True)
    packets_per_frame: _int(1, 1000, "the model's limit on one frame's packets") = 1
    #: GPU time each packet takes
    work: Duration
    #: relative random variation of ``work``: 0.1 lets a packet take 90% to 110% of it
    jitter: _real(0, 1, "a relative variation: 0 (none) up to, not including, 1 (work never goes to 0)",
                  hi_open=True) = 0.0
    present: bool = True
    #: how a frame reaches the screen: "blt" (DxgkDdiPresent copies to the primary), "flip"
    #: (DxgkDdiPresent flips the back buffer; the engine waits for the vsync), "flip_no_wait" (the
    #: flip waits in the display's flip registers instead), "composed" (a copy into the
    #: compositor's surface, Flags.RedirectedPresent)
    present_mode: Literal["blt", "flip", "flip_no_wait", "composed"] = "blt"
    #: vsyncs per flip (the FlipInterval): 0 immediate, 1..4
    sync_interval: _int(0, 4, "a present's FlipInterval: immediate (0) or up to four vsyncs (D3DDDI_FLIPINTERVAL_FOUR)") = 1
    #: the VidPn source (index into adapter.displays) the frames go to
    vidpn_source: _int(0, 15, _WHY_SOURCE) = 0
    #: frames that may be queued (presented, not yet retired) before the present blocks
    max_frame_latency: _int(1, 16, _WHY_LATENCY) = 3
    #: later target rates, in increasing ``at`` order
    fps_changes: Annotated[list[FpsChange], _entries(0, 64, "the model's limit on one frame loop's rate changes")] = \
        Field(default_factory=list)

    @field_validator("fps_changes")
    @classmethod
    def _in_order(cls, value: list[FpsChange]) -> list[FpsChange]:
        return _ordered(value, strict=True)


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
    sync_interval: _int(-1, 4, "DXGI's SyncInterval (0: no wait, up to 4 vsyncs), or -1 for the runtime's default") = 1
    #: DXGI_PRESENT_ALLOW_TEARING: with sync interval 0, an independent flip is immediate
    allows_tearing: bool = False
    #: the application's present flags, reported as PresentMon's PresentFlags
    present_flags: _int(0, _U32, "PresentMon's PresentFlags: a 32-bit mask") = 0
    #: the swap chain's address as PresentMon shows it (e.g. "0x1BF098B1ED0"); default: made from
    #: the context handle and the VidPn source
    address: str | None = Field(default=None, pattern=r"^0x[0-9A-Fa-f]{1,16}$")
    #: the VidPn source (index into adapter.displays) it presents to
    vidpn_source: _int(0, 15, _WHY_SOURCE) = 0
    #: frames that may be queued (presented, not yet retired) before the present blocks
    max_frame_latency: _int(1, 16, _WHY_LATENCY) = 3
    #: frames per second (with ``cpu`` and ``work``), when ``frames`` is empty
    fps: _real(0, 1000, _WHY_FPS, lo_open=True) | None = None
    cpu: Duration = 0
    work: Duration = 0
    #: explicit frames (a replayed capture), in increasing ``start`` order
    frames: Annotated[list[SwapFrame], _entries(0, 1_000_000, _WHY_LIST_BIG)] = Field(default_factory=list)

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
    batch: _int(1, 100_000, "the model's limit on one flush") = 8
    work: Duration
    interval: Duration = 0
    #: wait for the batch's last packet before the interval (false: submit the next batch after
    #: the interval whatever the GPU did, a deep asynchronous queue)
    sync: bool = True
    #: at most this many of its packets in flight: before each submission, wait for the packet
    #: ``window`` back to retire (a sliding window, drm_sched's interleaved submitters); None: no limit
    window: _int(1, 1_000_000, "the model's limit on packets in flight") | None = None


class CopyStream(_Workload):
    """A transfer of ``size`` bytes every ``interval``, such as streaming uploads. ``count`` is a
    number of copies."""

    kind: Literal["copy_stream"] = "copy_stream"
    size: _size(1, _MAX_COPY, _WHY_COPY)
    interval: Duration = _ns("1ms")



_WHY_CALLS = "the model's limit on timed calls (one table each)"


class AllocationCall(ScenarioModel):
    """An application call on some of its workload's allocations at a time."""

    at: Duration
    #: the allocations, by their index in the workload (0 is the first)
    allocations: Annotated[list[_int(0, 255, "an index into the workload's allocations (256 at most)")],
                           _entries(1, 256, "a call names each of the workload's allocations at most once")]


class MemoryPressure(_Workload):
    """An application whose allocations do not all fit in video memory: each packet fills
    ``touch`` of its ``allocations`` (taken in turn) with a pattern of their own, then does ``work``,
    so VidMm keeps evicting and paging in. ``count`` is a number of packets."""

    kind: Literal["memory_pressure"] = "memory_pressure"
    allocations: _int(1, 256, "the model's limit on one workload's allocations")
    size: _size(4, _MAX_COPY, "one fill command fills the allocation in 4-byte words, and 64MiB is the largest command")
    touch: _int(1, 256, "allocations one packet fills, no more than allocations") = 1
    work: Duration = 0
    interval: Duration = _ns("1ms")
    #: where the allocations prefer to live: "memory" (video memory, moved by TRANSFERs) or
    #: "aperture" (system memory the GPU reaches through the aperture, mapped and unmapped)
    segment: Literal["memory", "aperture"] = "memory"
    #: D3DKMTOfferAllocations at these times: the offered allocations are not touched until
    #: reclaimed, and VidMm may evict them without keeping their content
    offer: Annotated[list[AllocationCall], _entries(0, 10_000, _WHY_CALLS)] = Field(default_factory=list)
    #: D3DKMTReclaimAllocations2 at these times (each result is in the ReclaimAllocations event)
    reclaim: Annotated[list[AllocationCall], _entries(0, 10_000, _WHY_CALLS)] = Field(default_factory=list)

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
        if self.size <= 0 or self.size % 4 or self.size > _MAX_COPY:
            raise ValueError(f"size must be a positive multiple of 4 bytes up to {format_size(_MAX_COPY)}")
        return self


class Bursty(_Workload):
    """Bursts of packets separated by idle gaps drawn from an exponential distribution, such as
    UI or browser work. ``count`` is a number of bursts."""

    kind: Literal["bursty"] = "bursty"
    burst: _int(1, 100_000, "the model's limit on one burst") = 4
    work: Duration
    #: mean of the exponentially distributed idle time between bursts
    mean_gap: Period


class ScriptPacket(ScenarioModel):
    """One hand-placed submission of a script workload."""

    #: submit time, from the workload's ``start``
    at: Duration
    work: Duration
    #: how many identical packets to submit at that moment
    repeat: _int(1, None, "packets at that moment: at least 1; above 1,000,000 it is cut to what the run has "
                          "time for, or refused when more than that fits") = 1
    #: submit with Flags.NullRendering: the fence completes, the GPU executes none of it
    null_rendering: bool = False
    #: the packet waits until the monitored fence ``wait_fence`` (a [[fence]] name) reaches
    #: ``wait_value`` (GPU virtual addressing): ``wait_by`` "os" holds it in the OS
    #: (D3DKMTWaitForSynchronizationObjectFromGpu), "gpu" puts a WAIT command at its head
    #: (hardware scheduling only)
    wait_fence: str | None = Field(default=None, min_length=1)
    wait_value: _int(0, _U64, _WHY_FENCE_VALUE) = 0
    wait_by: Literal["os", "gpu"] = "os"
    #: the packet's buffer ends with the GPU's write of ``signal_value`` to ``signal_fence`` (of a
    #: native fence: its CurrentValue, with the CPU interrupt only above its MonitoredValue)
    signal_fence: str | None = Field(default=None, min_length=1)
    signal_value: _int(0, _U64, _WHY_FENCE_VALUE) = 0
    #: each repeat signals ``signal_step`` more than the one before (``signal_value`` first)
    signal_step: _int(0, _U32, "the step between repeats' signals: a 32-bit number") = 0

    def fences(self) -> list[str]:
        return [f for f in (self.wait_fence, self.signal_fence) if f is not None]


class Script(_Workload):
    """An exact list of submissions, for reproducing a situation by hand. Takes no ``count``."""

    kind: Literal["script"] = "script"
    packets: Annotated[list[ScriptPacket], _entries(1, 100_000, "the model's limit on one script's "
                                                                 "hand-placed submissions")]

    @field_validator("count")
    @classmethod
    def _no_count(cls, value: int | None) -> int | None:
        if value is not None:
            raise ValueError("a script workload takes no count; its packets list is the whole of it")
        return value


#: Any workload, told apart by its ``kind`` key.
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
    members: _int(1, 64, "the model's limit on one chain's contexts")
    position: _int(0, 63, "a member's place in its chain, below members")
    work: Duration
    wait: Literal["os", "gpu"] = "os"
    #: at most this many of the member's packets in flight: before each submission, wait for its
    #: packet ``window`` back to retire (a long chain submitted as it runs); None: all at once
    window: _int(1, 1_000_000, "the model's limit on packets in flight") | None = None

    @model_validator(mode="after")
    def _position_fits(self) -> Chain:
        if self.position >= self.members:
            raise ValueError(f"position ({self.position}) must be below members ({self.members})")
        if self.count is None:
            raise ValueError("a chain member needs count (how many packets it runs)")
        return self


Workload = Annotated[
    Union[FrameLoop, SwapChain, ComputeBatch, CopyStream, MemoryPressure, Bursty, Script, Chain], Field(discriminator="kind")
]

#: The values ``kind`` may take in a workload table.
WORKLOAD_KINDS: tuple[str, ...] = tuple(
    get_args(member.model_fields["kind"].annotation)[0]
    for member in get_args(get_args(Workload)[0])
)


# ------------------------------------------------------------------------- processes, scenario


class Context(ScenarioModel):
    """A GPU context: one stream of work a process submits to one node."""

    name: str = Field(min_length=1)
    #: index of the process's device the context is created on
    device: _int(0, 63, "the model's limit on one process's devices") = 0
    #: name of the adapter node the context submits to
    node: str
    #: priority within the process, -7 (lowest) to 7 (highest)
    priority: _int(-7, 7, "what D3DKMTSetContextSchedulingPriority accepts") = 0
    workload: Workload
    #: destroy the context at this time (D3DKMTDestroyContext): queued packets are cancelled,
    #: submitted ones finish, the workload's next call fails
    destroy_at: Duration | None = None
    #: hardware scheduling: the priority band (unset: from the process's priority class: idle ->
    #: idle, high -> focus, realtime -> realtime, the others normal)
    band: Literal["idle", "normal", "focus", "realtime"] | None = None
    #: hardware scheduling: realtimeBandPriorityLevel (realtime band only)
    realtime_level: _int(0, 31, "the range of realtimeBandPriorityLevel") = 0
    #: hardware scheduling: the context's quantum (unset: its band's) and grace periods
    quantum: _BandTime | None = None
    grace_same: _BandTime = 0
    grace_lower: _BandTime = 0
    #: hardware scheduling: its hardware queues (workloads submit to the first)
    hw_queues: _int(1, 16, "the model's limit on one context's hardware queues") = 1
    #: hardware scheduling: D3DDDI_CREATEHWQUEUEFLAGS.DisableGpuTimeout on its queues
    disable_gpu_timeout: bool = False
    #: hardware scheduling: suspend the context at this time (DxgkDdiSuspendContext, as VidMm does
    #: to move its memory) and resume it ``suspend_for`` later (DxgkDdiResumeContext)
    suspend_at: Duration | None = None
    suspend_for: Duration = _ns("1ms")


class BudgetChange(ScenarioModel):
    """The OS sets a process's video memory budget at a time."""

    at: Duration
    #: bytes of local video memory the process may keep resident
    size: _size(0, 1 << 40, "a video memory budget; 1TiB is past any GPU's memory")

    @field_validator("size")
    @classmethod
    def _pages(cls, value: int) -> int:
        if value < 0 or value % _PAGE:
            raise ValueError(f"must be a multiple of 4096 bytes, 0 or more, got {value}")
        return value


#: Bands only a caller holding SE_INC_BASE_PRIORITY_NAME may give a context, and the process
#: priority classes the model takes to hold it (the classes that raise base priority).
_PRIVILEGED_BANDS = ("focus", "realtime")
_PRIVILEGED_CLASSES = ("high", "realtime")


class ProcessTable(ScenarioModel):
    """A ``[[process]]`` table, a process with GPU contexts; its priority class is the base of
    their scheduling."""

    name: str = Field(min_length=1)
    #: the process id the OS gives it (default: the next free one); a replayed capture keeps the
    #: ProcessID it recorded. Processes that each have a pid may share a name (one program run
    #: twice), but then no [[call]] or [[fault]] may name them
    pid: _int(1, _U32, _WHY_PID) | None = None
    priority: ProcessPriority = "normal"
    #: the video memory budget the OS gives it from each time on (D3DKMTQueryVideoMemoryInfo's
    #: Budget); VidMm evicts its allocations to stay within it
    budget: Annotated[list[BudgetChange], _entries(0, 10_000, _WHY_CALLS)] = Field(default_factory=list)
    #: the process runs in a virtual machine on a paravirtualized adapter: its submissions carry
    #: Flags.VirtualMachineData (drivers of WDDM 2.2 and later)
    virtual_machine: bool = False
    context: Annotated[list[Context], _entries(1, 64, "the model's limit on one process's GPU contexts")]


class FenceSpec(ScenarioModel):
    """A monitored fence the scenario's processes share (D3DDDI_MONITORED_FENCE, created Shared
    so that every process may open it; GPU virtual addressing only)."""

    name: str = Field(min_length=1)
    #: InitialFenceValue
    initial: _int(0, _U64, _WHY_FENCE_VALUE) = 0
    #: a native GPU fence (WDDM 3.2, D3DKMTCreateNativeFence, type DEFAULT): buffers signal it with a
    #: native fence write, the GPU waits for it by itself (``wait_by = "gpu"``), the CPU waits with
    #: WaitForSynchronizationObjectFromCpu; needs hardware scheduling and a driver reporting
    #: DXGK_VIDSCHCAPS.NativeGpuFence
    native: bool = False


#: The D3DKMT calls a ``[[call]]`` table may make, and the one call that is the test bench's.
CALL_APIS = (
    "SetContextSchedulingPriority", "SetProcessSchedulingPriorityClass",
    "SignalSynchronizationObjectFromCpu", "WaitForSynchronizationObjectFromCpu", "DestroySynchronizationObject",
    "MoveWork", "StepEngine",
)
CallApi = Literal[
    "SetContextSchedulingPriority", "SetProcessSchedulingPriorityClass",
    "SignalSynchronizationObjectFromCpu", "WaitForSynchronizationObjectFromCpu", "DestroySynchronizationObject",
    "MoveWork", "StepEngine",
]
def _one_or_list(check):
    """A value written once or as a list of such values, held as a list; ``check(value)`` returns a
    reason when one entry is bad."""
    def validate(value):
        many = isinstance(value, list)
        items = value if many else [value]
        if many and not items:
            raise ValueError("needs at least one entry")
        for i, item in enumerate(items):
            reason = check(item)
            if reason:
                raise ValueError(f"entry {i}: {reason}" if many else reason)
        return items
    return validate


def _priority(value) -> str | None:
    if not isinstance(value, int) or isinstance(value, bool):
        return f"expected an integer -7..7, got {value!r}"
    if not -7 <= value <= 7:
        return f"must be -7..7, got {value}"
    return None


def _class(value) -> str | None:
    if value not in PROCESS_PRIORITIES:
        return f"must be one of {_quoted(PROCESS_PRIORITIES)}, got {value!r}"
    return None


def _fence_value(value) -> str | None:
    if not isinstance(value, int) or isinstance(value, bool):
        return f"expected an integer, got {value!r}"
    if not 0 <= value <= (1 << 64) - 1:
        return f"must be 0 .. 2**64-1, got {value}"
    return None


def _fence_name(value) -> str | None:
    if not isinstance(value, str) or not value:
        return f"expected a fence name, got {value!r}"
    return None


_Priorities = Annotated[list[_int(-7, 7, "what D3DKMTSetContextSchedulingPriority accepts")],
                        BeforeValidator(_one_or_list(_priority))]
_Classes = Annotated[list[str], BeforeValidator(_one_or_list(_class))]
_FenceValues = Annotated[list[_int(0, _U64, _WHY_FENCE_VALUE)], BeforeValidator(_one_or_list(_fence_value))]
_FenceNames = Annotated[list[str], BeforeValidator(_one_or_list(_fence_name))]


def _node_name(value) -> str | None:
    if not isinstance(value, str) or not value:
        return f"expected a node name, got {value!r}"
    return None


_NodeNames = Annotated[list[str], BeforeValidator(_one_or_list(_node_name))]

#: Workload kinds whose work a MoveWork call can move (they submit plain packets and wait for
#: their own packets only).
MOVABLE_WORKLOADS = ("compute_batch", "bursty", "script")
#: D3DDDI_MAX_OBJECT_SIGNALED and D3DDDI_MAX_OBJECT_WAITED_ON
MAX_CALL_OBJECTS = 32


class Call(ScenarioModel):
    """A call a process makes through the D3DKMT API while the run goes on, at ``at`` and, with
    ``every``, again every ``every`` (or a time drawn evenly between ``every`` and ``every_max``
    from the run's seed) up to ``count`` calls (unset: one call, or until the run ends with
    ``every``).

    - ``SetContextSchedulingPriority``: ``process``, ``context``, ``priority`` (-7..7, or a list
      the calls take in turn);
    - ``SetProcessSchedulingPriorityClass``: ``process``, ``priority_class`` (a class name, or a
      list the calls take in turn);
    - ``SignalSynchronizationObjectFromCpu``: ``process`` signals ``fence`` (a name or up to 32
      names) to ``value`` (one per fence); each repeat adds ``step`` to every value; ``rewind``
      sets AllowFenceRewind;
    - ``WaitForSynchronizationObjectFromCpu``: a thread of ``process`` waits until ``fence``
      reaches ``value`` (every fence, or with ``wait_any`` one of them), at most ``timeout``;
      each repeat adds ``step``;
    - ``DestroySynchronizationObject``: ``process`` destroys ``fence`` (one name); its pending waiters
      return STATUS_INVALID_HANDLE;
    - ``MoveWork``: ``process`` moves the work of ``context`` to ``node`` (a name, or a list the
      calls take in turn). A context stays on the node it was created on, so this is what an
      application does: D3DKMTCreateContext on that node the first time, and its next packets go
      there once the previous context retired its last one;
    - ``StepEngine``: not a D3DKMT call but the test bench's hand on a GPU in stepped mode
      (``adapter.engine_mode = "stepped"``): ``node``'s engine runs through ``steps`` more
      submissions.
    """

    api: CallApi
    at: Duration = 0
    process: str | None = Field(default=None, min_length=1)
    context: str | None = Field(default=None, min_length=1)
    priority: _Priorities | None = None
    priority_class: _Classes | None = None
    fence: _FenceNames | None = None
    value: _FenceValues | None = None
    step: _int(0, _U64, "added to the values at each repeat: a 64-bit number") = 1
    #: SignalSynchronizationObjectFromCpu: D3DDDICB_SIGNALFLAGS.AllowFenceRewind (a value below the
    #: fence's current one moves it back instead of being refused)
    rewind: bool = False
    timeout: Duration | None = None
    wait_any: bool = False
    node: _NodeNames | None = None
    steps: _int(1, 1_000_000, "the model's limit on one StepEngine call") = 1
    every: _time(1_000, MAX_DURATION, "a D3DKMT call from user mode costs microseconds; the longest run is "
                                      "1 hour") | None = None
    every_max: Duration | None = None
    count: _int(1, MAX_COUNT, _WHY_COUNT) | None = None

    def fences(self) -> list[str]:
        return list(self.fence or ())

    def values(self) -> list[int]:
        return list(self.value or ())

    @model_validator(mode="after")
    def _fields_of_api(self) -> Call:
        api = self.api
        uses = {
            "SetContextSchedulingPriority": {"process", "context", "priority"},
            "SetProcessSchedulingPriorityClass": {"process", "priority_class"},
            "SignalSynchronizationObjectFromCpu": {"process", "fence", "value", "step", "rewind"},
            "WaitForSynchronizationObjectFromCpu": {"process", "fence", "value", "step", "timeout", "wait_any"},
            "DestroySynchronizationObject": {"process", "fence"},
            "MoveWork": {"process", "context", "node"},
            "StepEngine": {"node", "steps"},
        }[api]
        defaults = {"step": 1, "wait_any": False, "steps": 1, "rewind": False}
        for key in ("process", "context", "priority", "priority_class", "fence", "value", "step", "rewind",
                    "timeout", "wait_any", "node", "steps"):
            have = getattr(self, key)
            if key not in uses and have is not None and have != defaults.get(key):
                raise ValueError(f"{key} is not a field of a {api} call")
        missing = [k for k in sorted(uses - {"step", "rewind", "timeout", "wait_any", "steps"})
                   if getattr(self, k) is None]
        if missing:
            raise ValueError(f"a {api} call needs {', '.join(missing)}")
        if api == "StepEngine" and len(self.node) != 1:
            raise ValueError("a StepEngine call names one node")
        if api == "DestroySynchronizationObject":
            if len(self.fence) != 1:
                raise ValueError("a DestroySynchronizationObject call names one fence")
        elif self.fence is not None:
            names, values = self.fences(), self.values()
            if not 1 <= len(names) <= MAX_CALL_OBJECTS:
                raise ValueError(f"fence names 1 to {MAX_CALL_OBJECTS} objects (D3DDDI_MAX_OBJECT_SIGNALED, "
                                 f"D3DDDI_MAX_OBJECT_WAITED_ON), got {len(names)}")
            if len(values) != len(names):
                raise ValueError(f"value needs one entry per fence: {len(names)} fence(s), {len(values)} value(s)")
        if self.every_max is not None:
            if self.every is None:
                raise ValueError("every_max needs every (the shortest gap)")
            if self.every_max < self.every:
                raise ValueError(f"every_max ({self.every_max} ns) is below every ({self.every} ns)")
        if self.count is not None and self.count > 1 and self.every is None:
            raise ValueError("count above 1 needs every (the gap between calls)")
        return self


class Tdr(ScenarioModel):
    """Timeout detection and recovery: the GraphicsDrivers registry values the model honours."""

    #: TdrLevel: 0 no detection, 1 bug check 0x116 on a timeout (no recovery), 3 recover
    level: Literal[0, 1, 3] = 3
    #: TdrDelay: how long a preemption request may go unanswered
    delay: Period = _ns("2s")
    #: how long a packet may run before the scheduler asks to preempt it (the model's choice)
    watchdog: Period = _ns("2s")
    #: TdrLimitCount and TdrLimitTime: more adapter timeouts than this within the window is
    #: bug check 0x116
    limit_count: _int(0, 1_000_000, "TdrLimitCount: timeouts within limit_time, the model's limit") = 5
    limit_time: Period = _ns("60s")


#: Driver entry points a ``ddi_error`` fault can make fail.
FAULTABLE_DDIS = (
    "DxgkDdiRender", "DxgkDdiPresent", "DxgkDdiPatch", "DxgkDdiSubmitCommand", "DxgkDdiPreemptCommand",
    "DxgkDdiCancelCommand", "DxgkDdiBuildPagingBuffer",
    "DxgkDdiQueryDependentEngineGroup", "DxgkDdiResetEngine", "DxgkDdiResetFromTimeout",
    "DxgkDdiRestartFromTimeout",
)


class Fault(ScenarioModel):
    """A fault injected into the run.

    - ``hang``: an engine stops making progress, at time ``at`` on ``node``, or when it starts the
      ``packet``-th packet of ``process``/``context``.
    - ``page_fault``: the engine faults on an unmapped address when it starts that packet
      (``fatal``: the hardware reports an unrecoverable error).
    - ``ddi_error``: the ``call``-th call of driver entry point ``ddi`` returns ``status``.
    - ``interrupt_storm``: from ``at`` for ``duration`` the GPU raises an interrupt no engine owns
      every ``interval``.
    """

    kind: Literal["hang", "page_fault", "ddi_error", "interrupt_storm"]
    node: str | None = None
    at: Duration | None = None
    process: str | None = None
    context: str | None = None
    packet: _int(1, MAX_COUNT, "the context's n-th packet, from 1") | None = None
    fatal: bool = False
    ddi: str | None = None
    call: _int(1, MAX_COUNT, "the entry point's n-th call, from 1") = 1
    status: str = "STATUS_UNSUCCESSFUL"
    duration: Period | None = None
    interval: _time(MIN_STORM_INTERVAL, MAX_DURATION, "the gap between a storm's interrupts: 1us at least, the "
                                                      "model's floor; each interrupt costs the CPU an ISR and a "
                                                      "DPC of about 1us each (adapter.cpu_cost), so a finer storm "
                                                      "only piles up work the CPU never catches up with") | None = None

    @model_validator(mode="after")
    def _fields_of_kind(self) -> Fault:
        by_time = self.node is not None or self.at is not None
        by_packet = self.process is not None or self.context is not None or self.packet is not None
        packet_complete = None not in (self.process, self.context, self.packet)
        kind = self.kind
        if kind == "hang":
            if by_time == by_packet or (by_time and (self.node is None or self.at is None)) or \
                    (by_packet and not packet_complete):
                raise ValueError("a hang names either node and at, or process, context and packet")
        elif kind == "page_fault":
            if not packet_complete or by_time:
                raise ValueError("a page_fault names process, context and packet")
        elif kind == "ddi_error":
            if self.ddi not in FAULTABLE_DDIS:
                raise ValueError(f"ddi must be one of {', '.join(FAULTABLE_DDIS)}, got {self.ddi!r}")
            if self.status not in NTSTATUS.__members__ or NTSTATUS[self.status] == 0:
                raise ValueError(f"status must name an NTSTATUS error, got {self.status!r}")
        elif kind == "interrupt_storm":
            if self.at is None or self.duration is None or self.interval is None:
                raise ValueError("an interrupt_storm needs at, duration and interval")
        return self


def cross_field_problems(scenario: Scenario) -> list[tuple[Location, str]]:
    """Every problem that needs more than one field to see, in file order, with locations from
    the top of the scenario. Empty when the scenario is consistent."""
    problems: list[tuple[Location, str]] = []
    stop_at = scenario.adapter.stop_at
    if stop_at is not None and stop_at >= scenario.duration:
        problems.append((("adapter", "stop_at"), f"the adapter stop at {format_duration(stop_at)} is not before the end of "
                                                 f"the run (duration {format_duration(scenario.duration)})"))
    node_names = [node.name for node in scenario.adapter.nodes]
    first_process: dict[str, int] = {}
    for p, process in enumerate(scenario.process):
        if process.name in first_process and (process.pid is None
                                              or scenario.process[first_process[process.name]].pid is None):
            # Two processes may run one program (a replayed capture's) when each has its pid; then
            # no [[call]] or [[fault]] may name them (checked below).
            problems.append(
                (("process", p, "name"),
                 f"duplicate process name {process.name!r} "
                 f"(process[{first_process[process.name]}] has it)")
            )
        else:
            first_process[process.name] = p
        first_context: dict[str, int] = {}
        for c, context in enumerate(process.context):
            if context.name in first_context:
                problems.append(
                    (("process", p, "context", c, "name"),
                     f"duplicate context name {context.name!r} in process {process.name!r} "
                     f"(process[{p}].context[{first_context[context.name]}] has it)")
                )
            else:
                first_context[context.name] = c
            w = context.workload
            if getattr(w, "vidpn_source", 0) >= len(scenario.adapter.displays):
                problems.append(
                    (("process", p, "context", c, "workload", "vidpn_source"),
                     f"VidPn source {w.vidpn_source} does not exist; the adapter has "
                     f"{len(scenario.adapter.displays)} display(s)")
                )
            if context.node not in node_names:
                problems.append(
                    (("process", p, "context", c, "node"),
                     f"no node named {context.node!r}; the adapter's nodes are "
                     f"{_quoted(node_names)}")
                )
    adapter = scenario.adapter
    hardware = adapter.scheduling == "hardware"
    gpu_va = hardware or bool(adapter.gpu_va)
    fence_names = [f.name for f in scenario.fence]
    for f, name in enumerate(fence_names):
        if name in fence_names[:f]:
            problems.append((("fence", f, "name"), f"duplicate fence name {name!r}"))
    if scenario.fence and not gpu_va:
        problems.append((("fence",), "monitored fences need GPU virtual addressing (adapter.gpu_va = true or "
                                     "adapter.scheduling = \"hardware\")"))
    native_names = {f.name for f in scenario.fence if f.native}
    for f, spec in enumerate(scenario.fence):
        if not spec.native:
            continue
        if not hardware:
            problems.append((("fence", f, "native"), "native GPU fences need hardware scheduling "
                                                     "(adapter.scheduling = \"hardware\")"))
        drv = scenario.driver
        if drv.class_ is None and (drv.settings.get("ddi_version") != "wddm3_2" or drv.settings.get("native_fence") is not True):
            problems.append((("fence", f, "native"), "native GPU fences need a WDDM 3.2 driver that reports "
                                                     "DXGK_VIDSCHCAPS.NativeGpuFence: for the reference driver "
                                                     "driver.ddi_version = \"wddm3_2\" and driver.native_fence = true"))
    if not hardware:
        for n, node in enumerate(adapter.nodes):
            if node.hw_queue_slots is not None:
                problems.append((("adapter", "nodes", n, "hw_queue_slots"),
                                 "hw_queue_slots are the hardware scheduler's; the adapter uses the software "
                                 "scheduler (adapter.scheduling)"))
    chains: dict[str, list[tuple[int, int, int]]] = {}
    for p, process in enumerate(scenario.process):
        for c, context in enumerate(process.context):
            where = ("process", p, "context", c)
            if not hardware:
                for key in ("band", "quantum", "suspend_at"):
                    if getattr(context, key) is not None:
                        problems.append((where + (key,), f"{key} is a hardware-scheduling setting; the adapter "
                                                         f"uses the software scheduler (adapter.scheduling)"))
                if context.hw_queues != 1 or context.disable_gpu_timeout or context.realtime_level \
                        or context.grace_same or context.grace_lower:
                    problems.append((where, "hw_queues, disable_gpu_timeout, realtime_level, grace_same and "
                                            "grace_lower are hardware-scheduling settings; the adapter uses the "
                                            "software scheduler (adapter.scheduling)"))
            if hardware and context.band in _PRIVILEGED_BANDS and process.priority not in _PRIVILEGED_CLASSES:
                # DXGKARG_SETCONTEXTSCHEDULINGPROPERTIES.priorityBand: FOCUS and REALTIME need a caller
                # holding SE_INC_BASE_PRIORITY_NAME; Windows refuses the request before the driver sees
                # it, so the context could not exist with that band.
                problems.append((where + ("band",),
                                 f"the {context.band} band needs the SE_INC_BASE_PRIORITY_NAME privilege, which the "
                                 f"model gives to processes of priority class high or realtime; process "
                                 f"{process.name!r} is {process.priority}"))
            w = context.workload
            if w.kind == "script":
                for k, packet in enumerate(w.packets):
                    at = where + ("workload", "packets", k)
                    for key in ("wait_fence", "signal_fence"):
                        name = getattr(packet, key)
                        if name is not None and name not in fence_names:
                            problems.append((at + (key,), f"no fence named {name!r}; declare it in a [[fence]] table"))
                    if packet.wait_fence in native_names and packet.wait_by == "os":
                        problems.append((at + ("wait_by",), f"fence {packet.wait_fence!r} is native: the GPU waits for "
                                                            f"it by itself (wait_by = \"gpu\"); the OS holds no queue "
                                                            f"behind a native fence"))
                    if packet.signal_step and packet.signal_fence is None:
                        problems.append((at + ("signal_step",), "signal_step needs a signal_fence"))
                    if packet.wait_fence is not None and packet.wait_by == "gpu" and not hardware:
                        problems.append((at + ("wait_by",), "under the software scheduler GPU waits are the OS's "
                                                            "(wait_by = \"os\"): a WAIT command would stall the node's "
                                                            "engine with the buffer that satisfies it queued behind"))
            if w.kind == "chain":
                if w.wait == "gpu" and not hardware:
                    problems.append((where + ("workload", "wait"),
                                     "under the software scheduler GPU waits are the OS's (wait = \"os\"): a WAIT "
                                     "command stalls the node's engine with the buffer that would satisfy it queued "
                                     "behind, which the quantum scheduler turns into a livelock"))
                if w.fence in native_names and w.wait == "os":
                    problems.append((where + ("workload", "wait"), f"fence {w.fence!r} is native: the GPU waits for "
                                                                   f"it by itself (wait = \"gpu\")"))
                if w.fence not in fence_names:
                    problems.append((where + ("workload", "fence"),
                                     f"no fence named {w.fence!r}; declare it in a [[fence]] table"))
                else:
                    chains.setdefault(w.fence, []).append((w.members, w.position, p))
            elif w.kind == "memory_pressure" and gpu_va:
                problems.append((where + ("workload", "kind"),
                                 "memory_pressure needs VidMm to evict, which it does on allocation lists: use an "
                                 "adapter without GPU virtual addressing"))
            elif w.kind == "frame_loop" and w.present and hardware and w.present_mode != "blt":
                problems.append((where + ("workload", "present_mode"),
                                 f"under hardware scheduling presents are blts (DxgkDdiPresentToHwQueue); "
                                 f"present_mode {w.present_mode!r} is not modelled there"))
    for name, members in chains.items():
        sizes = {m for m, _, _ in members}
        positions = sorted(pos for _, pos, _ in members)
        where = ("fence", fence_names.index(name))
        if len(sizes) != 1:
            problems.append((where, f"the chain on fence {name!r} has members of different sizes {sorted(sizes)}"))
        else:
            size = sizes.pop()
            if positions != list(range(size)):
                problems.append((where, f"the chain on fence {name!r} has members = {size}: it needs exactly one "
                                        f"context at each position 0..{size - 1}, found positions {positions}"))
    contexts = {(pr.name, c.name) for pr in scenario.process for c in pr.context}
    process_names = [pr.name for pr in scenario.process]
    shared = {n for n in process_names if process_names.count(n) > 1}
    for i, named in [(("call", i), x) for i, x in enumerate(scenario.call)] + \
                    [(("fault", i), x) for i, x in enumerate(scenario.fault)]:
        if named.process in shared:
            problems.append((i + ("process",), f"{named.process!r} names {process_names.count(named.process)} "
                                               f"processes (each with its pid): name a process only one has"))
    for i, call in enumerate(scenario.call):
        where = ("call", i)
        if call.process is not None and call.process not in process_names:
            problems.append((where + ("process",), f"no process named {call.process!r}; the processes are "
                                                   f"{_quoted(process_names)}"))
        elif call.context is not None and (call.process, call.context) not in contexts:
            problems.append((where + ("context",), f"no context {call.context!r} in process {call.process!r}"))
        for name in call.fences():
            if name not in fence_names:
                problems.append((where + ("fence",), f"no fence named {name!r}; declare it in a [[fence]] table"))
            elif name in native_names and call.api == "SignalSynchronizationObjectFromCpu" and call.rewind:
                problems.append((where + ("rewind",), f"fence {name!r} is native: AllowFenceRewind is not modelled "
                                                      f"on native fences (their CurrentValue only goes forward)"))
        for name in call.node or ():
            if name not in node_names:
                problems.append((where + ("node",), f"no node named {name!r}; the adapter's nodes are "
                                                    f"{_quoted(node_names)}"))
        if call.api == "MoveWork" and call.context is not None and (call.process, call.context) in contexts:
            kind = next(c.workload.kind for pr in scenario.process if pr.name == call.process
                        for c in pr.context if c.name == call.context)
            if kind not in MOVABLE_WORKLOADS:
                problems.append((where + ("context",), f"a {kind} workload cannot be moved; MoveWork moves "
                                                       f"{', '.join(MOVABLE_WORKLOADS)} workloads"))
            if hardware:
                problems.append((where + ("api",), "MoveWork is modelled under the software scheduler only"))
        if call.api == "StepEngine" and adapter.engine_mode != "stepped":
            problems.append((where + ("api",), "StepEngine steps a GPU in stepped mode: set adapter.engine_mode = "
                                               "\"stepped\""))
        if call.api.startswith("Set") and hardware:
            problems.append((where + ("api",), f"{call.api} under hardware scheduling reaches the driver through "
                                               "DxgkDdiSetContextSchedulingProperties, which the model does not "
                                               "implement; use the software scheduler"))
    for f, fault in enumerate(scenario.fault):
        if fault.node is not None and fault.node not in node_names:
            problems.append((("fault", f, "node"),
                             f"no node named {fault.node!r}; the adapter's nodes are {_quoted(node_names)}"))
        if fault.process is not None and (fault.process, fault.context) not in contexts:
            problems.append((("fault", f, "context"),
                             f"no context {fault.context!r} in a process named {fault.process!r}"))
    problems += _presenting_problems(scenario, node_names)
    problems += _bound_problems(scenario)
    return problems


def _storm_interrupts(scenario: Scenario, fault: Fault) -> int:
    """How many interrupts an interrupt storm raises within the run (the scenario's duration)."""
    end = min(fault.at + fault.duration, scenario.duration)
    return max(0, -(-(end - fault.at) // fault.interval))


def _repeat_fits(scenario: Scenario, start: int, packet: ScriptPacket) -> int | None:
    """How many of a script packet's repeats the run has time for: the engine runs them one after
    the other, ``work`` each, from the packet's time to the end of the run. None when that is no
    limit (packets of no work)."""
    if packet.work == 0:
        return None
    left = scenario.duration - start - packet.at
    return max(1, -(-left // packet.work))


def _bound_problems(scenario: Scenario) -> list[tuple[Location, str]]:
    """Ranges that depend on other fields and that no clamp can meet: a storm of more interrupts
    than one storm may raise, a repeat of more packets than one moment may submit."""
    problems: list[tuple[Location, str]] = []
    for f, fault in enumerate(scenario.fault):
        if fault.kind == "interrupt_storm" and fault.at < scenario.duration:
            n = _storm_interrupts(scenario, fault)
            if n > MAX_STORM_INTERRUPTS:
                problems.append((("fault", f, "interval"),
                                 f"the storm raises {show(n, '')} interrupts within the run (from "
                                 f"{format_duration(fault.at)} to {format_duration(min(fault.at + fault.duration, scenario.duration))}, "
                                 f"one every {format_duration(fault.interval)}); one storm raises at most "
                                 f"{show(MAX_STORM_INTERRUPTS, '')} (each costs the CPU an ISR and a DPC and the log "
                                 f"several lines): use a longer interval or a shorter duration"))
    for p, process in enumerate(scenario.process):
        for c, context in enumerate(process.context):
            w = context.workload
            if w.kind != "script":
                continue
            for k, packet in enumerate(w.packets):
                if packet.repeat <= MAX_REPEAT:
                    continue
                fits = _repeat_fits(scenario, w.start, packet)
                if fits is None or fits > MAX_REPEAT:
                    room = "packets of no work all fit" if fits is None else f"{show(fits, '')} of them fit in the run"
                    problems.append((("process", p, "context", c, "workload", "packets", k, "repeat"),
                                     f"must be at most {show(MAX_REPEAT, '')}, got {show(packet.repeat, '')}: one "
                                     f"moment submits at most {show(MAX_REPEAT, '')} packets (the OS holds them all "
                                     f"queued at once) and {room}; split them over several packets entries"))
    return problems


def scenario_clamps(scenario: Scenario) -> list[tuple[Location, str]]:
    """Values the run takes otherwise than written, or that cannot have the effect they ask for,
    each with a warning saying so, with locations from the top of the scenario: a script packet's
    ``repeat`` above 1,000,000 that the run has no time for is cut to the packets that fit; a
    fault due at or after the end of the run never happens. Cuts are made on ``scenario``."""
    notes: list[tuple[Location, str]] = []
    end = scenario.duration
    for f, fault in enumerate(scenario.fault):
        if fault.at is not None and fault.at >= end:
            notes.append((("fault", f, "at"), f"{format_duration(fault.at)} is not before the end of the run "
                                              f"(duration {format_duration(end)}): the fault never happens"))
    for p, process in enumerate(scenario.process):
        for c, context in enumerate(process.context):
            w = context.workload
            if w.kind != "script":
                continue
            for k, packet in enumerate(w.packets):
                fits = _repeat_fits(scenario, w.start, packet)
                if packet.repeat > MAX_REPEAT and fits is not None and fits <= MAX_REPEAT:
                    notes.append((("process", p, "context", c, "workload", "packets", k, "repeat"),
                                  f"{show(packet.repeat, '')} packets of {format_duration(packet.work)} cannot run "
                                  f"in the {format_duration(max(0, end - w.start - packet.at))} left of the run "
                                  f"(duration {format_duration(end)}): taken as {show(fits, '')}, as many as fit"))
                    packet.repeat = fits
    return notes


def _presenting_problems(scenario: Scenario, node_names: list[str]) -> list[tuple[Location, str]]:
    """Process ids, compositors and swap chains: what one table cannot check alone."""
    problems: list[tuple[Location, str]] = []
    pids: dict[int, Location] = {}

    def claim(pid, where: Location) -> None:
        if pid is None:
            return
        if pid in pids:
            problems.append((where, f"process id {pid} is also given to {field_path(pids[pid])}"))
        else:
            pids[pid] = where

    names = {p.name for p in scenario.process}
    for p, process in enumerate(scenario.process):
        claim(process.pid, ("process", p, "pid"))
    sources: dict[int, int] = {}
    displays = len(scenario.adapter.displays)
    hardware = scenario.adapter.scheduling == "hardware"
    for c, comp in enumerate(scenario.compositor):
        where = ("compositor", c)
        if comp.process in names:
            problems.append((where + ("process",), f"{comp.process!r} is also a [[process]]: the compositor's "
                                                   f"process is its own"))
        first = next(i for i, other in enumerate(scenario.compositor) if other.process == comp.process)
        if first != c and comp.pid is not None and comp.pid != scenario.compositor[first].pid:
            problems.append((where + ("pid",), f"the compositor process {comp.process!r} has pid "
                                               f"{scenario.compositor[first].pid} (compositor[{first}])"))
        elif first == c:
            claim(comp.pid, where + ("pid",))
        if comp.vidpn_source >= displays:
            problems.append((where + ("vidpn_source",), f"VidPn source {comp.vidpn_source} does not exist; the "
                                                        f"adapter has {displays} display(s)"))
        elif comp.vidpn_source in sources:
            problems.append((where + ("vidpn_source",), f"VidPn source {comp.vidpn_source} already has a "
                                                        f"compositor (compositor[{sources[comp.vidpn_source]}])"))
        else:
            sources[comp.vidpn_source] = c
        if comp.node is not None and comp.node not in node_names:
            problems.append((where + ("node",), f"no node named {comp.node!r}; the adapter's nodes are "
                                                f"{_quoted(node_names)}"))
        if hardware:
            problems.append((where, "the compositor is modelled under the software scheduler only "
                                    "(adapter.scheduling = \"software\")"))
    for p, process in enumerate(scenario.process):
        for c, context in enumerate(process.context):
            w = context.workload
            if w.kind == "swap_chain" and hardware:
                problems.append((("process", p, "context", c, "workload", "kind"),
                                 "swap chains are modelled under the software scheduler only (under hardware "
                                 "scheduling presents are blts: use frame_loop)"))
    return problems


class CompositorUpdate(ScenarioModel):
    """Something on the desktop the compositor must draw (a window the scenario does not run, the
    cursor, a caret): it composes at the first vsync at or after ``at``."""

    at: Duration
    #: CPU time from that vsync to its present (default: the compositor's ``cpu``)
    cpu: Duration | None = None
    #: GPU time of that composition (default: the compositor's ``work``)
    work: Duration | None = None


class Compositor(ScenarioModel):
    """The desktop compositor (dwm.exe) on one VidPn source: at each vsync with something new (a
    windowed present, a desktop update) it composes and flips its own swap chain; it steps aside
    for a full-screen flip-model swap chain (independent flip) and for an exclusive one. See
    :mod:`wddmsim.workloads.compositor`."""

    #: its process (created once; several [[compositor]] tables share it)
    process: str = Field(default="dwm.exe", min_length=1)
    pid: _int(1, _U32, _WHY_PID) | None = None
    #: the node its composition runs on (default: the adapter's first)
    node: str | None = None
    vidpn_source: _int(0, 15, _WHY_SOURCE) = 0
    #: its swap chain's address as PresentMon shows it
    address: str | None = Field(default=None, pattern=r"^0x[0-9A-Fa-f]{1,16}$")
    #: CPU time from the vsync it wakes at to its present call
    cpu: Duration = _ns("100us")
    #: GPU time of one composition
    work: Duration = _ns("500us")
    #: compositions in a row of a full-screen flip-model swap chain, alone on the source, before
    #: the compositor lets it flip independently
    independent_flip_after: _int(1, 1000, "the model's limit on compositions before an independent flip") = 2
    #: desktop updates, in increasing ``at`` order
    update: Annotated[list[CompositorUpdate], _entries(0, 1_000_000, _WHY_LIST_BIG)] = Field(default_factory=list)

    @field_validator("update")
    @classmethod
    def _updates_in_order(cls, value: list[CompositorUpdate]) -> list[CompositorUpdate]:
        return _ordered(value, strict=False)


class Driver(BaseModel):
    """The ``[driver]`` table: which driver drives the adapter (``class``: ``"package.module:Class"``
    or ``"path/to/file.py:Class"``; default the reference driver) and its settings, every other key,
    which the driver's own ``Settings`` model validates when the run is built. ``driver =
    "mypkg.mod:MyDriver"`` (a string) names the class with no settings."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    class_: str | None = Field(default=None, alias="class", min_length=1)

    @property
    def settings(self) -> dict:
        """Every key but ``class``: the driver's settings table."""
        return dict(self.model_extra or {})


def _driver_table(value):
    if isinstance(value, str):
        return {"class": value}
    return value


class Scenario(ScenarioModel):
    """A whole scenario file."""

    #: shown in reports; the loader uses the file's stem when this is empty
    name: str = ""
    description: str = ""
    #: seed of every random choice in the run (jitter, gaps), so runs repeat exactly
    seed: _int(0, _U64, "a seed is a 64-bit unsigned number") = 0
    #: virtual time to simulate
    duration: Annotated[int, BeforeValidator(parse_duration), RUN_DURATION] = _ns("1s")
    adapter: AdapterTable = Field(default_factory=AdapterTable)
    #: the driver and its settings (the reference driver with its defaults when absent)
    driver: Annotated[Driver, BeforeValidator(_driver_table)] = Field(default_factory=Driver)
    scheduler: Scheduler = Field(default_factory=Scheduler)
    tdr: Tdr = Field(default_factory=Tdr)
    fault: Annotated[list[Fault], _entries(0, 1000, "the model's limit on injected faults")] = Field(default_factory=list)
    #: monitored fences shared by the processes (chain workloads name them)
    fence: Annotated[list[FenceSpec], _entries(0, 1024, "the model's limit on shared fences")] = Field(
        default_factory=list)
    process: Annotated[list[ProcessTable], _entries(1, 1024, "the model's limit on processes")]
    #: D3DKMT calls the processes make while the run goes on
    call: Annotated[list[Call], _entries(0, 10_000, _WHY_CALLS)] = Field(default_factory=list)
    #: the desktop compositor, one table per display it composes
    compositor: Annotated[list[Compositor], _entries(0, 16, "one compositor per display, and an adapter has at most 16")] = Field(
        default_factory=list)

    #: warnings of the values taken otherwise than written, with their locations
    _clamps: list = PrivateAttr(default_factory=list)
    #: what names the scenario in a warning (the loader's source, with its --set options)
    _source: str = PrivateAttr(default="<scenario>")

    @model_validator(mode="after")
    def _consistent(self) -> Scenario:
        problems = cross_field_problems(self)
        if problems:
            raise _conflicts(problems)
        notes = scenario_clamps(self)
        if notes:  # a later assignment validates again: keep what the first validation cut
            earlier = getattr(self, "__pydantic_private__", None) or {}
            kept = list(earlier.get("_clamps") or ())
            self._clamps = kept + [note for note in notes if note not in kept]
        return self

    def __eq__(self, other: object) -> bool:
        # Two scenarios with the same values are equal, whatever names them in warnings.
        if not isinstance(other, BaseModel):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]

    @property
    def warnings(self) -> list[str]:
        """The values the run takes otherwise than written or that cannot have their effect (a
        ``repeat`` cut to what fits, a fault after the end of the run), one line each:
        ``FILE: field.path: what happens``. Empty for most scenarios."""
        return [f"{self._source}: {field_path(loc)}: {msg}" for loc, msg in self._clamps]
