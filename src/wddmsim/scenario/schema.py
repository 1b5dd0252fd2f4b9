"""The shape of a scenario: pydantic models for every table a scenario file may contain.

A scenario describes one simulated machine and what runs on it: the adapter (DDI version, engines
as nodes, memory segments, CPU costs of the driver's callbacks), the OS scheduler's policy, and the
processes with their GPU contexts, each driven by a workload generator. The field names here are
the TOML keys, one for one, and the simulator reads these models directly.

Three layers of checking happen here:

* per field: types (strict, so ``"5"`` is not an integer), ranges, enumerations, and the unit
  syntax of durations and sizes (:mod:`wddmsim.util.units`), which arrive as ``int``
  nanoseconds and bytes;
* per adapter: names that must be unique and the node and segment kinds an adapter must have;
* per scenario, once every field is valid: contexts naming nodes that exist and names that must
  be unique among processes and among a process's contexts.

The tables are built from :mod:`.fields` (the base model and the kinds of value, each with its
range from :mod:`.bounds`); the workload tables are :mod:`.workloads`. Once the scenario is
consistent, :func:`scenario_clamps` cuts what it takes otherwise than written, each with a warning
(:attr:`Scenario.warnings`).

The two cross-field layers report every problem they find in one pydantic error of type
:data:`CONFLICT_ERROR`, whose context carries the individual problems with their own field
locations; :mod:`wddmsim.scenario.loader` unpacks them into one message each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Annotated, Literal, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PrivateAttr, field_validator, model_validator
from pydantic_core import PydanticCustomError

from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.ddi.versions import VERSIONS

from ..dxgkrnl.hints import HINTS
from ..policies.names import check_policy_name
from ..util.units import format_duration, parse_duration
from .bounds import (MAX_COUNT, MAX_DURATION, MAX_REPEAT, MAX_STORM_INTERRUPTS, MIN_STORM_INTERVAL, RUN_DURATION,
                     SECOND, WHY_CPU, show)
from .fields import (PAGE, U32, U64, WHY_CALLS, WHY_COUNT, WHY_FENCE_VALUE, WHY_LIST_BIG, WHY_PID, WHY_SOURCE,
                     Duration, Location, Period, ScenarioModel, Size, entries_in, int_in, ns, ordered, real_in,
                     size_in, time_in)
from .workloads import (WORKLOAD_KINDS, Bursty, ComputeBatch, CopyStream, FrameLoop, Script, ScriptPacket, SwapChain,
                        SwapFrame, Workload)

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


# --------------------------------------------------------------------------------------- adapter


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


_BandTime = time_in(0, 60 * SECOND, "a band's grace period or quantum; a minute is far past the TDR delay "
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
            raise _conflicts(problems)
        return self

    def node(self, name: str) -> Node:
        """The node called ``name``; :class:`KeyError` when there is none."""
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(name)


#: The error kind of a ``[scheduler]`` key the named policy does not take: located at the key, and
#: counted as an unknown field (scenario/loader.py).
UNKNOWN_SETTING = "unknown_setting"


class Scheduler(ScenarioModel):
    """The OS GPU scheduler's policy for choosing among contexts that have work on a node:
    ``policy`` names a shipped policy (``wddmsim policies`` lists them) or a researcher's class
    (``"package.module:Class"`` or ``"path/to/file.py:Class"``, a relative path found next to the
    scenario file when it is there, else from the current folder); every other key of the table is the policy's setting, which its own
    ``Settings`` model checks when the run is built (docs/policies.md)."""

    model_config = ConfigDict(extra="allow")

    policy: str = Field(default="priority_quantum", min_length=1)
    #: longest time a context runs before a context of equal priority gets its turn
    quantum: Period = ns("2ms")

    @field_validator("policy")
    @classmethod
    def _policy_name(cls, value: str) -> str:
        problem = check_policy_name(value)
        if problem:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _shipped_settings(self) -> Scheduler:
        from ..policies.load import settings_problems, unknown_settings

        unknown = unknown_settings(self.policy, self.model_extra or {})
        if unknown:
            # Located at the key, and told apart from a bad value as a mistyped field is
            # (``--set scheduler.quantun=1ms`` names a path the scenario does not have).
            raise PydanticCustomError(UNKNOWN_SETTING, "{reason}", {"problems": unknown})
        problems = settings_problems(self.policy, self.settings)
        if problems:
            raise ValueError("; ".join(why if field.removeprefix("scheduler.") in why
                                       else f"{field.removeprefix('scheduler.')}: {why}" for field, why in problems))
        return self

    @property
    def settings(self) -> dict:
        """The policy's settings: every key of the table but ``policy`` (``quantum`` included
        when written)."""
        out = dict(self.model_extra or {})
        if "quantum" in self.model_fields_set:
            out["quantum"] = self.quantum
        return out


# ------------------------------------------------------------------------- processes, scenario


_Weight = real_in(0, 1e6, "a share against the other contexts of the node: above 0, at most a million times another's",
                  lo_open=True)
_HintTime = time_in(1_000, MAX_DURATION, "a period or deadline of a microsecond at least, within the longest run "
                                         "(1 hour)")
_Utilization = real_in(0, 1, "a fraction of the node's GPU time, above 0 and at most 1", lo_open=True)


class Context(ScenarioModel):
    """A GPU context: one stream of work a process submits to one node."""

    name: str = Field(min_length=1)
    #: index of the process's device the context is created on
    device: int_in(0, 63, "the model's limit on one process's devices") = 0
    #: name of the adapter node the context submits to
    node: str
    #: priority within the process, -7 (lowest) to 7 (highest)
    priority: int_in(-7, 7, "what D3DKMTSetContextSchedulingPriority accepts") = 0
    workload: Workload
    #: destroy the context at this time (D3DKMTDestroyContext): queued packets are cancelled,
    #: submitted ones finish, the workload's next call fails
    destroy_at: Duration | None = None
    #: hardware scheduling: the priority band (unset: from the process's priority class: idle ->
    #: idle, high -> focus, realtime -> realtime, the others normal)
    band: Literal["idle", "normal", "focus", "realtime"] | None = None
    #: hardware scheduling: realtimeBandPriorityLevel (realtime band only)
    realtime_level: int_in(0, 31, "the range of realtimeBandPriorityLevel") = 0
    #: hardware scheduling: the context's quantum (unset: its band's) and grace periods
    quantum: _BandTime | None = None
    grace_same: _BandTime = 0
    grace_lower: _BandTime = 0
    #: hardware scheduling: its hardware queues (workloads submit to the first)
    hw_queues: int_in(1, 16, "the model's limit on one context's hardware queues") = 1
    #: hardware scheduling: D3DDDI_CREATEHWQUEUEFLAGS.DisableGpuTimeout on its queues
    disable_gpu_timeout: bool = False
    #: hardware scheduling: suspend the context at this time (DxgkDdiSuspendContext, as VidMm does
    #: to move its memory) and resume it ``suspend_for`` later (DxgkDdiResumeContext)
    suspend_at: Duration | None = None
    suspend_for: Duration = ns("1ms")
    #: scheduling hints, a model extension (docs/policies.md): what the application tells a
    #: research policy beyond WDDM's priorities. ``weight``: its share against the node's other
    #: contexts; ``period``: the span between its jobs (frames); ``deadline``: a job must finish
    #: this long after it was released (unset with a period: the period); ``utilization``: the
    #: most of the node's GPU time it may take (a cap a partitioning policy enforces)
    weight: _Weight = 1.0
    period: _HintTime | None = None
    deadline: _HintTime | None = None
    utilization: _Utilization | None = None


class BudgetChange(ScenarioModel):
    """The OS sets a process's video memory budget at a time."""

    at: Duration
    #: bytes of local video memory the process may keep resident
    size: size_in(0, 1 << 40, "a video memory budget; 1TiB is past any GPU's memory")

    @field_validator("size")
    @classmethod
    def _pages(cls, value: int) -> int:
        if value < 0 or value % PAGE:
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
    pid: int_in(1, U32, WHY_PID) | None = None
    priority: ProcessPriority = "normal"
    #: the video memory budget the OS gives it from each time on (D3DKMTQueryVideoMemoryInfo's
    #: Budget); VidMm evicts its allocations to stay within it
    budget: Annotated[list[BudgetChange], entries_in(0, 10_000, WHY_CALLS)] = Field(default_factory=list)
    #: the process runs in a virtual machine on a paravirtualized adapter: its submissions carry
    #: Flags.VirtualMachineData (drivers of WDDM 2.2 and later)
    virtual_machine: bool = False
    context: Annotated[list[Context], entries_in(1, 64, "the model's limit on one process's GPU contexts")]


class FenceSpec(ScenarioModel):
    """A monitored fence the scenario's processes share (D3DDDI_MONITORED_FENCE, created Shared
    so that every process may open it; GPU virtual addressing only)."""

    name: str = Field(min_length=1)
    #: InitialFenceValue
    initial: int_in(0, U64, WHY_FENCE_VALUE) = 0
    #: a native GPU fence (WDDM 3.2, D3DKMTCreateNativeFence, type DEFAULT): buffers signal it with a
    #: native fence write, the GPU waits for it by itself (``wait_by = "gpu"``), the CPU waits with
    #: WaitForSynchronizationObjectFromCpu; needs hardware scheduling and a driver reporting
    #: DXGK_VIDSCHCAPS.NativeGpuFence
    native: bool = False


#: The D3DKMT calls a ``[[call]]`` table may make, and the one call that is the test bench's.
CALL_APIS = (
    "SetContextSchedulingPriority", "SetProcessSchedulingPriorityClass",
    "SignalSynchronizationObjectFromCpu", "WaitForSynchronizationObjectFromCpu", "DestroySynchronizationObject",
    "MoveWork", "StepEngine", "SetSchedulingHints",
)
CallApi = Literal[
    "SetContextSchedulingPriority", "SetProcessSchedulingPriorityClass",
    "SignalSynchronizationObjectFromCpu", "WaitForSynchronizationObjectFromCpu", "DestroySynchronizationObject",
    "MoveWork", "StepEngine", "SetSchedulingHints",
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


_Priorities = Annotated[list[int_in(-7, 7, "what D3DKMTSetContextSchedulingPriority accepts")],
                        BeforeValidator(_one_or_list(_priority))]
_Classes = Annotated[list[str], BeforeValidator(_one_or_list(_class))]
_FenceValues = Annotated[list[int_in(0, U64, WHY_FENCE_VALUE)], BeforeValidator(_one_or_list(_fence_value))]
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
      submissions;
    - ``SetSchedulingHints``: not a D3DKMT call but the model's extension for research policies
      (docs/policies.md): ``process`` gives ``context`` new hints, any of ``weight``, ``period``,
      ``deadline``, ``utilization``; the others keep their values.
    """

    api: CallApi
    at: Duration = 0
    process: str | None = Field(default=None, min_length=1)
    context: str | None = Field(default=None, min_length=1)
    priority: _Priorities | None = None
    priority_class: _Classes | None = None
    fence: _FenceNames | None = None
    value: _FenceValues | None = None
    step: int_in(0, U64, "added to the values at each repeat: a 64-bit number") = 1
    #: SignalSynchronizationObjectFromCpu: D3DDDICB_SIGNALFLAGS.AllowFenceRewind (a value below the
    #: fence's current one moves it back instead of being refused)
    rewind: bool = False
    timeout: Duration | None = None
    wait_any: bool = False
    node: _NodeNames | None = None
    steps: int_in(1, 1_000_000, "the model's limit on one StepEngine call") = 1
    every: time_in(1_000, MAX_DURATION, "a D3DKMT call from user mode costs microseconds; the longest run is "
                                      "1 hour") | None = None
    every_max: Duration | None = None
    count: int_in(1, MAX_COUNT, WHY_COUNT) | None = None
    #: SetSchedulingHints: the hints it sets (those left out keep their values)
    weight: _Weight | None = None
    period: _HintTime | None = None
    deadline: _HintTime | None = None
    utilization: _Utilization | None = None

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
            "SetSchedulingHints": {"process", "context", "weight", "period", "deadline", "utilization"},
        }[api]
        defaults = {"step": 1, "wait_any": False, "steps": 1, "rewind": False}
        for key in ("process", "context", "priority", "priority_class", "fence", "value", "step", "rewind",
                    "timeout", "wait_any", "node", "steps", "weight", "period", "deadline", "utilization"):
            have = getattr(self, key)
            if key not in uses and have is not None and have != defaults.get(key):
                raise ValueError(f"{key} is not a field of a {api} call")
        missing = [k for k in sorted(uses - {"step", "rewind", "timeout", "wait_any", "steps", *HINTS})
                   if getattr(self, k) is None]
        if api == "SetSchedulingHints" and all(getattr(self, k) is None for k in HINTS):
            raise ValueError(f"a SetSchedulingHints call needs at least one of {', '.join(HINTS)}")
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
    delay: Period = ns("2s")
    #: how long a packet may run before the scheduler asks to preempt it (the model's choice)
    watchdog: Period = ns("2s")
    #: TdrLimitCount and TdrLimitTime: more adapter timeouts than this within the window is
    #: bug check 0x116
    limit_count: int_in(0, 1_000_000, "TdrLimitCount: timeouts within limit_time, the model's limit") = 5
    limit_time: Period = ns("60s")


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
    packet: int_in(1, MAX_COUNT, "the context's n-th packet, from 1") | None = None
    fatal: bool = False
    ddi: str | None = None
    call: int_in(1, MAX_COUNT, "the entry point's n-th call, from 1") = 1
    status: str = "STATUS_UNSUCCESSFUL"
    duration: Period | None = None
    interval: time_in(MIN_STORM_INTERVAL, MAX_DURATION, "the gap between a storm's interrupts: 1us at least, the "
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
    # [scheduler] policy names the OS's policy or, under hardware scheduling, the GPU's (docs/policies.md).
    from ..policies.load import mode_problems

    sched = scenario.scheduler
    problems += mode_problems(sched.policy, sched.model_extra or {}, sched.settings, hardware)
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
            elif w.kind == "frame_loop" and w.present and hardware and w.present_mode == "composed":
                # Flips are checked once the driver's caps are known (system.py: the hardware flip queue).
                problems.append((where + ("workload", "present_mode"),
                                 f"under hardware scheduling presents are blts (DxgkDdiPresentToHwQueue) or flips "
                                 f"through the hardware flip queue; present_mode {w.present_mode!r} is not "
                                 f"modelled there"))
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
        if call.api == "SetSchedulingHints" and hardware:
            # (The priority calls reach the driver through DxgkDdiSetContextSchedulingProperties.)
            problems.append((where + ("api",), "SetSchedulingHints informs the software scheduler's policy; under "
                                               "hardware scheduling the GPU decides: use the software scheduler"))
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


def _submission_cost(scenario: Scenario) -> tuple[int, str]:
    """The CPU time the application's thread spends on each submission, and the setting it comes
    from: DxgkDdiRender (``cpu_cost.render``) under physical addressing, nothing under GPU virtual
    addressing with the software scheduler (DxgkDdiSubmitCommandVirtual costs the application
    nothing), DxgkDdiSubmitCommandToHwQueue (``cpu_cost.submit``) under hardware scheduling."""
    adapter = scenario.adapter
    if adapter.scheduling == "hardware":
        return adapter.cpu_cost.submit, "adapter.cpu_cost.submit"
    if adapter.gpu_va:
        return 0, "GPU virtual addressing under the software scheduler"
    return adapter.cpu_cost.render, "adapter.cpu_cost.render"


def _repeat_fits(scenario: Scenario, start: int, packet: ScriptPacket) -> int | None:
    """How many of a script packet's repeats can matter to the run: the application's thread
    submits them one after the other, each costing it :func:`_submission_cost`, from the packet's
    time on, so submission k ends no earlier than k such costs later; those that end after the end
    of the run are never seen, and one more than the rest keeps the thread busy to the end. None
    when submissions cost nothing (every repeat is queued at once)."""
    cost, _ = _submission_cost(scenario)
    if cost == 0:
        return None
    return max(0, scenario.duration - start - packet.at) // cost + 1


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
                                 f"several lines, and a million takes the simulator tens of seconds): use a longer interval or a shorter duration"))
    for where, w, packet in _script_packets(scenario):
        if packet.repeat <= MAX_REPEAT:
            continue
        fits = _repeat_fits(scenario, w.start, packet)
        if fits is None or fits > MAX_REPEAT:
            cost, source = _submission_cost(scenario)
            room = (f"submissions cost the application no CPU time ({source}), so every repeat is queued "
                    f"at once" if fits is None else
                    f"{show(fits, '')} submissions of {format_duration(cost)} ({source}) fit in the run")
            problems.append((where, f"must be at most {show(MAX_REPEAT, '')}, got {show(packet.repeat, '')}: "
                                    f"{room}; one packets entry submits at most {show(MAX_REPEAT, '')}: split "
                                    f"them over several entries"))
    return problems


def _script_packets(scenario: Scenario):
    """Every ``packets`` entry of every script workload: (the location of its ``repeat``, the
    workload, the entry)."""
    for p, process in enumerate(scenario.process):
        for c, context in enumerate(process.context):
            w = context.workload
            if w.kind == "script":
                for k, packet in enumerate(w.packets):
                    yield ("process", p, "context", c, "workload", "packets", k, "repeat"), w, packet


def scenario_clamps(scenario: Scenario) -> list[tuple[Location, str]]:
    """Values the run takes otherwise than written, or that cannot have the effect they ask for,
    each with a warning saying so, with locations from the top of the scenario: a script packet's
    ``repeat`` above 1,000,000 that the run has no time to submit is cut to the submissions the
    run sees (the run is the same, event for event); a fault due at or after the end of the run
    never happens. Cuts are made on ``scenario``."""
    notes: list[tuple[Location, str]] = []
    end = scenario.duration
    for f, fault in enumerate(scenario.fault):
        if fault.at is not None and fault.at >= end:
            notes.append((("fault", f, "at"), f"{format_duration(fault.at)} is not before the end of the run "
                                              f"(duration {format_duration(end)}): the fault never happens"))
    for where, w, packet in _script_packets(scenario):
        fits = _repeat_fits(scenario, w.start, packet)
        if packet.repeat > MAX_REPEAT and fits is not None and fits <= MAX_REPEAT:
            cost, source = _submission_cost(scenario)
            notes.append((where, f"{show(packet.repeat, '')} submissions of {format_duration(cost)} each ({source}) "
                                 f"cannot be made in the {format_duration(max(0, end - w.start - packet.at))} left "
                                 f"of the run (duration {format_duration(end)}): taken as {show(fits, '')}, as many "
                                 f"as the run sees"))
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
    pid: int_in(1, U32, WHY_PID) | None = None
    #: the node its composition runs on (default: the adapter's first)
    node: str | None = None
    vidpn_source: int_in(0, 15, WHY_SOURCE) = 0
    #: its swap chain's address as PresentMon shows it
    address: str | None = Field(default=None, pattern=r"^0x[0-9A-Fa-f]{1,16}$")
    #: CPU time from the vsync it wakes at to its present call
    cpu: Duration = ns("100us")
    #: GPU time of one composition
    work: Duration = ns("500us")
    #: compositions in a row of a full-screen flip-model swap chain, alone on the source, before
    #: the compositor lets it flip independently
    independent_flip_after: int_in(1, 1000, "the model's limit on compositions before an independent flip") = 2
    #: desktop updates, in increasing ``at`` order
    update: Annotated[list[CompositorUpdate], entries_in(0, 1_000_000, WHY_LIST_BIG)] = Field(default_factory=list)

    @field_validator("update")
    @classmethod
    def _updates_in_order(cls, value: list[CompositorUpdate]) -> list[CompositorUpdate]:
        return ordered(value, strict=False)


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
    seed: int_in(0, U64, "a seed is a 64-bit unsigned number") = 0
    #: virtual time to simulate
    duration: Annotated[int, BeforeValidator(parse_duration), RUN_DURATION] = ns("1s")
    adapter: AdapterTable = Field(default_factory=AdapterTable)
    #: the driver and its settings (the reference driver with its defaults when absent)
    driver: Annotated[Driver, BeforeValidator(_driver_table)] = Field(default_factory=Driver)
    scheduler: Scheduler = Field(default_factory=Scheduler)
    tdr: Tdr = Field(default_factory=Tdr)
    fault: Annotated[list[Fault], entries_in(0, 1000, "the model's limit on injected faults")] = Field(default_factory=list)
    #: monitored fences shared by the processes (chain workloads name them)
    fence: Annotated[list[FenceSpec], entries_in(0, 1024, "the model's limit on shared fences")] = Field(
        default_factory=list)
    process: Annotated[list[ProcessTable], entries_in(1, 1024, "the model's limit on processes")]
    #: D3DKMT calls the processes make while the run goes on
    call: Annotated[list[Call], entries_in(0, 10_000, WHY_CALLS)] = Field(default_factory=list)
    #: the desktop compositor, one table per display it composes
    compositor: Annotated[list[Compositor], entries_in(0, 16, "one compositor per display, and an adapter has at most 16")] = Field(
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
