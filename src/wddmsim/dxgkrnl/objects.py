"""The OS's objects: processes, devices, contexts, allocations and the packets that carry DMA
buffers through the scheduler.

Each object has a kernel handle (a D3DKMT_HANDLE-style number from :class:`HandleTable`) and, where
the driver created a counterpart, the driver's handle for it (``hDriver``), which is what crosses
the DDI.

Spec: Microsoft's "Submitting a command buffer" page; the reference pages for DxgkDdiCreateDevice,
DxgkDdiCreateContext and DXGK_CONTEXTINFO; the "TDR changes in Windows 8" page (nodes and engines).
"""

from __future__ import annotations

from collections import deque

from .hints import SchedulingHints
from .stats import LatencyStats

#: Scheduling priority classes (D3DKMT_SCHEDULINGPRIORITYCLASS order).
PRIORITY_CLASSES = ("idle", "below_normal", "normal", "above_normal", "high", "realtime")


class HandleTable:
    """Kernel handles: 0x40000000 + 0x40 * index, the shape D3DKMT handles have."""

    __slots__ = ("_objects", "_next")

    def __init__(self):
        self._objects: dict[int, object] = {}
        self._next = 0

    def add(self, obj) -> int:
        self._next += 1
        h = 0x4000_0000 + 0x40 * self._next
        self._objects[h] = obj
        return h

    def get(self, handle: int):
        return self._objects.get(handle)

    def remove(self, handle: int) -> None:
        self._objects.pop(handle, None)

    def __len__(self) -> int:
        return len(self._objects)


class Process:
    __slots__ = ("handle", "name", "priority_class", "devices", "pid", "virtual_machine", "hKmdProcess", "budget")

    def __init__(self, name: str, priority_class: str, pid: int):
        if priority_class not in PRIORITY_CLASSES:
            raise ValueError(f"priority class must be one of {', '.join(PRIORITY_CLASSES)}, got {priority_class!r}")
        self.handle = 0
        self.name = name
        self.priority_class = priority_class
        self.devices: list[Device] = []
        self.pid = pid
        self.virtual_machine = False  # a guest on a paravirtualized adapter (Flags.VirtualMachineData)
        self.hKmdProcess = 0  # the driver's process object (DxgkDdiCreateProcess, GPU-VA adapters)
        self.budget = None  # bytes of local video memory the OS lets it keep resident (None: no cap)


class Device:
    __slots__ = ("handle", "process", "hDriver", "contexts", "info", "allocations", "error", "error_reason")

    def __init__(self, process: Process):
        self.handle = 0
        self.process = process
        self.hDriver = 0
        self.contexts: list[Context] = []
        self.info = None  # DXGK_DEVICEINFO (driver that is not MultiEngineAware)
        self.allocations: list[Allocation] = []
        self.error = False
        self.error_reason = ""  # why it went to error (the DeviceError event's reason)


class Context:
    """A GPU context: its node, its software queue and its counters.

    ``submitted`` counts packets accepted from the API; ``completed`` counts packets retired; a CPU
    waiter for packet ``n`` (1-based) wakes when ``completed >= n``.
    """

    __slots__ = (
        "handle", "name", "device", "node", "priority", "hDriver", "info", "queue", "submitted",
        "completed", "waiters", "ready", "ready_since", "turn_start", "latencies", "gpu_packets",
        "last_dispatch", "seq", "hDdi", "null_packets", "preempted", "aborted", "cancelled",
        "removed_at", "api_error", "destroyed", "system", "workload_allocations",
        "hw", "hwqueues", "band", "sched", "suspended", "gates", "virtual_packets",
        "wait_since", "worst_wait", "gpu_ns", "contended", "hints", "sched_view", "job_release",
        "job_deadline", "jobs", "preemptions", "preemption_cost",
    )

    def __init__(self, name: str, device: Device, node: int, priority: int):
        self.handle = 0
        self.name = name
        self.device = device
        self.node = node
        self.priority = priority
        self.hDriver = 0
        self.hDdi = 0  # the handle the DDI carries: hContext, or hDevice for a non-MEA driver
        self.info = None  # DXGK_CONTEXTINFO
        self.queue: deque[Packet] = deque()
        self.submitted = 0
        self.completed = 0
        self.waiters: list = []
        self.ready = False
        self.ready_since = 0
        self.turn_start = 0
        self.latencies = LatencyStats()
        self.gpu_packets = 0
        self.last_dispatch = -1
        self.seq = 0
        self.null_packets = 0
        self.preempted = 0  # packets of this context taken back by preemption
        self.aborted = 0  # packets a reset abandoned mid-execution
        self.cancelled = 0  # packets dropped from the queues when the device went to error
        self.removed_at = -1  # when the workload saw STATUS_DEVICE_REMOVED
        self.api_error = ""  # the NTSTATUS name of a failed API call that ended the workload
        self.destroyed = False  # D3DKMTDestroyContext was called
        self.workload_allocations = ()  # allocations its workload made (for tests and reports)
        self.system = False  # a system context of VidMm (paging, context switches): above every process
        # Hardware scheduling (dxgkrnl/hwscheduling.py): a hardware context with its queues and band.
        self.hw = False
        self.hwqueues: list = []
        self.band = ""
        self.sched: dict = {}
        self.suspended = False
        # GPU virtual addressing under the software scheduler (dxgkrnl/vidsch.py): GPU waits, each
        # [seq, fence, value, wait token]: its packets after ``seq`` wait until the fence reaches
        # ``value`` (rule 103). None until the context's first wait.
        self.gates = None
        self.virtual_packets = 0  # packets its user-mode driver built at GPU virtual addresses
        # Scheduling quality under the software scheduler (dxgkrnl/vidsch.py): since when it has had
        # work it could run without running (-1: not waiting), its longest such wait, its GPU time,
        # and whether the node was ever handed from it to another context or to it from another.
        self.wait_since = -1
        self.worst_wait = 0
        self.gpu_ns = 0
        self.contended = False
        # Research scheduling (wddmsim.policies): the application's hints (a model extension), the
        # context as a research policy sees it (made on first use), and when its current job (a
        # frame) was released (-1: each packet is a job of its own, released when queued).
        self.hints = SchedulingHints()
        self.sched_view = None
        self.job_release = -1
        # Research measures (the summary's): the relative deadline in force at the current job's
        # release (None: none), its jobs with a deadline (a dxgkrnl.deadlines.ContextJobs, made at
        # the first), how often a running packet of it was preempted, and the GPU time those
        # preemptions cost by the GPU's own account (None: no account, see dxgkrnl/preemption.py).
        self.job_deadline = None
        self.jobs = None
        self.preemptions = 0
        self.preemption_cost = 0

    @property
    def in_flight(self) -> int:
        """Packets handed to the driver and not yet retired (or aborted)."""
        return self.submitted - self.completed - self.aborted - self.cancelled - len(self.queue)

    @property
    def process(self) -> Process:
        return self.device.process

    @property
    def full_name(self) -> str:
        return f"{self.device.process.name}/{self.name}"

    @property
    def effective_priority(self) -> int:
        """Class priority first, then the context's own priority (-7..7); system contexts first."""
        if self.system:
            return 1 << 16
        return PRIORITY_CLASSES.index(self.device.process.priority_class) * 16 + self.priority


class Allocation:
    """Video memory: where it is now (``segment_id`` and ``address`` while resident, else 0) and
    its content in system memory (``backing``) while evicted. VidMm moves it (:mod:`.vidmm`)."""

    __slots__ = ("handle", "device", "size", "segment_id", "address", "resident", "valid", "backing",
                 "in_use", "last_use", "evictions", "pins", "preference", "va", "moving", "offered", "discarded")

    def __init__(self, device: Device, size: int, segment_id: int = 0, address: int = 0):
        self.handle = 0
        self.device = device
        self.size = size
        self.segment_id = segment_id
        self.address = address
        self.resident = segment_id != 0
        self.valid = False  # it has content a move must keep
        self.backing = 0  # system memory holding the content while evicted
        self.in_use = 0  # submitted packets referencing it, not yet retired
        self.last_use = 0
        self.evictions = 0
        self.pins = 0  # packets it was made resident for that are not submitted yet
        self.preference = "memory"  # "memory" or "aperture" segment
        self.va = 0  # GPU virtual address in its process's space (0: not mapped)
        self.moving = None  # the last paging packet VidMm queued to move it, until it retires
        self.offered = False  # D3DKMTOfferAllocations: VidMm may drop its content rather than move it
        self.discarded = False  # offered and evicted without its content, until reclaimed


class Packet:
    """A DMA buffer on its way through the scheduler.

    Times are virtual ns: ``queued`` (entered the context's software queue), ``submitted``
    (DxgkDdiSubmitCommand returned), ``started`` (reached the bottom of the node's hardware queue),
    ``done`` (the ISR reported its fence), ``retired`` (the DPC finished it).
    """

    __slots__ = (
        "context", "seq", "kind", "flags", "dma", "dma_size", "start_off", "end_off", "priv",
        "priv_size", "alist", "alist_n", "plist", "plist_n", "fence", "queued", "submitted",
        "started", "done", "retired", "buffers", "vidpn_source", "flip_interval", "executed",
        "submit_bytes", "preempted", "surface", "present_t", "displayed", "allocations", "deps",
        "priv_start", "priv_end", "pinned", "moves", "va", "umd_priv", "rejected", "ran_at", "release", "job",
        "mmio", "vblank_wait",
    )

    def __init__(self, context: Context, seq: int, kind: str):
        self.context = context
        self.seq = seq
        self.kind = kind
        self.flags = 0
        self.dma = 0
        self.dma_size = 0
        self.start_off = 0
        self.end_off = 0
        self.priv = 0
        self.priv_size = 0
        self.alist = 0
        self.alist_n = 0
        self.plist = 0
        self.plist_n = 0
        self.fence = 0
        self.queued = 0
        self.submitted = -1
        self.started = -1
        self.done = -1
        self.retired = -1
        self.buffers = None
        self.vidpn_source = 0
        self.flip_interval = 0
        self.executed = False  # the GPU fetched this packet's DMA buffer (NullRendering checks)
        # When an engine finished executing its submitted range (engine time; -1: not yet; None:
        # nothing to run). Ground truth for the checks of dxgkrnl/groundtruth.py.
        self.ran_at = None
        self.submit_bytes = b""  # its DXGKARG_SUBMITCOMMAND, kept for judging it at completion
        self.preempted = False  # taken back by a preemption or a reset at least once (resubmissions)
        self.surface = 0  # a flip's surface address
        self.mmio = False  # a flip the OS makes with DxgkDdiSetVidPnSourceAddress (no DMA buffer)
        self.vblank_wait = False  # a legacy flip: made no sooner than the first vsync after the present call
        self.present_t = -1  # when the application presented (present packets)
        self.displayed = -1  # when a VidPn source first showed it
        self.allocations = ()  # the Allocation of each allocation-list entry (None: unbound)
        self.deps = None  # paging packets it waits for
        self.priv_start = 0  # its range of the private data (paging buffers share one)
        self.priv_end = -1  # -1: to the end (priv_size)
        self.pinned = False  # VidMm keeps its allocations resident until it is submitted
        self.moves = None  # a paging packet: the Allocation it moves
        # GPU virtual addressing (DxgkDdiSubmitCommandVirtual): the buffer's GPU virtual address in
        # its process's space (0: a physical DMA buffer), the bytes of private data the user-mode
        # driver passed, and whether the driver refused it with STATUS_INVALID_PARAMETER.
        self.va = 0
        self.umd_priv = 0
        self.rejected = False
        self.release = 0  # when its job began (a frame's start; else when it was queued)
        self.job = None  # its job with a deadline, until it completes (dxgkrnl/deadlines.py)
