"""``ReferenceDriver``: a display miniport for the GPU model.

What it does at each entry point (the flow of Microsoft's "Submitting a command buffer" page, seen
from the driver):

- ``DxgkDdiStartDevice``: takes the OS's callback interface, gives every engine a ring and a fence
  slot in contiguous system memory, and connects nothing itself (the OS owns the interrupt line and
  calls ``DxgkDdiInterruptRoutine``).
- ``DxgkDdiQueryAdapterInfo``: ``DXGK_DRIVERCAPS`` members (``MultiEngineAware`` as configured, one
  node per engine) and a ``DXGK_SEGMENTDESCRIPTOR`` per GPU segment; ``DxgkDdiGetNodeMetadata``:
  each node's engine type.
- ``DxgkDdiCreateDevice`` / ``DxgkDdiCreateContext``: driver objects and handles; the context (or,
  for a driver that is not multiple-engine aware, the device) asks for its DMA buffer, private data,
  allocation list and patch list sizes. DMA buffers live in contiguous system memory
  (``DmaBufferSegmentSet = 0``).
- ``DxgkDdiRender``: validates the user-mode command buffer (GPU commands whose address fields are
  patched from allocations), copies it to the DMA buffer, turns the input patch list into the
  output list with DMA-buffer offsets, pre-patches allocations whose segment is known, and writes
  its private data record. FENCE, FLIP and INDIRECT are privileged.
- ``DxgkDdiPresent``: a blt from the source allocation to the destination (a COPY of the rectangle's
  bytes) or a flip of the source (FLIP), with patch locations for both.
- ``DxgkDdiPatch``: writes each allocation's final address at the patch offsets of the range.
- ``DxgkDdiSubmitCommand``: an INDIRECT packet for ``DmaBufferSubmissionStartOffset..EndOffset`` and
  a FENCE of ``SubmissionFenceId`` (with interrupt) on the node's ring, then the doorbell.
  ``NullRendering`` puts only the FENCE on the ring.
- ``DxgkDdiInterruptRoutine``: returns FALSE if the GPU did not interrupt; otherwise dismisses the
  causes, reads each interrupting node's fence slot and reports a newer fence with
  ``DXGK_INTERRUPT_DMA_COMPLETED``, then queues its DPC.
- ``DxgkDdiDpcRoutine``: ``DxgkCbNotifyDpc``.
- ``DxgkDdiCancelCommand`` (CancelCommandAware, Windows 8 and later) checks and clears the
  cancelled packet's private data record; ``DxgkDdiDestroyContext`` forgets the context.
- ``DxgkDdiQueryCurrentFence``: reports any newer completed fence through ``DxgkCbNotifyInterrupt``
  (inside ``DxgkCbSynchronizeExecution``) before returning it.
- ``DxgkDdiPreemptCommand`` (a preemption-aware driver): if the node has finished and reported every
  submitted fence, it reports ``DMA_PREEMPTED`` itself inside ``DxgkCbSynchronizeExecution``;
  otherwise it asks the engine to stop. The ISR answers the engine's preemption cause with
  ``DMA_PREEMPTED`` (``PreemptionFenceId``, ``LastCompletedFenceId`` read from the fence slot), keeps
  the engine's saved progress for the interrupted DMA buffer and empties the ring. When the OS
  submits that buffer again the ring gets the WORK still owed, then an INDIRECT from the command the
  engine stopped before: the resubmitted packet does exactly the work that was left.
- Page faults (WDDM 2.0 and later): when an engine stops on a fault the ISR reports
  ``DXGK_INTERRUPT_DMA_PAGE_FAULTED`` with the fence of the submission that was executing (or 0 and
  ``FENCE_INVALID`` when none was), ``ENGINE_RESET_REQUIRED`` (``ADAPTER_RESET_REQUIRED`` without
  per-engine reset), ``FATAL_HARDWARE_ERROR`` when the hardware says so, the faulting address and
  a general ``PAGE_FAULT`` error code. Older drivers cannot report it; the OS's timeout finds them.
- ``DxgkDdiBuildPagingBuffer``: TRANSFER is a COPY between the two addresses (a segment
  address, or for segment 0 the system memory the MDL describes: the model's MDL is the physical
  address of its first page, plus ``MdlOffset`` pages); FILL a FILL; DISCARD_CONTENT needs no
  command; MAP/UNMAP_APERTURE_SEGMENT program the GART directly (MMIO). Each operation also gets a
  16-byte private-data record. A buffer without room answers
  ``STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER``. With ``paging_transfer_chunk`` a TRANSFER is one
  COPY per chunk; when they do not all fit, the driver writes those that do, keeps the bytes done
  in ``MultipassOffset`` and answers ``STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER`` (multipass).
- Flips: ``DxgkDdiPresent`` with ``Flip`` or ``FlipWithNoWait`` puts a FLIP of the source surface
  with the present's ``FlipInterval`` into the DMA buffer (no-wait flips go to the display's
  pending-flip registers, ``MaxQueuedFlipOnVSync`` deep, reported in the caps with
  ``FlipOnVSyncWithNoWait`` and ``FlipInterval``). When a flip latches at a vsync the ISR reports
  ``DXGK_INTERRUPT_CRTC_VSYNC`` with the source's target id and the address now scanned out.
  ``DxgkDdiControlInterrupt(DXGK_INTERRUPT_CRTC_VSYNC, Enable)`` writes every source's vsync
  interrupt enable register (the call names no source): enabled, each source raises its vsync cause
  at every vsync and the ISR reports each one; any other interrupt type is
  ``STATUS_NOT_IMPLEMENTED``. With ``mmio_flips`` (by default as preemption-aware, which needs it:
  rule 64, PreemptionAwareNeedsMmioFlip: ``wddmsim rules 64``, docs/rules.md) it declares
  ``FlipOnVSyncMmIo`` and ``FlipImmediateMmIo``: ``DxgkDdiPresent`` then gets no DMA buffer for a
  flip and writes nothing, and ``DxgkDdiSetVidPnSourceAddress`` (device IRQL) writes the source's
  scanout address register, at once for ``FlipImmediate`` (and ``ModeChange``), else into the
  pending-address register that latches at the next vsync, which the ISR reports with
  ``CRTC_VSYNC`` and the new address.
- Multiplane overlays (the ``overlay_planes`` setting; kmd/overlay.py): ``SupportMultiPlaneOverlay``
  and ``MaxOverlayPlanes``, ``DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3`` writing each
  plane's address and enable registers, ``DxgkDdiCheckMultiPlaneOverlaySupport3``, and after a
  source's ``CRTC_VSYNC`` a ``CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2`` naming the PresentId each plane
  latched.
- The hardware flip queue (the ``max_hw_queued_flips`` setting, WDDM 3.0, when the OS enables it:
  kmd/flipqueue.py): ``MaxHwQueuedFlips``, MPO3 flips written into the display's per-plane queues
  with their ``TargetFlipTime`` (STATUS_RETRY with ``HwFlipQueueDrainNeeded`` when a queue is
  full), ``DxgkDdiSetFlipQueueLogBuffer``, ``DxgkDdiUpdateFlipQueueLog``, ``DxgkDdiCancelFlips``,
  ``DxgkDdiSetInterruptTargetPresentId``, and the log reported with
  ``CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY3``.
- Recovery: ``DxgkDdiQueryEngineStatus`` answers Responsive unless the engine left a
  preemption request unanswered or faulted; ``DxgkDdiQueryDependentEngineGroup`` answers the node
  alone (no engine depends on another here); ``DxgkDdiResetEngine`` resets the engine, empties the ring and returns
  the fence of the submission it aborted mid-execution (the last completed one when none was
  running) as ``LastAbortedFenceId``; ``DxgkDdiResetFromTimeout`` resets every engine and sets each
  node's fence slot to its last submitted fence; ``DxgkDdiRestartFromTimeout`` has nothing to do.

Handles: the driver's device and context handles are small numbers it chooses; ``hAdapter`` is the
number the OS passes back in every call.

Spec: Microsoft's reference pages for each entry point it implements (DxgkDdiSubmitCommand and
DXGKARG_SUBMITCOMMAND, DxgkDdiRender, DxgkDdiPresent, DxgkDdiPatch, DxgkDdiCreateContext,
DxgkDdiGetNodeMetadata, DxgkDdiInterruptRoutine, DxgkDdiDpcRoutine, DxgkDdiQueryCurrentFence, ...)
and its "Threading and synchronization model of display miniport driver" page; docs/driver.md.
"""

from __future__ import annotations

import ctypes
import struct
from bisect import bisect_right
from collections import deque

from ..ddi import layout
from ..ddi.fenceid import U32, after
from ..ddi.enums import (
    DXGK_BUILDPAGINGBUFFER_OPERATION,
    DXGK_INTERRUPT_TYPE,
    DXGK_PAGETABLEUPDATEMODE,
    DXGK_QUERYADAPTERINFOTYPE,
)
from ..ddi.interface import DeviceInfo, DxgkrnlInterface
from ..ddi.ntstatus import NTSTATUS
from ..ddi.registry import RECORDS
from ..ddi.versions import ddi_version, wddm_version_of
from ..gpu import commands as C
from ..gpu import mmio
from ..gpu.mmio import FAULT_BIT, PAGE_SIZE, PREEMPT_SHIFT, UNKNOWN_BIT, VSYNC_SHIFT
from .wddm2 import HWQUEUE_RING_BUFFERS, KmdWddm2
from .nativefence import NativeFenceDdi
from .flipqueue import FlipQueueDdi
from .overlay import OverlayDdi
from .settings import Settings

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
_DMA_COMPLETED = int(DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_COMPLETED)
_PRIVILEGED_INSTRUCTION = int(NTSTATUS.STATUS_PRIVILEGED_INSTRUCTION)
_ILLEGAL_INSTRUCTION = int(NTSTATUS.STATUS_ILLEGAL_INSTRUCTION)
_DMA_PREEMPTED = int(DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_PREEMPTED)
_DMA_PAGE_FAULTED = int(DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_PAGE_FAULTED)
_CRTC_VSYNC = int(DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_CRTC_VSYNC)
_OP_TRANSFER = int(DXGK_BUILDPAGINGBUFFER_OPERATION.DXGK_OPERATION_TRANSFER)
_OP_FILL = int(DXGK_BUILDPAGINGBUFFER_OPERATION.DXGK_OPERATION_FILL)
_OP_DISCARD = int(DXGK_BUILDPAGINGBUFFER_OPERATION.DXGK_OPERATION_DISCARD_CONTENT)
_OP_MAP_APERTURE = int(DXGK_BUILDPAGINGBUFFER_OPERATION.DXGK_OPERATION_MAP_APERTURE_SEGMENT)
_OP_UNMAP_APERTURE = int(DXGK_BUILDPAGINGBUFFER_OPERATION.DXGK_OPERATION_UNMAP_APERTURE_SEGMENT)
_QAI_DRIVERCAPS = int(DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_DRIVERCAPS)
_QAI_QUERYSEGMENT = int(DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_QUERYSEGMENT)
_QAI_UMDRIVERPRIVATE = int(DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_UMDRIVERPRIVATE)
_QAI_NATIVE_FENCE_CAPS = int(DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_NATIVE_FENCE_CAPS)
#: Paging buffers the driver asks VidMm for (DXGK_QUERYSEGMENTOUT): ``paging_buffer_size`` bytes of
#: commands (a setting, 64 KiB by default) and 4 KiB of private data each, in contiguous system memory.
PAGING_PRIVATE_SIZE = 4096
_FENCE_INVALID = 0x2
_ADAPTER_RESET_REQUIRED = 0x4
_ENGINE_RESET_REQUIRED = 0x8
_FATAL_HARDWARE_ERROR = 0x10
#: "unknown" values of the page-fault arm (d3dkmddi.h, WDDM 2.0)
PRIMITIVE_API_SEQUENCE_NUMBER_UNKNOWN = 0xFFFF_FFFF_FFFF_FFFF
BIND_TABLE_ENTRY_UNKNOWN = 0xFFFF_FFFF

#: D3DKMDT_GRAPHICS/COMPUTE_PREEMPTION_GRANULARITY for each engine granularity of the GPU model.
GRANULARITY_CAPS = {"none": 0, "dma_buffer": 100, "primitive": 200, "interval": 300, "instruction": 500}
_COARSEST = ("none", "dma_buffer", "primitive", "interval", "instruction")

#: DXGK_ENGINE_TYPE for each engine kind of the GPU model (compute engines report OTHER with the
#: friendly name "Compute", as Windows' compute nodes do).
ENGINE_TYPES = {
    "3d": (1, ""),
    "video_decode": (2, ""),
    "video_encode": (3, ""),
    "video_processing": (4, ""),
    "copy": (6, ""),
    "compute": (0, "Compute"),
    "other": (0, "Other"),
}

#: The driver's private data record at the start of each DMA buffer's private data:
#: magic, context handle, bytes of commands rendered, commands rendered.
PRIVATE_MAGIC = 0x444D_5752  # "RWMD"
_PRIVATE = struct.Struct("<IIII")
PRIVATE_DATA_SIZE = 32
#: The private data record of one paging operation: magic, operation, bytes of commands, size moved.
PAGING_MAGIC = 0x504D_5752  # "RWMP"
_PAGING_PRIVATE = struct.Struct("<IIII")
_COPY_BYTES = len(C.copy(0, 0, 0))  # one COPY command

#: Opcodes a user-mode command buffer may hold; the others are privileged.
USER_OPCODES = frozenset({C.NOP, C.WORK, C.FILL, C.COPY, C.WAIT, C.TIMESTAMP})
#: Where each user command's address fields sit (offset from the packet start), for patching.
ADDRESS_FIELDS = {
    C.FILL: (C.FILL_DST,),
    C.COPY: (C.COPY_SRC, C.COPY_DST),
    C.WAIT: (C.WAIT_ADDR,),
    C.TIMESTAMP: (C.TIMESTAMP_ADDR,),
}

_INDIRECT_SIZE = 16
_FENCE_SIZE = 20


class _Device:
    __slots__ = ("handle", "os_handle", "contexts")

    def __init__(self, handle: int, os_handle: int):
        self.handle = handle
        self.os_handle = os_handle
        self.contexts: list[int] = []


class _Context:
    __slots__ = ("handle", "device", "node")

    def __init__(self, handle: int, device: _Device, node: int):
        self.handle = handle
        self.device = device
        self.node = node


class _Node:
    """The driver's per-node state: its ring and fence slot (the engine is the one of the same
    number), fence bookkeeping."""

    __slots__ = ("ordinal", "ring", "ring_size", "wptr", "fence_addr", "last_submitted",
                 "last_reported", "interrupt_data", "preempt_fence", "inflight", "refused", "refused_through")

    def __init__(self, ordinal: int, ring: int, ring_size: int, fence_addr: int):
        self.ordinal = ordinal
        self.ring = ring
        self.ring_size = ring_size
        self.wptr = 0
        self.fence_addr = fence_addr
        self.last_submitted = 0
        self.last_reported = 0
        self.interrupt_data = None
        self.preempt_fence = 0  # PreemptionFenceId of the request the engine is answering
        #: submissions on the ring not yet reported complete: (fence, buffer address, first offset,
        #: WORK owed from an earlier preemption)
        self.inflight: deque = deque()
        self.refused: set[int] = set()  # SubmissionFenceIds refused with STATUS_INVALID_PARAMETER
        self.refused_through = None  # the completed fence those carried the node to


class ReferenceDriver(KmdWddm2, NativeFenceDdi, OverlayDdi, FlipQueueDdi):
    """The project's display miniport driver for the GPU model.

    Constructed with one :class:`~wddmsim.ddi.interface.DeviceInfo`: the GPU's register interface
    (``info.gpu``, a :class:`wddmsim.gpu.mmio.Mmio`, kept as ``self.hw``), system memory
    (``info.memory``, kept as ``self.mem``) and its settings (``info.settings``, the scenario's
    ``[driver]`` table, validated by :class:`~wddmsim.kmd.settings.Settings`). It reaches the GPU
    through nothing else.

    ``multi_engine_aware`` selects which kind of driver the DXGKARG_SUBMITCOMMAND page describes: True reports
    ``DXGK_VIDSCHCAPS.MultiEngineAware`` and works with contexts (the OS passes ``hContext``);
    False exposes one node and works with devices (the OS passes ``hDevice``).
    """

    HANDLE_BASE = 0x1000
    #: The user-mode half of this driver (the registry's UserModeDriverName).
    UserModeDriverName = "wddmsim.umd:ReferenceUmd"
    #: What a scenario's ``[driver]`` table may say to it.
    Settings = Settings

    def __init__(self, info: DeviceInfo):
        s = Settings.model_validate(dict(info.settings or {}))
        self.settings = s
        # The register interface is all the driver keeps of the hardware (docs/gpu-programming.md).
        self.hw: mmio.Mmio = info.gpu
        self.mem = info.memory
        self.version = ddi_version(s.ddi_version)
        #: DriverEntry's DRIVER_INITIALIZATION_DATA.Version: what the OS lays its structures out for
        self.DXGKDDI_INTERFACE_VERSION = self.version.value
        self.arch = arch = "x64"
        multi_engine_aware = s.multi_engine_aware
        self.multi_engine_aware = multi_engine_aware
        win8 = multi_engine_aware and self.version.value >= ddi_version("win8").value
        # PreemptionAware needs MultiEngineAware and the Windows 8 preemption model (WDDM 1.2).
        self.preemption_aware = win8 if s.preemption_aware is None else s.preemption_aware
        self.per_engine_reset = win8 if s.per_engine_reset is None else s.per_engine_reset
        self.cancel_aware = win8 if s.cancel_aware is None else s.cancel_aware
        self.mmio_flips = self.preemption_aware if s.mmio_flips is None else s.mmio_flips
        wddm2 = self.version.value >= ddi_version("wddm2_0").value
        self.virtual_addressing = wddm2 if s.virtual_addressing is None else s.virtual_addressing
        hws = self.version.value >= ddi_version("wddm2_5").value and multi_engine_aware
        self.hardware_scheduling_supported = hws if s.hardware_scheduling is None else s.hardware_scheduling
        self.cancelled = 0  # packets the OS cancelled through DxgkDdiCancelCommand
        self.paging_operations = 0  # operations written by DxgkDdiBuildPagingBuffer
        self.paging_passes = 0  # partial transfers answered STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER
        # (context handle, address space root, DMA buffer address) -> (next offset, WORK owed):
        # where a preempted buffer resumes when the OS submits it again. Physical buffers have root
        # 0; two processes may use one virtual address. A preempted packet whose device then goes to
        # error is never submitted again and the OS does not say so (DxgkDdiCancelCommand is only
        # for packets that never reached the hardware queue): the context in the key keeps a later
        # buffer at the same address from resuming there, and DxgkDdiDestroyContext forgets them.
        self._resume: dict[tuple[int, int, int], tuple[int, int]] = {}
        names = [self.hw.engine_info(i).name for i in range(self.hw.engine_count)]
        engines = [s.engines.get(name) for name in names]
        self.ring_sizes = [e.ring_size if e is not None and e.ring_size else s.ring_size for e in engines]
        self.dma_buffer_size = s.dma_buffer_size
        self.hAdapter = 0xA0
        self.dxgk: DxgkrnlInterface | None = None
        self.nodes: list[_Node] = []
        self.devices: dict[int, _Device] = {}
        self.contexts: dict[int, _Context] = {}
        self._next_handle = self.HANDLE_BASE
        self._plist = layout.ctype(RECORDS["D3DDDI_PATCHLOCATIONLIST"], arch, self.version)
        self._alist = layout.ctype(RECORDS["DXGK_ALLOCATIONLIST"], arch, self.version)
        self._interrupt_cls = layout.ctype(RECORDS["DXGKARGCB_NOTIFY_INTERRUPT_DATA"], arch, self.version)
        # Before the Windows 8 headers DXGKARG_SUBMITCOMMAND has no NodeOrdinal: the context says.
        self._vsync_data = self._interrupt_cls()
        self._can_report_faults = hasattr(self._interrupt_cls, "DmaPageFaulted")
        self._submit_has_node = hasattr(layout.ctype(RECORDS["DXGKARG_SUBMITCOMMAND"], arch, self.version),
                                        "NodeOrdinal")
        #: where paging buffers run (DXGK_VIDMMCAPS.PagingNode): the first copy engine, else node 0
        kinds = [self.hw.engine_info(i).kind for i in range(self.hw.engine_count)]
        self.paging_node = kinds.index("copy") if multi_engine_aware and "copy" in kinds else 0
        self.reads_of_private_data = 0
        self.faults_seen = 0  # engine fault causes seen by the ISR
        self.unknown_causes = 0  # interrupts whose causes no engine owns (dismissed)
        # WDDM 2.x (kmd/wddm2.py): GPU virtual addressing and hardware scheduling. The OS turns
        # hardware scheduling on by calling DxgkDdiSetupPriorityBands.
        self.hw_scheduling = False
        self.fence_release = [bool(e and e.ring_buffer_fence_release) for e in engines]  # RingBufferFenceRelease
        # MaxInFlightHwQueueBuffers: unset, what one hardware queue's ring holds (kmd/wddm2.py), so
        # that no burst the OS may send overflows it.
        self.max_in_flight = [e.max_in_flight_hw_queue_buffers if e and e.max_in_flight_hw_queue_buffers is not None
                              else HWQUEUE_RING_BUFFERS for e in engines]
        # DXGK_VIDSCHCAPS.No64BitAtomics (WDDM 2.0): the GPU writes monitored fences 32 bits at a time
        self.no64bit_atomics = s.no64bit_atomics
        self.vsync_power_save_aware = s.vsync_power_save_aware
        self.roots: dict[int, int] = {}  # context handle -> root page table
        self._ring_roots: dict[int, int] = {}  # node -> address space the ring last ran
        self.processes: dict[int, int] = {}  # driver process handle -> Dxgkrnl's process handle
        # DXGK_INTERRUPT_MONITORED_FENCE_SIGNALED exists from WDDM 2.2; before it the ISR only
        # queues its DPC, in which the OS reads the monitored fences that have waiters.
        self._fence_interrupt = self.version.value >= ddi_version("wddm2_2").value
        self.hwcontexts: dict = {}
        self.hwqueues: dict = {}
        self.contexts_node: dict[int, int] = {}
        self.bands = None
        self.PRIVATE_MAGIC = PRIVATE_MAGIC
        self._OP_UPDATE_PAGE_TABLE = int(DXGK_BUILDPAGINGBUFFER_OPERATION.DXGK_OPERATION_UPDATE_PAGE_TABLE)
        self._OP_FLUSH_TLB = int(DXGK_BUILDPAGINGBUFFER_OPERATION.DXGK_OPERATION_FLUSH_TLB)
        self._GPU_PHYSICAL = int(DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_GPU_PHYSICAL)
        if wddm2:
            self._pte_cls = layout.ctype(RECORDS["DXGK_PTE"], arch, self.version)
            self._pte_size = ctypes.sizeof(self._pte_cls)
        # DXGK_VIDSCHCAPS.NativeGpuFence (kmd/nativefence.py)
        self._native_init(s.native_fence and self.hardware_scheduling_supported)
        # multiplane overlays (kmd/overlay.py): SupportMultiPlaneOverlay, MaxOverlayPlanes, the MPO3 DDIs
        self._overlay_init(s.overlay_planes)
        # the hardware flip queue (kmd/flipqueue.py): MaxHwQueuedFlips once the OS enables it
        self._flipqueue_init(s.max_hw_queued_flips)
        if self.hardware_scheduling_supported:
            self._suspend_shift = mmio.SUSPEND_SHIFT
            self._invalidate_args = layout.ctype(RECORDS["DXGKARGCB_INVALIDATEHWCONTEXT"], arch, self.version)()

    # -- helpers ------------------------------------------------------------------------------------
    @property
    def node_count(self) -> int:
        return self.hw.engine_count if self.multi_engine_aware else 1

    def _handle(self) -> int:
        self._next_handle += 0x10
        return self._next_handle

    def _node_of(self, handle: int) -> int:
        """The node a context handle (or, for a non-MEA driver, a device handle) submits to."""
        if self.multi_engine_aware:
            ctx = self.contexts.get(handle)
            return ctx.node if ctx is not None else -1
        return 0 if handle in self.devices else -1

    def _struct(self, name: str):
        """A zeroed DDI structure of this driver's version."""
        return layout.ctype(RECORDS[name], self.arch, self.version)()

    # -- adapter ------------------------------------------------------------------------------------
    def DxgkDdiStartDevice(self, DxgkInterface: DxgkrnlInterface) -> int:
        """Keep the callback interface; give each node's engine a ring and a fence slot."""
        self.dxgk = DxgkInterface
        fences = DxgkInterface.MmAllocateContiguousMemory(PAGE_SIZE)
        for ordinal in range(self.node_count):
            size = self.ring_sizes[ordinal]
            ring = DxgkInterface.MmAllocateContiguousMemory(size)
            self.hw.program_ring(ordinal, ring, size)  # under hardware scheduling the GPU's scheduler takes it over
            node = _Node(ordinal, ring, size, fences + 8 * ordinal)
            node.interrupt_data = self._interrupt_cls()
            self.nodes.append(node)
        self._overlay_start(DxgkInterface)
        return SUCCESS

    def DxgkDdiQueryAdapterInfo(self, hAdapter: int, pQueryAdapterInfo) -> int:
        """``DXGK_DRIVERCAPS``, the segments (``DXGK_QUERYSEGMENTOUT``) or the user-mode half's
        private data, written where ``pOutputData`` points."""
        args = pQueryAdapterInfo
        kind = args.Type
        if kind == _QAI_DRIVERCAPS:
            out = self._caps()
        elif kind == _QAI_QUERYSEGMENT:
            return self._query_segments(args)
        elif kind == _QAI_UMDRIVERPRIVATE:
            out = struct.pack("<I", PRIVATE_MAGIC)  # the user-mode half learns its record's magic
        elif kind == _QAI_NATIVE_FENCE_CAPS and self.native_fence:
            out = self._native_caps()
        else:
            return int(NTSTATUS.STATUS_NOT_SUPPORTED)
        data = bytes(out)
        if args.OutputDataSize < len(data):
            return int(NTSTATUS.STATUS_BUFFER_TOO_SMALL)
        self.mem.write(args.pOutputData, data)
        return SUCCESS

    def _caps(self):
        """What this driver declares (DXGK_DRIVERCAPS)."""
        hw = self.hw
        infos = [hw.engine_info(i) for i in range(hw.engine_count)]

        def coarsest(compute):
            grans = [e.preemption for e in infos if (e.kind == "compute") == compute]
            return GRANULARITY_CAPS[min(grans, key=_COARSEST.index)] if grans else 0

        c = self._struct("DXGK_DRIVERCAPS")
        c.HighestAcceptableAddress.QuadPart = (1 << 40) - 1  # system memory below LOCAL_BASE
        c.MaxAllocationListSlotId = 64
        c.InterruptMessageNumber = 0
        c.MaxQueuedFlipOnVSync = hw.flip_queue_depth(0) if hw.display_count else 1
        c.FlipCaps.FlipOnVSyncWithNoWait = 1
        c.FlipCaps.FlipInterval = 1
        # MMIO flips at the next vsync (DxgkDdiSetVidPnSourceAddress): by default from WDDM 1.2 (win8)
        # on, as preemption_aware; a preemption-aware driver must declare them (rule 64: the Windows 8
        # scheduler preempts while flips are pending). Immediate MMIO flips come with them (Windows 7+).
        c.FlipCaps.FlipOnVSyncMmIo = 1 if self.mmio_flips else 0
        if self.mmio_flips and hasattr(c.FlipCaps, "FlipImmediateMmIo"):
            c.FlipCaps.FlipImmediateMmIo = 1
        sc = c.SchedulingCaps
        sc.MultiEngineAware = 1 if self.multi_engine_aware else 0
        sc.VSyncPowerSaveAware = 1 if self.vsync_power_save_aware else 0
        if hasattr(sc, "PreemptionAware"):
            sc.PreemptionAware = 1 if self.preemption_aware else 0
            sc.CancelCommandAware = 1 if self.cancel_aware else 0
        if hasattr(sc, "No64BitAtomics"):
            sc.No64BitAtomics = 1 if self.no64bit_atomics else 0
        if hasattr(sc, "NativeGpuFence"):
            # Reported only once the OS says it enabled the feature ("Native GPU fence objects").
            if self.native_fence and not self.dxgk.DxgkCbIsFeatureEnabled(self.dxgk.DeviceHandle, "NATIVE_FENCE"):
                self.native_fence = False
            sc.NativeGpuFence = 1 if self.native_fence else 0
        mm = c.MemoryManagementCaps
        if hasattr(mm, "VirtualAddressingSupported"):
            mm.VirtualAddressingSupported = 1 if self.virtual_addressing else 0
            mm.GpuMmuSupported = 1 if self.virtual_addressing else 0
        mm.PagingNode = self.paging_node
        c.GpuEngineTopology.NbAsymetricProcessingNodes = hw.engine_count
        if hasattr(c, "WDDMVersion"):
            c.WDDMVersion = int(wddm_version_of(self.version))
        if hasattr(c, "PreemptionCaps"):
            # The coarsest granularity of the engines that run that kind of work.
            c.PreemptionCaps.GraphicsPreemptionGranularity = coarsest(False) if self.preemption_aware else 0
            c.PreemptionCaps.ComputePreemptionGranularity = coarsest(True) if self.preemption_aware else 0
            c.SupportPerEngineTDR = 1 if self.per_engine_reset else 0
        self._overlay_caps(c)
        self._flipqueue_caps(c)
        return c

    def _query_segments(self, a) -> int:
        """DXGK_QUERYSEGMENTOUT: the count when pSegmentDescriptor is NULL, else the descriptors and
        the paging buffers' sizes."""
        out_cls = layout.ctype(RECORDS["DXGK_QUERYSEGMENTOUT"], self.arch, self.version)
        if a.OutputDataSize < ctypes.sizeof(out_cls):
            return int(NTSTATUS.STATUS_BUFFER_TOO_SMALL)
        out = out_cls.from_buffer_copy(self.mem.read(a.pOutputData, ctypes.sizeof(out_cls)))
        segments = self.hw.segments
        if out.pSegmentDescriptor:
            if out.NbSegment < len(segments):
                return int(NTSTATUS.STATUS_BUFFER_TOO_SMALL)
            cls = layout.ctype(RECORDS["DXGK_SEGMENTDESCRIPTOR"], self.arch, self.version)
            blob = bytearray()
            for seg in segments:
                d = cls()
                d.BaseAddress.QuadPart = seg.base
                d.CpuTranslatedAddress.QuadPart = seg.cpu_base
                d.Size = seg.size
                d.CommitLimit = seg.size
                d.Flags.Aperture = 1 if seg.aperture else 0
                d.Flags.CpuVisible = 1 if seg.cpu_visible else 0
                blob += bytes(d)
            self.mem.write(out.pSegmentDescriptor, bytes(blob))
            out.PagingBufferSegmentId = 0  # contiguous system memory
            out.PagingBufferSize = self.settings.paging_buffer_size
            out.PagingBufferPrivateDataSize = PAGING_PRIVATE_SIZE
        out.NbSegment = len(segments)
        self.mem.write(a.pOutputData, bytes(out))
        return SUCCESS

    def DxgkDdiGetNodeMetadata(self, hAdapter: int, NodeOrdinalAndAdapterIndex: int, pGetNodeMetadata) -> int:
        """Each node's ``DXGK_ENGINE_TYPE`` (and friendly name when it is OTHER) and, from WDDM 2.2,
        its scheduling flags."""
        ordinal = NodeOrdinalAndAdapterIndex & 0xFFFF
        if not 0 <= ordinal < self.hw.engine_count:
            return int(NTSTATUS.STATUS_INVALID_PARAMETER)
        kind = self.hw.engine_info(ordinal).kind
        etype, friendly = ENGINE_TYPES.get(kind, (0, kind.title()))
        pGetNodeMetadata.EngineType = etype
        if self.hardware_scheduling_supported and hasattr(pGetNodeMetadata, "Flags"):
            pGetNodeMetadata.Flags.ContextSchedulingSupported = 1
            pGetNodeMetadata.Flags.RingBufferFenceRelease = 1 if self.fence_release[ordinal] else 0
            pGetNodeMetadata.Flags.MaxInFlightHwQueueBuffers = self.max_in_flight[ordinal]
        if hasattr(pGetNodeMetadata, "GpuMmuSupported"):
            pGetNodeMetadata.GpuMmuSupported = 1 if self.virtual_addressing else 0
        name = pGetNodeMetadata.FriendlyName  # WCHAR[32], zero-terminated
        for i in range(len(name)):
            name[i] = ord(friendly[i]) if i < len(friendly) else 0
        return SUCCESS

    # -- devices and contexts -------------------------------------------------------------------------
    def _fill_sizes(self, info) -> None:
        info.DmaBufferSize = self.dma_buffer_size
        info.DmaBufferSegmentSet = 0
        info.DmaBufferPrivateDataSize = PRIVATE_DATA_SIZE
        info.AllocationListSize = 64
        info.PatchLocationListSize = 256

    def DxgkDdiCreateDevice(self, hAdapter: int, pCreateDevice) -> int:
        """A driver device; a non-MEA driver also answers its DMA buffer sizes in ``pInfo``."""
        dev = _Device(self._handle(), pCreateDevice.hDevice)
        self.devices[dev.handle] = dev
        pCreateDevice.hDevice = dev.handle
        if not self.multi_engine_aware and pCreateDevice.pInfo:
            info = layout.ctype(RECORDS["DXGK_DEVICEINFO"], self.arch, self.version)()
            self._fill_sizes(info)
            self.mem.write(pCreateDevice.pInfo, bytes(info))
        return SUCCESS

    def DxgkDdiCreateContext(self, hDevice: int, pCreateContext) -> int:
        """A context on ``NodeOrdinal``; its ``DXGK_CONTEXTINFO`` says how big its buffers are."""
        dev = self.devices.get(hDevice)
        if dev is None or not 0 <= pCreateContext.NodeOrdinal < self.node_count:
            return int(NTSTATUS.STATUS_INVALID_PARAMETER)
        ctx = _Context(self._handle(), dev, pCreateContext.NodeOrdinal)
        self.contexts[ctx.handle] = ctx
        dev.contexts.append(ctx.handle)
        pCreateContext.hContext = ctx.handle
        self._fill_sizes(pCreateContext.ContextInfo)
        return SUCCESS

    def DxgkDdiDestroyContext(self, hContext: int) -> int:
        """Forget a context; the OS calls it once none of its packets is on the hardware."""
        ctx = self.contexts.pop(hContext, None)
        if ctx is None:
            return int(NTSTATUS.STATUS_INVALID_HANDLE)
        ctx.device.contexts.remove(hContext)
        if self._resume:
            for key in [k for k in self._resume if k[0] == hContext]:
                del self._resume[key]
        return SUCCESS

    def DxgkDdiCancelCommand(self, hAdapter: int, pCancelCommand) -> int:
        """A packet that will never reach the hardware: nothing of it is held here but its private
        data record, which is checked and cleared."""
        args = pCancelCommand
        if self._node_of(args.hContext) < 0:
            return int(NTSTATUS.STATUS_INVALID_HANDLE)
        if args.DmaBufferPrivateDataSize:
            if self.mem.read_u32(args.pDmaBufferPrivateData) != PRIVATE_MAGIC:
                return int(NTSTATUS.STATUS_INVALID_PARAMETER)
            self.mem.write_u32(args.pDmaBufferPrivateData, 0)
        self.cancelled += 1
        return SUCCESS

    # -- building DMA buffers -----------------------------------------------------------------------------
    def DxgkDdiRender(self, hContext: int, pRender) -> int:
        """Validate and copy a user-mode command buffer into the DMA buffer (see the module doc)."""
        if self._node_of(hContext) < 0:
            return int(NTSTATUS.STATUS_INVALID_HANDLE)
        n = pRender.CommandLength
        if n > pRender.DmaSize:
            return int(NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER)
        mem = self.mem
        data = mem.read(pRender.pCommand, n)
        starts = []  # each command's offset in the command buffer (split points, rule 30)
        packets, error = C.scan(data)
        for offset, opcode in packets:
            if opcode not in USER_OPCODES:
                return _PRIVILEGED_INSTRUCTION
            starts.append(offset)
        if error is not None:
            return _ILLEGAL_INSTRUCTION
        count = len(starts)
        dma = pRender.pDmaBuffer
        dma_start = pRender.DmaBufferPhysicalAddress.QuadPart
        mem.write(dma, data)
        # Patch list: input offsets are into the command buffer; output ones into the DMA buffer,
        # which this render starts at offset (pDmaBuffer - start of the buffer).
        nin = pRender.PatchLocationListInSize
        if nin:
            if nin > pRender.PatchLocationListOutSize:
                return int(NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER)
            psize = ctypes.sizeof(self._plist)
            asize = ctypes.sizeof(self._alist)
            base_off = dma - dma_start if dma_start else 0
            raw = mem.read(pRender.pPatchLocationListIn, nin * psize)
            out = []
            for i in range(nin):
                pl = self._plist.from_buffer_copy(raw, i * psize)
                if pl.AllocationIndex >= pRender.AllocationListSize or pl.PatchOffset + 8 > n:
                    return int(NTSTATUS.STATUS_INVALID_PARAMETER)
                # The split point of an allocation is the start of the command that uses it: the
                # buffer can run up to there without it (Microsoft's "Splitting a DMA buffer").
                pl.SplitOffset = base_off + starts[bisect_right(starts, pl.PatchOffset) - 1]
                pl.PatchOffset += base_off
                out.append(pl)
                al = self._alist.from_buffer_copy(mem.read(pRender.pAllocationList + pl.AllocationIndex * asize, asize))
                if al.SegmentId:
                    # Pre-patch: the OS may skip DxgkDdiPatch for this buffer (DxgkDdiRender's page).
                    mem.write_u64(dma + pl.PatchOffset - base_off, al.PhysicalAddress.QuadPart + pl.AllocationOffset)
            # In the order the stream uses the allocations (rule 30), whatever the input order.
            out.sort(key=lambda pl: pl.SplitOffset)
            mem.write(pRender.pPatchLocationListOut, b"".join(bytes(pl) for pl in out))
            pRender.pPatchLocationListOut += nin * psize
        if pRender.pDmaBufferPrivateData and pRender.DmaBufferPrivateDataSize >= _PRIVATE.size:
            mem.write(pRender.pDmaBufferPrivateData, _PRIVATE.pack(PRIVATE_MAGIC, hContext & 0xFFFFFFFF, n, count))
        pRender.pDmaBuffer = dma + n
        return SUCCESS

    def DxgkDdiBuildPagingBuffer(self, hAdapter: int, pBuildPagingBuffer) -> int:
        """The commands of one paging operation (see the module doc)."""
        args = pBuildPagingBuffer
        op = args.Operation
        if op == self._OP_UPDATE_PAGE_TABLE or op == self._OP_FLUSH_TLB:
            return self._build_page_table_ops(args)
        cmds = b""
        moved = 0
        if op == _OP_TRANSFER:
            return self._build_transfer(args)
        elif op == _OP_FILL:
            f = args.Fill
            moved = f.FillSize
            cmds = C.fill(f.Destination.SegmentAddress.QuadPart, moved, f.FillPattern)
        elif op == _OP_DISCARD:
            pass
        elif op in (_OP_MAP_APERTURE, _OP_UNMAP_APERTURE):
            arm = args.MapApertureSegment if op == _OP_MAP_APERTURE else args.UnmapApertureSegment
            base = self._segment_base(arm.SegmentId) + arm.OffsetInPages * PAGE_SIZE
            size = arm.NumberOfPages * PAGE_SIZE
            if op == _OP_MAP_APERTURE:
                self.hw.map_aperture(base, arm.pMdl + getattr(arm, "MdlOffset", 0) * PAGE_SIZE, size)
            else:
                # Unmapped pages must point at the dummy page: GPU accesses through them keep working.
                dummy = arm.DummyPage.QuadPart
                for off in range(0, size, PAGE_SIZE):
                    self.hw.map_aperture(base + off, dummy, PAGE_SIZE)
            moved = size
        else:
            return int(NTSTATUS.STATUS_NOT_SUPPORTED)
        if len(cmds) > args.DmaSize or args.DmaBufferPrivateDataSize < _PAGING_PRIVATE.size:
            return int(NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER)
        if cmds:
            self.mem.write(args.pDmaBuffer, cmds)
        self.mem.write(args.pDmaBufferPrivateData, _PAGING_PRIVATE.pack(PAGING_MAGIC, int(op), len(cmds), moved & 0xFFFFFFFF))
        args.pDmaBuffer += len(cmds)
        args.DmaSize -= len(cmds)
        args.pDmaBufferPrivateData += _PAGING_PRIVATE.size
        args.DmaBufferPrivateDataSize -= _PAGING_PRIVATE.size
        self.paging_operations += 1
        return SUCCESS

    def _build_transfer(self, args) -> int:
        """A TRANSFER: COPYs of at most ``paging_transfer_chunk`` bytes (the whole transfer in one
        without a chunk). When they do not all fit the room left in the paging buffer, as many as
        fit are written and the bytes done so far kept in ``MultipassOffset``, answered with
        STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER: VidMm submits that part and calls again with the
        same operation in a new buffer (Microsoft's DxgkDdiBuildPagingBuffer page)."""
        t = args.Transfer
        size = t.TransferSize
        mdl_offset = getattr(t, "MdlOffset", 0)  # a Windows 7 member
        src = self._paging_address(t.Source, mdl_offset) + t.TransferOffset
        dst = self._paging_address(t.Destination, mdl_offset) + t.TransferOffset
        chunk = self.settings.paging_transfer_chunk or max(size, 1)
        done = start = args.MultipassOffset
        room = args.DmaSize // _COPY_BYTES if args.DmaBufferPrivateDataSize >= _PAGING_PRIVATE.size else 0
        pieces = []
        while done < size and len(pieces) < room:
            n = min(chunk, size - done)
            pieces.append(C.copy(src + done, dst + done, n))
            done += n
        if done < size and not pieces:
            return int(NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER)
        if args.DmaBufferPrivateDataSize < _PAGING_PRIVATE.size:
            return int(NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER)
        cmds = b"".join(pieces)
        if cmds:
            self.mem.write(args.pDmaBuffer, cmds)
        self.mem.write(args.pDmaBufferPrivateData,
                       _PAGING_PRIVATE.pack(PAGING_MAGIC, _OP_TRANSFER, len(cmds), (done - start) & 0xFFFFFFFF))
        args.pDmaBuffer += len(cmds)
        args.DmaSize -= len(cmds)
        args.pDmaBufferPrivateData += _PAGING_PRIVATE.size
        args.DmaBufferPrivateDataSize -= _PAGING_PRIVATE.size
        if done < size:
            args.MultipassOffset = done
            self.paging_passes += 1
            return int(NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER)
        self.paging_operations += 1
        return SUCCESS

    def _segment_base(self, segment_id: int) -> int:
        return self.hw.segments[segment_id - 1].base

    def _paging_address(self, side, mdl_offset: int) -> int:
        if side.SegmentId:
            return side.SegmentAddress.QuadPart
        return side.pMdl + mdl_offset * PAGE_SIZE

    def DxgkDdiPresent(self, hContext: int, pPresent) -> int:
        """A blt (COPY of the source rectangle's bytes, 4 bytes a pixel) or a flip of the source."""
        if self._node_of(hContext) < 0:
            return int(NTSTATUS.STATUS_INVALID_HANDLE)
        flags = pPresent.Flags
        if flags.Flip and not pPresent.pDmaBuffer:
            # An MMIO flip (FlipOnVSyncMmIo): no DMA buffer to write; the OS flips the source with
            # DxgkDdiSetVidPnSourceAddress.
            return SUCCESS
        cb = C.CommandBuffer()
        patches = []
        if flags.Flip:
            off = cb.mark()
            cb.flip(0, 0, int(pPresent.FlipInterval), no_wait=bool(flags.FlipWithNoWait))
            patches.append((1, off + C.FLIP_SURFACE))
        elif flags.Blt:
            r = pPresent.SrcRect
            size = max(0, r.right - r.left) * max(0, r.bottom - r.top) * 4
            off = cb.mark()
            cb.copy(0, 0, size)
            patches.append((1, off + C.COPY_SRC))
            patches.append((2, off + C.COPY_DST))
        else:
            return int(NTSTATUS.STATUS_INVALID_PARAMETER)
        data = cb.data
        if len(data) > pPresent.DmaSize:
            return int(NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER)
        if len(patches) > pPresent.PatchLocationListOutSize:
            return int(NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER)
        mem = self.mem
        dma = pPresent.pDmaBuffer
        dma_start = pPresent.DmaBufferPhysicalAddress.QuadPart
        base_off = dma - dma_start if dma_start else 0
        mem.write(dma, data)
        asize = ctypes.sizeof(self._alist)
        out = bytearray()
        for index, offset in patches:
            pl = self._plist()
            pl.AllocationIndex = index
            pl.PatchOffset = base_off + offset
            pl.SplitOffset = base_off  # the one command of the present uses both allocations
            out += bytes(pl)
            al = self._alist.from_buffer_copy(mem.read(pPresent.pAllocationList + index * asize, asize))
            if al.SegmentId:
                mem.write_u64(dma + offset, al.PhysicalAddress.QuadPart)
        mem.write(pPresent.pPatchLocationListOut, bytes(out))
        pPresent.pPatchLocationListOut += len(out)
        if pPresent.pDmaBufferPrivateData and pPresent.DmaBufferPrivateDataSize >= _PRIVATE.size:
            mem.write(pPresent.pDmaBufferPrivateData, _PRIVATE.pack(PRIVATE_MAGIC, hContext & 0xFFFFFFFF, len(data), 1))
        pPresent.pDmaBuffer = dma + len(data)
        return SUCCESS

    def DxgkDdiPatch(self, hAdapter: int, pPatch) -> int:
        """Write final allocation addresses at the patch offsets of the submitted range."""
        count = pPatch.PatchLocationListSubmissionLength
        if not count:
            return SUCCESS
        mem = self.mem
        psize = ctypes.sizeof(self._plist)
        asize = ctypes.sizeof(self._alist)
        first = pPatch.PatchLocationListSubmissionStart
        raw = mem.read(pPatch.pPatchLocationList + first * psize, count * psize)
        alist = mem.read(pPatch.pAllocationList, pPatch.AllocationListSize * asize)
        dma = pPatch.pDmaBuffer
        for i in range(count):
            pl = self._plist.from_buffer_copy(raw, i * psize)
            al = self._alist.from_buffer_copy(alist, pl.AllocationIndex * asize)
            mem.write_u64(dma + pl.PatchOffset, al.PhysicalAddress.QuadPart + pl.AllocationOffset)
        return SUCCESS

    # -- submission -------------------------------------------------------------------------------------
    def _ring_put(self, ring: int, size: int, wptr: int, rptr: int, packet: bytes) -> int | None:
        """Write ``packet`` into the ring at ``ring`` (``size`` bytes, the engine has fetched up to
        ``rptr``) from ``wptr``: the new write pointer, or None if there is no room. A packet never
        wraps: the end of the ring is padded with one NOP."""
        n = len(packet)
        free = (rptr - wptr - 4) % size
        if wptr + n > size:
            pad = size - wptr
            if free < pad + n:
                return None
            self.mem.write(ring + wptr, C.nop(pad // 4))
            wptr = 0
            free -= pad
        if free < n:
            return None
        self.mem.write(ring + wptr, packet)
        return (wptr + n) % size

    def _ring_write(self, node: _Node, packet: bytes) -> bool:
        """Append ``packet`` to a node's ring (False: the ring is full)."""
        wptr = self._ring_put(node.ring, node.ring_size, node.wptr, self.hw.rptr(node.ordinal), packet)
        if wptr is None:
            return False
        node.wptr = wptr
        return True

    def DxgkDdiSubmitCommand(self, hAdapter: int, pSubmitCommand) -> int:
        """INDIRECT to the submitted range plus FENCE of SubmissionFenceId, then the doorbell."""
        args = pSubmitCommand
        if not self.multi_engine_aware:
            ordinal = 0
        elif self._submit_has_node:
            ordinal = args.NodeOrdinal
        elif args.hContext:
            ordinal = self._node_of(args.hContext)
        else:
            ordinal = self.paging_node  # a paging submission without a context (before Windows 8)
        if not 0 <= ordinal < len(self.nodes):
            return int(NTSTATUS.STATUS_INVALID_PARAMETER)
        node = self.nodes[ordinal]
        flags = args.Flags.Value  # Paging is bit 0, NullRendering bit 3, Flip/FlipWithNoWait bits 4-5
        if args.DmaBufferPrivateDataSize:
            # Rule 21: private data is validated only when there is some.
            self.reads_of_private_data += 1
            magic = self.mem.read_u32(args.pDmaBufferPrivateData)
            if magic != PRIVATE_MAGIC and not flags & 0x1:
                return int(NTSTATUS.STATUS_INVALID_PARAMETER)
        start = args.DmaBufferSubmissionStartOffset
        length = args.DmaBufferSubmissionEndOffset - start
        fence_id = args.SubmissionFenceId
        if flags & 0x30 and length:
            # A flip: DxgkDdiPresent did not know the VidPn source; the submission says which.
            self._aim_flips(args.DmaBufferPhysicalAddress.QuadPart + start, length, args.VidPnSourceId)
        # The ring may last have run a buffer in a GPU virtual address space: back to physical.
        packet = self._switch_root(node, 0) if self._ring_roots else b""
        fence = C.fence(node.fence_addr, fence_id, interrupt=True)
        if length and not flags & 0x8:
            packet += self._buffer_call(node, fence_id, args.DmaBufferPhysicalAddress.QuadPart + start, length,
                                        owner=args.hContext)
        packet += fence
        # _ring_write, inline
        wptr = self._ring_put(node.ring, node.ring_size, node.wptr, self.hw.rptr(node.ordinal), packet)
        if wptr is None:
            return int(NTSTATUS.STATUS_UNSUCCESSFUL)
        node.wptr = wptr
        if not node.last_submitted or after(fence_id, node.last_submitted):
            node.last_submitted = fence_id
        self.hw.doorbell(node.ordinal, node.wptr)
        return SUCCESS

    def _buffer_call(self, node: _Node, fence: int, address: int, length: int, root: int = 0,
                     owner: int = 0) -> bytes:
        """The ring commands that run the buffer at ``address`` (physical, or virtual in the address
        space ``root``, which the ring must be in) for the context ``owner``: an INDIRECT to all of
        it, or for a buffer a preemption stopped, the WORK it still owed and an INDIRECT to the
        commands not yet run. Recorded as in flight."""
        saved = self._resume.pop((owner, root, address), None) if self._resume else None
        if saved is None:
            offset = owed = 0
            packet = C.indirect(address, length)
        else:
            offset, owed = saved
            packet = (C.work(owed) if owed else b"") + \
                (C.indirect(address + offset, length - offset) if offset < length else b"")
        node.inflight.append((fence, address, offset, owed, root, owner))
        return packet

    def _switch_root(self, node: _Node, root: int) -> bytes:
        """SET_ADDRESS_SPACE to ``root`` if the ring is not already in it (0: physical addressing)."""
        if self._ring_roots.get(node.ordinal, 0) == root:
            return b""
        self._ring_roots[node.ordinal] = root
        return C.set_address_space(root)

    def _aim_flips(self, address: int, length: int, source: int) -> None:
        """Write ``source`` into every FLIP command of the buffer range."""
        data = self.mem.read(address, length)
        for cmd in C.iter_commands(data):
            if cmd.opcode == C.FLIP:
                self.mem.write_u32(address + cmd.offset + C.FLIP_SOURCE, source)

    # -- completion ----------------------------------------------------------------------------------------
    def _completed(self, node: _Node) -> int:
        """The node's last completed fence: its fence slot, carried through the ids the driver
        refused with STATUS_INVALID_PARAMETER (the OS counts each complete once the fence before it
        is, as DxgkDdiSubmitCommandVirtual's page says; fence ids of a node are consecutive)."""
        value = self.mem.read_u64(node.fence_addr) & U32
        refused = node.refused
        if refused:
            if node.refused_through is not None and after(node.refused_through, value):
                value = node.refused_through
            while (value + 1) & U32 in refused:
                value = (value + 1) & U32
                refused.discard(value)
            node.refused_through = value  # the slot stays behind until a later fence passes it
        elif node.refused_through is not None:
            if after(node.refused_through, value):
                value = node.refused_through
            else:
                node.refused_through = None  # the slot has caught up
        return value

    def _report_completed(self, node: _Node) -> bool:
        """Report the node's fence slot if it moved since the last report (device IRQL)."""
        value = self._completed(node)
        if value == node.last_reported:
            return False
        node.last_reported = value
        inflight = node.inflight
        while inflight and not after(inflight[0][0], value):
            inflight.popleft()
        data = node.interrupt_data
        data.InterruptType = _DMA_COMPLETED
        dc = data.DmaCompleted  # (each read of a ctypes member structure makes a new view)
        dc.SubmissionFenceId = value
        dc.NodeOrdinal = node.ordinal
        dc.EngineOrdinal = 0
        self.dxgk.DxgkCbNotifyInterrupt(self.dxgk.DeviceHandle, data)
        return True

    def DxgkDdiInterruptRoutine(self, MiniportDeviceContext: int, MessageNumber: int) -> bool:
        """FALSE if the GPU did not interrupt; else dismiss, report fences, queue the DPC."""
        hw = self.hw
        status = hw.irq_status()
        if not status:
            return False
        hw.irq_ack(status)
        if self.hw_scheduling:
            for node in self.nodes:
                self._hw_isr(status, node)
                if self._native_shift:
                    self._native_isr(status, node)
            if status & FAULT_BIT:
                self.faults_seen += 1
            if status & UNKNOWN_BIT:
                self.unknown_causes += 1
            self._report_vsyncs(status)
            self.dxgk.DxgkCbQueueDpc(self.dxgk.DeviceHandle)
            return True
        for node in self.nodes:
            if status & (1 << node.ordinal) and not self._report_completed(node) and self.roots \
                    and self._fence_interrupt:
                # The node's fence did not move: a buffer wrote a monitored fence with interrupt.
                self._report_monitored_fence(node)
        if status >> PREEMPT_SHIFT:
            for node in self.nodes:
                if status & (1 << (PREEMPT_SHIFT + node.ordinal)):
                    self._report_preempted(node)
        self._report_vsyncs(status)
        if status & UNKNOWN_BIT:
            self.unknown_causes += 1
        if status & FAULT_BIT:
            self.faults_seen += 1
            if self._can_report_faults:
                for node in self.nodes:
                    if hw.fault(node.ordinal) is not None:
                        # A fault record is latched: report it, then release the latch.
                        self._report_page_fault(node)
                        hw.fault_ack(node.ordinal)
        self.dxgk.DxgkCbQueueDpc(self.dxgk.DeviceHandle)
        return True

    def DxgkDdiDpcRoutine(self, MiniportDeviceContext: int) -> None:
        """Tell the scheduler to process what the ISR reported."""
        self.dxgk.DxgkCbNotifyDpc(self.dxgk.DeviceHandle)

    def DxgkDdiControlInterrupt(self, hAdapter: int, InterruptType: int, EnableInterrupt: bool) -> int:
        """CRTC_VSYNC on or off on every source's vsync interrupt register; no other type."""
        if InterruptType != _CRTC_VSYNC:
            return int(NTSTATUS.STATUS_NOT_IMPLEMENTED)
        if self.flip_queue_on:
            self._fq_control(bool(EnableInterrupt))  # with the interrupt targets (kmd/flipqueue.py)
            return SUCCESS
        hw = self.hw
        for source in range(hw.display_count):
            hw.vsync_interrupt(source, bool(EnableInterrupt))
        return SUCCESS

    # -- MMIO flips ----------------------------------------------------------------------------------------
    def DxgkDdiSetVidPnSourceAddress(self, hAdapter: int, pSetVidPnSourceAddress) -> int:
        """Write the source's scanout address register (device IRQL): at once for ModeChange and
        FlipImmediate, else into the pending-address register, which latches at the next vsync; the
        ISR then reports CRTC_VSYNC with the new address (and the DPC calls DxgkCbNotifyDpc)."""
        args = pSetVidPnSourceAddress
        source = args.VidPnSourceId
        if not 0 <= source < self.hw.display_count:
            return int(NTSTATUS.STATUS_UNSUCCESSFUL)  # the OS names only its sources
        flags = args.Flags
        self.hw.set_scanout_address(source, args.PrimaryAddress.QuadPart,
                                    immediate=bool(flags.ModeChange or flags.FlipImmediate))
        return SUCCESS

    # -- preemption ----------------------------------------------------------------------------------------
    def DxgkDdiPreemptCommand(self, hAdapter: int, pPreemptCommand) -> int:
        """Ask the node's engine to stop, or report the preemption at once if it has nothing left."""
        args = pPreemptCommand
        ordinal = args.NodeOrdinal
        if not self.preemption_aware or not 0 <= ordinal < len(self.nodes):
            return int(NTSTATUS.STATUS_INVALID_PARAMETER)
        node = self.nodes[ordinal]
        node.preempt_fence = args.PreemptionFenceId
        done = self._completed(node)
        st = self.hw.status(ordinal)
        if (st == mmio.IDLE or st == mmio.PREEMPTED) and done == node.last_submitted == node.last_reported:
            # Everything submitted finished and was reported: the hardware is not asked; the
            # preemption is reported from here, and the DPC lets the scheduler act on it.
            self.dxgk.DxgkCbSynchronizeExecution(self.dxgk.DeviceHandle, self._report_preempted, node, 0)
            self.dxgk.DxgkCbQueueDpc(self.dxgk.DeviceHandle)
        else:
            self.hw.preempt(ordinal)
        return SUCCESS

    def _report_preempted(self, node: _Node) -> bool:
        """DMA_PREEMPTED for the node's outstanding request (device IRQL); empties the ring."""
        hw = self.hw
        ordinal = node.ordinal
        value = self._completed(node)
        node.last_reported = value
        inflight = node.inflight
        while inflight and not after(inflight[0][0], value):
            inflight.popleft()
        self._keep_unfinished(node, hw.preempt_state(ordinal))
        st = hw.status(ordinal)
        if st == mmio.PREEMPTED or st == mmio.IDLE:
            hw.reset_ring(ordinal)
            node.wptr = 0
        data = node.interrupt_data
        data.InterruptType = _DMA_PREEMPTED
        data.DmaPreempted.PreemptionFenceId = node.preempt_fence
        data.DmaPreempted.LastCompletedFenceId = value
        data.DmaPreempted.NodeOrdinal = node.ordinal
        data.DmaPreempted.EngineOrdinal = 0
        node.preempt_fence = 0
        self.dxgk.DxgkCbNotifyInterrupt(self.dxgk.DeviceHandle, data)
        return True

    def _report_vsyncs(self, status: int) -> None:
        """CRTC_VSYNC for every source whose vsync cause is in ``status`` (after the DMA events)."""
        if status >> VSYNC_SHIFT:
            for source in range(self.hw.display_count):
                if status & (1 << (VSYNC_SHIFT + source)):
                    self._report_vsync(source)

    def _report_vsync(self, source: int) -> None:
        """CRTC_VSYNC: the address the source scans out since this vsync (device IRQL)."""
        data = self._vsync_data
        data.InterruptType = _CRTC_VSYNC
        data.CrtcVsync.VidPnTargetId = source
        data.CrtcVsync.PhysicalAddress.QuadPart = self.hw.scanout(source)
        data.CrtcVsync.PhysicalAdapterMask = 0  # one physical adapter: no mask (rule 46)
        data.Flags.Value = 0
        self.dxgk.DxgkCbNotifyInterrupt(self.dxgk.DeviceHandle, data)
        if self.overlay_planes:
            self._report_plane_vsyncs(source)  # the planes that latched an MPO3 flip (kmd/overlay.py)
        if self.flip_queue_on:
            self._fq_report(source)  # the flip queue log, CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY3 (kmd/flipqueue.py)

    def _report_page_fault(self, node: _Node) -> None:
        """DMA_PAGE_FAULTED for the fault record the node's engine latched (device IRQL)."""
        fault = self.hw.fault(node.ordinal)
        done = self._completed(node)
        inflight = node.inflight
        while inflight and not after(inflight[0][0], done):
            inflight.popleft()
        flags = _ENGINE_RESET_REQUIRED if self.per_engine_reset else _ADAPTER_RESET_REQUIRED
        if not inflight:
            flags |= _FENCE_INVALID
        if fault.fatal:
            flags |= _FATAL_HARDWARE_ERROR
        data = node.interrupt_data
        ctypes.memset(ctypes.addressof(data), 0, ctypes.sizeof(data))
        data.InterruptType = _DMA_PAGE_FAULTED
        pf = data.DmaPageFaulted
        pf.FaultedFenceId = inflight[0][0] if inflight else 0
        pf.FaultedPrimitiveAPISequenceNumber = PRIMITIVE_API_SEQUENCE_NUMBER_UNKNOWN
        pf.FaultedPipelineStage = 0  # DXGK_RENDER_PIPELINE_STAGE_UNKNOWN
        pf.FaultedBindTableEntry = BIND_TABLE_ENTRY_UNKNOWN
        pf.PageFaultFlags = flags
        pf.FaultedVirtualAddress = fault.address
        pf.NodeOrdinal = node.ordinal
        pf.EngineOrdinal = 0
        pf.FaultErrorCode.IsDeviceSpecificCode = 0
        pf.FaultErrorCode.GeneralErrorCode = 0  # DXGK_GENERAL_ERROR_PAGE_FAULT
        self.dxgk.DxgkCbNotifyInterrupt(self.dxgk.DeviceHandle, data)

    def _keep_unfinished(self, node: _Node, saved) -> None:
        """The ring is about to be emptied: remember what the unfinished submissions still owe, so
        that the OS's resubmissions of them do only that. ``saved``: the engine's stop point inside
        the first one, or None."""
        for i, (_fence, address, offset, owed, root, owner) in enumerate(node.inflight):
            if i == 0 and saved is not None:
                buf, pc, _end, left = saved
                self._resume[(owner, root, address)] = (offset if buf is None else buf - address + pc, left)
            elif offset or owed:
                self._resume[(owner, root, address)] = (offset, owed)
        node.inflight.clear()

    # -- recovery -----------------------------------------------------------------------------------------
    def DxgkDdiQueryDependentEngineGroup(self, hAdapter: int, pQueryDependentEngineGroup) -> int:
        """No engine of this GPU depends on another: the mask is the node itself."""
        args = pQueryDependentEngineGroup
        if not self.per_engine_reset or not 0 <= args.NodeOrdinal < len(self.nodes):
            return int(NTSTATUS.STATUS_INVALID_PARAMETER)
        args.DependentNodeOrdinalMask = 1 << args.NodeOrdinal
        return SUCCESS

    def DxgkDdiQueryEngineStatus(self, hAdapter: int, pQueryEngineStatus) -> int:
        """Responsive unless the node's engine has left a preemption request unanswered or stopped on
        a fault (the register interface shows no finer progress than that)."""
        args = pQueryEngineStatus
        if not self.per_engine_reset or not 0 <= args.NodeOrdinal < len(self.nodes):
            return int(NTSTATUS.STATUS_INVALID_PARAMETER)
        node = self.nodes[args.NodeOrdinal]
        st = self.hw.status(node.ordinal)
        args.EngineStatus.Value = 0
        args.EngineStatus.Responsive = 0 if st == mmio.FAULTED or (node.preempt_fence and st != mmio.PREEMPTED) else 1
        return SUCCESS

    def DxgkDdiResetEngine(self, hAdapter: int, pResetEngine) -> int:
        """Reset one engine; LastAbortedFenceId is the submission it abandoned mid-execution."""
        args = pResetEngine
        if not self.per_engine_reset or not 0 <= args.NodeOrdinal < len(self.nodes):
            return int(NTSTATUS.STATUS_INVALID_PARAMETER)
        node = self.nodes[args.NodeOrdinal]
        done = self._completed(node)
        inflight = node.inflight
        while inflight and not after(inflight[0][0], done):
            inflight.popleft()
        aborted = inflight[0][0] if inflight else done
        self.hw.reset_engine(node.ordinal)
        node.wptr = 0
        self._ring_roots[node.ordinal] = 0
        if inflight:
            inflight.popleft()  # the aborted one is gone for good
        self._keep_unfinished(node, None)
        # The aborted fence counts as done from now on.
        self.mem.write_u64(node.fence_addr, aborted)
        node.last_reported = aborted
        node.preempt_fence = 0
        args.LastAbortedFenceId = aborted
        return SUCCESS

    def DxgkDdiResetFromTimeout(self, hAdapter: int) -> int:
        """Reset the whole GPU: every engine stops, every ring empties, every fence slot reads the
        node's last submitted fence (under hardware scheduling: every queue's work is gone)."""
        if self.hw_scheduling:
            self._hw_reset_all()
            self.hw.irq_ack(self.hw.irq_status())
            return SUCCESS
        for node in self.nodes:
            self.hw.reset_engine(node.ordinal)
            node.wptr = 0
            self._ring_roots[node.ordinal] = 0
            node.inflight.clear()
            node.preempt_fence = 0
            self.mem.write_u64(node.fence_addr, node.last_submitted)
            node.last_reported = node.last_submitted
        self._resume.clear()
        self.hw.irq_ack(self.hw.irq_status())
        return SUCCESS

    def DxgkDdiRestartFromTimeout(self, hAdapter: int) -> int:
        """The OS is done cleaning up; the GPU may be used again (hardware scheduling: the engines'
        schedulers start again)."""
        if self.hw_scheduling:
            self._hw_restart_all()
        return SUCCESS

    def DxgkDdiQueryCurrentFence(self, hAdapter: int, pCurrentFence) -> int:
        """The node's last completed fence, reported first through NotifyInterrupt if it is new."""
        ordinal = pCurrentFence.NodeOrdinal if self.multi_engine_aware else 0
        if not 0 <= ordinal < len(self.nodes):
            return int(NTSTATUS.STATUS_INVALID_PARAMETER)
        node = self.nodes[ordinal]
        self.dxgk.DxgkCbSynchronizeExecution(self.dxgk.DeviceHandle, self._report_completed, node, 0)
        pCurrentFence.CurrentFence = node.last_reported
        return SUCCESS
