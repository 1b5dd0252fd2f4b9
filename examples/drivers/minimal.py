"""``MinimalDriver``: the smallest display miniport that really drives wddmsim's GPU.

This file is the companion of docs/driver.md, which walks through it from top to bottom. It is a
complete driver pair: the kernel-mode miniport (:class:`MinimalDriver`, the ``DxgkDdi*`` entry
points) and its user-mode half (:class:`MinimalUmd`, which builds the command buffers).

What it declares, and why it is the smallest honest choice:

- ``DXGKDDI_INTERFACE_VERSION_VISTA`` (0x1052, WDDM 1.0). Windows 7 (0x2005) asks for exactly the
  same entry points of a driver like this one, but its structures carry more to get right: from
  Windows 7 on the OS checks ``DXGK_DRIVERCAPS.WDDMVersion``, and paging transfers gain an
  ``MdlOffset``. Vista has neither.
- One node, the GPU's engine 0 (the 3D engine), and not ``MultiEngineAware``: the OS schedules
  that one node, passes the device handle where a newer driver gets a context handle, and never
  calls ``DxgkDdiCreateContext``.
- Not ``PreemptionAware``, no ``SupportPerEngineTDR``, no ``CancelCommandAware`` (Vista has none
  of them): a hung or faulted engine is recovered by resetting the adapter
  (``DxgkDdiResetFromTimeout``), and a DMA buffer, once submitted, runs to its end.
- No optional flip capabilities: a flip waits on the engine for its vsync, with a flip interval of
  0 or 1.

The documented behaviour it follows (Microsoft's reference pages, under
https://learn.microsoft.com/windows-hardware/drivers/ddi/):

- which entry points a Vista driver that is not multiple-engine aware implements, and how the OS
  passes it ``hDevice``: ``dispmprt/ns-dispmprt-_driver_initialization_data``,
  ``d3dkmddi/nc-d3dkmddi-dxgkddi_createdevice`` (``pInfo``, a ``DXGK_DEVICEINFO``);
- capabilities and segments through ``d3dkmddi/nc-d3dkmddi-dxgkddi_queryadapterinfo``
  (``d3dkmddi/ns-d3dkmddi-_dxgk_drivercaps``, ``d3dkmddi/ns-d3dkmddi-_dxgk_querysegmentout``);
- DMA buffers: ``d3dkmddi/nc-d3dkmddi-dxgkddi_render``, ``d3dkmddi/nc-d3dkmddi-dxgkddi_present``
  (allocation list element 1 is the source, 2 the destination), ``d3dkmddi/nc-d3dkmddi-dxgkddi_patch``,
  ``d3dkmddi/nc-d3dkmddi-dxgkddi_submitcommand`` (must not fail; ``NullRendering`` runs no
  commands; a flip names its VidPn source only here);
- completion: ``dispmprt/nc-dispmprt-dxgkddi_interrupt_routine`` (FALSE when the device did not
  interrupt, dismiss it, report with ``d3dkmddi/nc-d3dkmddi-dxgkcb_notify_interrupt``, queue the
  DPC), ``dispmprt/nc-dispmprt-dxgkddi_dpc_routine`` (``d3dkmddi/nc-d3dkmddi-dxgkcb_notify_dpc``),
  ``d3dkmddi/nc-d3dkmddi-dxgkddi_querycurrentfence`` (a newer fence is reported first, inside
  ``dispmprt/nc-dispmprt-dxgkcb_synchronize_execution``);
- vsync control: ``d3dkmddi/nc-d3dkmddi-dxgkddi_controlinterrupt`` (the OS turns the vsync interrupt
  on and off; any other interrupt type is ``STATUS_NOT_IMPLEMENTED``);
- paging: ``d3dkmddi/nc-d3dkmddi-dxgkddi_buildpagingbuffer`` (transfer, fill, discard, aperture
  map and unmap, the unmapped pages pointing at ``DummyPage``);
- recovery: ``d3dkmddi/nc-d3dkmddi-dxgkddi_resetfromtimeout`` and
  ``d3dkmddi/nc-d3dkmddi-dxgkddi_restartfromtimeout``.

The hardware side follows docs/gpu-programming.md (registers) and docs/gpu-commands.md (packets).
The driver reaches the GPU only through ``info.gpu`` (the register interface) and the system
memory both share.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

from wddmsim.ddi import layout
from wddmsim.ddi.enums import DXGK_BUILDPAGINGBUFFER_OPERATION as OP
from wddmsim.ddi.enums import DXGK_INTERRUPT_TYPE as IRQ
from wddmsim.ddi.enums import DXGK_QUERYADAPTERINFOTYPE as QAI
from wddmsim.ddi.interface import DeviceInfo, DxgkrnlInterface
from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.ddi.registry import RECORDS
from wddmsim.ddi.versions import ddi_version
from wddmsim.gpu import commands as C
from wddmsim.gpu import mmio
from wddmsim.umd import BufferRequest, CommandBuffer, Copy, Fill, Timestamp, UmdAdapterInfo, Work

VISTA = ddi_version("vista")
ARCH = "x64"  # the OS lays every DDI structure out as 64-bit Windows does

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
NOT_SUPPORTED = int(NTSTATUS.STATUS_NOT_SUPPORTED)
BUFFER_TOO_SMALL = int(NTSTATUS.STATUS_BUFFER_TOO_SMALL)
INVALID_PARAMETER = int(NTSTATUS.STATUS_INVALID_PARAMETER)
INSUFFICIENT_DMA_BUFFER = int(NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER)

NODE = 0  # the one node: the GPU's engine 0
#: The ring holds at most the OS's hardware queue (64 submissions deep at most) of INDIRECT + FENCE
#: pairs (36 bytes each) that the engine has not fetched yet, plus one NOP pad: 4 KiB is enough.
RING_SIZE = 4096
DMA_BUFFER_SIZE = 16 * 1024  # per device (DXGK_DEVICEINFO): a user command buffer fits in it
PAGING_BUFFER_SIZE = 64 * 1024
ALLOCATION_LIST_SIZE = 64
PATCH_LIST_SIZE = 64
SOURCE, DESTINATION = 1, 2  # DXGK_PRESENT_SOURCE_INDEX, DXGK_PRESENT_DESTINATION_INDEX
#: Commands a user-mode command buffer may hold. FENCE, FLIP and INDIRECT stay the kernel's: a
#: FENCE could fake a completion, a FLIP take over the screen, an INDIRECT run any memory.
USER_OPCODES = frozenset({C.NOP, C.WORK, C.FILL, C.COPY, C.TIMESTAMP})


def cls(name: str) -> type:
    """The ctypes class of DDI structure ``name`` as Vista's headers lay it out."""
    return layout.ctype(RECORDS[name], ARCH, VISTA)


def new(name: str):
    """A zeroed DDI structure ``name``."""
    return cls(name)()


class MinimalDriver:
    """A WDDM 1.0 display miniport with one node (see the module doc). Constructed with the
    :class:`~wddmsim.ddi.interface.DeviceInfo` of its device; it has no settings."""

    #: DriverEntry's DRIVER_INITIALIZATION_DATA.Version: what the OS lays its structures out for.
    DXGKDDI_INTERFACE_VERSION = VISTA.value
    #: The user-mode half (the registry's UserModeDriverName): the class below, in this file.
    UserModeDriverName = f"{Path(__file__).resolve()}:MinimalUmd"

    def __init__(self, info: DeviceInfo):
        if info.settings:  # the scenario's [driver] table had keys besides class
            raise ValueError(f"MinimalDriver has no settings, but was given {', '.join(sorted(info.settings))}")
        self.hw: mmio.Mmio = info.gpu  # the register interface: all the driver touches of the GPU
        self.mem = info.memory  # system memory, shared with the GPU
        self.dxgk: DxgkrnlInterface | None = None
        self.ring = 0  # the engine's ring, in system memory
        self.wptr = 0  # where the next ring packet goes
        self.fence_slot = 0  # the u64 each FENCE on the ring writes
        self.last_submitted = 0  # the newest SubmissionFenceId put on the ring
        self.last_reported = 0  # the newest fence reported with DMA_COMPLETED
        self.devices = 0  # devices created; their handles are 0x100, 0x101, ...

    # -- start ---------------------------------------------------------------------------------------
    def DxgkDdiStartDevice(self, DxgkInterface: DxgkrnlInterface) -> int:
        """Keep the OS's callbacks; give the engine a ring and a fence slot."""
        self.dxgk = DxgkInterface
        self.ring = DxgkInterface.MmAllocateContiguousMemory(RING_SIZE)
        self.fence_slot = DxgkInterface.MmAllocateContiguousMemory(mmio.PAGE_SIZE)
        self.hw.program_ring(NODE, self.ring, RING_SIZE)
        return SUCCESS

    def DxgkDdiQueryAdapterInfo(self, hAdapter: int, pQueryAdapterInfo) -> int:
        """What the driver declares: its capabilities and the GPU's memory segments."""
        args = pQueryAdapterInfo
        if args.Type == QAI.DXGKQAITYPE_DRIVERCAPS:
            caps = new("DXGK_DRIVERCAPS")
            caps.HighestAcceptableAddress.QuadPart = (1 << 40) - 1  # the GPU reaches system memory below 2**40
            caps.MaxAllocationListSlotId = ALLOCATION_LIST_SIZE
            caps.InterruptMessageNumber = 0  # the GPU's one line-based interrupt
            caps.MaxQueuedFlipOnVSync = 1
            caps.MemoryManagementCaps.PagingNode = NODE
            caps.GpuEngineTopology.NbAsymetricProcessingNodes = 1
            # SchedulingCaps and FlipCaps stay 0: nothing optional is declared.
            if args.OutputDataSize < ctypes.sizeof(caps):
                return BUFFER_TOO_SMALL
            self.mem.write(args.pOutputData, bytes(caps))
            return SUCCESS
        if args.Type == QAI.DXGKQAITYPE_QUERYSEGMENT:
            return self._query_segments(args)
        if args.Type == QAI.DXGKQAITYPE_UMDRIVERPRIVATE:
            return SUCCESS  # the user-mode half needs nothing from its kernel half
        return NOT_SUPPORTED

    def _query_segments(self, args) -> int:
        """DXGK_QUERYSEGMENTOUT: asked twice, first for the count (pSegmentDescriptor NULL), then
        with room for the descriptors; the second answer also sizes the paging buffers."""
        out_cls = cls("DXGK_QUERYSEGMENTOUT")
        out = out_cls.from_buffer_copy(self.mem.read(args.pOutputData, ctypes.sizeof(out_cls)))
        segments = self.hw.segments
        if out.pSegmentDescriptor:
            if out.NbSegment < len(segments):
                return BUFFER_TOO_SMALL
            for i, seg in enumerate(segments):
                d = new("DXGK_SEGMENTDESCRIPTOR")
                d.BaseAddress.QuadPart = seg.base
                d.CpuTranslatedAddress.QuadPart = seg.cpu_base
                d.Size = d.CommitLimit = seg.size
                d.Flags.Aperture = seg.aperture
                d.Flags.CpuVisible = seg.cpu_visible
                self.mem.write(out.pSegmentDescriptor + i * ctypes.sizeof(d), bytes(d))
            out.PagingBufferSegmentId = 0  # paging buffers in system memory
            out.PagingBufferSize = PAGING_BUFFER_SIZE
            out.PagingBufferPrivateDataSize = 0
        out.NbSegment = len(segments)
        self.mem.write(args.pOutputData, bytes(out))
        return SUCCESS

    def DxgkDdiCreateDevice(self, hAdapter: int, pCreateDevice) -> int:
        """A device handle, and (not multiple-engine aware) the sizes of the device's buffers."""
        self.devices += 1
        pCreateDevice.hDevice = 0xFF + self.devices
        info = new("DXGK_DEVICEINFO")
        info.DmaBufferSize = DMA_BUFFER_SIZE
        info.DmaBufferSegmentSet = 0  # DMA buffers in system memory
        info.DmaBufferPrivateDataSize = 0  # this driver keeps no private data with a buffer
        info.AllocationListSize = ALLOCATION_LIST_SIZE
        info.PatchLocationListSize = PATCH_LIST_SIZE
        self.mem.write(pCreateDevice.pInfo, bytes(info))
        return SUCCESS

    # -- DMA buffers -----------------------------------------------------------------------------------
    def DxgkDdiRender(self, hContext: int, pRender) -> int:
        """Check the user-mode command buffer, copy it into the DMA buffer, and pass its patch
        locations on with DMA-buffer offsets. (``hContext`` is the device's handle here.)"""
        args = pRender
        n = args.CommandLength
        if n > args.DmaSize or args.PatchLocationListInSize > args.PatchLocationListOutSize:
            return INSUFFICIENT_DMA_BUFFER
        commands = self.mem.read(args.pCommand, n)
        try:
            if any(cmd.opcode not in USER_OPCODES for cmd in C.iter_commands(commands)):
                return int(NTSTATUS.STATUS_PRIVILEGED_INSTRUCTION)
        except C.CommandError:
            return int(NTSTATUS.STATUS_ILLEGAL_INSTRUCTION)
        plist = cls("D3DDDI_PATCHLOCATIONLIST")
        size = ctypes.sizeof(plist)
        patches = self.mem.read(args.pPatchLocationListIn, args.PatchLocationListInSize * size)
        base = args.pDmaBuffer - args.DmaBufferPhysicalAddress.QuadPart  # where this render starts in the buffer
        out = bytearray()
        for i in range(args.PatchLocationListInSize):
            p = plist.from_buffer_copy(patches, i * size)
            if p.AllocationIndex >= args.AllocationListSize or p.PatchOffset + 8 > n:
                return INVALID_PARAMETER
            p.PatchOffset += base
            out += bytes(p)
        self.mem.write(args.pDmaBuffer, commands)
        self.mem.write(args.pPatchLocationListOut, bytes(out))
        args.pDmaBuffer += n
        args.pPatchLocationListOut += len(out)
        return SUCCESS

    def DxgkDdiPresent(self, hContext: int, pPresent) -> int:
        """A flip of the source allocation, or a blt (one COPY, 4 bytes a pixel) to the destination."""
        args = pPresent
        if args.Flags.Flip:
            packet = C.flip(0, 0, args.FlipInterval)  # the display source is known only at submission
            patches = [(SOURCE, C.FLIP_SURFACE)]
        elif args.Flags.Blt:
            r = args.SrcRect
            packet = C.copy(0, 0, (r.right - r.left) * (r.bottom - r.top) * 4)
            patches = [(SOURCE, C.COPY_SRC), (DESTINATION, C.COPY_DST)]
        else:
            return NOT_SUPPORTED
        if len(packet) > args.DmaSize or len(patches) > args.PatchLocationListOutSize:
            return INSUFFICIENT_DMA_BUFFER
        base = args.pDmaBuffer - args.DmaBufferPhysicalAddress.QuadPart
        self.mem.write(args.pDmaBuffer, packet)
        for index, offset in patches:
            p = new("D3DDDI_PATCHLOCATIONLIST")
            p.AllocationIndex = index
            p.PatchOffset = base + offset
            self.mem.write(args.pPatchLocationListOut, bytes(p))
            args.pPatchLocationListOut += ctypes.sizeof(p)
        args.pDmaBuffer += len(packet)
        return SUCCESS

    def DxgkDdiPatch(self, hAdapter: int, pPatch) -> int:
        """Write each allocation's final address at its patch locations in the submitted range."""
        args = pPatch
        plist, alist = cls("D3DDDI_PATCHLOCATIONLIST"), cls("DXGK_ALLOCATIONLIST")
        psize, asize = ctypes.sizeof(plist), ctypes.sizeof(alist)
        first = args.PatchLocationListSubmissionStart
        for i in range(first, first + args.PatchLocationListSubmissionLength):
            p = plist.from_buffer_copy(self.mem.read(args.pPatchLocationList + i * psize, psize))
            alloc = alist.from_buffer_copy(self.mem.read(args.pAllocationList + p.AllocationIndex * asize, asize))
            self.mem.write_u64(args.pDmaBuffer + p.PatchOffset, alloc.PhysicalAddress.QuadPart + p.AllocationOffset)
        return SUCCESS

    # -- submission ------------------------------------------------------------------------------------
    def DxgkDdiSubmitCommand(self, hAdapter: int, pSubmitCommand) -> int:
        """Put the submitted range on the ring (INDIRECT) with a FENCE of SubmissionFenceId that
        interrupts, then ring the doorbell. It must not fail."""
        args = pSubmitCommand
        start = args.DmaBufferPhysicalAddress.QuadPart + args.DmaBufferSubmissionStartOffset
        length = args.DmaBufferSubmissionEndOffset - args.DmaBufferSubmissionStartOffset
        packet = b""
        if length and not args.Flags.NullRendering:
            if args.Flags.Flip:
                self._aim_flips(start, length, args.VidPnSourceId)
            packet = C.indirect(start, length)
        packet += C.fence(self.fence_slot, args.SubmissionFenceId, interrupt=True)
        self._ring_write(packet)
        self.last_submitted = args.SubmissionFenceId
        self.hw.doorbell(NODE, self.wptr)
        return SUCCESS

    def _aim_flips(self, address: int, length: int, source: int) -> None:
        """Write the VidPn source into each FLIP of the buffer range."""
        for cmd in C.iter_commands(self.mem.read(address, length)):
            if cmd.opcode == C.FLIP:
                self.mem.write_u32(address + cmd.offset + C.FLIP_SOURCE, source)

    def _ring_write(self, packet: bytes) -> None:
        """Append ``packet`` to the ring. A packet never wraps: when it does not fit before the end,
        the rest of the ring becomes one NOP and the packet goes at offset 0. One dword always stays
        free, so that a full ring never reads as empty."""
        wptr, n = self.wptr, len(packet)
        pad = RING_SIZE - wptr if wptr + n > RING_SIZE else 0
        if (self.hw.rptr(NODE) - wptr - 4) % RING_SIZE < pad + n:
            raise RuntimeError("the ring is full, which RING_SIZE rules out")
        if pad:
            self.mem.write(self.ring + wptr, C.nop(pad // 4))
            wptr = 0
        self.mem.write(self.ring + wptr, packet)
        self.wptr = (wptr + n) % RING_SIZE

    # -- completion --------------------------------------------------------------------------------------
    def DxgkDdiInterruptRoutine(self, MiniportDeviceContext: int, MessageNumber: int) -> bool:
        """The ISR: FALSE if the GPU did not interrupt; else dismiss every cause, report a new
        fence and each vsync, queue the DPC."""
        status = self.hw.irq_status()
        if not status:
            return False  # the line is shared: another device's interrupt
        self.hw.irq_ack(status)
        if status & mmio.fence_bit(NODE):
            self._report_fence()
        for source in range(self.hw.display_count):  # DMA events first, then vsyncs
            if status & mmio.vsync_bit(source):
                self._report_vsync(source)
        # A fault (FAULT_BIT) cannot be reported at Vista: the engine stays stopped, the OS's
        # timeout finds it and resets the adapter. An unknown cause is only dismissed.
        self.dxgk.DxgkCbQueueDpc(self.dxgk.DeviceHandle)
        return True

    def _report_fence(self, _context=None) -> bool:
        """DMA_COMPLETED with the fence slot, if it moved since the last report (device IRQL).
        Fences complete in order, so one report covers every submission up to it."""
        done = self.mem.read_u64(self.fence_slot)
        if done == self.last_reported:
            return False
        self.last_reported = done
        data = new("DXGKARGCB_NOTIFY_INTERRUPT_DATA")
        data.InterruptType = IRQ.DXGK_INTERRUPT_DMA_COMPLETED
        data.DmaCompleted.SubmissionFenceId = done
        data.DmaCompleted.NodeOrdinal = NODE
        self.dxgk.DxgkCbNotifyInterrupt(self.dxgk.DeviceHandle, data)
        return True

    def _report_vsync(self, source: int) -> None:
        """CRTC_VSYNC: a flip latched on ``source``, which now scans out this address."""
        data = new("DXGKARGCB_NOTIFY_INTERRUPT_DATA")
        data.InterruptType = IRQ.DXGK_INTERRUPT_CRTC_VSYNC
        data.CrtcVsync.VidPnTargetId = source  # each source drives the target of the same number
        data.CrtcVsync.PhysicalAddress.QuadPart = self.hw.scanout(source)
        self.dxgk.DxgkCbNotifyInterrupt(self.dxgk.DeviceHandle, data)

    def DxgkDdiDpcRoutine(self, MiniportDeviceContext: int) -> None:
        """The DPC the ISR queued: the scheduler processes what the ISR reported."""
        self.dxgk.DxgkCbNotifyDpc(self.dxgk.DeviceHandle)

    def DxgkDdiControlInterrupt(self, hAdapter: int, InterruptType: int, EnableInterrupt: bool) -> int:
        """The OS turns the vsync interrupt on (every vsync raises a cause the ISR reports) or off
        (only a latched flip does). It asks for no other type; those are not implemented."""
        if InterruptType != IRQ.DXGK_INTERRUPT_CRTC_VSYNC:
            return int(NTSTATUS.STATUS_NOT_IMPLEMENTED)
        for source in range(self.hw.display_count):
            self.hw.vsync_interrupt(source, bool(EnableInterrupt))
        return SUCCESS

    def DxgkDdiQueryCurrentFence(self, hAdapter: int, pCurrentFence) -> int:
        """The last completed fence; a newer one than reported is reported first, synchronised
        with the ISR."""
        self.dxgk.DxgkCbSynchronizeExecution(self.dxgk.DeviceHandle, self._report_fence, None, 0)
        pCurrentFence.CurrentFence = self.last_reported
        return SUCCESS

    # -- paging ----------------------------------------------------------------------------------------
    def DxgkDdiBuildPagingBuffer(self, hAdapter: int, pBuildPagingBuffer) -> int:
        """The commands of one paging operation; the aperture is mapped through the GART registers."""
        args = pBuildPagingBuffer
        op = args.Operation
        commands = b""
        if op == OP.DXGK_OPERATION_TRANSFER:
            t = args.Transfer
            if t.TransferSize:
                commands = C.copy(self._address(t.Source) + t.TransferOffset,
                                  self._address(t.Destination) + t.TransferOffset, t.TransferSize)
        elif op == OP.DXGK_OPERATION_FILL:
            f = args.Fill
            commands = C.fill(f.Destination.SegmentAddress.QuadPart, f.FillSize, f.FillPattern)
        elif op == OP.DXGK_OPERATION_DISCARD_CONTENT:
            pass  # the content is not wanted: nothing to move
        elif op == OP.DXGK_OPERATION_MAP_APERTURE_SEGMENT:
            m = args.MapApertureSegment
            self.hw.map_aperture(self._aperture(m), m.pMdl, m.NumberOfPages * mmio.PAGE_SIZE)
        elif op == OP.DXGK_OPERATION_UNMAP_APERTURE_SEGMENT:
            m = args.UnmapApertureSegment  # unmapped pages point at the dummy page, never at nothing
            for page in range(m.NumberOfPages):
                self.hw.map_aperture(self._aperture(m) + page * mmio.PAGE_SIZE, m.DummyPage.QuadPart, mmio.PAGE_SIZE)
        else:
            raise NotImplementedError(f"{OP(op).name}: VidMm asks a driver without GPU virtual addressing for "
                                      f"transfers, fills, discards and aperture mappings only")
        if len(commands) > args.DmaSize:
            return INSUFFICIENT_DMA_BUFFER
        self.mem.write(args.pDmaBuffer, commands)
        args.pDmaBuffer += len(commands)
        return SUCCESS

    def _address(self, side) -> int:
        """A transfer's source or destination: a segment address, or system memory. (The model's
        MDL is the physical address of its first page, its pages contiguous.)"""
        return side.SegmentAddress.QuadPart if side.SegmentId else side.pMdl

    def _aperture(self, m) -> int:
        """The GPU address of an aperture operation's first page."""
        return self.hw.segments[m.SegmentId - 1].base + m.OffsetInPages * mmio.PAGE_SIZE

    # -- recovery ----------------------------------------------------------------------------------------
    def DxgkDdiResetFromTimeout(self, hAdapter: int) -> int:
        """Reset the GPU: the engine drops what it ran and its ring; every submitted fence counts as
        completed, as the OS now takes it."""
        self.hw.reset_engine(NODE)
        self.wptr = 0
        self.mem.write_u64(self.fence_slot, self.last_submitted)
        self.last_reported = self.last_submitted
        return SUCCESS

    def DxgkDdiRestartFromTimeout(self, hAdapter: int) -> int:
        """The OS has cleaned up after the reset: nothing left to do."""
        return SUCCESS


class MinimalUmd:
    """The user-mode half: one GPU command per operation. An allocation's address is left 0 and a
    patch location says where the kernel writes it (physical addressing, the only kind a Vista
    driver has)."""

    def __init__(self, info: UmdAdapterInfo):
        pass  # nothing to learn from the kernel half

    def build(self, request: BufferRequest) -> CommandBuffer:
        commands = bytearray()
        allocations: list = []
        index: dict[int, int] = {}  # id(allocation) -> its place in the allocation list
        patches: list = []

        def address(target, field: int) -> int:
            if target.allocation is None:
                return target.address
            i = index.setdefault(id(target.allocation), len(allocations))
            if i == len(allocations):
                allocations.append(target.allocation)
            patches.append((i, len(commands) + field, target.offset))
            return 0

        for op in request.ops:
            if type(op) is Work:
                commands += C.work(int(op.ns))
            elif type(op) is Fill:
                commands += C.fill(address(op.dst, C.FILL_DST), op.size, op.pattern)
            elif type(op) is Copy:
                src = address(op.src, C.COPY_SRC)
                commands += C.copy(src, address(op.dst, C.COPY_DST), op.size)
            elif type(op) is Timestamp:
                commands += C.timestamp(address(op.dst, C.TIMESTAMP_ADDR))
            else:
                raise ValueError(f"MinimalUmd has no command for {type(op).__name__}")
        return CommandBuffer(bytes(commands), tuple(allocations), tuple(patches))
