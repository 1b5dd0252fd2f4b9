"""Flipping a VidPn source by MMIO: ``DXGKARG_SETVIDPNSOURCEADDRESS``, its flags and
``DXGK_PRIMARYDATA``.

Spec: Microsoft's reference pages for DxgkDdiSetVidPnSourceAddress, DXGKARG_SETVIDPNSOURCEADDRESS and
DXGK_SETVIDPNSOURCEADDRESS_FLAGS. Version keys from the header guards: stereo bits and
``SharedPrimaryTransition`` from Windows 8, ``IndependentFlipExclusive`` from WDDM 2.0, ``MoveFlip``
from WDDM 2.1; ``Duration`` from WDDM 1.3; ``PrimaryData``, ``DriverPrivateDataSize`` and
``pDriverPrivateData`` from WDDM 2.0. ``D3DDDI_MAX_BROADCAST_CONTEXT`` is 64.
"""

from ..schema import D3DDDI_VIDEO_PRESENT_SOURCE_ID, HANDLE, PVOID, UINT, WORD, Array, Bit, flags, m, struct
from .common import PHYSICAL_ADDRESS

D3DDDI_MAX_BROADCAST_CONTEXT = 64

DXGK_SETVIDPNSOURCEADDRESS_FLAGS = flags(
    "DXGK_SETVIDPNSOURCEADDRESS_FLAGS",
    Bit("ModeChange"),
    Bit("FlipImmediate", doc="Flip at once, without waiting for vsync."),
    Bit("FlipOnNextVSync"),
    Bit("FlipStereo", since="win8"),
    Bit("FlipStereoTemporaryMono", since="win8"),
    Bit("FlipStereoPreferRight", since="win8"),
    Bit("SharedPrimaryTransition", since="win8"),
    Bit("IndependentFlipExclusive", since="wddm2_0"),
    Bit("MoveFlip", since="wddm2_1"),
    doc="How DxgkDdiSetVidPnSourceAddress must change the scanned-out surface.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_setvidpnsourceaddress_flags]",
)

DXGK_PRIMARYDATA = struct(
    "DXGK_PRIMARYDATA",
    m("hAllocation", HANDLE),
    m("SegmentId", WORD),
    m("SegmentAddress", PHYSICAL_ADDRESS),
    since="wddm2_0",
    doc="One broadcast primary of a flip.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_setvidpnsourceaddress]",
)

DXGKARG_SETVIDPNSOURCEADDRESS = struct(
    "DXGKARG_SETVIDPNSOURCEADDRESS",
    m("VidPnSourceId", D3DDDI_VIDEO_PRESENT_SOURCE_ID),
    m("PrimarySegment", UINT),
    m("PrimaryAddress", PHYSICAL_ADDRESS),
    m("hAllocation", HANDLE),
    m("ContextCount", UINT, doc="0 for a mode change; 1 + broadcast contexts for a flip."),
    m("Context", Array(HANDLE, 1 + D3DDDI_MAX_BROADCAST_CONTEXT)),
    m("Flags", DXGK_SETVIDPNSOURCEADDRESS_FLAGS),
    m("Duration", UINT, since="wddm1_3", doc="100 ns units from this flip to the next vblank; 0 = default."),
    m("PrimaryData", Array(DXGK_PRIMARYDATA, D3DDDI_MAX_BROADCAST_CONTEXT), since="wddm2_0"),
    m("DriverPrivateDataSize", UINT, since="wddm2_0"),
    m("pDriverPrivateData", PVOID, since="wddm2_0"),
    doc="Sets the surface a VidPn source scans out (mode change or MMIO flip).",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_setvidpnsourceaddress]",
)
