"""Types shared by every area: ``LARGE_INTEGER``/``PHYSICAL_ADDRESS`` and the Win32 ``RECT``.

Spec: Microsoft's DXGKARG_SUBMITCOMMAND page (``DmaBufferPhysicalAddress`` is a ``PHYSICAL_ADDRESS``,
defined as a ``LARGE_INTEGER``); its DXGKARG_PRESENT page (source and destination ``RECT``\\ s).
"""

from ..schema import LONG, LONGLONG, ULONG, anon_struct, m, struct, union_record

PHYSICAL_ADDRESS = union_record(
    "PHYSICAL_ADDRESS",
    anon_struct(m("LowPart", ULONG), m("HighPart", LONG)),
    m("u", struct("LARGE_INTEGER_u", m("LowPart", ULONG), m("HighPart", LONG))),
    m("QuadPart", LONGLONG),
    doc="A 64-bit physical address (a LARGE_INTEGER): a system physical address or a segment address.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_submitcommand]",
    leaf=True,
)

RECT = struct(
    "RECT",
    m("left", LONG, doc="X of the upper-left corner."),
    m("top", LONG, doc="Y of the upper-left corner."),
    m("right", LONG, doc="X just past the right edge (exclusive)."),
    m("bottom", LONG, doc="Y just past the bottom edge (exclusive)."),
    doc="A rectangle in pixels (windef.h): four signed 32-bit edges.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_present]",
)
