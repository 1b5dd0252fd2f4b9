"""Multiplane-overlay vsync reports: what the OS reads of them, and rule 50 (MpoPlaneInRange).

A driver that supports multiplane overlays (``DXGK_DRIVERCAPS.SupportMultiPlaneOverlay`` with
``MaxOverlayPlanes``, WDDM 1.3 and later) reports each plane's flip completion after a vsync with
``DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2`` (WDDM 2.1) or ``..._OVERLAY3`` (WDDM 2.9,
hardware flip queue): the interrupt's arm points at ``MultiPlaneOverlayVsyncInfoCount`` entries
(``pMultiPlaneOverlayVsyncInfo``), each naming its plane by ``LayerIndex`` (zero-based, the top
plane 0). The OS reads the array during the DxgkCbNotifyInterrupt call (the driver's buffer is
its own again once the call returns) and judges every ``LayerIndex`` against ``MaxOverlayPlanes``:
a plane at or above it is bug check 0x119 with parameter 1 = 0xE
(REPORT_VSYNC_PLANE_OUT_OF_RANGE), rule 50 (``wddmsim rules 50``, docs/rules.md).

The entries are the DDI structures of :mod:`wddmsim.ddi.structs.overlay`, read with the ctypes
class of the adapter's architecture and DDI version (generated layout tables,
tests/data/msvc_layouts.json):

- type 7, ``CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY`` (WDDM 1.3): ``DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO``,
  whose entries embed the plane's ``DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES`` (x64 120 bytes, x86 112);
- type 10, ``..._OVERLAY2``: ``DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO2`` (24 bytes);
- type 18, ``..._OVERLAY3``: ``DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO3`` (8 bytes).

A WDDM 1.3 report from a driver whose header has no ``MaxOverlayPlanes`` (the Windows 8 arm) is
read and recorded but not judged.

Every plane vsync is recorded (the ``PlaneVSync`` event, :attr:`Overlays.plane_vsyncs`) and
judged. Plane flips the OS made (``DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3``,
:mod:`.mpoflip`) wait here, one :class:`PlaneFlip` each, keyed by VidPn source, plane and
``PresentId`` (:meth:`Overlays.expect`), until the driver's report shows them. A type 10 entry
(``DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO2``) names the PresentId its plane shows from this vsync: that
flip is shown (the ``PlaneDisplayed`` event), and the plane's older flips still waiting were
replaced before any vsync showed them (``PlaneDropped``): a later write of the plane's registers
won, as the OS reads ``PresentId`` "greater or equal" (DXGK_PLANE_SPECIFIC_OUTPUT_FLAGS'
HsyncInterruptCompletion). An immediate flip is shown when the DDI returns
(:meth:`Overlays.plane_shown` from :mod:`.mpoflip`) unless the driver set HsyncInterruptCompletion
for it, and then by the report. Each resolved flip's callback is called with it, at that instant
and, for a report, inside the driver's DxgkCbNotifyInterrupt (device IRQL): a callback records
or schedules work, it makes no DDI call. Type 7 entries carry no PresentId, so they resolve no flip.
Type 18 entries (the hardware flip queue's) name a plane's first free flip queue log index instead:
the OS reads the log it handed the driver (DxgkDdiSetFlipQueueLogBuffer) up to that index, and each
entry resolves its flip, shown at the entry's timestamp or cancelled (:mod:`.hwflipqueue`).

Microsoft's pages: d3dkmddi/ns-d3dkmddi-_dxgk_multiplane_overlay_vsync_info,
d3dkmddi/ns-d3dkmddi-_dxgk_plane_specific_output_flags,
d3dkmddi/ns-d3dkmddi-_dxgk_multiplane_overlay_vsync_info2,
d3dkmddi/ns-d3dkmddi-dxgk_multiplane_overlay_vsync_info3, d3dkmddi/ne-d3dkmddi-_dxgk_interrupt_type,
d3dkmddi/ns-d3dkmddi-_dxgk_drivercaps (SupportMultiPlaneOverlay, MaxOverlayPlanes) and the bug check
0x119 page (parameter 0xE).
"""

from __future__ import annotations

import ctypes

from ..ddi import layout
from ..ddi import rules as R
from ..ddi.enums import DXGK_INTERRUPT_TYPE
from ..ddi.rules.interrupt import MPO_VSYNC_ARMS
from ..ddi.structs.overlay import VSYNC_INFO_OF_ARM
from ..ddi.versions import ddi_version

#: Entries read from one report at most (a count beyond is read as this many and judged on those).
MAX_ENTRIES = 64
#: DXGK_DRIVERCAPS.MaxOverlayPlanes exists from WDDM 1.3.
_WDDM1_3 = ddi_version("wddm1_3").value
#: the report whose entries name the PresentId each plane shows (DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO2)
_OVERLAY2 = int(DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2)
#: the hardware flip queue's report (DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO3: a log index per plane)
_OVERLAY3 = int(DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY3)

#: :attr:`PlaneFlip.shown` of a flip not shown yet, and of one that never will be (replaced by a
#: later flip of its plane before a vsync showed it, or its DDI call failed)
NOT_SHOWN = -1
DROPPED = -2


class PlaneFlip:
    """One plane of a multiplane-overlay flip the OS made: VidPn ``source``, plane ``layer``
    (LayerIndex), ``present_id``, the ``surface`` address, ``enabled`` and ``immediate`` as asked,
    ``requested`` (when the DDI call was made), ``shown`` (when the plane showed it;
    :data:`NOT_SHOWN` or :data:`DROPPED`) and the ``status`` the driver returned."""

    __slots__ = ("source", "layer", "present_id", "surface", "enabled", "immediate", "requested", "shown",
                 "status", "callback")

    def __init__(self, source: int, layer: int, present_id: int, surface: int = 0, enabled: bool = True,
                 immediate: bool = False, requested: int = 0, callback=None):
        self.source = source
        self.layer = layer
        self.present_id = present_id
        self.surface = surface
        self.enabled = enabled
        self.immediate = immediate
        self.requested = requested
        self.shown = NOT_SHOWN
        self.status = 0
        self.callback = callback

    def __repr__(self) -> str:
        state = {NOT_SHOWN: "pending", DROPPED: "dropped"}.get(self.shown, f"shown at {self.shown}")
        return f"<PlaneFlip source {self.source} plane {self.layer} PresentId {self.present_id}: {state}>"


def entry_class(arm_name: str, arch: str, version) -> type:
    """The ctypes class of one entry of ``arm_name``'s array, for ``arch`` at ``version`` (at the
    structure's first version when the adapter's header predates it: the WDDM 1.3 entries of the
    Windows 8 arm)."""
    rec = VSYNC_INFO_OF_ARM[arm_name]
    return layout.ctype(rec, arch, version if layout.exists(rec, version) else rec.since)


class Overlays:
    """The multiplane-overlay vsync reports of one adapter."""

    def __init__(self, adapter):
        self.adapter = adapter
        #: (time, VidPn target, LayerIndex) of every plane vsync the OS read
        self.plane_vsyncs: list[tuple[int, int, int]] = []
        self.reports = 0
        #: (source, LayerIndex) -> the plane's flips waiting to be shown, in PresentId order
        self.pending: dict[tuple[int, int], list[PlaneFlip]] = {}
        self.displayed = 0  # plane flips shown
        self.dropped = 0  # plane flips that never were
        #: the OS's MPO3 flips (:class:`wddmsim.dxgkrnl.mpoflip.MpoFlipper`), made on first use
        self.flipper = None

    # -- plane flips waiting for the display ---------------------------------------------------------
    def expect(self, flip: PlaneFlip) -> PlaneFlip:
        """Wait for ``flip`` to be shown: its plane's report (or, immediate, :meth:`plane_shown`)
        resolves it. PresentIds of one plane only grow (``ValueError`` otherwise)."""
        queue = self.pending.setdefault((flip.source, flip.layer), [])
        if queue and flip.present_id <= queue[-1].present_id:
            raise ValueError(f"PresentId {flip.present_id} of VidPn source {flip.source} plane {flip.layer} is not "
                             f"above the plane's last one waiting, {queue[-1].present_id}")
        queue.append(flip)
        return flip

    def waiting(self, source: int, layer: int) -> tuple[PlaneFlip, ...]:
        """The flips of plane ``layer`` of ``source`` not shown yet, oldest first."""
        return tuple(self.pending.get((source, layer), ()))

    def plane_shown(self, source: int, layer: int, present_id: int, t: int) -> PlaneFlip | None:
        """Plane ``layer`` of ``source`` shows ``present_id`` from ``t``: that flip is shown, the
        plane's older ones waiting are dropped (a later write won). Returns the flip shown, or None
        when no flip waiting has that PresentId (a report of one already resolved)."""
        queue = self.pending.get((source, layer))
        if not queue:
            return None
        shown = None
        while queue and queue[0].present_id <= present_id:
            flip = queue.pop(0)
            if flip.present_id == present_id:
                shown = flip
                self._resolve(flip, t)
            else:
                self._resolve(flip, DROPPED)
        return shown

    def drop(self, flip: PlaneFlip) -> None:
        """``flip`` will never be shown (its DDI call failed): resolve it dropped."""
        queue = self.pending.get((flip.source, flip.layer))
        if queue and flip in queue:
            queue.remove(flip)
        self._resolve(flip, DROPPED)

    def _resolve(self, flip: PlaneFlip, shown: int) -> None:
        flip.shown = shown
        adapter = self.adapter
        tr = adapter.trace
        if shown == DROPPED:
            self.dropped += 1
            if tr is not None:
                tr.emit(adapter.sim.now, "PlaneDropped", {"source": flip.source, "layer": flip.layer,
                                                          "present_id": flip.present_id})
        else:
            self.displayed += 1
            if tr is not None:
                tr.emit(adapter.sim.now, "PlaneDisplayed", {"source": flip.source, "layer": flip.layer,
                                                            "present_id": flip.present_id,
                                                            "latency": shown - flip.requested})
        if flip.callback is not None:
            flip.callback(flip)

    def entries(self, data, itype: int):
        """The entries (a ctypes array, a copy) the report's arm points at; empty: no array."""
        arm_name = MPO_VSYNC_ARMS[itype]
        arm = getattr(data, arm_name)
        count = min(int(arm.MultiPlaneOverlayVsyncInfoCount), MAX_ENTRIES)
        base = int(arm.pMultiPlaneOverlayVsyncInfo or 0)
        adapter = self.adapter
        cls = entry_class(arm_name, adapter.arch, adapter.version)
        if not count or not base:
            return (cls * 0)()
        return (cls * count).from_buffer_copy(adapter.memory.read(base, count * ctypes.sizeof(cls)))

    def layer_indexes(self, data, itype: int) -> tuple[int, ...]:
        """The LayerIndex of each entry the report's arm points at (empty: no array)."""
        return tuple(int(e.LayerIndex) for e in self.entries(data, itype))

    def vsync(self, data, itype: int) -> None:
        """A CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY, ..._OVERLAY2 or ..._OVERLAY3 report (device IRQL):
        read, judged (rules 46, 50) and recorded."""
        adapter = self.adapter
        layers = self.layer_indexes(data, itype)
        caps = adapter.caps
        if adapter.version.value < _WDDM1_3:
            limit = None  # a Windows 8 header: no MaxOverlayPlanes to judge against
        else:
            limit = caps.MaxOverlayPlanes if caps.SupportMultiPlaneOverlay else 0
        if adapter.verifier.mode != "off":
            if limit is not None:
                adapter.verifier.judged_rules.add(50)
            adapter.verifier.check("DXGKARGCB_NOTIFY_INTERRUPT_DATA", data, R.Facts(
                version=adapter.version, physical_adapter_count=1, max_overlay_planes=limit,
                mpo_layer_indexes=layers), adapter.interrupt_address)
        self.reports += 1
        arm = getattr(data, MPO_VSYNC_ARMS[itype])
        target = int(arm.VidPnTargetId)
        now = adapter.sim.now
        tr = adapter.trace
        for layer in layers:
            self.plane_vsyncs.append((now, target, layer))
            if tr is not None:
                tr.emit(now, "PlaneVSync", {"source": target, "layer": layer})
        if itype == _OVERLAY2 and self.pending:
            for entry in self.entries(data, itype):
                self.plane_shown(target, int(entry.LayerIndex), int(entry.PresentId), now)
        elif itype == _OVERLAY3 and getattr(adapter, "hwflips", None) is not None:
            adapter.hwflips.reported(target, [(int(e.LayerIndex), int(e.FirstFreeFlipQueueLogEntryIndex))
                                              for e in self.entries(data, itype)])


def overlays_of(adapter) -> Overlays:
    """The adapter's :class:`Overlays` (made on first use, by the first plane report or flip)."""
    dxgk = adapter.dxgk
    if dxgk.overlays is None:
        dxgk.overlays = Overlays(adapter)
    return dxgk.overlays
