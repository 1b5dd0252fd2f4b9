"""``ReferenceDriver``: a display miniport for the GPU model.

The class holds the driver's state, what it declares to the OS and the objects the OS creates in
it; its other entry points come from one mixin per DDI area, each in a module whose docstring says
what the driver does there (the flow of Microsoft's "Submitting a command buffer" page, seen from
the driver):

- kmd/driver_buffers.py: ``DxgkDdiRender``, ``DxgkDdiPresent`` and ``DxgkDdiPatch`` (DMA buffers);
- kmd/driver_paging.py: ``DxgkDdiBuildPagingBuffer``;
- kmd/driver_submission.py: each node's ring and fence, ``DxgkDdiSubmitCommand``,
  ``DxgkDdiCancelCommand``;
- kmd/driver_interrupts.py: ``DxgkDdiInterruptRoutine``, ``DxgkDdiDpcRoutine``, the fence and
  page-fault reports, ``DxgkDdiQueryCurrentFence``;
- kmd/driver_display.py: ``DxgkDdiControlInterrupt``, the vsync reports and MMIO flips
  (``DxgkDdiSetVidPnSourceAddress``);
- kmd/driver_preemption.py: ``DxgkDdiPreemptCommand`` and recovery (``DxgkDdiQueryEngineStatus``,
  ``DxgkDdiQueryDependentEngineGroup``, ``DxgkDdiResetEngine``, ``DxgkDdiResetFromTimeout``,
  ``DxgkDdiRestartFromTimeout``);
- kmd/wddm2.py: GPU virtual addressing and hardware scheduling (WDDM 2.x); kmd/nativefence.py:
  native GPU fences; kmd/overlay.py: multiplane overlays; kmd/flipqueue.py: the hardware flip
  queue.

What it does at the entry points of this module:

- ``DxgkDdiStartDevice``: takes the OS's callback interface, gives every engine a ring and a fence
  slot in contiguous system memory, and connects nothing itself (the OS owns the interrupt line and
  calls ``DxgkDdiInterruptRoutine``).
- ``DxgkDdiQueryAdapterInfo``: ``DXGK_DRIVERCAPS`` members (``MultiEngineAware`` as configured, one
  node per engine) and a ``DXGK_SEGMENTDESCRIPTOR`` per GPU segment; ``DxgkDdiGetNodeMetadata``:
  each node's engine type.
- ``DxgkDdiCreateDevice`` / ``DxgkDdiCreateContext``: driver objects and handles; the context (or,
  for a driver that is not multiple-engine aware, the device) asks for its DMA buffer, private data,
  allocation list and patch list sizes. DMA buffers live in contiguous system memory
  (``DmaBufferSegmentSet = 0``). ``DxgkDdiDestroyContext`` forgets the context.
- Flips: the caps declare ``MaxQueuedFlipOnVSync`` (as deep as the display's pending-flip
  registers), ``FlipOnVSyncWithNoWait`` and ``FlipInterval``; with ``mmio_flips`` (by default as
  preemption-aware, which needs it: rule 64, PreemptionAwareNeedsMmioFlip: ``wddmsim rules 64``,
  docs/rules.md) also ``FlipOnVSyncMmIo`` and ``FlipImmediateMmIo`` (kmd/driver_display.py).
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

Handles: the driver's device and context handles are small numbers it chooses; ``hAdapter`` is the
number the OS passes back in every call.

Spec: Microsoft's reference pages for each entry point it implements (DxgkDdiStartDevice,
DxgkDdiQueryAdapterInfo and DXGK_DRIVERCAPS, DxgkDdiGetNodeMetadata, DxgkDdiCreateDevice,
DxgkDdiCreateContext, DxgkDdiDestroyContext, and those the mixins' modules name) and its
"Threading and synchronization model of display miniport driver" page; docs/driver.md.
"""

from __future__ import annotations

import ctypes
import struct

from ..ddi import layout
from ..ddi.enums import DXGK_BUILDPAGINGBUFFER_OPERATION, DXGK_PAGETABLEUPDATEMODE, DXGK_QUERYADAPTERINFOTYPE
from ..ddi.interface import DeviceInfo, DxgkrnlInterface
from ..ddi.ntstatus import NTSTATUS
from ..ddi.registry import RECORDS
from ..ddi.versions import ddi_version, wddm_version_of
from ..gpu import mmio
from ..gpu.mmio import PAGE_SIZE
# The mixins, one per DDI area; the module-level names listed with them lived here before the
# driver was split and are still importable from here.
from .driver_buffers import (
    _ILLEGAL_INSTRUCTION, _PRIVATE, _PRIVILEGED_INSTRUCTION, ADDRESS_FIELDS, PRIVATE_DATA_SIZE, PRIVATE_MAGIC,
    USER_OPCODES, DmaBufferDdi,
)
from .driver_display import _CRTC_VSYNC, DisplayDdi
from .driver_interrupts import (
    _ADAPTER_RESET_REQUIRED, _DMA_COMPLETED, _DMA_PAGE_FAULTED, _ENGINE_RESET_REQUIRED, _FATAL_HARDWARE_ERROR,
    _FENCE_INVALID, BIND_TABLE_ENTRY_UNKNOWN, PRIMITIVE_API_SEQUENCE_NUMBER_UNKNOWN, InterruptDdi,
)
from .driver_paging import (
    _COPY_BYTES, _OP_DISCARD, _OP_FILL, _OP_MAP_APERTURE, _OP_TRANSFER, _OP_UNMAP_APERTURE, _PAGING_PRIVATE,
    PAGING_MAGIC, PAGING_PRIVATE_SIZE, PagingDdi,
)
from .driver_preemption import _DMA_PREEMPTED, PreemptionDdi
from .driver_submission import _FENCE_SIZE, _INDIRECT_SIZE, _Node, SubmissionDdi
from .wddm2 import HWQUEUE_RING_BUFFERS, KmdWddm2
from .nativefence import NativeFenceDdi
from .flipqueue import FlipQueueDdi
from .overlay import OverlayDdi
from .settings import Settings

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
_QAI_DRIVERCAPS = int(DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_DRIVERCAPS)
_QAI_QUERYSEGMENT = int(DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_QUERYSEGMENT)
_QAI_UMDRIVERPRIVATE = int(DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_UMDRIVERPRIVATE)
_QAI_NATIVE_FENCE_CAPS = int(DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_NATIVE_FENCE_CAPS)

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


class ReferenceDriver(DmaBufferDdi, PagingDdi, SubmissionDdi, InterruptDdi, DisplayDdi, PreemptionDdi,
                      KmdWddm2, NativeFenceDdi, OverlayDdi, FlipQueueDdi):
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
