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

Known limit: the OS model makes no overlay flips yet (no
``DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3`` call, no ``PresentId``), so a plane vsync
shows no present; each is recorded (the ``PlaneVSync`` event, :attr:`Overlays.plane_vsyncs`) and
judged.

Microsoft's pages: d3dkmddi/ns-d3dkmddi-_dxgk_multiplane_overlay_vsync_info,
d3dkmddi/ns-d3dkmddi-_dxgk_multiplane_overlay_vsync_info2,
d3dkmddi/ns-d3dkmddi-dxgk_multiplane_overlay_vsync_info3, d3dkmddi/ne-d3dkmddi-_dxgk_interrupt_type,
d3dkmddi/ns-d3dkmddi-_dxgk_drivercaps (SupportMultiPlaneOverlay, MaxOverlayPlanes) and the bug check
0x119 page (parameter 0xE).
"""

from __future__ import annotations

import ctypes

from ..ddi import layout
from ..ddi import rules as R
from ..ddi.rules.interrupt import MPO_VSYNC_ARMS
from ..ddi.structs.overlay import VSYNC_INFO_OF_ARM
from ..ddi.versions import ddi_version

#: Entries read from one report at most (a count beyond is read as this many and judged on those).
MAX_ENTRIES = 64
#: DXGK_DRIVERCAPS.MaxOverlayPlanes exists from WDDM 1.3.
_WDDM1_3 = ddi_version("wddm1_3").value


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
