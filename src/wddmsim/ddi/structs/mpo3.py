"""Multiplane-overlay flips of the third form (WDDM 2.1 and later): the argument of
``DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3`` with its per-plane entries and flags, and the
argument of ``DxgkDdiCheckMultiPlaneOverlaySupport3``.

* ``DXGKARG_SETVIDPNSOURCEADDRESSWITHMULTIPLANEOVERLAY3``: one VidPn source, call-wide input and
  output flags, ``PlaneCount`` pointers to ``DXGK_MULTIPLANE_OVERLAY_PLANE3`` (``ppPlanes``), an
  optional post-composition transform, the frame ``Duration``, optional HDR metadata and, for the
  hardware flip queue, ``TargetFlipTime``.
* ``DXGK_MULTIPLANE_OVERLAY_PLANE3``: the plane (``LayerIndex``, 0 = the top plane), its
  ``PresentId`` (what the driver's CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2 report names once the plane
  shows it), its ``DXGK_PLANE_SPECIFIC_INPUT_FLAGS`` (Enabled, FlipImmediate or FlipOnNextVSync),
  the driver's ``DXGK_PLANE_SPECIFIC_OUTPUT_FLAGS`` and the plane's
  ``DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES3``.
* ``DXGK_PRIMARYCONTEXTDATA`` (what ``ppContextData`` points at): a contributing context and the
  allocation the plane scans out, with its segment and address.
* ``DXGKARG_CHECKMULTIPLANEOVERLAYSUPPORT3`` with ``DXGK_MULTIPLANE_OVERLAY_PLANE_WITH_SOURCE2``,
  ``DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION_WITH_SOURCE`` and the answer's
  ``DXGK_CHECK_MULTIPLANE_OVERLAY_SUPPORT_RETURN_INFO`` (FailingPlane, TryAgain).

Version keys (tools/msvc_layouts/DECISIONS.md has the reasons and what stays uncertain): the whole
family from WDDM 2.1 (Microsoft's DxgkDdiCheckMultiPlaneOverlaySupport3 page: Windows 10 1607, WDDM
2.1), the return info from WDDM 1.3 (its page: Windows 8.1). Members the pages' ``#if`` ladders add
later: ``DXGK_PLANE_SPECIFIC_OUTPUT_FLAGS.HsyncInterruptCompletion`` WDDM 2.2,
``DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES3.SDRWhiteLevel`` WDDM 2.3 and ``DirtyRectCnt``/``pDirtyRects``
WDDM 2.4, ``DXGK_PLANE_SPECIFIC_INPUT_FLAGS.FlipImmediateNoTearing`` WDDM 2.6, and the hardware flip
queue's ``DXGK_SETVIDPNSOURCEADDRESS_OUTPUT_FLAGS`` drain bits and ``TargetFlipTime`` WDDM 3.0.
Pointer members are ``PVOID`` (``ppPlanes``, ``pPostComposition``, ``pHDRMetaData``,
``ppContextData``, ``pDirtyRects``, ...); each member's doc names the pointee. The enumerations of
the attributes are 4-byte enums under MSVC, modelled as their 32-bit storage.

Spec: Microsoft's reference pages d3dkmddi/ns-d3dkmddi-_dxgkarg_setvidpnsourceaddresswithmultiplaneoverlay3,
ns-d3dkmddi-_dxgk_multiplane_overlay_plane3, ns-d3dkmddi-_dxgk_multiplane_overlay_attributes3,
ns-d3dkmddi-_dxgk_multiplane_overlay_post_composition(_flags), ns-d3dkmddi-_dxgk_setvidpnsourceaddress_input_flags,
ns-d3dkmddi-_dxgk_setvidpnsourceaddress_output_flags, ns-d3dkmddi-_dxgk_plane_specific_input_flags,
ns-d3dkmddi-_dxgk_plane_specific_output_flags, ns-d3dkmddi-_dxgkarg_checkmultiplaneoverlaysupport3,
ns-d3dkmddi-_dxgk_multiplane_overlay_plane_with_source2,
ns-d3dkmddi-_dxgk_multiplane_overlay_post_composition_with_source and
ns-d3dkmddi-dxgk_check_multiplane_overlay_support_return_info.
"""

from ..schema import (
    BOOL,
    D3DDDI_VIDEO_PRESENT_SOURCE_ID,
    HANDLE,
    PVOID,
    UINT,
    UINT64,
    ULONGLONG,
    WORD,
    Bit,
    flags,
    m,
    struct,
)
from .common import PHYSICAL_ADDRESS, RECT

_MPO3 = "wddm2_1"

DXGK_SETVIDPNSOURCEADDRESS_INPUT_FLAGS = flags(
    "DXGK_SETVIDPNSOURCEADDRESS_INPUT_FLAGS",
    Bit("FlipStereo", doc="Flip both images of a stereo allocation (the right one a vsync after the left)."),
    Bit("FlipStereoTemporaryMono", doc="Show the left image of a stereo allocation as both images."),
    Bit("FlipStereoPreferRight", doc="Clone a stereo primary to a mono monitor with its right image."),
    Bit("RetryAtLowerIrql", doc="The OS calls at PASSIVE_LEVEL (again, after STATUS_RETRY with PrePresentNeeded)."),
    since=_MPO3,
    doc="Call-wide input flags of DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_setvidpnsourceaddress_input_flags]",
)

DXGK_SETVIDPNSOURCEADDRESS_OUTPUT_FLAGS = flags(
    "DXGK_SETVIDPNSOURCEADDRESS_OUTPUT_FLAGS",
    Bit("PrePresentNeeded", doc="With STATUS_RETRY: call again at PASSIVE_LEVEL."),
    Bit("HwFlipQueueDrainNeeded", since="wddm3_0",
        doc="With STATUS_RETRY: submit again once the affected planes' queued flips are done."),
    Bit("HwFlipQueueDrainAllPlanes", since="wddm3_0", doc="... once every plane's queued flips are done."),
    Bit("HwFlipQueueDrainAllSources", since="wddm3_0", doc="... once every VidPn source's queued flips are done."),
    since=_MPO3,
    doc="Call-wide flags the driver returns from DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_setvidpnsourceaddress_output_flags]",
)

DXGK_PLANE_SPECIFIC_INPUT_FLAGS = flags(
    "DXGK_PLANE_SPECIFIC_INPUT_FLAGS",
    Bit("Enabled", doc="The plane is shown (0: the plane is turned off)."),
    Bit("FlipImmediate", doc="Flip at once, without waiting for a vsync."),
    Bit("FlipOnNextVSync", doc="Flip at the next vsync."),
    Bit("SharedPrimaryTransition", doc="To or from a shared managed primary allocation."),
    Bit("IndependentFlipExclusive", doc="Independent-flip exclusive mode: only the display reads the buffer."),
    Bit("FlipImmediateNoTearing", since="wddm2_6", doc="Variable refresh: flip as soon as possible, in blanking."),
    since=_MPO3,
    doc="What the OS asks of one plane of a multiplane-overlay flip.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_plane_specific_input_flags]",
)

DXGK_PLANE_SPECIFIC_OUTPUT_FLAGS = flags(
    "DXGK_PLANE_SPECIFIC_OUTPUT_FLAGS",
    Bit("FlipConvertedToImmediate", doc="A vsync flip made immediate (before MaxImmediateFlipLine)."),
    Bit("PostPresentNeeded", doc="Immediate flips only: the OS must call DxgkDdiPostMultiPlaneOverlayPresent."),
    Bit("HsyncInterruptCompletion", since="wddm2_2",
        doc="Immediate flips only: not done at return; an OVERLAY2 report with PresentId >= it completes it."),
    since=_MPO3,
    doc="What the driver reports back for one plane of a multiplane-overlay flip.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_plane_specific_output_flags]",
)

DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION_FLAGS = flags(
    "DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION_FLAGS",
    Bit("VerticalFlip", doc="Flip the composed image vertically."),
    Bit("HorizontalFlip", doc="Flip the composed image horizontally (both: a 180 degree rotation)."),
    since=_MPO3,
    doc="Transforms of the composed image.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_multiplane_overlay_post_composition_flags]",
)

DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION = struct(
    "DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION",
    m("Flags", DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION_FLAGS),
    m("SrcRect", RECT, doc="The virtual mode's rectangle."),
    m("DstRect", RECT, doc="Where the virtual mode lands in the physical mode."),
    m("Rotation", UINT, doc="D3DDDI_ROTATION of the final image."),
    since=_MPO3,
    doc="Transforms applied after the planes are composed (virtual modes).",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_multiplane_overlay_post_composition]",
)

DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES3 = struct(
    "DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES3",
    m("Flags", UINT, doc="DXGK_MULTIPLANE_OVERLAY_FLAGS: vertical (0x1) / horizontal (0x2) flip."),
    m("SrcRect", RECT, doc="Source rectangle, in the source surface."),
    m("DstRect", RECT, doc="Destination rectangle, in monitor pixels."),
    m("ClipRect", RECT, doc="Extra clipping, relative to DstRect after stretching."),
    m("Rotation", UINT, doc="D3DDDI_ROTATION: clockwise rotation of the plane."),
    m("Blend", UINT, doc="DXGK_MULTIPLANE_OVERLAY_BLEND: opaque (0) or alpha-blended (1) on the plane below."),
    m("ColorSpaceType", UINT, doc="D3DDDI_COLOR_SPACE_TYPE of the plane's content."),
    m("StretchQuality", UINT, doc="DXGK_MULTIPLANE_OVERLAY_STRETCH_QUALITY."),
    m("SDRWhiteLevel", UINT, since="wddm2_3", doc="Nits sRGB 1.0 maps to in HDR mode (0: 80 nits)."),
    m("DirtyRectCnt", UINT, since="wddm2_4", doc="Entries of pDirtyRects."),
    m("pDirtyRects", PVOID, since="wddm2_4", doc="const RECT[DirtyRectCnt]: what changed."),
    since=_MPO3,
    doc="How one overlay plane is composed (the third form).",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_multiplane_overlay_attributes3]",
)

DXGK_PRIMARYCONTEXTDATA = struct(
    "DXGK_PRIMARYCONTEXTDATA",
    m("hContext", HANDLE, doc="A context that contributed to the plane's content (the driver's handle)."),
    m("hAllocation", HANDLE, doc="The plane's allocation (the driver's handle)."),
    m("SegmentId", WORD, doc="The segment the allocation lives in."),
    m("SegmentAddress", PHYSICAL_ADDRESS, doc="The allocation's address in that segment: what the plane scans out."),
    since=_MPO3,
    doc="One contributing context of a plane, with the allocation the plane shows (ppContextData's entries).",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_multiplane_overlay_plane3]",
)

DXGK_MULTIPLANE_OVERLAY_PLANE3 = struct(
    "DXGK_MULTIPLANE_OVERLAY_PLANE3",
    m("LayerIndex", UINT, doc="Zero-based plane; the top plane is 0."),
    m("PresentId", ULONGLONG, doc="Per-plane id the driver's vsync report names once the plane shows it."),
    m("InputFlags", DXGK_PLANE_SPECIFIC_INPUT_FLAGS),
    m("OutputFlags", DXGK_PLANE_SPECIFIC_OUTPUT_FLAGS),
    m("MaxImmediateFlipLine", UINT, doc="Line before which a vsync flip may be made immediate; -1: never."),
    m("ContextCount", UINT, doc="Entries of ppContextData."),
    m("ppContextData", PVOID, doc="DXGK_PRIMARYCONTEXTDATA *[ContextCount]: the contributing contexts."),
    m("DriverPrivateDataSize", UINT),
    m("pDriverPrivateData", PVOID),
    m("PlaneAttributes", DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES3),
    since=_MPO3,
    doc="One plane of a DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3 call.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_multiplane_overlay_plane3]",
)

DXGKARG_SETVIDPNSOURCEADDRESSWITHMULTIPLANEOVERLAY3 = struct(
    "DXGKARG_SETVIDPNSOURCEADDRESSWITHMULTIPLANEOVERLAY3",
    m("VidPnSourceId", D3DDDI_VIDEO_PRESENT_SOURCE_ID),
    m("InputFlags", DXGK_SETVIDPNSOURCEADDRESS_INPUT_FLAGS),
    m("OutputFlags", DXGK_SETVIDPNSOURCEADDRESS_OUTPUT_FLAGS),
    m("PlaneCount", UINT, doc="Entries of ppPlanes."),
    m("ppPlanes", PVOID, doc="DXGK_MULTIPLANE_OVERLAY_PLANE3 *[PlaneCount]."),
    m("pPostComposition", PVOID, doc="DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION *; NULL: no transform."),
    m("Duration", UINT, doc="100 ns units from this flip to the next vblank; 0 = the mode's rate."),
    m("pHDRMetaData", PVOID, doc="DXGK_HDR_METADATA *; NULL: no new metadata."),
    m("TargetFlipTime", UINT64, since="wddm3_0", doc="QPC time the flip may be shown from (hardware flip queue)."),
    since=_MPO3,
    doc="Arguments of DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3: one source's planes flipped at once.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_setvidpnsourceaddresswithmultiplaneoverlay3]",
)

DXGK_CHECK_MULTIPLANE_OVERLAY_SUPPORT_RETURN_INFO = flags(
    "DXGK_CHECK_MULTIPLANE_OVERLAY_SUPPORT_RETURN_INFO",
    Bit("FailingPlane", width=4, doc="Index, in the list asked about, of the first plane not supported."),
    Bit("TryAgain", doc="Not supported for a passing reason; ask again in a vsync or two."),
    since="wddm1_3",
    doc="Why a multiplane-overlay configuration is not supported.",
    source="[D:d3dkmddi/ns-d3dkmddi-dxgk_check_multiplane_overlay_support_return_info]",
)

DXGK_MULTIPLANE_OVERLAY_PLANE_WITH_SOURCE2 = struct(
    "DXGK_MULTIPLANE_OVERLAY_PLANE_WITH_SOURCE2",
    m("hAllocation", HANDLE, doc="The plane's allocation (the driver's handle)."),
    m("VidPnSourceId", D3DDDI_VIDEO_PRESENT_SOURCE_ID),
    m("LayerIndex", UINT, doc="Zero-based plane; the top plane is 0."),
    m("PlaneAttributes", DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES3),
    since=_MPO3,
    doc="One plane of a DxgkDdiCheckMultiPlaneOverlaySupport3 question.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_multiplane_overlay_plane_with_source2]",
)

DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION_WITH_SOURCE = struct(
    "DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION_WITH_SOURCE",
    m("VidPnSourceId", D3DDDI_VIDEO_PRESENT_SOURCE_ID),
    m("PostComposition", DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION),
    since=_MPO3,
    doc="One source's post-composition transform of a DxgkDdiCheckMultiPlaneOverlaySupport3 question.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_multiplane_overlay_post_composition_with_source]",
)

DXGKARG_CHECKMULTIPLANEOVERLAYSUPPORT3 = struct(
    "DXGKARG_CHECKMULTIPLANEOVERLAYSUPPORT3",
    m("PlaneCount", UINT, doc="Entries of ppPlanes: the planes to be enabled."),
    m("ppPlanes", PVOID, doc="DXGK_MULTIPLANE_OVERLAY_PLANE_WITH_SOURCE2 *[PlaneCount]."),
    m("PostCompositionCount", UINT, doc="Entries of ppPostComposition."),
    m("ppPostComposition", PVOID, doc="DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION_WITH_SOURCE *[PostCompositionCount]."),
    m("Supported", BOOL, doc="Out: TRUE when the configuration can be shown."),
    m("ReturnInfo", DXGK_CHECK_MULTIPLANE_OVERLAY_SUPPORT_RETURN_INFO, doc="Out: why not, when Supported is FALSE."),
    since=_MPO3,
    doc="Arguments of DxgkDdiCheckMultiPlaneOverlaySupport3 (always called at PASSIVE_LEVEL).",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_checkmultiplaneoverlaysupport3]",
)
