"""Multiplane overlays: the plane attributes and the per-plane vsync report entries a driver's
CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY(2/3) interrupt points at (``pMultiPlaneOverlayVsyncInfo``).

* ``DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES`` and ``DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO`` (the entries of
  ``CrtcVsyncWithMultiPlaneOverlay``, interrupt type 7): Windows 8.1, WDDM 1.3.
* ``DXGKCB_NOTIFY_MPO_VSYNC_FLAGS`` and ``DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO2`` (the entries of
  ``CrtcVsyncWithMultiPlaneOverlay2``, type 10): Windows 10 1607, WDDM 2.1.
* ``DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO3`` (the entries of ``CrtcVsyncWithMultiPlaneOverlay3``, type
  18, hardware flip queue): WDDM 2.9.

Spec: Microsoft's reference pages for each structure (d3dkmddi/ns-d3dkmddi-_dxgk_multiplane_overlay_
attributes, ..._vsync_info, ..._vsync_info2, ns-d3dkmddi-dxgk_multiplane_overlay_vsync_info3,
ns-d3dkmddi-_dxgkcb_notify_mpo_vsync_flags); their syntax blocks show no version-guarded member.
The eight enumerations of the attributes (DXGK_MULTIPLANE_OVERLAY_FLAGS, D3DDDI_ROTATION, ...) are
4-byte enums under MSVC; they are modelled as their 32-bit storage, each member's doc names the
enumeration.
"""

from ..schema import BOOL, DWORD, PVOID, UINT, ULONG, ULONGLONG, Bit, flags, m, struct
from .common import PHYSICAL_ADDRESS, RECT

DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES = struct(
    "DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES",
    m("Flags", UINT, doc="DXGK_MULTIPLANE_OVERLAY_FLAGS: vertical (0x1) / horizontal (0x2) flip."),
    m("SrcRect", RECT, doc="Source rectangle, in the source surface."),
    m("DstRect", RECT, doc="Destination rectangle, in monitor pixels."),
    m("ClipRect", RECT, doc="Extra clipping, relative to DstRect after stretching."),
    m("Rotation", UINT, doc="D3DDDI_ROTATION: clockwise rotation of the plane."),
    m("Blend", UINT, doc="DXGK_MULTIPLANE_OVERLAY_BLEND: opaque (0) or alpha-blended (1) on the plane below."),
    m("NumFilters", UINT),
    m("pFilters", PVOID),
    m("VideoFrameFormat", UINT, doc="DXGK_MULTIPLANE_OVERLAY_VIDEO_FRAME_FORMAT: progressive or interlaced."),
    m("YCbCrFlags", UINT, doc="DXGK_MULTIPLANE_OVERLAY_YCbCr_FLAGS."),
    m("StereoFormat", UINT, doc="DXGK_MULTIPLANE_OVERLAY_STEREO_FORMAT."),
    m("StereoLeftViewFrame0", BOOL),
    m("StereoBaseViewFrame0", BOOL),
    m("StereoFlipMode", UINT, doc="DXGK_MULTIPLANE_OVERLAY_STEREO_FLIP_MODE."),
    m("StretchQuality", UINT, doc="DXGK_MULTIPLANE_OVERLAY_STRETCH_QUALITY."),
    since="wddm1_3",
    doc="How one overlay plane is composed (WDDM 1.3 form).",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_multiplane_overlay_attributes]",
)

DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO = struct(
    "DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO",
    m("LayerIndex", DWORD, doc="Zero-based plane; the top plane is 0."),
    m("Enabled", BOOL, doc="Whether the plane is shown."),
    m("PhysicalAddress", PHYSICAL_ADDRESS, doc="Address, in its segment, the plane is scanned out from."),
    m("PlaneAttributes", DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES),
    since="wddm1_3",
    doc="One plane of a CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY report (WDDM 1.3).",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_multiplane_overlay_vsync_info]",
)

DXGKCB_NOTIFY_MPO_VSYNC_FLAGS = flags(
    "DXGKCB_NOTIFY_MPO_VSYNC_FLAGS",
    Bit("PostPresentNeeded", doc="The OS must call DxgkDdiPostMultiplaneOverlayPresent for this flip entry."),
    since="wddm2_1",
    doc="Driver-set flags of one plane's flip completion.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkcb_notify_mpo_vsync_flags]",
)

DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO2 = struct(
    "DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO2",
    m("LayerIndex", DWORD, doc="Zero-based plane; the top plane is 0."),
    m("PresentId", ULONGLONG, doc="PresentId of the flip (DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3) now on screen."),
    m("Flags", DXGKCB_NOTIFY_MPO_VSYNC_FLAGS),
    since="wddm2_1",
    doc="One plane of a CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2 report.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_multiplane_overlay_vsync_info2]",
)

DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO3 = struct(
    "DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO3",
    m("LayerIndex", DWORD, doc="Zero-based plane; the top plane is 0."),
    m("FirstFreeFlipQueueLogEntryIndex", ULONG, doc="Index after the last entry written to the plane's flip queue log."),
    since="wddm2_9",
    doc="One plane of a CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY3 report (hardware flip queue).",
    source="[D:d3dkmddi/ns-d3dkmddi-dxgk_multiplane_overlay_vsync_info3]",
)

#: The entry type of each multiplane-overlay vsync arm of DXGKARGCB_NOTIFY_INTERRUPT_DATA.
VSYNC_INFO_OF_ARM = {
    "CrtcVsyncWithMultiPlaneOverlay": DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO,
    "CrtcVsyncWithMultiPlaneOverlay2": DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO2,
    "CrtcVsyncWithMultiPlaneOverlay3": DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO3,
}
