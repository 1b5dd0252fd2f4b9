"""The hardware flip queue (WDDM 3.0): cancelling queued flips, the per-plane flip queue log, and
the PresentId a vsync interrupt waits for. The OS makes these calls (DxgkDdiCancelFlips,
DxgkDdiSetFlipQueueLogBuffer, DxgkDdiUpdateFlipQueueLog, DxgkDdiSetInterruptTargetPresentId) in
:mod:`wddmsim.dxgkrnl.hwflipqueue` and the reference driver answers them in
:mod:`wddmsim.kmd.flipqueue`; the display's queue is :mod:`wddmsim.gpu.display` and the judge of
rule 91 (HwFlipQueueOrdering, ``wddmsim rules 91``, docs/rules.md) is :mod:`wddmsim.ddi.rules.flipqueue`.

* ``DXGKARG_CANCELFLIPS`` (with one ``DXGK_CANCELFLIPS_PLANE`` per plane, reached through an array
  of pointers), ``DXGK_FLIPQUEUE_LOG_ENTRY``, ``DXGKARG_SETFLIPQUEUELOGBUFFER``,
  ``DXGKARG_UPDATEFLIPQUEUELOG`` and ``DXGKARG_SETINTERRUPTTARGETPRESENTID``: Windows 11, WDDM 3.0.

Spec: Microsoft's reference page of each structure (d3dkmddi/ns-d3dkmddi-dxgkarg_cancelflips,
ns-d3dkmddi-dxgk_cancelflips_plane, ns-d3dkmddi-dxgk_flipqueue_log_entry,
ns-d3dkmddi-dxgkarg_setflipqueuelogbuffer, ns-d3dkmddi-dxgkarg_updateflipqueuelog,
ns-d3dkmddi-dxgkarg_setinterrupttargetpresentid): each gives "Windows 11 (WDDM 3.0)" and a syntax
block without version-guarded members. The WDDM 2.9 form of cancelling
(DXGKARG_CANCELQUEUEDFLIPS) is not modelled.
"""

from ..schema import D3DDDI_VIDEO_PRESENT_SOURCE_ID, PVOID, UINT, ULONG, ULONGLONG, m, struct

#: ``PresentTimestamp`` of a log entry for a flip cancelled before it reached the screen. Microsoft's
#: DXGK_FLIPQUEUE_LOG_ENTRY page names DXGK_HWFLIPQUEUE_TIMESTAMP_CANCELLED without its value and
#: gives a shown flip's timestamp as "Value > 0": the model takes 0, the one value left.
DXGK_HWFLIPQUEUE_TIMESTAMP_CANCELLED = 0

DXGK_CANCELFLIPS_PLANE = struct(
    "DXGK_CANCELFLIPS_PLANE",
    m("PresentIdCancelRequested", ULONGLONG, doc="In: cancel [this, last PresentId submitted to the driver]."),
    m("PresentIdCancelled", ULONGLONG,
      doc="Out: first of the flips the driver cancelled synchronously, through the last submitted; 0 = none."),
    m("LayerIndex", UINT, doc="In: the plane (MPO plane index) whose queue is cancelled."),
    since="wddm3_0",
    doc="One plane's cancel request of DxgkDdiCancelFlips.",
    source="[D:d3dkmddi/ns-d3dkmddi-dxgk_cancelflips_plane]",
)

DXGKARG_CANCELFLIPS = struct(
    "DXGKARG_CANCELFLIPS",
    m("VidPnSourceId", D3DDDI_VIDEO_PRESENT_SOURCE_ID),
    m("PlaneCount", UINT, doc="Planes with pending flips to cancel (entries of ppPlanes)."),
    m("ppPlanes", PVOID, doc="DXGK_CANCELFLIPS_PLANE *[PlaneCount] (in/out)."),
    since="wddm3_0",
    doc="Arguments of DxgkDdiCancelFlips: cancel queued flips on several planes at once.",
    source="[D:d3dkmddi/ns-d3dkmddi-dxgkarg_cancelflips]",
)

DXGK_FLIPQUEUE_LOG_ENTRY = struct(
    "DXGK_FLIPQUEUE_LOG_ENTRY",
    m("PresentId", ULONGLONG, doc="The completed or cancelled flip."),
    m("PresentTimestamp", ULONGLONG,
      doc="QPC time scan-out of the flip started; DXGK_HWFLIPQUEUE_TIMESTAMP_CANCELLED for a cancelled flip."),
    since="wddm3_0",
    doc="One entry of a plane's flip queue log.",
    source="[D:d3dkmddi/ns-d3dkmddi-dxgk_flipqueue_log_entry]",
)

DXGKARG_SETFLIPQUEUELOGBUFFER = struct(
    "DXGKARG_SETFLIPQUEUELOGBUFFER",
    m("VidPnSourceId", D3DDDI_VIDEO_PRESENT_SOURCE_ID),
    m("LayerIndex", UINT),
    m("NumberOfEntries", UINT, doc="Entries of the log buffer."),
    m("LogBufferAddress", PVOID,
      doc="DXGK_FLIPQUEUE_LOG_ENTRY[NumberOfEntries], non-paged; NULL when the OS is about to destroy it."),
    since="wddm3_0",
    doc="Arguments of DxgkDdiSetFlipQueueLogBuffer: the log buffer of one plane's flip queue.",
    source="[D:d3dkmddi/ns-d3dkmddi-dxgkarg_setflipqueuelogbuffer]",
)

DXGKARG_UPDATEFLIPQUEUELOG = struct(
    "DXGKARG_UPDATEFLIPQUEUELOG",
    m("VidPnSourceId", D3DDDI_VIDEO_PRESENT_SOURCE_ID),
    m("LayerIndex", UINT),
    m("FirstFreeFlipQueueLogEntryIndex", ULONG, doc="Out: index after the last entry written to the log."),
    since="wddm3_0",
    doc="Arguments of DxgkDdiUpdateFlipQueueLog.",
    source="[D:d3dkmddi/ns-d3dkmddi-dxgkarg_updateflipqueuelog]",
)

DXGKARG_SETINTERRUPTTARGETPRESENTID = struct(
    "DXGKARG_SETINTERRUPTTARGETPRESENTID",
    m("VidPnSourceId", D3DDDI_VIDEO_PRESENT_SOURCE_ID),
    m("LayerIndex", UINT),
    m("InterruptTargetPresentId", ULONGLONG,
      doc="Raise the vsync interrupt once the scanned-out PresentId reaches this; 0 = every vsync, "
          "UINT64_MAX = none until changed."),
    since="wddm3_0",
    doc="Arguments of DxgkDdiSetInterruptTargetPresentId (called at device IRQL).",
    source="[D:d3dkmddi/ns-d3dkmddi-dxgkarg_setinterrupttargetpresentid]",
)
