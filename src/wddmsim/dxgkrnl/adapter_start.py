"""The adapter's start, :class:`AdapterStartup` (one of the mixins :class:`~.adapter.Adapter` is
made of): the driver's declared interface version and entry points (``DxgkInitialize``),
``DxgkDdiStartDevice``, the adapter queries (``DxgkDdiQueryAdapterInfo``: ``DXGK_DRIVERCAPS``, the
segments, the user-mode half's private data, the native fence caps), each node's
``DxgkDdiGetNodeMetadata``, and the optional features the OS turns on for the driver it found (GPU
virtual addressing, hardware scheduling, native GPU fences, the hardware flip queue, MMIO flips).

It follows Windows' refusals at start: a missing entry point, a capability combination Windows
does not accept, a feature the OS was asked for that the driver's version or caps do not allow,
node metadata that breaks rule 80 (ExactlyOne3DNode: Microsoft's DXGK_ENGINE_TYPE page, one 3-D
engine per adapter; DXGK_NODEMETADATA's, a FriendlyName only for DXGK_ENGINE_TYPE_OTHER) or rule 81
(GetNodeMetadataStatus). Each is an :class:`~.errors.AdapterStartError` listing every reason, raised
before any work has run. The versions the OS enables native GPU fences and the hardware flip queue
for come from Microsoft's "Native GPU fence objects" and "Hardware flip queue" pages. Rule numbers
are the rule catalogue's: ``wddmsim rules N`` prints rule N, docs/rules.md lists them all.
"""

from __future__ import annotations

import ctypes

from ..ddi.enums import DXGK_QUERYADAPTERINFOTYPE
from ..ddi.ntstatus import NTSTATUS, status_name
from ..ddi.versions import ddi_version, from_value
from .adapterstop import AdapterStop
from .caps import AdapterCaps, missing_entry_points, refusals
from .errors import AdapterStartError
from .verifier import Verifier
from .vidsch import VidSch
from .vsync import VsyncControl
from .wddm2 import OsWddm2

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
ENGINE_TYPE_NAMES = {0: "OTHER", 1: "3D", 2: "VIDEO_DECODE", 3: "VIDEO_ENCODE", 4: "VIDEO_PROCESSING",
                     5: "SCENE_ASSEMBLY", 6: "COPY", 7: "OVERLAY", 8: "CRYPTO", 9: "VIDEO_CODEC"}
_ENGINE_OTHER, _ENGINE_3D = 0, 1

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


class AdapterStartup:
    """The adapter's start and the features the OS enables on it (see the module doc)."""

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
        self._packet_arguments(caps)
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
