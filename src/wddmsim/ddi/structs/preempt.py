"""Preemption and recovery requests: ``DXGKARG_PREEMPTCOMMAND`` and its flags,
``DXGKARG_RESETENGINE``, ``DXGKARG_QUERYDEPENDENTENGINEGROUP``, ``DXGKARG_QUERYENGINESTATUS`` with
``DXGK_ENGINESTATUS``, and ``DXGKARG_QUERYCURRENTFENCE``.

Spec: Microsoft's DxgkDdiQueryCurrentFence, DxgkDdiPreemptCommand and DxgkDdiResetEngine pages.
``DXGKARG_RESETENGINE``, ``DXGKARG_QUERYDEPENDENTENGINEGROUP`` and ``DXGKARG_QUERYENGINESTATUS``
exist from Windows 8 (per-engine TDR: Microsoft's "TDR changes in Windows 8" lists the three entry
points a driver that reports ``SupportPerEngineTDR`` implements).
"""

from ..schema import UINT, ULONGLONG, Bit, flags, m, struct

DXGK_PREEMPTCOMMANDFLAGS = flags(
    "DXGK_PREEMPTCOMMANDFLAGS",
    doc="Flags of a preemption request; no bit is defined and Value must be 0.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_preemptcommandflags]",
)

DXGKARG_PREEMPTCOMMAND = struct(
    "DXGKARG_PREEMPTCOMMAND",
    m("PreemptionFenceId", UINT, doc="Fence id ending the preemption request; echoed in DMA_PREEMPTED."),
    m("NodeOrdinal", UINT),
    m("EngineOrdinal", UINT),
    m("Flags", DXGK_PREEMPTCOMMANDFLAGS),
    doc="Asks the driver to preempt the DMA buffers queued on a node.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_preemptcommand]",
)

DXGKARG_RESETENGINE = struct(
    "DXGKARG_RESETENGINE",
    m("NodeOrdinal", UINT),
    m("EngineOrdinal", UINT),
    m("LastAbortedFenceId", UINT, doc="Out: fence of the last packet aborted mid-execution."),
    since="win8",
    doc="Asks the driver to reset one engine after a timeout.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_resetengine]",
)

DXGKARG_QUERYDEPENDENTENGINEGROUP = struct(
    "DXGKARG_QUERYDEPENDENTENGINEGROUP",
    m("NodeOrdinal", UINT),
    m("EngineOrdinal", UINT),
    m("DependentNodeOrdinalMask", ULONGLONG,
      doc="Out: the nodes reset together with this one, itself included (node 1 with 2 and 4: 0x16)."),
    since="win8",
    doc="Asks which engines depend on one about to be reset (called before every DxgkDdiResetEngine).",
    source="[D:d3dkmddi/nc-d3dkmddi-dxgkddi_querydependentenginegroup]",
)

DXGK_ENGINESTATUS = flags(
    "DXGK_ENGINESTATUS",
    Bit("Responsive", doc="1: the node is making progress; 0: it does not respond to the query."),
    since="win8",
    doc="The progress of one node, answered by DxgkDdiQueryEngineStatus.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_enginestatus]",
)

DXGKARG_QUERYENGINESTATUS = struct(
    "DXGKARG_QUERYENGINESTATUS",
    m("NodeOrdinal", UINT),
    m("EngineOrdinal", UINT),
    m("EngineStatus", DXGK_ENGINESTATUS, doc="Out: the node's progress."),
    since="win8",
    doc="Asks the driver whether a node is making progress (per-engine TDR).",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_queryenginestatus]",
)

DXGKARG_QUERYCURRENTFENCE = struct(
    "DXGKARG_QUERYCURRENTFENCE",
    m("CurrentFence", UINT, doc="Out: latest completed submission fence."),
    m("NodeOrdinal", UINT),
    m("EngineOrdinal", UINT),
    doc="Asks the driver for the latest completed fence of a node and engine.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_querycurrentfence]",
)
