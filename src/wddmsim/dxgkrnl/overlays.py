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

The entries' layouts (x86 and x64 alike: a ULONGLONG is 8-aligned in both):

- ``DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO2``: ``DWORD LayerIndex`` at 0, ``ULONGLONG PresentId`` at 8,
  ``DXGKCB_NOTIFY_MPO_VSYNC_FLAGS Flags`` at 16; 24 bytes;
- ``DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO3``: ``DWORD LayerIndex`` at 0,
  ``ULONG FirstFreeFlipQueueLogEntryIndex`` at 4; 8 bytes.

These two small structures are written out here rather than in the committed layout tables (which
are generated with clang from the WDK headers; not regenerated for this change). The WDDM 1.3 type
(``CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY``, whose entries embed ``DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES``)
is not read: it stays an interrupt the model does not act on.

Known limit: the OS model makes no overlay flips yet (no
``DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3`` call, no ``PresentId``), so a plane vsync
shows no present; each is recorded (the ``PlaneVSync`` event, :attr:`Overlays.plane_vsyncs`) and
judged.

Microsoft's pages: d3dkmddi/ns-d3dkmddi-_dxgk_multiplane_overlay_vsync_info2,
d3dkmddi/ns-d3dkmddi-dxgk_multiplane_overlay_vsync_info3, d3dkmddi/ne-d3dkmddi-_dxgk_interrupt_type,
d3dkmddi/ns-d3dkmddi-_dxgk_drivercaps (SupportMultiPlaneOverlay, MaxOverlayPlanes) and the bug check
0x119 page (parameter 0xE).
"""

from __future__ import annotations

import struct

from ..ddi import rules as R
from ..ddi.rules.interrupt import MPO_VSYNC_ARMS

#: Per interrupt type: (entry size, LayerIndex offset) of the vsync info array's entries.
ENTRY = {t: (24 if arm.endswith("2") else 8, 0) for t, arm in MPO_VSYNC_ARMS.items()}
#: Entries read from one report at most (a count beyond is read as this many and judged on those).
MAX_ENTRIES = 64
_DWORD = struct.Struct("<I")


class Overlays:
    """The multiplane-overlay vsync reports of one adapter."""

    def __init__(self, adapter):
        self.adapter = adapter
        #: (time, VidPn target, LayerIndex) of every plane vsync the OS read
        self.plane_vsyncs: list[tuple[int, int, int]] = []
        self.reports = 0

    def layer_indexes(self, data, itype: int) -> tuple[int, ...]:
        """The LayerIndex of each entry the report's arm points at (empty: no array)."""
        arm = getattr(data, MPO_VSYNC_ARMS[itype])
        count = min(int(arm.MultiPlaneOverlayVsyncInfoCount), MAX_ENTRIES)
        base = int(arm.pMultiPlaneOverlayVsyncInfo or 0)
        if not count or not base:
            return ()
        size, offset = ENTRY[itype]
        mem = self.adapter.memory
        return tuple(_DWORD.unpack(mem.read(base + i * size + offset, 4))[0] for i in range(count))

    def vsync(self, data, itype: int) -> None:
        """A CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2/3 report (device IRQL): read, judged (rules 46, 50)
        and recorded."""
        adapter = self.adapter
        layers = self.layer_indexes(data, itype)
        caps = adapter.caps
        limit = caps.MaxOverlayPlanes if caps.SupportMultiPlaneOverlay else 0
        if adapter.verifier.mode != "off":
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
