"""The ``[adapter]`` table: the simulated GPU as the OS sees it, and the OS's settings for it.

The GPU's engines are nodes (:class:`Node`, each with its hardware queue and preemption
granularity), its memory is segments (:class:`Segment`), its displays are VidPn sources with their
refresh rates; next to them stand the OS's choices for the adapter: the scheduling mode
(software, or WDDM 2.x hardware scheduling with its priority bands, :class:`Bands`), GPU virtual
addressing, VidSch's queue depth, the modelled CPU cost of the driver's callbacks
(:class:`CpuCostTable`), the stepped GPU of scheduler tests and an adapter stop. The table checks
what it can alone: unique node and segment names, exactly one 3D node, a memory and an aperture
segment (every problem at once, :func:`.problems.conflicts`). Keys that moved to the driver's own
``[driver]`` table are refused with a line saying where they went.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Annotated, Literal, get_args

from pydantic import BeforeValidator, Field, field_validator, model_validator

from wddmsim.ddi.versions import VERSIONS

from .bounds import SECOND, WHY_CPU
from .fields import (PAGE, U32, Duration, Location, Period, ScenarioModel, entries_in, int_in, ns, real_in, size_in,
                     time_in)
from .problems import conflicts

__all__ = ["DDI_VERSION_NAMES", "ENGINES", "AdapterTable", "BandTime", "BandTimes", "Bands", "CpuCostTable",
           "EngineKind", "Node", "Segment"]

#: The ``DXGKDDI_INTERFACE_VERSION`` names an adapter may declare, oldest first.
DDI_VERSION_NAMES: tuple[str, ...] = (
    tuple(VERSIONS) if isinstance(VERSIONS, Mapping) else tuple(v.name for v in VERSIONS)
)

EngineKind = Literal[
    "3d", "compute", "copy", "video_decode", "video_encode", "video_processing", "other"
]

#: The engine kinds a node may have.
ENGINES: tuple[str, ...] = get_args(EngineKind)


_Cpu = time_in(0, SECOND, WHY_CPU)


class CpuCostTable(ScenarioModel):
    """The ``[adapter.cpu_cost]`` table: CPU time the kernel-mode side spends in each driver
    callback, charged to the simulated CPU whenever the callback runs. Every cost may be zero."""

    render: _Cpu = ns("5us")  #: building one command buffer (DxgkDdiRender)
    patch: _Cpu = ns("1us")  #: patching allocation addresses into a DMA buffer
    submit: _Cpu = ns("2us")  #: handing a DMA buffer to the hardware queue
    isr: _Cpu = ns("1us")  #: the interrupt service routine
    dpc: _Cpu = ns("2us")  #: the deferred procedure call after an interrupt
    present: _Cpu = ns("5us")  #: queuing a present (flip or blit)


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
    hw_queue_depth: int_in(1, 64, _WHY_QUEUE_DEPTH) | None = None
    #: bytes per nanosecond the engine moves in fill and copy commands
    copy_bandwidth: real_in(0, 10_000, "bytes per nanosecond; 10000 (10 TB/s) is past any GPU's "
                                     "memory", lo_open=True) = 16.0
    #: time the engine spends fetching and decoding one command packet
    command_cost: time_in(0, SECOND, "engine time per command packet: longer than 1s would be a hang") = ns("100ns")
    #: where a preemption request stops the engine: "none" (runs everything queued), "dma_buffer"
    #: (finishes the running DMA buffer), "primitive" (finishes the running command) or
    #: "interval" (stops a WORK command at the next multiple of preemption_interval) or
    #: "instruction" (stops a WORK command where it is)
    preemption: Literal["none", "dma_buffer", "primitive", "interval", "instruction"] = "dma_buffer"
    preemption_interval: Period = ns("100us")
    #: time the engine spends saving the state of a buffer it stopped mid-way (busy time, before
    #: the preemption is reported)
    preemption_save: Duration = 0
    #: VidSch's first SubmissionFenceId on this node (a 32-bit id, which wraps to 0 after
    #: 2**32 - 1 and goes on: Microsoft's pages reserve no value of the UINT, so past the wrap 0 is
    #: an id like any other): start near the top to run across the wrap. Not 0 itself: a node's
    #: fence slot starts at 0, which a driver reads as "nothing completed yet"
    first_fence_id: int_in(1, U32, "a SubmissionFenceId is 32 bits; the first is not 0, the value a node's fence "
                                   "slot holds before anything completes (past 2**32 - 1 the ids wrap to 0)") = 1
    #: hardware scheduling: how many hardware queues the engine's scheduler can hold mapped at once
    #: (its slots); more queues than slots are mapped and unmapped as they go idle. Unset: no limit
    hw_queue_slots: int_in(1, 1024, "hardware queues an engine's scheduler holds mapped at once: the model's "
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
    size: size_in(PAGE, 1 << 40, _WHY_SEGMENT)
    cpu_visible: bool = False
    #: how much of the segment VidMm may use (its residency budget); unset: all of it
    budget: size_in(PAGE, 1 << 40, _WHY_SEGMENT) | None = None

    @model_validator(mode="after")
    def _budget_fits(self) -> Segment:
        if self.budget is not None and (self.budget <= 0 or self.budget % PAGE or self.budget > self.size):
            raise ValueError(f"budget must be a positive multiple of 4096 bytes no larger than size ({self.size})")
        return self

    @field_validator("size")
    @classmethod
    def _whole_pages(cls, value: int) -> int:
        if value <= 0 or value % PAGE:
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


BandTime = time_in(0, 60 * SECOND, "a band's grace period or quantum; a minute is far past the TDR delay "
                                      "(2s by default), the model's limit")


class BandTimes(ScenarioModel):
    """One time per priority band (DXGK_SCHEDULING_PRIORITY_BAND)."""

    idle: BandTime = 0
    normal: BandTime = 0
    focus: BandTime = 0
    realtime: BandTime = 0


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
    normal_share: int_in(0, 50, "targetNormalBandPercentage: the model keeps at most half the GPU for the normal band") = 10


class AdapterTable(ScenarioModel):
    """The ``[adapter]`` table, the display adapter: the GPU (its nodes, segments and displays) and
    the OS's settings for it (scheduling, GPU virtual addressing, VidSch's queue depth, modelled CPU
    costs). The driver's own settings are in the scenario's ``[driver]`` table: the OS learns the
    driver's capabilities from the driver, at adapter start."""

    #: packets each node's hardware queue holds (VidSch)
    hw_queue_depth: int_in(1, 64, _WHY_QUEUE_DEPTH) = 2
    cpu_cost: CpuCostTable = Field(default_factory=CpuCostTable)
    #: the VidPn sources: one display per entry, its refresh rate in Hz
    displays: Annotated[list[real_in(0, 1000, "a refresh rate in Hz; no display refreshes past 1000 Hz",
                                   lo_open=True)],
                        entries_in(1, 16, "VidPn sources: the model's limit on displays per adapter")] = Field(
        default_factory=lambda: [60.0])
    #: the display controller's pending-flip registers per source (what a driver reports as
    #: DXGK_DRIVERCAPS.MaxQueuedFlipOnVSync)
    max_queued_flips: int_in(1, 16, "DXGK_DRIVERCAPS.MaxQueuedFlipOnVSync: pending-flip registers per "
                                  "source, the model's limit") = 1
    #: every submission sets Flags.NullRendering: an infinitely fast GPU, leaving the submission
    #: path's own cost
    null_rendering: bool = False
    nodes: Annotated[list[Node], entries_in(1, 64, "engines an adapter reports as nodes: the model's "
                                                 "limit")] = Field(default_factory=_default_nodes)
    segments: Annotated[list[Segment], entries_in(0, 32, "DXGK_QUERYSEGMENTOUT's segments: 32 at most (the "
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
            raise conflicts(problems)
        return self

    def node(self, name: str) -> Node:
        """The node called ``name``; :class:`KeyError` when there is none."""
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(name)

