"""The reference driver's multiplane overlays: the third-form flip and support check (WDDM 2.1 and
later) and the per-plane vsync report.

Follows Microsoft's pages of DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3,
DXGKARG_SETVIDPNSOURCEADDRESSWITHMULTIPLANEOVERLAY3, DXGK_MULTIPLANE_OVERLAY_PLANE3,
DXGK_PLANE_SPECIFIC_INPUT_FLAGS, DxgkDdiCheckMultiPlaneOverlaySupport3,
DXGKARG_CHECKMULTIPLANEOVERLAYSUPPORT3, DXGK_CHECK_MULTIPLANE_OVERLAY_SUPPORT_RETURN_INFO,
DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO2 and DXGK_DRIVERCAPS (SupportMultiPlaneOverlay, MaxOverlayPlanes,
SupportMultiPlaneOverlayImmediateFlip):

- With the ``overlay_planes`` setting N > 0 the driver declares ``SupportMultiPlaneOverlay`` and
  ``MaxOverlayPlanes`` = N (planes shown at once on one source, the primary included) and, from WDDM
  2.1, ``SupportMultiPlaneOverlayImmediateFlip``. ``LayerIndex`` L is the GPU's plane L of the source
  (gpu/planes.py): plane 0 is the primary's scanout register, which MMIO flips write too.
- ``DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3`` (device IRQL) reads the planes
  (``ppPlanes``), checks every entry before it writes anything (a LayerIndex below N, each plane
  once, an enabled plane with a ``DXGK_PRIMARYCONTEXTDATA`` naming its surface), then writes each
  plane's address and enable bit: at once for ``FlipImmediate``, else into the plane's pending
  registers, which latch at the next vsync (the latest write before it wins). It keeps the
  PresentId written to each plane's pending registers; an immediate write forgets it. A disabled
  plane keeps its address register. No OutputFlags are set (nothing is converted to immediate and
  no immediate flip completes later), so the call-wide and per-plane output flags are written 0.
  Refused with STATUS_INVALID_PARAMETER: a source it does not have, more planes than N, a plane it
  does not have, a plane twice, an enabled plane without a surface (the OS model never sends one).
- In the ISR, after the CRTC_VSYNC of a source, it reads the source's plane latch status register;
  each plane that latched a pending address for which it holds a PresentId is reported, in plane
  order, in one ``DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2`` with one
  ``DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO2`` (LayerIndex, that PresentId, no flags) each, from an array
  of its own that it rewrites at every report (the OS reads it during the callback). The PresentId
  a later write replaced is never reported; the OS takes the reported one as covering it.
  ``..._OVERLAY3`` is the hardware flip queue's report (its entries name a log index, not a
  PresentId): with ``max_hw_queued_flips`` and the OS's consent the flip DDI queues each plane's
  flip with its target time instead, and the ISR reports the log (kmd/flipqueue.py).
- ``DxgkDdiCheckMultiPlaneOverlaySupport3`` (PASSIVE_LEVEL) answers ``Supported`` when the planes
  asked about are at most N, each names a source the GPU has and a LayerIndex below N, once per
  source, and its attributes are within what the display does: no rotation (``Rotation`` 0 or
  D3DDDI_ROTATION_IDENTITY), no mirroring (``Flags`` 0), opaque or alpha blending, rectangles that
  are not inverted; any stretch (the model draws no pixels). A post-composition transform is
  supported only when it is none (no flags, no rotation). Otherwise ``Supported`` is FALSE and
  ``ReturnInfo.FailingPlane`` is the index, in the list, of the first plane refused (0 when only
  the post composition is); ``TryAgain`` stays 0: nothing here passes.
"""

from __future__ import annotations

import ctypes
import struct

from ..ddi import layout
from ..ddi.enums import DXGK_INTERRUPT_TYPE as T
from ..ddi.ntstatus import NTSTATUS
from ..ddi.registry import RECORDS

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
INVALID = int(NTSTATUS.STATUS_INVALID_PARAMETER)
_OVERLAY2 = int(T.DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2)
_PTR = struct.Struct("<Q")
#: D3DDDI_ROTATION_IDENTITY; 0 (unset) is taken as the same
_ROTATION_IDENTITY = 1
#: DXGK_MULTIPLANE_OVERLAY_BLEND: opaque, alpha blend
_BLENDS = (0, 1)
#: the most planes one report can carry (the report array's entries)
_MAX_REPORT = 16


class OverlayDdi:
    """Mixin of :class:`wddmsim.kmd.ReferenceDriver`: the multiplane-overlay entry points and the
    ISR's plane report (see the module doc)."""

    def _overlay_init(self, planes: int) -> None:
        #: MaxOverlayPlanes the driver declares (0: no multiplane overlays)
        self.overlay_planes = planes
        #: (source, LayerIndex) -> the PresentId written to the plane's pending registers
        self.plane_pending: dict[tuple[int, int], int] = {}
        #: (source, LayerIndex) -> the PresentId the plane shows (as far as the driver knows)
        self.plane_shown: dict[tuple[int, int], int] = {}
        self.plane_reports = 0  # CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2 events reported
        self._mpo_report_array = 0
        if planes:
            arch, version = self.arch, self.version
            self._plane3_cls = layout.ctype(RECORDS["DXGK_MULTIPLANE_OVERLAY_PLANE3"], arch, version)
            self._pcd_cls = layout.ctype(RECORDS["DXGK_PRIMARYCONTEXTDATA"], arch, version)
            self._with_source_cls = layout.ctype(RECORDS["DXGK_MULTIPLANE_OVERLAY_PLANE_WITH_SOURCE2"], arch, version)
            self._post_cls = layout.ctype(RECORDS["DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION_WITH_SOURCE"], arch,
                                          version)
            self._info2_cls = layout.ctype(RECORDS["DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO2"], arch, version)
            self._mpo_report_data = self._interrupt_cls()
            self._output_flags_at = self._plane3_cls.OutputFlags.offset

    def _overlay_start(self, dxgk) -> None:
        """DxgkDdiStartDevice: the array the plane reports point at."""
        if self.overlay_planes:
            self._mpo_report_array = dxgk.MmAllocateContiguousMemory(_MAX_REPORT * ctypes.sizeof(self._info2_cls))

    def _overlay_caps(self, c) -> None:
        """DXGK_DRIVERCAPS: SupportMultiPlaneOverlay, MaxOverlayPlanes, SupportMultiPlaneOverlayImmediateFlip."""
        if not self.overlay_planes:
            return
        c.SupportMultiPlaneOverlay = 1
        c.MaxOverlayPlanes = self.overlay_planes
        if hasattr(c, "SupportMultiPlaneOverlayImmediateFlip"):
            c.SupportMultiPlaneOverlayImmediateFlip = 1

    def _pointers(self, address: int, count: int) -> list[int]:
        """``count`` pointers of an array of pointers at ``address`` (x64)."""
        data = self.mem.read(address, 8 * count)
        return [_PTR.unpack_from(data, 8 * i)[0] for i in range(count)]

    def _read(self, cls, address: int):
        return cls.from_buffer_copy(self.mem.read(address, ctypes.sizeof(cls)))

    # -- the flip ---------------------------------------------------------------------------------
    def DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3(self, hAdapter: int,
                                                           pSetVidPnSourceAddressWithMultiPlaneOverlay) -> int:
        """Write each plane's address and enable bit (device IRQL): at once for FlipImmediate, else
        at the next vsync, which the ISR reports with CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2."""
        args = pSetVidPnSourceAddressWithMultiPlaneOverlay
        hw = self.hw
        source = int(args.VidPnSourceId)
        count = int(args.PlaneCount)
        n = self.overlay_planes
        if not n or not 0 <= source < hw.display_count or count > n or (count and not args.ppPlanes):
            return INVALID
        pointers = self._pointers(args.ppPlanes, count) if count else []
        work = []
        seen = set()
        for ptr in pointers:
            if not ptr:
                return INVALID
            plane = self._read(self._plane3_cls, ptr)
            layer = int(plane.LayerIndex)
            if not 0 <= layer < n or layer in seen:
                return INVALID
            seen.add(layer)
            flags = plane.InputFlags
            enabled = bool(flags.Enabled)
            address = hw.plane_address(source, layer)
            if enabled:
                if not plane.ContextCount or not plane.ppContextData:
                    return INVALID
                first = self._pointers(plane.ppContextData, 1)[0]
                if not first:
                    return INVALID
                address = int(self._read(self._pcd_cls, first).SegmentAddress.QuadPart)
            work.append((ptr, layer, int(plane.PresentId), address, enabled, bool(flags.FlipImmediate)))
        if self.flip_queue_on:
            return self._fq_flip(args, source, work)  # the hardware flip queue (kmd/flipqueue.py)
        zero = bytes(4)
        for ptr, layer, present_id, address, enabled, immediate in work:
            hw.set_plane_address(source, layer, address, enabled=enabled, immediate=immediate)
            key = (source, layer)
            if immediate:
                self.plane_pending.pop(key, None)
                self.plane_shown[key] = present_id
            else:
                self.plane_pending[key] = present_id  # the latest write before the vsync wins
            self.mem.write(ptr + self._output_flags_at, zero)  # OutputFlags: nothing to say
        args.OutputFlags.Value = 0
        return SUCCESS

    # -- the vsync report ------------------------------------------------------------------------------
    def _report_plane_vsyncs(self, source: int) -> None:
        """CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2 for the planes of ``source`` that latched a flip the
        OS made with the MPO3 DDI (device IRQL, after the source's CRTC_VSYNC)."""
        hw = self.hw
        status = hw.plane_status(source)
        if not status:
            return
        hw.plane_status_ack(source, status)
        entries = []
        for layer in range(self.overlay_planes):
            if status & (1 << layer):
                present_id = self.plane_pending.pop((source, layer), None)
                if present_id is not None:  # else an MMIO flip of the primary, reported by CRTC_VSYNC
                    self.plane_shown[(source, layer)] = present_id
                    entries.append((layer, present_id))
        if not entries:
            return
        info = self._info2_cls()
        blob = bytearray()
        for layer, present_id in entries:
            info.LayerIndex = layer
            info.PresentId = present_id
            info.Flags.Value = 0
            blob += bytes(info)
        self.mem.write(self._mpo_report_array, bytes(blob))
        data = self._mpo_report_data
        data.InterruptType = _OVERLAY2
        arm = data.CrtcVsyncWithMultiPlaneOverlay2
        arm.VidPnTargetId = source
        arm.PhysicalAdapterMask = 0  # one physical adapter (rule 46)
        arm.MultiPlaneOverlayVsyncInfoCount = len(entries)
        arm.pMultiPlaneOverlayVsyncInfo = self._mpo_report_array
        data.Flags.Value = 0
        self.plane_reports += 1
        self.dxgk.DxgkCbNotifyInterrupt(self.dxgk.DeviceHandle, data)

    # -- the support check -----------------------------------------------------------------------------
    def DxgkDdiCheckMultiPlaneOverlaySupport3(self, hAdapter: int, pCheckMultiPlaneOverlaySupport) -> int:
        """Supported when the planes and their attributes are within the display's (module doc)."""
        args = pCheckMultiPlaneOverlaySupport
        args.Supported = 0
        args.ReturnInfo.Value = 0
        failing = self._first_unsupported(args)
        if failing is None:
            args.Supported = 1
        else:
            args.ReturnInfo.FailingPlane = min(failing, 15)
        return SUCCESS

    def _first_unsupported(self, args) -> int | None:
        """The index of the first plane the display cannot show as asked (0 for a post-composition
        transform it cannot apply), or None when it can show them all."""
        n = self.overlay_planes
        count = int(args.PlaneCount)
        if not n:
            return 0
        if count and not args.ppPlanes:
            return 0
        layers: set[tuple[int, int]] = set()
        for i, ptr in enumerate(self._pointers(args.ppPlanes, count) if count else []):
            if i >= n or not ptr:
                return i
            plane = self._read(self._with_source_cls, ptr)
            key = (int(plane.VidPnSourceId), int(plane.LayerIndex))
            if not 0 <= key[0] < self.hw.display_count or not 0 <= key[1] < n or key in layers:
                return i
            layers.add(key)
            if not self._attributes_supported(plane.PlaneAttributes):
                return i
        posts = int(args.PostCompositionCount)
        if posts:
            if not args.ppPostComposition:
                return 0
            for ptr in self._pointers(args.ppPostComposition, posts):
                if not ptr:
                    return 0
                post = self._read(self._post_cls, ptr).PostComposition
                if post.Flags.Value or int(post.Rotation) not in (0, _ROTATION_IDENTITY):
                    return 0
        return None

    @staticmethod
    def _attributes_supported(a) -> bool:
        """What the display composes: no mirroring, no rotation, opaque or alpha blending, rectangles
        that are not inverted (any stretch)."""
        if a.Flags or int(a.Rotation) not in (0, _ROTATION_IDENTITY) or int(a.Blend) not in _BLENDS:
            return False
        return all(r.right >= r.left and r.bottom >= r.top for r in (a.SrcRect, a.DstRect, a.ClipRect))
