"""What runs on the machine: ``[[process]]`` tables with their GPU contexts, and the monitored
fences they share (``[[fence]]``).

A process has a priority class, a video memory budget over time and one or more contexts; a
context submits to one node, driven by its workload (:mod:`.workloads`), with its priority, the
hardware-scheduling settings of its queues and bands, and the scheduling hints a research policy
reads (docs/policies.md). Each table checks its own fields; what names another table (a node, a
fence) is checked once the whole scenario is read (:mod:`.consistency`).
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import Field, field_validator

from .adapter import BandTime
from .bounds import MAX_DURATION
from .fields import (PAGE, U32, U64, WHY_CALLS, WHY_FENCE_VALUE, WHY_PID, Duration, ScenarioModel, entries_in, int_in,
                     ns, real_in, size_in, time_in)
from .workloads import Workload

__all__ = ["PRIVILEGED_BANDS", "PRIVILEGED_CLASSES", "PROCESS_PRIORITIES", "BudgetChange", "Context", "FenceSpec",
           "HintTime", "ProcessPriority", "ProcessTable", "Utilization", "Weight"]

ProcessPriority = Literal["idle", "below_normal", "normal", "above_normal", "high", "realtime"]

#: The scheduling priority classes a process may have, lowest first.
PROCESS_PRIORITIES: tuple[str, ...] = get_args(ProcessPriority)

Weight = real_in(0, 1e6, "a share against the other contexts of the node: above 0, at most a million times another's",
                  lo_open=True)
HintTime = time_in(1_000, MAX_DURATION, "a period or deadline of a microsecond at least, within the longest run "
                                         "(1 hour)")
Utilization = real_in(0, 1, "a fraction of the node's GPU time, above 0 and at most 1", lo_open=True)


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
    quantum: BandTime | None = None
    grace_same: BandTime = 0
    grace_lower: BandTime = 0
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
    weight: Weight = 1.0
    period: HintTime | None = None
    deadline: HintTime | None = None
    utilization: Utilization | None = None


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
PRIVILEGED_BANDS = ("focus", "realtime")
PRIVILEGED_CLASSES = ("high", "realtime")


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

