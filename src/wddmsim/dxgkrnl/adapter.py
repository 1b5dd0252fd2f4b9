"""The OS's side of one display adapter: it starts the driver, owns the objects (processes,
devices, contexts, allocations) and VidSch, builds the DMA buffers' arguments (DxgkDdiRender,
DxgkDdiPresent) and cancels and destroys.

The adapter talks to the driver only through the gateway (:mod:`.gateway`, every ``DxgkDdi*``
call) and the interface it hands the driver in ``DxgkDdiStartDevice`` (:mod:`.callbacks`, the
``DxgkCb*`` callbacks and the ISR and DPC dispatch). It never imports the driver or the GPU model:
the assembly code (``wddmsim.runner.system``) hands it a driver object and the system memory both share,
and connects the GPU's interrupt line to :meth:`Adapter.interrupt`.

CPU costs (:class:`CpuCost`) are model parameters in ns: the time a DDI call or an ISR/DPC takes,
during which the calling thread is busy.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

from .specialpool import SpecialPool
from ..ddi import layout
from ..ddi import rules as R
from ..ddi.bugcheck import BugCheck, BugCheckCode, VidSchError
from ..ddi.enums import DXGK_QUERYADAPTERINFOTYPE
from ..ddi.ntstatus import NTSTATUS, status_name
from ..ddi.registry import RECORDS
from ..ddi.versions import ddi_version, from_value
from .crash import BugCheckStop, CrashRecord
from .errors import AdapterStartError, ApiError
from .callbacks import DxgkInterface
from .caps import AdapterCaps, missing_entry_points, refusals
from .gateway import DdiGateway
from .objects import PRIORITY_CLASSES, Allocation, Context, Device, HandleTable, Packet, Process
from .pool import KernelPool
from .verifier import Verifier
from .tdr import TdrConfig
from .adapterstop import AdapterStop
from .composition import PresentToken
from .present import FLAG_FLIP, FLAG_FLIP_NO_WAIT, FLAG_REDIRECTED_PRESENT
from .vidsch import FLAG_NULL_RENDERING, FLAG_PRESENT, VidSch
from .vsync import VsyncControl
from .wddm2 import OsWddm2

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
ENGINE_TYPE_NAMES = {0: "OTHER", 1: "3D", 2: "VIDEO_DECODE", 3: "VIDEO_ENCODE", 4: "VIDEO_PROCESSING",
                     5: "SCENE_ASSEMBLY", 6: "COPY", 7: "OVERLAY", 8: "CRYPTO", 9: "VIDEO_CODEC"}
_ENGINE_OTHER, _ENGINE_3D = 0, 1


#: DXGKARG_RENDER's members in declaration order; the OS fills every one before each call.
_RENDER_MEMBERS = (
    "pCommand", "CommandLength", "pDmaBuffer", "DmaSize", "pDmaBufferPrivateData",
    "DmaBufferPrivateDataSize", "pAllocationList", "AllocationListSize", "pPatchLocationListIn",
    "PatchLocationListInSize", "pPatchLocationListOut", "PatchLocationListOutSize", "MultipassOffset",
    "DmaBufferSegmentId", "DmaBufferPhysicalAddress",
)


#: DXGKARG_CANCELCOMMAND members the OS fills (the packet's submission as it would have been).
_CANCEL_MEMBERS = (
    "hContext", "pDmaBuffer", "DmaBufferSize", "DmaBufferSubmissionStartOffset", "DmaBufferSubmissionEndOffset",
    "pDmaBufferPrivateData", "DmaBufferPrivateDataSize", "DmaBufferPrivateDataSubmissionStartOffset",
    "DmaBufferPrivateDataSubmissionEndOffset", "pAllocationList", "AllocationListSize", "pPatchLocationList",
    "PatchLocationListSize", "PatchLocationListSubmissionStart", "PatchLocationListSubmissionLength",
)


#: DXGK_SUBMITCOMMANDFLAGS.VirtualMachineData (bit 8, WDDM 2.2).
FLAG_VIRTUAL_MACHINE_DATA = 0x100

#: The first DDI versions with GPU virtual addressing (DxgkDdiSubmitCommandVirtual, the GpuMmu
#: paging operations) and with the hardware-queue path this model implements (Windows 10 1809:
#: DxgkDdiSignalMonitoredFence, DxgkDdiPresentToHwQueue, RingBufferFenceRelease,
#: MaxInFlightHwQueueBuffers).
MIN_VERSION_GPU_VA = "wddm2_0"
MIN_VERSION_HARDWARE = "wddm2_5"
#: The first DDI version the OS enables native GPU fences for (Windows 11 24H2).
MIN_VERSION_NATIVE_FENCE = "wddm3_2"
#: The first DDI version the OS enables the hardware flip queue for (Windows 11, WDDM 3.0).
MIN_VERSION_HW_FLIP_QUEUE = "wddm3_0"


@dataclass
class CpuCost:
    """Modelled CPU time, in ns, of the OS and driver work on the submission path."""

    render: int = 5_000
    patch: int = 1_000
    submit: int = 2_000
    isr: int = 1_000
    dpc: int = 2_000
    present: int = 5_000


class NoLedger:
    """The ledger of an adapter built without one (:class:`wddmsim.runner.system.System` always hands it
    the run's): every call is taken and nothing is kept."""

    def _skip(self, *args) -> None:
        pass

    queue_start = dma_queued = dma_start = dma_stop = queue_stop = _skip
    present = flip = displayed = dropped = evict = _skip


NO_LEDGER = NoLedger()


class Adapter:
    """One adapter: driver binding, objects, VidSch, callbacks, interrupt and DPC dispatch."""

    def __init__(
        self,
        sim,
        driver,
        memory,
        *,
        policy,
        hw_queue_depth: int | list[int] = 2,
        costs: CpuCost | None = None,
        verifier: str = "strict",
        trace=None,
        arch: str = "x64",
        null_rendering: bool = False,
        tdr: TdrConfig | None = None,
        displays: list[float] = (60.0,),
        budgets: dict[int, int] | None = None,
        scheduling: str = "software",
        bands: dict | None = None,
        gpu_va: bool = False,
        ledger=None,
    ):
        self.sim = sim
        #: the packet ledger (:class:`wddmsim.trace.ledger.Ledger`, the System's), fed at the model's
        #: transition points by direct calls whether or not ``trace`` (the event sink, None when no
        #: log) is there; an adapter built without one keeps no account
        self.ledger = ledger if ledger is not None else NO_LEDGER
        #: "software" (VidSch picks packets) or "hardware" (the GPU schedules hardware queues)
        self.scheduling = scheduling
        #: GPU virtual addressing (WDDM 2.0 GpuMmu); hardware scheduling always has it
        self.gpu_va = gpu_va or scheduling == "hardware"
        #: flips go through DxgkDdiSetVidPnSourceAddress (decided at start from DXGK_FLIPCAPS)
        self.mmio_flips = False
        #: the OS's side of the hardware flip queue (dxgkrnl/hwflipqueue.py), made at start when it is on
        self.hwflips = None
        self._svsa_args = None
        self._bands = bands
        self.wddm2 = None
        self.driver = driver
        self.memory = memory
        #: every submission carries Flags.NullRendering (the scenario switch)
        self.null_rendering = null_rendering
        self.tdr_config = tdr or TdrConfig()
        self.display_refresh = list(displays)  # VidPn sources' refresh rates (the modes the OS set)
        self.budgets = dict(budgets or {})  # segment id -> bytes VidMm may use
        #: Instrumentation for the assembly code (fault injection): called with each new Packet.
        self.on_packet = None
        self.trace = trace
        self.arch = arch
        self.costs = costs or CpuCost()
        self.pool = KernelPool()
        #: guarded kernel pages (Driver Verifier's special pool): see dxgkrnl/specialpool.py
        self.special_pool = SpecialPool(memory)
        self.handles = HandleTable()
        self.hAdapter = 0
        self.processes: list[Process] = []
        self.devices: list[Device] = []
        self.contexts: list[Context] = []
        self.allocations: list[Allocation] = []
        self._policy = policy
        self._depth = hw_queue_depth
        self._verifier_mode = verifier
        self.vidsch: VidSch | None = None
        self.vsync: VsyncControl | None = None
        self.interrupt_address = 0
        #: the OS's one door into the driver (every DxgkDdi* call)
        self.ddi = DdiGateway(sim, driver, arch=arch, trace=trace)
        self._render_call = self.ddi.caller("DxgkDdiRender")
        #: what the driver is handed in DxgkDdiStartDevice: the callbacks, the ISR and DPC dispatch
        self.dxgk = DxgkInterface(self)  # it arms ``ddi.returned`` when an entry point has something to judge

    @property
    def native_fence_enabled(self) -> bool:
        """Whether the OS enables native GPU fences (DXGK_FEATURE_NATIVE_FENCE) on this adapter: for
        a WDDM 3.2 driver (:data:`MIN_VERSION_NATIVE_FENCE`) run with hardware scheduling
        ("Native GPU fence objects"). Known once :meth:`start` has read the driver's version."""
        return self.scheduling == "hardware" and self.version.value >= ddi_version(MIN_VERSION_NATIVE_FENCE).value

    @property
    def hw_flip_queue_enabled(self) -> bool:
        """Whether the OS enables the hardware flip queue (DXGK_FEATURE_HWFLIPQUEUE) on this adapter:
        for a WDDM 3.0 or later driver (:data:`MIN_VERSION_HW_FLIP_QUEUE`) run with hardware
        scheduling, which Microsoft's "Hardware flip queue" page says Windows requires for it on
        released drivers. Known once :meth:`start` has read the driver's version."""
        return self.scheduling == "hardware" and self.version.value >= ddi_version(MIN_VERSION_HW_FLIP_QUEUE).value

    # -- start --------------------------------------------------------------------------------------
    def start(self) -> None:
        """The adapter's start, as Windows does it: the driver's declared interface version and
        entry points (``DxgkInitialize``), ``DxgkDdiStartDevice``, then the adapter queries:
        ``DXGK_DRIVERCAPS``, the segments, the user-mode half's private data, each node's
        metadata. What Windows refuses (a missing entry point, a capability combination, an OS
        choice the driver does not support, node metadata that breaks rules 80 and 81: Microsoft's
        DXGK_ENGINE_TYPE page, "the driver must expose only one 3-D engine per adapter", and
        DXGK_NODEMETADATA's, FriendlyName only for DXGK_ENGINE_TYPE_OTHER) is an
        :class:`AdapterStartError` listing every reason; no work has run yet."""
        drv = self.driver
        ddi = self.ddi
        value = getattr(drv, "DXGKDDI_INTERFACE_VERSION", None)
        if not isinstance(value, int):
            raise AdapterStartError(["the driver declares no DXGKDDI_INTERFACE_VERSION (an int, e.g. 0x5023 for "
                                     "WDDM 2.0): DxgkInitialize needs it"])
        try:
            version = from_value(value)
        except KeyError as e:
            raise AdapterStartError([str(e.args[0])]) from None
        self.version = version
        missing = missing_entry_points(drv, version)
        if missing:
            raise AdapterStartError(missing)
        self.verifier = Verifier(self.sim, self._verifier_mode, self.arch, self.version, self.trace)
        ddi.start(version, self.verifier)
        self.hAdapter = ddi.hAdapter = getattr(drv, "hAdapter", 0)
        ddi.call("DxgkDdiStartDevice", self.dxgk, log=False, fail="DxgkDdiStartDevice failed; the adapter does not start")
        self.caps = caps = AdapterCaps.read(self._query("DXGKQAITYPE_DRIVERCAPS", ddi.new("DXGK_DRIVERCAPS")), version)
        problems = refusals(caps)
        self.multi_engine_aware = caps.MultiEngineAware
        # "GPU preemption": without MultiEngineAware the OS never calls DxgkDdiPreemptCommand.
        self.preemption_aware = caps.PreemptionAware and caps.MultiEngineAware
        count = caps.node_count
        hardware = self.scheduling == "hardware"
        if self.gpu_va and not caps.VirtualAddressingSupported:
            problems.append("the OS was asked for GPU virtual addressing (adapter.gpu_va or hardware scheduling), but "
                            "the driver does not report DXGK_VIDMMCAPS.VirtualAddressingSupported")
        problems += missing_entry_points(drv, version, {
            "MultiEngineAware": caps.MultiEngineAware, "PreemptionAware": self.preemption_aware,
            "CancelCommandAware": caps.CancelCommandAware and caps.MultiEngineAware,
            "SupportPerEngineTDR": caps.SupportPerEngineTDR,
            "PhysicalSubmission": not self.gpu_va, "HardwareScheduling": hardware,
            "NativeGpuFence": caps.NativeGpuFence, "FlipOnVSyncMmIo": bool(caps.FlipCaps.get("FlipOnVSyncMmIo")),
            "MultiPlaneOverlay3": caps.SupportMultiPlaneOverlay and version.value >= ddi_version("wddm2_1").value,
            "HwFlipQueue": caps.MaxHwQueuedFlips > 1})
        if caps.MaxHwQueuedFlips > 1:
            # "Hardware flip queue": the driver declares MaxHwQueuedFlips > 1 only when the OS allowed the
            # feature, and queued flips are DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3 calls.
            if not self.hw_flip_queue_enabled:
                problems.append(f"the driver reports DXGK_DRIVERCAPS.MaxHwQueuedFlips = {caps.MaxHwQueuedFlips}, but "
                                f"the OS enables the hardware flip queue (DXGK_FEATURE_HWFLIPQUEUE) only for "
                                f"{MIN_VERSION_HW_FLIP_QUEUE} or later drivers under hardware scheduling "
                                f"(adapter.scheduling = \"hardware\"); this one is {version.name}"
                                + ("" if hardware else " under the software scheduler"))
            elif not caps.SupportMultiPlaneOverlay:
                problems.append(f"the driver reports DXGK_DRIVERCAPS.MaxHwQueuedFlips = {caps.MaxHwQueuedFlips} "
                                f"without SupportMultiPlaneOverlay: queued flips are "
                                f"DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3 calls")
        # MMIO flips (DXGK_FLIPCAPS.FlipOnVSyncMmIo): the OS flips through DxgkDdiSetVidPnSourceAddress
        # for a driver that declares them (dxgkrnl/present.py), with physical DMA buffers and under GPU
        # virtual addressing alike, wherever VidSch schedules in software. Under hardware scheduling the
        # model's presents are blts (DxgkDdiPresentToHwQueue).
        self.mmio_flips = bool(caps.FlipCaps.get("FlipOnVSyncMmIo")) and not hardware
        if caps.NativeGpuFence and not self.native_fence_enabled:
            # "Native GPU fence objects": the OS fails adapter initialization when the driver reports
            # native fences and the OS did not enable the feature, which it does for WDDM 3.2 drivers
            # under hardware scheduling.
            problems.append(f"the driver reports DXGK_VIDSCHCAPS.NativeGpuFence, but the OS enables native GPU "
                            f"fences (DXGK_FEATURE_NATIVE_FENCE) only for {MIN_VERSION_NATIVE_FENCE} drivers under "
                            f"hardware scheduling (adapter.scheduling = \"hardware\"); this one is {version.name}"
                            + ("" if hardware else " under the software scheduler"))
        if problems:
            raise AdapterStartError(problems)
        self.segments, self.paging_buffer_size, self.paging_private_size = self._query_segments()
        self.umd_private_data = self._query_umd_private()
        meta_cls = ddi.cls("DXGK_NODEMETADATA")
        self.node_types: list[int] = []
        self.node_names: list[str] = []
        node_flags = []
        # DxgkDdiGetNodeMetadata exists from WDDM 1.3: an older driver's nodes are not described;
        # the OS knows node 0 as the 3D engine and the rest by ordinal only.
        judged = version.value >= ddi_version("wddm1_3").value
        for ordinal in range(count):
            meta = meta_cls()
            if not judged:
                meta.EngineType = _ENGINE_3D if ordinal == 0 else _ENGINE_OTHER
            else:
                status = ddi.call("DxgkDdiGetNodeMetadata", self.hAdapter, ordinal, meta, log=False)
                if status != SUCCESS:
                    # Rule 81: it succeeds for every ordinal below the node count (STATUS_INVALID_PARAMETER
                    # is for an ordinal outside the adapter, which the OS never asks).
                    problems.append(f"DxgkDdiGetNodeMetadata returned {status_name(status)} for node {ordinal}, "
                                    f"one of the {count} nodes the driver reports: it succeeds for every "
                                    f"NodeOrdinal below the node count (rule 81)")
                    continue
            self.node_types.append(int(meta.EngineType))
            node_flags.append(getattr(meta, "Flags", None))
            wide = "".join(chr(c) for c in meta.FriendlyName).split("\0", 1)[0]
            if judged and wide and meta.EngineType != 0:
                problems.append(f"DXGK_NODEMETADATA.FriendlyName of node {ordinal} is {wide!r} but EngineType is "
                                f"{ENGINE_TYPE_NAMES.get(int(meta.EngineType), int(meta.EngineType))}: the name is "
                                f"given only for DXGK_ENGINE_TYPE_OTHER, else it is empty (rule 80)")
            friendly = wide if meta.EngineType == 0 and wide else ENGINE_TYPE_NAMES.get(int(meta.EngineType), "OTHER")
            self.node_names.append(f"{friendly}_{sum(1 for n in self.node_names if n.startswith(friendly + '_'))}")
        three_d = [i for i, t in enumerate(self.node_types) if t == 1]
        if judged and len(three_d) != 1 and len(self.node_types) == count:
            problems.append(f"DXGK_NODEMETADATA.EngineType is DXGK_ENGINE_TYPE_3D on {len(three_d)} nodes "
                            f"({', '.join(map(str, three_d)) or 'none'}): a driver exposes exactly one 3-D engine per "
                            f"adapter (rule 80)")
        if problems:
            raise AdapterStartError(problems)
        #: each node's DXGK_NODEMETADATA_FLAGS (None before WDDM 2.2)
        self.node_flags = node_flags
        if hardware:
            need = ddi_version(MIN_VERSION_HARDWARE)
            unsupported = [i for i, f in enumerate(node_flags) if f is None or not f.ContextSchedulingSupported]
            if version.value < need.value or unsupported:
                raise AdapterStartError([
                    "the OS was asked for hardware scheduling (adapter.scheduling = \"hardware\"), but the driver "
                    + (f"is {version.name}; hardware scheduling needs {need.name} or later"
                       if version.value < need.value else
                       f"does not report DXGK_NODEMETADATA_FLAGS.ContextSchedulingSupported for node(s) "
                       f"{', '.join(str(i) for i in unsupported)}")])
        depths = self._depth if isinstance(self._depth, list) else [self._depth] * count
        self.vidsch = VidSch(self, self._policy, depths[:count])
        self.stopper = AdapterStop(self)
        #: the vsync interrupt's state and the vertical-blank waiters (DxgkDdiControlInterrupt)
        self.vsync = VsyncControl(self, len(self.display_refresh))
        self.interrupt_address = self.pool.alloc(4096)
        #: DXGK_NATIVE_FENCE_CAPS (DXGKQAITYPE_NATIVE_FENCE_CAPS) of a driver with NativeGpuFence
        self.native_fence_caps = None
        if caps.NativeGpuFence:
            nf = self._query("DXGKQAITYPE_NATIVE_FENCE_CAPS", ddi.new("DXGK_NATIVE_FENCE_CAPS"))
            stride = int(nf.MonitoredValueStride)
            if stride < 8 or stride % 8 or stride > 4096:
                raise AdapterStartError([f"DXGK_NATIVE_FENCE_CAPS.MonitoredValueStride = {stride}: the OS packs "
                                         f"MonitoredValues (64-bit, written atomically) in a page, so the stride is "
                                         f"a multiple of 8 from 8 to 4096"])
            self.native_fence_caps = nf
        if self.gpu_va:
            self.wddm2 = OsWddm2(self, hardware=hardware, bands=self._bands)
            self.wddm2.start(node_flags)
        if caps.MaxHwQueuedFlips > 1:
            from .hwflipqueue import HwFlips

            self.hwflips = HwFlips(self, caps.MaxHwQueuedFlips)
        render_cls = ddi.cls("DXGKARG_RENDER")
        self._render_args = render_cls()
        self._render_fill = layout.filler(render_cls, _RENDER_MEMBERS)
        self._present_args = ddi.new("DXGKARG_PRESENT")
        # Flags.VirtualMachineData exists from WDDM 2.2: an older driver's flags have no such bit.
        self._vm_flag = self.version.value >= ddi_version("wddm2_2").value
        self._cancel_args = None
        if caps.CancelCommandAware and caps.MultiEngineAware:
            cancel_cls = ddi.cls("DXGKARG_CANCELCOMMAND")
            self._cancel_args = cancel_cls()
            self._cancel_fill = layout.filler(cancel_cls, _CANCEL_MEMBERS)
        self._alist_cls = ddi.cls("DXGK_ALLOCATIONLIST")
        self._plist_cls = ddi.cls("D3DDDI_PATCHLOCATIONLIST")
        self._plist_size = ctypes.sizeof(self._plist_cls)
        self._alist_size = ctypes.sizeof(self._alist_cls)
        if self.trace is not None:
            self.trace.emit(self.sim.now, "AdapterStart", {
                "ddi_version": self.version.name, "multi_engine_aware": int(self.multi_engine_aware),
                "nodes": [{"ordinal": i, "name": n, "engine_type": ENGINE_TYPE_NAMES.get(t, "OTHER"),
                           "hw_queue_depth": self.vidsch.nodes[i].depth}
                          for i, (n, t) in enumerate(zip(self.node_names, self.node_types))],
                "segments": [{"id": i + 1, "base": s.BaseAddress.QuadPart, "size": s.Size,
                              "aperture": int(s.Flags.Aperture), "cpu_visible": int(s.Flags.CpuVisible)}
                             for i, s in enumerate(self.segments)],
            })

    def _query(self, kind: str, out, inp=None):
        """DxgkDdiQueryAdapterInfo of ``kind``: ``out`` (a structure) is copied into kernel memory
        as the output buffer, ``inp`` (if any) as the input; returns the output structure as the
        driver left it. A failure does not start the adapter."""
        ddi = self.ddi
        args = ddi.new("DXGKARG_QUERYADAPTERINFO")
        args.Type = int(DXGK_QUERYADAPTERINFOTYPE[kind])
        for buf, member in ((inp, "Input"), (out, "Output")):
            if buf is not None:
                size = ctypes.sizeof(buf)
                addr = self.pool.alloc(size)
                self.memory.write(addr, bytes(buf))
                setattr(args, f"p{member}Data", addr)
                setattr(args, f"{member}DataSize", size)
        ddi.call("DxgkDdiQueryAdapterInfo", self.hAdapter, args, log=False,
                 fail=f"DxgkDdiQueryAdapterInfo({kind}) failed; the adapter does not start")
        return type(out).from_buffer_copy(self.memory.read(args.pOutputData, ctypes.sizeof(out)))

    def _query_segments(self):
        """The segment descriptors (DXGKQAITYPE_QUERYSEGMENT: first the count, then the array)
        and the paging buffers' sizes the driver asks for."""
        ddi = self.ddi
        size = ctypes.sizeof(ddi.cls("DXGK_SEGMENTDESCRIPTOR"))
        n = self._query("DXGKQAITYPE_QUERYSEGMENT", ddi.new("DXGK_QUERYSEGMENTOUT"),
                        ddi.new("DXGK_QUERYSEGMENTIN")).NbSegment
        if not 1 <= n <= 64:
            raise AdapterStartError([f"DXGK_QUERYSEGMENTOUT.NbSegment = {n}: the driver must describe 1..64 segments"])
        array = self.pool.alloc(n * size)
        self.memory.write(array, bytes(n * size))
        ask = ddi.new("DXGK_QUERYSEGMENTOUT")
        ask.NbSegment = n
        ask.pSegmentDescriptor = array
        out = self._query("DXGKQAITYPE_QUERYSEGMENT", ask, ddi.new("DXGK_QUERYSEGMENTIN"))
        raw = self.memory.read(array, n * size)
        segments = [ddi.cls("DXGK_SEGMENTDESCRIPTOR").from_buffer_copy(raw, i * size) for i in range(n)]
        return segments, out.PagingBufferSize or 64 * 1024, out.PagingBufferPrivateDataSize

    def _query_umd_private(self) -> bytes:
        """DXGKQAITYPE_UMDRIVERPRIVATE: what the driver tells its user-mode half (empty when it has
        nothing to say: any failing status)."""
        size = 256
        out = self.pool.alloc(size)
        self.memory.write(out, bytes(size))
        args = self.ddi.new("DXGKARG_QUERYADAPTERINFO")
        args.Type = int(DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_UMDRIVERPRIVATE)
        args.pOutputData = out
        args.OutputDataSize = size
        status = self.ddi.call("DxgkDdiQueryAdapterInfo", self.hAdapter, args, log=False)
        return bytes(self.memory.read(out, size)).rstrip(b"\0") if status == SUCCESS else b""

    # -- trace helpers ------------------------------------------------------------------------------
    def args_of(self, obj) -> dict:
        """Every member of a DDI structure by its DDI name (see :meth:`DdiGateway.args_of`)."""
        return self.ddi.args_of(obj)

    # -- interrupts ---------------------------------------------------------------------------------
    @property
    def interrupts(self) -> int:
        """Interrupts delivered to the driver's ISR."""
        return self.dxgk.interrupts

    @property
    def dpcs(self) -> int:
        """DPCs run."""
        return self.dxgk.dpcs

    @property
    def vsyncs(self) -> int:
        """CRTC_VSYNC events reported."""
        return self.dxgk.vsyncs

    def rules_exercised(self) -> set[int]:
        """Every contract rule this adapter's run judged at least once (``wddmsim verify``)."""
        truth = self.vidsch.truth
        return (self.verifier.exercised() | self.ddi.rules_exercised() | self.dxgk.rules_exercised()
                | (truth.judged if truth is not None else set())
                | ({48} if self.vsync is not None and self.vsync.watched else set()))

    def interrupt(self, message_number: int) -> bool:
        """The GPU's line fired (see :meth:`DxgkInterface.interrupt`)."""
        return self.dxgk.interrupt(message_number)

    def invalid_interrupt(self, data, message: str) -> None:
        """The driver reported an interrupt whose NodeOrdinal names no node (rule 20,
        NodeOrdinalInRange): the fence it carries cannot belong to any node's fence sequence, so
        the scheduler stops as for an invalid fence id, bug check 0x119/0x1 (the bug check page
        documents no code of its own for a bad node), in every verifier mode."""
        bc = BugCheck(BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, VidSchError.DRIVER_REPORTED_INVALID_FENCE_ID)
        raise BugCheckStop(CrashRecord(
            time=self.sim.now, bugcheck=bc, message=f"rule 20 (NodeOrdinalInRange): {message}",
            struct="DXGKARGCB_NOTIFY_INTERRUPT_DATA", arch=self.arch, ddi_version=self.version.name,
            address=self.interrupt_address, data=bytes(data), rule=20, rule_name="NodeOrdinalInRange",
        ))

    # -- objects ----------------------------------------------------------------------------------------
    def create_process(self, name: str, priority_class: str = "normal", pid: int | None = None) -> Process:
        """A process; ``pid``: the id to give it (a replayed capture's), default the next free one."""
        if pid is None:
            taken = {p.pid for p in self.processes}
            pid = 0x1000 + 4 * len(self.processes)
            while pid in taken:
                pid += 4
        elif any(p.pid == pid for p in self.processes):
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER), f"process id {pid} is taken")
        proc = Process(name, priority_class, pid=pid)
        proc.handle = self.handles.add(proc)
        self.processes.append(proc)
        if self.trace is not None:
            self.trace.emit(self.sim.now, "ProcessCreate", {"process": proc.pid, "name": name, "priority_class": priority_class})
        return proc

    def _kmd_process(self, process: Process) -> int:
        """DxgkDdiCreateProcess (GPU-VA adapters), the first time ``process`` opens a device."""
        if not process.hKmdProcess:
            args = layout.ctype(RECORDS["DXGKARG_CREATEPROCESS"], self.arch, self.version)()
            args.hDxgkProcess = process.handle
            self.ddi.call("DxgkDdiCreateProcess", self.hAdapter, args, fail="DxgkDdiCreateProcess failed")
            process.hKmdProcess = args.hKmdProcess
            self.wddm2.gpuva.space(process).handle = args.hKmdProcess
        return process.hKmdProcess

    def create_device(self, process: Process) -> Device:
        """DxgkDdiCreateDevice (PASSIVE_LEVEL)."""
        dev = Device(process)
        dev.handle = self.handles.add(dev)
        args = layout.ctype(RECORDS["DXGKARG_CREATEDEVICE"], self.arch, self.version)()
        args.hDevice = dev.handle
        if self.wddm2 is not None:
            args.hKmdProcess = self._kmd_process(process)
        info_addr = 0
        if not self.multi_engine_aware:
            info_addr = self.pool.alloc(4096)
            args.pInfo = info_addr
        status = self.ddi.call("DxgkDdiCreateDevice", self.hAdapter, args)
        if status != SUCCESS:
            self.handles.remove(dev.handle)
            raise ApiError(status, "DxgkDdiCreateDevice failed")
        dev.hDriver = args.hDevice
        if info_addr:
            cls = layout.ctype(RECORDS["DXGK_DEVICEINFO"], self.arch, self.version)
            dev.info = cls.from_buffer_copy(self.memory.read(info_addr, ctypes.sizeof(cls)))
        process.devices.append(dev)
        self.devices.append(dev)
        return dev

    def create_context(self, device: Device, node: int, name: str = "", priority: int = 0,
                       hw: dict | None = None) -> Context:
        """DxgkDdiCreateContext; for a driver that is not MultiEngineAware the device is the context."""
        if not -7 <= priority <= 7:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER), f"context priority {priority} outside -7..7")
        count = len(self.vidsch.nodes)
        if not 0 <= node < count:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER),
                           f"node {node} does not exist (the adapter schedules {count} node{'s' if count > 1 else ''})")
        ctx = Context(name or f"context{len(self.contexts)}", device, node, priority)
        ctx.handle = self.handles.add(ctx)
        if self.wddm2 is not None and self.wddm2.hw_scheduling is not None:
            hw = hw or {}
            self.wddm2.hw_scheduling.create_context(ctx, band=hw.get("band"), realtime_level=hw.get("realtime_level", 0),
                                            quantum=hw.get("quantum"), grace_same=hw.get("grace_same", 0),
                                            grace_lower=hw.get("grace_lower", 0))
            self.wddm2.context_created(ctx)
            for flags in hw.get("queues", [()]):
                self.wddm2.hw_scheduling.create_queue(ctx, flags)
        elif self.multi_engine_aware:
            args = layout.ctype(RECORDS["DXGKARG_CREATECONTEXT"], self.arch, self.version)()
            args.NodeOrdinal = node
            args.EngineAffinity = 1
            # Judged after the call: a failure other than the two the contract allows breaks rule 76.
            status = self.ddi.call("DxgkDdiCreateContext", device.hDriver, args, judge="after",
                                   facts=R.Facts(version=self.version))
            if status != SUCCESS:
                self.handles.remove(ctx.handle)
                raise ApiError(status, "DxgkDdiCreateContext failed")
            ctx.hDriver = args.hContext
            ctx.hDdi = args.hContext
            ctx.info = args.ContextInfo
        else:
            ctx.hDriver = device.hDriver
            ctx.hDdi = device.hDriver
            ctx.info = device.info
        if ctx.info is not None and ctx.info.DmaBufferSegmentSet:
            # Rule 16/17: this model keeps DMA buffers in contiguous system memory only.
            raise ApiError(int(NTSTATUS.STATUS_NOT_SUPPORTED),
                           "the driver asked for DMA buffers in an aperture segment; this model pages DMA buffers only into system memory")
        if self.wddm2 is not None and self.wddm2.hw_scheduling is None:
            self.wddm2.context_created(ctx)  # GPU virtual addressing under the software scheduler
        device.contexts.append(ctx)
        self.contexts.append(ctx)
        if self.trace is not None:
            self.trace.emit(self.sim.now, "ContextCreate", {
                "context": ctx.handle, "process": device.process.pid, "device": device.handle,
                "node": node, "name": ctx.full_name, "priority": priority, "hContext": ctx.hDdi,
            })
        return ctx

    def create_allocation(self, device: Device, size: int, segment: str = "memory") -> Allocation:
        """Video memory of ``size`` bytes (page multiple) preferring a ``segment`` kind: a memory
        allocation is resident at once if a memory segment has room, else created evicted; an
        aperture one lives in system memory and is mapped when used. VidMm makes an allocation
        resident before a packet uses it."""
        if segment not in ("memory", "aperture"):
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER), f"segment preference {segment!r}")
        size = -(-size // 4096) * 4096
        alloc = Allocation(device, size)
        alloc.preference = segment
        self.vidsch.vidmm.create(alloc)
        if not alloc.resident and self.vidsch.vidmm._heap_for(alloc) is None:
            raise ApiError(int(NTSTATUS.STATUS_NO_MEMORY), f"no memory segment can hold {size} bytes")
        if self.wddm2 is not None:
            if not alloc.resident and alloc.preference == "memory":
                raise ApiError(int(NTSTATUS.STATUS_NO_MEMORY),
                               f"{size} bytes of video memory are not free: a GPU-VA device keeps its allocations "
                               f"resident from creation")
            self.wddm2.allocation_created(alloc)
        alloc.handle = self.handles.add(alloc)
        device.allocations.append(alloc)
        self.allocations.append(alloc)
        return alloc

    # -- building packets ---------------------------------------------------------------------------------
    def _packet_buffers(self, ctx: Context, extra: int):
        info = ctx.info
        dma_size = info.DmaBufferSize
        lists = info.DmaBufferPrivateDataSize + info.AllocationListSize * self._alist_size + \
            info.PatchLocationListSize * self._plist_size + extra
        total = dma_size + lists
        block = self.pool.alloc(total)
        return block, total

    def _write_allocation_list(self, addr: int, allocations) -> None:
        if not allocations:
            return
        out = bytearray()
        for a in allocations:
            e = self._alist_cls()
            if a is not None:
                e.hDeviceSpecificAllocation = a.handle
                e.SegmentId = a.segment_id
                e.PhysicalAddress.QuadPart = a.address
            out += bytes(e)
        self.memory.write(addr, bytes(out))

    def render(self, ctx: Context, command: bytes, allocations=(), patches=(), kind: str = "render",
               null_rendering: bool = False, redirected_present: int | None = None,
               call_start: int | None = None) -> Packet:
        """DxgkDdiRender on a command buffer, then the packet enters the context's queue.

        ``patches`` are ``(allocation_index, offset_in_command, allocation_offset)`` triples.
        ``null_rendering`` (or the adapter-wide switch) submits it with Flags.NullRendering.
        ``redirected_present``: the VidPn source whose composition surface this render presents to
        (Flags.RedirectedPresent; the compositor shows it at the next vsync); ``call_start``: when
        the application's present call began (default: now).
        """
        if ctx.device.error:
            raise ApiError(int(NTSTATUS.STATUS_DEVICE_REMOVED), "the device is in error")
        if ctx.destroyed:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_HANDLE), "the context was destroyed")
        info = ctx.info
        # Each member read once (a ctypes member read is a call).
        dma_size = info.DmaBufferSize
        alist_len = info.AllocationListSize
        plist_len = info.PatchLocationListSize
        n = len(command)
        if n > dma_size:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER),
                           f"command buffer of {n} bytes exceeds the DMA buffer size {dma_size}")
        if len(allocations) > alist_len or len(patches) > plist_len:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER), "allocation or patch list longer than the context allows")
        if allocations:
            need: dict[str, int] = {}
            for a in {id(a): a for a in allocations if a is not None}.values():
                need[a.preference] = need.get(a.preference, 0) + a.size
            heaps = self.vidsch.vidmm.heaps.values()
            for segment_kind, size in need.items():
                if size > max((h.size for h in heaps if h.kind == segment_kind), default=0):
                    raise ApiError(int(NTSTATUS.STATUS_NO_MEMORY),
                                   f"the packet's {segment_kind} allocations ({size} bytes) cannot be resident "
                                   f"at once in any {segment_kind} segment")
        mem = self.memory
        plist_size = self._plist_size
        priv_size = info.DmaBufferPrivateDataSize
        # One block: the DMA buffer, its private data, the allocation and patch lists, then the
        # staging copy of the command buffer and its input patch list (as _packet_buffers lays it).
        alist_bytes = alist_len * self._alist_size
        plist_bytes = plist_len * plist_size
        total = dma_size + priv_size + alist_bytes + plist_bytes + n + len(patches) * plist_size
        block = self.pool.alloc(total)
        dma = block
        priv = block + dma_size
        alist = priv + priv_size
        plist = alist + alist_bytes
        cmd_addr = plist + plist_bytes
        mem.write(cmd_addr, command)
        plist_in = cmd_addr + n
        if patches:
            out = bytearray()
            for index, offset, alloc_offset in patches:
                e = self._plist_cls()
                e.AllocationIndex = index
                e.PatchOffset = offset
                e.AllocationOffset = alloc_offset
                out += bytes(e)
            mem.write(plist_in, bytes(out))
        if allocations:
            self._write_allocation_list(alist, allocations)
        a = self._render_args
        self._render_fill(a, cmd_addr, n, dma, dma_size, priv, priv_size, alist,
                          len(allocations), plist_in, len(patches), plist, plist_len, 0, 0, dma)
        status = self._render_call(ctx.hDdi, a)
        if status != SUCCESS:
            self.pool.free(block, total)
            raise ApiError(status, "DxgkDdiRender rejected the command buffer")
        ctx.seq += 1
        p = Packet(ctx, ctx.seq, kind)
        p.allocations = tuple(allocations)
        if null_rendering or self.null_rendering:
            p.flags = FLAG_NULL_RENDERING
        if self._vm_flag and ctx.device.process.virtual_machine:
            p.flags |= FLAG_VIRTUAL_MACHINE_DATA
        if redirected_present is not None:
            p.flags |= FLAG_REDIRECTED_PRESENT
            p.vidpn_source = redirected_present
            p.present_t = self.sim.now if call_start is None else call_start
            p.kind = "present"
        p.dma = dma
        p.dma_size = dma_size
        p.end_off = a.pDmaBuffer - dma
        p.priv = priv
        p.priv_size = priv_size
        p.alist = alist
        p.alist_n = len(allocations)
        p.plist = plist
        p.plist_n = (a.pPatchLocationListOut - plist) // plist_size
        p.buffers = (block, total)
        ctx.submitted += 1
        if self.on_packet is not None:
            self.on_packet(p)
        if redirected_present is not None:
            self.ledger.present(self.sim.now, ctx.handle, ctx.device.process.pid, p.seq, "composed", 0, 0,
                                redirected_present, 0, 0, p.present_t)
            if self.trace is not None:
                self.trace.emit(self.sim.now, "Present", {
                    "context": ctx.handle, "process": ctx.device.process.pid, "seq": p.seq, "mode": "composed",
                    "flip": 0, "interval": 0, "source": redirected_present, "width": 0, "height": 0,
                    "cpu_start": p.present_t})
            self.vidsch.presents.presented(p)
        self.vidsch.enqueue(p)
        return p

    def redirected_flip(self, packet: Packet, vidpn_source: int, call_start: int | None = None,
                        sync_interval: int = 0, surface: Allocation | None = None, allow_tearing: bool = False):
        """D3DKMTPresent with RedirectedFlip: ``packet``, the last of the frame (the present's flush),
        ends a flip-model frame that the compositor of ``vidpn_source`` composes once the packet
        retires (without a compositor the OS shows it at the next vsync after that), shown for at
        least ``sync_interval`` refreshes (0: replaced by a newer frame). No DMA buffer of its own:
        see :mod:`wddmsim.dxgkrnl.composition`. A window the compositor put on an overlay plane
        flips that plane to ``surface`` (its back buffer) instead, immediately when ``allow_tearing``
        (DXGI_PRESENT_ALLOW_TEARING) and the sync interval is 0: see
        :mod:`wddmsim.dxgkrnl.planeassign`. Returns the present's token."""
        ctx = packet.context
        if not 0 <= vidpn_source < len(self.vidsch.presents.sources):
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER), f"VidPn source {vidpn_source} does not exist")
        planes = self.vidsch.presents.planes
        if planes is not None and planes.layer_of(ctx) is not None:
            return planes.present(packet, vidpn_source, self.sim.now if call_start is None else call_start,
                                  sync_interval, allow_tearing, surface)
        token = PresentToken(packet, vidpn_source, self.sim.now if call_start is None else call_start, sync_interval)
        self.ledger.present(self.sim.now, ctx.handle, ctx.device.process.pid, packet.seq, "composed_flip", 0,
                            sync_interval, vidpn_source, 0, 0, token.present_t)
        if self.trace is not None:
            self.trace.emit(self.sim.now, "Present", {
                "context": ctx.handle, "process": ctx.device.process.pid, "seq": packet.seq, "mode": "composed_flip",
                "flip": 0, "interval": sync_interval, "source": vidpn_source, "width": 0, "height": 0,
                "cpu_start": token.present_t})
        presents = self.vidsch.presents
        presents.presented(token)
        if planes is not None:
            planes.composed(token)
        self.wait_event(ctx, packet.seq).add_callback(lambda _value: presents.completed(token, self.sim.now))
        return token

    def render_virtual(self, ctx: Context, va: int, size: int, private: bytes = b"",
                       null_rendering: bool = False) -> Packet:
        """The user-mode driver submitted the command buffer at GPU virtual address ``va`` of its
        process (GPU virtual addressing, software scheduling): no DxgkDdiRender and no patching;
        the kernel copies the ``private`` data into a buffer of the context's
        DmaBufferPrivateDataSize and queues the packet for DxgkDdiSubmitCommandVirtual."""
        if ctx.device.error:
            raise ApiError(int(NTSTATUS.STATUS_DEVICE_REMOVED), "the device is in error")
        if ctx.destroyed:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_HANDLE), "the context was destroyed")
        info = ctx.info
        priv_size = info.DmaBufferPrivateDataSize
        if len(private) > priv_size:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER),
                           f"{len(private)} bytes of private data exceed the context's DmaBufferPrivateDataSize {priv_size}")
        ctx.seq += 1
        p = Packet(ctx, ctx.seq, "render")
        p.va = va
        p.dma_size = size
        p.end_off = size
        p.umd_priv = len(private)
        ctx.virtual_packets += 1
        if priv_size:
            p.priv = self.pool.alloc(priv_size)
            p.priv_size = priv_size
            p.buffers = (p.priv, priv_size)
            self.memory.write(p.priv, private + bytes(priv_size - len(private)))
        if null_rendering or self.null_rendering:
            p.flags = FLAG_NULL_RENDERING
        if self._vm_flag and ctx.device.process.virtual_machine:
            p.flags |= FLAG_VIRTUAL_MACHINE_DATA
        ctx.submitted += 1
        if self.on_packet is not None:
            self.on_packet(p)
        self.vidsch.enqueue(p)
        return p

    def present(self, ctx: Context, source: Allocation, destination: Allocation | None, width: int, height: int,
                mode: str = "blt", flip_interval: int = 1, vidpn_source: int = 0,
                null_rendering: bool = False, call_start: int | None = None, independent: bool = False,
                composes: list | None = None, legacy: bool = False) -> Packet:
        """DxgkDdiPresent: a blt of ``width`` x ``height`` pixels to ``destination`` (``mode`` "blt"),
        or a flip of ``source`` on ``vidpn_source`` ("flip", "flip_no_wait") honouring
        ``flip_interval`` (0 immediate, 1..4 vsyncs). See :mod:`wddmsim.dxgkrnl.present`.
        ``independent``: the flip of a flip-model swap chain the compositor stepped aside for
        (logged as mode "independent_flip"); ``composes``: the compositor's flip, showing these
        composed frames (:mod:`wddmsim.dxgkrnl.composition`); ``legacy``: a flip of the legacy
        full-screen present path (D3D9's, D3DPRESENT_INTERVAL_ONE: it waits for a vertical retrace
        before it is made; see :mod:`wddmsim.dxgkrnl.present`)."""
        if ctx.device.error:
            raise ApiError(int(NTSTATUS.STATUS_DEVICE_REMOVED), "the device is in error")
        if mode not in ("blt", "flip", "flip_no_wait"):
            raise ValueError(f"present mode must be blt, flip or flip_no_wait, got {mode!r}")
        # The OS sends only the flips the driver declared in DXGK_FLIPCAPS (rules 87, 88). Without
        # FlipOnVSyncWithNoWait "the graphics pipeline must wait until the next vertical sync"
        # (Microsoft's DXGK_FLIPCAPS page): the present becomes a waiting flip. Without FlipInterval
        # only IMMEDIATE and ONE are supported: an interval of 2..4 fails the call, as a runtime
        # refuses a presentation interval the device's caps do not list.
        flip_caps = self.caps.FlipCaps
        if mode == "flip_no_wait" and not flip_caps.get("FlipOnVSyncWithNoWait"):
            mode = "flip"
        if mode != "blt" and flip_interval >= 2 and not flip_caps.get("FlipInterval"):
            raise ApiError(int(NTSTATUS.STATUS_NOT_SUPPORTED),
                           f"flip interval {flip_interval}: the driver does not report DXGK_FLIPCAPS.FlipInterval")
        if not 0 <= vidpn_source < len(self.vidsch.presents.sources):
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER), f"VidPn source {vidpn_source} does not exist")
        flip = mode != "blt"
        info = ctx.info
        block, total = self._packet_buffers(ctx, 0)
        dma = block
        priv = block + info.DmaBufferSize
        alist = priv + info.DmaBufferPrivateDataSize
        plist = alist + info.AllocationListSize * self._alist_size
        # Element 0 is always NULL; 1 = source, 2 = destination (DXGK_PRESENT_*_INDEX).
        self._write_allocation_list(alist, [None, source, destination])
        args = self._present_args
        args.pDmaBuffer = dma
        args.DmaSize = info.DmaBufferSize
        args.pDmaBufferPrivateData = priv
        args.DmaBufferPrivateDataSize = info.DmaBufferPrivateDataSize
        args.pAllocationList = alist
        args.pPatchLocationListOut = plist
        args.PatchLocationListOutSize = info.PatchLocationListSize
        args.MultipassOffset = 0
        args.SrcRect.left = args.SrcRect.top = 0
        args.SrcRect.right = width
        args.SrcRect.bottom = height
        args.DstRect.left = args.DstRect.top = 0
        args.DstRect.right = width
        args.DstRect.bottom = height
        args.FlipInterval = flip_interval if flip else 0
        # An MMIO flip: no DMA buffer is asked for (pDmaBuffer NULL, Microsoft's DXGK_FLIPCAPS page);
        # the OS flips it with DxgkDdiSetVidPnSourceAddress once its rendering is done.
        mmio = flip and self.mmio_flips
        if mmio:
            args.pDmaBuffer = 0
            args.DmaSize = 0
        args.Flags.Value = 0
        if flip:
            args.Flags.Flip = 1
            args.Flags.FlipWithNoWait = 1 if mode == "flip_no_wait" else 0
        else:
            args.Flags.Blt = 1
        args.DmaBufferSegmentId = 0
        args.DmaBufferPhysicalAddress.QuadPart = dma
        status = self.ddi.call("DxgkDdiPresent", ctx.hDdi, args)
        if status != SUCCESS:
            self.pool.free(block, total)
            raise ApiError(status, "DxgkDdiPresent failed")
        ctx.seq += 1
        p = Packet(ctx, ctx.seq, "present")
        p.allocations = (None, source, destination)
        p.flags = FLAG_PRESENT | (FLAG_FLIP if flip else 0) | (FLAG_FLIP_NO_WAIT if mode == "flip_no_wait" else 0)
        if null_rendering or self.null_rendering:
            p.flags |= FLAG_NULL_RENDERING
        if self._vm_flag and ctx.device.process.virtual_machine:
            p.flags |= FLAG_VIRTUAL_MACHINE_DATA
        p.vidpn_source = vidpn_source
        p.flip_interval = flip_interval if flip else 0
        p.surface = source.address
        p.present_t = self.sim.now if call_start is None else call_start
        p.dma = dma
        p.dma_size = info.DmaBufferSize
        p.end_off = 0 if mmio else args.pDmaBuffer - dma
        p.mmio = mmio
        p.vblank_wait = legacy and flip and flip_interval > 0
        p.priv = priv
        p.priv_size = 0 if mmio else info.DmaBufferPrivateDataSize  # an MMIO flip's driver wrote none
        p.alist = alist
        p.alist_n = 3
        p.plist = plist
        p.plist_n = (args.pPatchLocationListOut - plist) // self._plist_size
        p.buffers = (block, total)
        ctx.submitted += 1
        if self.on_packet is not None:
            self.on_packet(p)
        if composes is not None:
            self.vidsch.presents.composition(vidpn_source).attach(p, composes)
        self.ledger.present(self.sim.now, ctx.handle, ctx.device.process.pid, p.seq,
                            "independent_flip" if independent and flip else mode, int(flip), p.flip_interval,
                            vidpn_source, width, height, p.present_t)
        if self.trace is not None:
            self.trace.emit(self.sim.now, "Present", {"context": ctx.handle, "process": ctx.device.process.pid,
                                                     "seq": p.seq, "mode": "independent_flip" if independent and flip
                                                     else mode, "flip": int(flip),
                                                     "interval": p.flip_interval, "source": vidpn_source,
                                                     "width": width, "height": height, "cpu_start": p.present_t})
        self.vidsch.presents.presented(p)
        self.vidsch.enqueue(p)
        return p

    def set_vidpn_source_address(self, p: Packet, immediate: bool) -> int:
        """DxgkDdiSetVidPnSourceAddress for the MMIO flip ``p`` (device IRQL): its source, the
        surface's segment and address, ``ContextCount`` 1 (the model broadcasts no flip: the flip's
        own context, rule 83) and ``FlipImmediate`` (interval 0) or ``FlipOnNextVSync``. Judged
        after the call (rules 83, 85, 86); the driver's status is returned."""
        args = self._svsa_args
        if args is None:
            args = self._svsa_args = self.ddi.new("DXGKARG_SETVIDPNSOURCEADDRESS")
        source = p.allocations[1] if len(p.allocations) > 1 else None
        args.VidPnSourceId = p.vidpn_source
        args.PrimarySegment = source.segment_id if source is not None else 0
        args.PrimaryAddress.QuadPart = p.surface
        args.hAllocation = source.handle if source is not None else 0
        args.ContextCount = 1
        args.Context[0] = p.context.hDdi
        args.Flags.Value = 0
        if immediate:
            args.Flags.FlipImmediate = 1
        else:
            args.Flags.FlipOnNextVSync = 1
        return self.ddi.call("DxgkDdiSetVidPnSourceAddress", self.hAdapter, args, judge="after",
                             facts=R.Facts(version=self.version, broadcast_context_count=0,
                                           vidpn_source_count=len(self.display_refresh)))

    def free_packet(self, p: Packet) -> None:
        if p.va:
            self.wddm2.release(p.context, p.va)
        buffers = p.buffers
        if buffers is None:
            return
        if type(buffers) is list:
            # A paging buffer several submissions share: freed with the last of them.
            buffers[2] -= 1
            if buffers[2]:
                return
        block, total = buffers[0], buffers[1]
        self.pool.free(block, total)

    # -- cancelling and destroying ----------------------------------------------------------------------------
    def cancel_packet(self, p: Packet, reached_hardware: bool = False) -> None:
        """A packet leaves its software queue and will never run: one that never reached the
        hardware queue is announced to a CancelCommandAware driver through DxgkDdiCancelCommand
        (rule 67), one a preemption or a reset took back from it
        (``reached_hardware``) is not; then it goes."""
        ctx = p.context
        ctx.cancelled += 1
        if p.job is not None:
            ctx.jobs.dropped(p)  # its job never finishes: not judged (dxgkrnl/deadlines.py)
        if p.pinned:
            self.vidsch.vidmm.dropped(p)
        if p.present_t >= 0:
            self.vidsch.presents.forget(p)
        if self._cancel_args is not None and not reached_hardware:
            args = self._cancel_args
            self._cancel_fill(args, ctx.hDdi, p.dma, p.dma_size, p.start_off, p.end_off, p.priv, p.priv_size, 0,
                              p.priv_size, p.alist, p.alist_n, p.plist, p.plist_n, 0, p.plist_n)
            address = self.interrupt_address
            self.ddi.call("DxgkDdiCancelCommand", self.hAdapter, args, facts=R.Facts(version=self.version),
                          judge="after", address=address, bugcheck=lambda status: BugCheck(
                              BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, VidSchError.FAILED_CANCEL_COMMAND,
                              status & 0xFFFFFFFF, address, p.seq))
        self.free_packet(p)
        self.ledger.queue_stop(self.sim.now, ctx.handle, ctx.node, p.fence, p.kind, p.seq, "Cancelled", 0)
        if self.trace is not None:
            self.trace.emit(self.sim.now, "QueuePacketStop", {
                "context": ctx.handle, "node": ctx.node, "fence": p.fence, "kind": p.kind, "seq": p.seq,
                "status": "Cancelled", "hwqueue": 0,
            })

    def drop_queue(self, ctx: Context) -> None:
        """Cancel every packet of ``ctx``'s software queue, withdraw its GPU waits and wake its
        CPU waiters."""
        while ctx.queue:
            self.cancel_packet(ctx.queue.popleft())
        if ctx.gates:
            for gate in ctx.gates:
                if gate[3] is not None:
                    gate[3].cancel()
            ctx.gates.clear()
        if ctx.ready:
            ctx.ready = False
            self.vidsch.policy.idle(ctx)
            self.vidsch.idle_check(self.vidsch.nodes[ctx.node])
        for _target, event in ctx.waiters:
            event.succeed(ctx.completed)
        ctx.waiters = []

    # -- scheduling priority while running ----------------------------------------------------------
    def _hardware_scheduling(self):
        """The OS's hardware scheduling (:mod:`.hwscheduling`), None under the software scheduler:
        there the priority calls reach the driver through DxgkDdiSetContextSchedulingProperties and
        the GPU's scheduler decides."""
        return self.wddm2.hw_scheduling if self.wddm2 is not None else None

    def _reprioritized(self, contexts) -> None:
        """The scheduler looks again at the nodes of ``contexts`` whose priority changed: a raised
        priority may preempt the running context, a ready one may be picked sooner."""
        vs = self.vidsch
        for ordinal in sorted({c.node for c in contexts if c.ready}):
            node_queue = vs.nodes[ordinal]
            vs._wake_worker(node_queue)
            if vs.preemptor.enabled:
                vs.preemptor.consider(node_queue)

    def set_scheduling_hints(self, ctx: Context, changes: dict) -> None:
        """The model's SetSchedulingHints (no Windows call: :mod:`.hints`): ``changes`` maps hint
        names (weight, period, deadline, utilization) to new values; the others keep theirs. The
        policy is told (a research policy's ``on_changed``) and looks again at the node."""
        if ctx.destroyed:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER), "the context was destroyed")
        for key, value in changes.items():
            setattr(ctx.hints, key, value)
        if self.trace is not None:
            self.trace.emit(self.sim.now, "SchedulingHints", {"context": ctx.handle, **ctx.hints.as_dict()})
        changed = getattr(self.vidsch.policy, "changed", None)
        if changed is not None:
            changed([ctx])
        self._reprioritized([ctx])

    def set_context_priority(self, ctx: Context, priority: int) -> None:
        """D3DKMTSetContextSchedulingPriority: the context's priority within its process, -7..7
        (STATUS_INVALID_PARAMETER outside it, or for a destroyed context). Packets already queued
        keep their order; from now on the scheduler ranks the context by the new priority."""
        if ctx.destroyed:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER), "the context was destroyed")
        if not isinstance(priority, int) or not -7 <= priority <= 7:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER), f"context priority {priority!r} outside -7..7")
        old = ctx.priority
        hw = self._hardware_scheduling()
        if hw is not None:
            hw.reprioritize([ctx], lambda: setattr(ctx, "priority", priority), lambda: setattr(ctx, "priority", old),
                            reband=False)
        else:
            self.vidsch.policy.reprioritize([ctx], lambda: setattr(ctx, "priority", priority))
        if self.trace is not None:
            self.trace.emit(self.sim.now, "ContextPriority", {"context": ctx.handle, "priority": priority,
                                                              "previous": old})
        if hw is None:
            self._reprioritized([ctx])

    def set_process_priority_class(self, process: Process, priority_class: str) -> None:
        """D3DKMTSetProcessSchedulingPriorityClass: the process's D3DKMT_SCHEDULINGPRIORITYCLASS
        (STATUS_INVALID_PARAMETER for an unknown class); every context of the process is ranked by
        it from now on."""
        if priority_class not in PRIORITY_CLASSES:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER),
                           f"priority class {priority_class!r}; the classes are {', '.join(PRIORITY_CLASSES)}")
        old = process.priority_class
        contexts = [c for d in process.devices for c in d.contexts if not c.destroyed]
        hw = self._hardware_scheduling()
        if hw is not None:
            hw.reprioritize(contexts, lambda: setattr(process, "priority_class", priority_class),
                            lambda: setattr(process, "priority_class", old), reband=True)
        else:
            self.vidsch.policy.reprioritize(contexts, lambda: setattr(process, "priority_class", priority_class))
        if self.trace is not None:
            self.trace.emit(self.sim.now, "ProcessPriorityClass", {"process": process.pid,
                                                                   "priority_class": priority_class,
                                                                   "previous": old})
        if hw is None:
            self._reprioritized(contexts)

    def destroy_context(self, ctx: Context) -> None:
        """D3DKMTDestroyContext: queued packets are cancelled at once; packets already on the
        hardware finish; then DxgkDdiDestroyContext (a MultiEngineAware driver's context)."""
        if ctx.destroyed:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_HANDLE), "the context was destroyed already")
        ctx.destroyed = True
        hw = self.wddm2.hw_scheduling if ctx.hw else None
        if hw is not None:
            hw.cancel_queues(ctx)  # the hardware queues' buffers not yet with the driver
        self.drop_queue(ctx)
        if self.trace is not None:
            self.trace.emit(self.sim.now, "ContextDestroy", {"context": ctx.handle, "in_flight": ctx.in_flight})
        if not ctx.in_flight:
            self.finish_destroy(ctx)

    def finish_destroy(self, ctx: Context) -> None:
        """The last packet of a destroyed context left the hardware: tell the driver
        (DxgkDdiDestroyContext; for a hardware context DxgkDdiDestroyHwQueue for each of its
        queues, then DxgkDdiDestroyHwContext)."""
        if ctx.hw:
            self.wddm2.hw_scheduling.destroy(ctx)
            ctx.hDriver = 0
            self.handles.remove(ctx.handle)
            return
        if ctx.hDriver == 0 or not self.multi_engine_aware:
            self.handles.remove(ctx.handle)
            return
        self.ddi.call("DxgkDdiDestroyContext", ctx.hDriver, log_args={"hContext": ctx.hDriver})
        ctx.hDriver = 0
        self.handles.remove(ctx.handle)

    def wait_event(self, ctx: Context, target: int):
        """An event that triggers when ``ctx`` has retired ``target`` packets."""
        ev = self.sim.event()
        if ctx.completed >= target:
            ev.succeed(ctx.completed)
        else:
            ctx.waiters.append((target, ev))
        return ev
