"""Multiplane-overlay flips made by the OS: ``DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3``
and ``DxgkDdiCheckMultiPlaneOverlaySupport3`` (WDDM 2.1 and later).

The plumbing a compositor uses to show surfaces on overlay planes. :meth:`MpoFlipper.flip` takes
one VidPn source and a list of :class:`PlaneRequest` (LayerIndex, surface address, enabled,
immediate, PresentId), builds ``DXGKARG_SETVIDPNSOURCEADDRESSWITHMULTIPLANEOVERLAY3`` for the
driver's DDI version: ``PlaneCount`` pointers (``ppPlanes``) to one ``DXGK_MULTIPLANE_OVERLAY_PLANE3``
each, in kernel memory the adapter owns for the call, each plane's ``InputFlags`` (``Enabled``;
``FlipImmediate`` or ``FlipOnNextVSync``), ``MaxImmediateFlipLine`` -1 (never promoted),
``PlaneAttributes`` (identity rotation unless the request says otherwise) and one
``DXGK_PRIMARYCONTEXTDATA`` (``ppContextData``: the contributing context, the allocation, its
segment and the surface address); no post-composition transform, no HDR metadata, and
``TargetFlipTime`` as the caller gives it (0 unless the hardware flip queue's OS side,
:mod:`.hwflipqueue`, queues the flip ahead of its vsync). It calls the DDI at device IRQL
(Microsoft's page: "typically called at interrupt level"), logs one ``MpoFlip`` event per plane,
and leaves each plane flip waiting in :mod:`.overlays` by its PresentId until the driver's
``CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2`` names it (``PlaneDisplayed``), or the flip queue log does; an
immediate plane is shown when the call returns, unless the driver set its
``OutputFlags.HsyncInterruptCompletion``. ``on_done`` is called with each :class:`PlaneFlip` when it
is resolved (inside the driver's interrupt callback for a vsync: record or schedule, make no DDI
call from it).

The driver's status: STATUS_SUCCESS; STATUS_RETRY (``OutputFlags.PrePresentNeeded``: call again at
PASSIVE_LEVEL with ``InputFlags.RetryAtLowerIrql``; in the hardware flip queue a drain) leaves the
flip unmade: the model's OS does not call again (a known limit) and reports its planes dropped
(``PlaneDropped``), unless the caller asked to hold them (``hold_on_retry``: the hardware flip
queue's OS side makes the flip again after the drain, with new PresentIds); any other status is bug
check 0x119 with parameter 1 = 0xB, FAILED_SETVIDPNSOURCEMPO_COMMAND (the gateway stops the model).
The call-wide ``OutputFlags`` the driver wrote are kept in :attr:`MpoFlipper.last_output`.

:meth:`MpoFlipper.check` asks ``DxgkDdiCheckMultiPlaneOverlaySupport3`` (PASSIVE_LEVEL) about a
configuration and answers :class:`SupportAnswer` (``Supported``, ``ReturnInfo.FailingPlane`` and
``TryAgain``); a status other than STATUS_SUCCESS is taken as not supported.

Plane 0 is the source's primary, whose scanout register the OS's MMIO flips (dxgkrnl/present.py,
DxgkDdiSetVidPnSourceAddress) program too: a caller that flips plane 0 here leaves the source's
presents alone meanwhile (the driver reports a plane 0 latch against the last PresentId written).

The OS makes these calls only for a driver that declares ``DXGK_DRIVERCAPS.SupportMultiPlaneOverlay``
and is of DDI version WDDM 2.1 or later; anything else, and any request the OS would not make (a
plane at or above ``MaxOverlayPlanes``, a plane twice, more planes than that, a PresentId that does
not grow, an unknown source) is a :class:`MpoError` before any call.

Microsoft's pages: d3dkmddi/nc-d3dkmddi-dxgkddi_setvidpnsourceaddresswithmultiplaneoverlay3,
ns-d3dkmddi-_dxgkarg_setvidpnsourceaddresswithmultiplaneoverlay3, ns-d3dkmddi-_dxgk_multiplane_overlay_plane3,
ns-d3dkmddi-_dxgk_plane_specific_input_flags, ns-d3dkmddi-_dxgk_plane_specific_output_flags,
nc-d3dkmddi-dxgkddi_checkmultiplaneoverlaysupport3, ns-d3dkmddi-_dxgkarg_checkmultiplaneoverlaysupport3 and
the bug check 0x119 page (parameter 0xB).
"""

from __future__ import annotations

import ctypes
from typing import Callable, NamedTuple

from ..ddi.bugcheck import BugCheckCode, VidSchError
from ..ddi.ntstatus import NTSTATUS
from ..ddi.versions import ddi_version
from .overlays import PlaneFlip, overlays_of

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
RETRY = int(NTSTATUS.STATUS_RETRY)
FLIP_DDI = "DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3"
CHECK_DDI = "DxgkDdiCheckMultiPlaneOverlaySupport3"
#: D3DDDI_ROTATION_IDENTITY, what the OS asks unless a request says otherwise
ROTATION_IDENTITY = 1
#: MaxImmediateFlipLine that asks never to make a vsync flip immediate (-1 as a UINT)
NO_PROMOTION = 0xFFFF_FFFF
_MPO3 = ddi_version("wddm2_1").value
_RECTS = ("SrcRect", "DstRect", "ClipRect")


class MpoError(ValueError):
    """A multiplane-overlay request the OS would not send to the driver."""


class PlaneRequest(NamedTuple):
    """One plane of a flip (or of a support question).

    ``layer``: the LayerIndex (0 = the top plane). ``surface``: the GPU address the plane shows (0
    with ``allocation``: the allocation's address). ``enabled``: the plane is shown. ``immediate``:
    ``FlipImmediate``, else ``FlipOnNextVSync``. ``present_id``: the plane's PresentId (None: one
    above the plane's last). ``context``, ``allocation``: the dxgkrnl Context and Allocation behind
    the surface (their driver handles and segment go to DXGK_PRIMARYCONTEXTDATA). ``attributes``:
    DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES3 members to set (rectangles as (left, top, right, bottom))."""

    layer: int
    surface: int = 0
    enabled: bool = True
    immediate: bool = False
    present_id: int | None = None
    context: object | None = None
    allocation: object | None = None
    attributes: dict | None = None


class FlipResult(NamedTuple):
    """What a flip call did: the driver's ``status`` and one :class:`PlaneFlip` per plane asked."""

    status: int
    flips: tuple[PlaneFlip, ...]


class SupportAnswer(NamedTuple):
    """DxgkDdiCheckMultiPlaneOverlaySupport3's answer."""

    supported: bool
    failing_plane: int
    try_again: bool
    status: int


class MpoFlipper:
    """The OS's multiplane-overlay flips on one adapter (see the module doc); get it with
    :func:`flipper`."""

    def __init__(self, adapter):
        self.adapter = adapter
        self.overlays = overlays_of(adapter)
        #: (source, LayerIndex) -> the last PresentId the OS gave the plane
        self.last_present_id: dict[tuple[int, int], int] = {}
        self.calls = 0
        #: the call-wide OutputFlags (DXGK_SETVIDPNSOURCEADDRESS_OUTPUT_FLAGS' Value) of the last flip call
        self.last_output = 0
        self._ptr = 8 if adapter.arch == "x64" else 4

    # -- checks ----------------------------------------------------------------------------------
    def _check_adapter(self, source: int) -> int:
        """MaxOverlayPlanes, once the adapter may be asked at all (else :class:`MpoError`)."""
        adapter = self.adapter
        caps = getattr(adapter, "caps", None)
        if caps is None:
            raise MpoError("the adapter has not started: the OS knows no DXGK_DRIVERCAPS yet")
        if not caps.SupportMultiPlaneOverlay or caps.MaxOverlayPlanes < 1:
            raise MpoError("the driver does not declare DXGK_DRIVERCAPS.SupportMultiPlaneOverlay with "
                           "MaxOverlayPlanes >= 1: the OS makes no multiplane-overlay flip")
        if adapter.version.value < _MPO3:
            raise MpoError(f"the driver is {adapter.version.name}: DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3 "
                           f"is a WDDM 2.1 (wddm2_1) entry point")
        if not isinstance(source, int) or not 0 <= source < len(adapter.display_refresh):
            raise MpoError(f"VidPn source {source!r}: the adapter has sources 0..{len(adapter.display_refresh) - 1}")
        return caps.MaxOverlayPlanes

    def _check_planes(self, planes, limit: int) -> list[PlaneRequest]:
        out = []
        for p in planes:
            p = p if isinstance(p, PlaneRequest) else PlaneRequest(*p)
            if not isinstance(p.layer, int) or not 0 <= p.layer < limit:
                raise MpoError(f"LayerIndex {p.layer!r}: the driver declares MaxOverlayPlanes = {limit} (planes 0.."
                               f"{limit - 1})")
            if any(q.layer == p.layer for q in out):
                raise MpoError(f"plane {p.layer} is asked twice in one call")
            if not isinstance(p.surface, int) or p.surface < 0:
                raise MpoError(f"plane {p.layer}: surface {p.surface!r} is no GPU address")
            out.append(p)
        if not out:
            raise MpoError("no plane to flip: PlaneCount would be 0")
        if len(out) > limit:
            raise MpoError(f"{len(out)} planes, but MaxOverlayPlanes = {limit}")
        return out

    # -- the flip ----------------------------------------------------------------------------------
    def flip(self, source: int, planes, *, on_done: Callable[[PlaneFlip], None] | None = None,
             duration: int = 0, target_flip_time: int = 0, hold_on_retry: bool = False) -> FlipResult:
        """DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3 for ``planes`` (:class:`PlaneRequest`
        or tuples of its fields) of VidPn ``source`` now; ``duration``: the argument's Duration
        (100 ns units, 0 = the mode's rate); ``target_flip_time``: its TargetFlipTime (QPC ticks,
        WDDM 3.0 and later; 0: none); ``hold_on_retry``: on STATUS_RETRY the planes are neither
        waited for nor dropped (the caller makes the flip again). Returns the status, the
        :class:`PlaneFlip` of each plane, waiting (or, immediate, already shown) as the module doc
        says; the driver's OutputFlags are then :attr:`last_output`."""
        limit = self._check_adapter(source)
        reqs = self._check_planes(planes, limit)
        ids = []
        for p in reqs:
            last = self.last_present_id.get((source, p.layer), 0)
            pid = last + 1 if p.present_id is None else p.present_id
            if not isinstance(pid, int) or pid <= last or pid >= 1 << 64:
                raise MpoError(f"plane {p.layer}: PresentId {pid!r} must be above the plane's last, {last} "
                               f"(and below 2**64)")
            ids.append(pid)
        adapter = self.adapter
        ddi = adapter.ddi
        plane_cls = ddi.cls("DXGK_MULTIPLANE_OVERLAY_PLANE3")
        pcd_cls = ddi.cls("DXGK_PRIMARYCONTEXTDATA")
        n = len(reqs)
        ptr = self._ptr
        plane_size = _round8(ctypes.sizeof(plane_cls))
        pcd_size = _round8(ctypes.sizeof(pcd_cls))
        # One block: ppPlanes[n], the planes, each plane's ppContextData[1], the context data.
        planes_at = _round8(ptr * n)
        lists_at = planes_at + plane_size * n
        pcds_at = lists_at + _round8(ptr * n)
        size = pcds_at + pcd_size * n
        base = adapter.pool.alloc(size)
        try:
            blob = bytearray(size)
            for i, (p, pid) in enumerate(zip(reqs, ids)):
                plane_addr = base + planes_at + plane_size * i
                list_addr = base + lists_at + ptr * i
                pcd_addr = base + pcds_at + pcd_size * i
                blob[ptr * i:ptr * (i + 1)] = plane_addr.to_bytes(ptr, "little")
                blob[lists_at + ptr * i:lists_at + ptr * (i + 1)] = pcd_addr.to_bytes(ptr, "little")
                pl = plane_cls()
                pl.LayerIndex = p.layer
                pl.PresentId = pid
                pl.InputFlags.Enabled = 1 if p.enabled else 0
                if p.immediate:
                    pl.InputFlags.FlipImmediate = 1
                else:
                    pl.InputFlags.FlipOnNextVSync = 1
                pl.MaxImmediateFlipLine = NO_PROMOTION
                pl.ContextCount = 1
                pl.ppContextData = list_addr
                pl.PlaneAttributes.Rotation = ROTATION_IDENTITY
                _set_attributes(pl.PlaneAttributes, p.attributes, p.layer)
                blob[planes_at + plane_size * i:planes_at + plane_size * i + ctypes.sizeof(pl)] = bytes(pl)
                pcd = pcd_cls()
                pcd.hContext = getattr(p.context, "hDdi", 0) or 0
                alloc = p.allocation
                if alloc is not None:
                    pcd.hAllocation = alloc.handle
                    pcd.SegmentId = alloc.segment_id
                pcd.SegmentAddress.QuadPart = p.surface or (alloc.address if alloc is not None else 0)
                blob[pcds_at + pcd_size * i:pcds_at + pcd_size * i + ctypes.sizeof(pcd)] = bytes(pcd)
            adapter.memory.write(base, bytes(blob))
            args = ddi.new("DXGKARG_SETVIDPNSOURCEADDRESSWITHMULTIPLANEOVERLAY3")
            args.VidPnSourceId = source
            args.PlaneCount = n
            args.ppPlanes = base
            args.Duration = duration
            if target_flip_time:
                if not hasattr(args, "TargetFlipTime"):
                    raise MpoError(f"the driver is {adapter.version.name}: TargetFlipTime is a WDDM 3.0 member")
                args.TargetFlipTime = target_flip_time
            now = adapter.sim.now
            flips = []
            for p, pid in zip(reqs, ids):
                self.last_present_id[(source, p.layer)] = pid
                surface = p.surface or (p.allocation.address if p.allocation is not None else 0)
                flips.append(PlaneFlip(source, p.layer, pid, surface, bool(p.enabled), bool(p.immediate), now,
                                       on_done))
            self.calls += 1
            status = ddi.call(FLIP_DDI, adapter.hAdapter, args, bugcheck=(
                BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, VidSchError.FAILED_SETVIDPNSOURCEMPO_COMMAND, base, 0))
            hsync = [False] * n
            output = int(args.OutputFlags.Value)
            if status == SUCCESS:
                data = adapter.memory.read(base + planes_at, plane_size * n)
                for i in range(n):
                    out = plane_cls.from_buffer_copy(data, plane_size * i).OutputFlags
                    hsync[i] = bool(getattr(out, "HsyncInterruptCompletion", 0))
        finally:
            adapter.pool.free(base, size)
        self.last_output = output
        self._after(source, flips, hsync, status, hold_on_retry and status == RETRY)
        return FlipResult(status, tuple(flips))

    def _after(self, source: int, flips: list[PlaneFlip], hsync: list[bool], status: int, held: bool) -> None:
        """Log the call's planes and leave them waiting (or shown, or dropped; ``held``: neither)."""
        adapter = self.adapter
        now = adapter.sim.now
        tr = adapter.trace
        ov = self.overlays
        for flip, later in zip(flips, hsync):
            flip.status = status
            if tr is not None:
                tr.emit(now, "MpoFlip", {"source": source, "layer": flip.layer, "present_id": flip.present_id,
                                         "surface": flip.surface, "enabled": int(flip.enabled),
                                         "immediate": int(flip.immediate), "status": status})
            if held:
                continue
            ov.expect(flip)
            if status != SUCCESS:
                ov.drop(flip)
            elif flip.immediate and not later:
                ov.plane_shown(source, flip.layer, flip.present_id, now)

    # -- the support check --------------------------------------------------------------------------
    def check(self, source: int, planes, *, post_composition: dict | None = None) -> SupportAnswer:
        """DxgkDdiCheckMultiPlaneOverlaySupport3 for ``planes`` (their ``layer``, ``allocation`` and
        ``attributes``) on VidPn ``source``, with an optional post-composition transform of the
        source (DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION members: ``Flags``, ``SrcRect``,
        ``DstRect``, ``Rotation``)."""
        limit = self._check_adapter(source)
        reqs = [p if isinstance(p, PlaneRequest) else PlaneRequest(*p) for p in planes]
        if not reqs:
            raise MpoError("no plane to ask about: PlaneCount would be 0")
        adapter = self.adapter
        ddi = adapter.ddi
        plane_cls = ddi.cls("DXGK_MULTIPLANE_OVERLAY_PLANE_WITH_SOURCE2")
        post_cls = ddi.cls("DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION_WITH_SOURCE")
        n = len(reqs)
        ptr = self._ptr
        plane_size = _round8(ctypes.sizeof(plane_cls))
        planes_at = _round8(ptr * n)
        post_list_at = planes_at + plane_size * n
        post_at = post_list_at + 8
        size = post_at + _round8(ctypes.sizeof(post_cls))
        base = adapter.pool.alloc(size)
        try:
            blob = bytearray(size)
            for i, p in enumerate(reqs):
                if not isinstance(p.layer, int) or p.layer < 0:
                    raise MpoError(f"LayerIndex {p.layer!r} is no plane")
                addr = base + planes_at + plane_size * i
                blob[ptr * i:ptr * (i + 1)] = addr.to_bytes(ptr, "little")
                pl = plane_cls()
                pl.hAllocation = p.allocation.handle if p.allocation is not None else 0
                pl.VidPnSourceId = source
                pl.LayerIndex = p.layer
                pl.PlaneAttributes.Rotation = ROTATION_IDENTITY
                _set_attributes(pl.PlaneAttributes, p.attributes, p.layer)
                blob[planes_at + plane_size * i:planes_at + plane_size * i + ctypes.sizeof(pl)] = bytes(pl)
            args = ddi.new("DXGKARG_CHECKMULTIPLANEOVERLAYSUPPORT3")
            args.PlaneCount = n
            args.ppPlanes = base
            if post_composition is not None:
                post = post_cls()
                post.VidPnSourceId = source
                post.PostComposition.Rotation = ROTATION_IDENTITY
                _set_attributes(post.PostComposition, post_composition, "post composition")
                blob[post_list_at:post_list_at + ptr] = (base + post_at).to_bytes(ptr, "little")
                blob[post_at:post_at + ctypes.sizeof(post)] = bytes(post)
                args.PostCompositionCount = 1
                args.ppPostComposition = base + post_list_at
            adapter.memory.write(base, bytes(blob))
            status = ddi.call(CHECK_DDI, adapter.hAdapter, args)
        finally:
            adapter.pool.free(base, size)
        if status != SUCCESS:
            return SupportAnswer(False, 0, False, status)
        info = args.ReturnInfo
        return SupportAnswer(bool(args.Supported), int(info.FailingPlane), bool(info.TryAgain), status)


def flipper(adapter) -> MpoFlipper:
    """The adapter's :class:`MpoFlipper` (made on first use)."""
    ov = overlays_of(adapter)
    if ov.flipper is None:
        ov.flipper = MpoFlipper(adapter)
    return ov.flipper


def _round8(n: int) -> int:
    return -(-n // 8) * 8


def _set_attributes(target, attributes: dict | None, where) -> None:
    """Set members of an attributes (or post-composition) structure from a dict; rectangles as
    (left, top, right, bottom), flags as their Value."""
    for name, value in (attributes or {}).items():
        if not hasattr(target, name):
            raise MpoError(f"plane {where}: {type(target).__name__} has no member {name!r}")
        member = getattr(target, name)
        try:
            if hasattr(member, "left"):
                member.left, member.top, member.right, member.bottom = value
            elif hasattr(member, "Value"):
                member.Value = value
            else:
                setattr(target, name, value)
        except (TypeError, ValueError) as exc:
            raise MpoError(f"plane {where}: {name} = {value!r}: {exc}") from None
