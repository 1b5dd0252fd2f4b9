"""What a driver reports about its adapter: memory segments (``DXGK_SEGMENTDESCRIPTOR`` with
``DXGK_SEGMENTFLAGS``, answered through ``DxgkDdiQueryAdapterInfo``), the node count
(``DXGK_GPUENGINETOPOLOGY``, ``DXGK_DRIVERCAPS.GpuEngineTopology``) and per-node metadata
(``DXGK_NODEMETADATA``, from ``DxgkDdiGetNodeMetadata``).

Spec: Microsoft's reference pages for these structures and DxgkDdiGetNodeMetadata, and the "TDR
changes in Windows 8" page (nodes versus engines). Version keys:

* ``DXGK_SEGMENTFLAGS``: the seven Vista bits; ``PreservedDuringStandby``,
  ``PreservedDuringHibernate``, ``PartiallyPreservedDuringHibernate`` and ``DirectFlip`` from Windows 8
  (the reference page says Windows 8 for all four; Vista and Windows 7 era headers end at
  ``PopulatedFromSystemMemory`` with 25 reserved bits, although the current header leaves the three
  power bits unguarded); ``Use64KBPages`` ... ``NonLocalBudgetGroup`` from WDDM 2.0 (they sit in the
  header's WDDM 2.0 group); ``PopulatedByReservedDDRByFirmware`` from WDDM 2.9.
  ``AperturePreservedDuringStandby`` appears only in a doc revision newer than WDDM 3.2 and is left
  out.
* ``DXGK_NODEMETADATA`` exists from WDDM 1.3; ``Flags`` replaces the ``Reserved`` UINT32 at WDDM 2.2;
  ``GpuMmuSupported``/``IoMmuSupported`` from WDDM 2.0 (header guards).
"""

from ..enums import ENGINE_TYPE
from ..schema import BOOLEAN, PVOID, SIZE_T, UINT, UINT32, WCHAR, Array, Bit, flags, m, struct
from .common import PHYSICAL_ADDRESS
from .context import DXGK_NODEMETADATA_FLAGS

#: ``DXGK_MAX_ASYMETRICAL_PROCESSING_NODES``: the most nodes an adapter can report.
DXGK_MAX_ASYMETRICAL_PROCESSING_NODES = 64
#: ``DXGK_MAX_METADATA_NAME_LENGTH``: WCHARs in a node's friendly name, terminator included.
DXGK_MAX_METADATA_NAME_LENGTH = 32

DXGK_SEGMENTFLAGS = flags(
    "DXGK_SEGMENTFLAGS",
    Bit("Aperture", doc="No backing pages of its own; allocations are mapped in, not copied."),
    Bit("Agp", doc="The single AGP aperture segment; must be the only bit set."),
    Bit("CpuVisible", doc="The CPU reaches the segment at CpuTranslatedAddress."),
    Bit("UseBanking", doc="Split in banks; NbOfBanks and pBankRangeTable are valid."),
    Bit("CacheCoherent", doc="Aperture only: stays coherent with cacheable pages."),
    Bit("PitchAlignment", doc="Allocations take PitchAlignedSize here; not usable for eviction."),
    Bit("PopulatedFromSystemMemory", doc="Memory segment carved from system RAM the driver allocated."),
    Bit("PreservedDuringStandby", since="win8", doc="Content survives a standby transition."),
    Bit("PreservedDuringHibernate", since="win8", doc="Content survives hibernation (needs PreservedDuringStandby)."),
    Bit("PartiallyPreservedDuringHibernate", since="win8", doc="Partly kept across hibernation (needs PreservedDuringStandby)."),
    Bit("DirectFlip", since="win8", doc="Direct Flip allocations can be pinned and scanned out from here."),
    Bit("Use64KBPages", since="wddm2_0", doc="64 KB GPU pages; allocations must be 64 KB aligned."),
    Bit("ReservedSysMem", since="wddm2_0", doc="For the OS; drivers leave it clear."),
    Bit("SupportsCpuHostAperture", since="wddm2_0", doc="Mappable through the CPU host aperture; excludes CpuVisible."),
    Bit("SupportsCachedCpuHostAperture", since="wddm2_0", doc="Host aperture is cache coherent (needs SupportsCpuHostAperture)."),
    Bit("ApplicationTarget", since="wddm2_0", doc="Counted in application budgets (superseded by the budget groups)."),
    Bit("VprSupported", since="wddm2_0", doc="Video protected regions can live here."),
    Bit("VprPreservedDuringStandby", since="wddm2_0", doc="Protected-region content survives standby."),
    Bit("EncryptedPagingSupported", since="wddm2_0", doc="Hardware-protected allocations are encrypted while paged."),
    Bit("LocalBudgetGroup", since="wddm2_0", doc="Counts against the local memory budget."),
    Bit("NonLocalBudgetGroup", since="wddm2_0", doc="Counts against the non-local memory budget."),
    Bit("PopulatedByReservedDDRByFirmware", since="wddm2_9", doc="Backed by system DDR that firmware set aside."),
    doc="Properties of one memory or aperture segment.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_segmentflags]",
)

DXGK_SEGMENTDESCRIPTOR = struct(
    "DXGK_SEGMENTDESCRIPTOR",
    m("BaseAddress", PHYSICAL_ADDRESS, doc="Segment start as the GPU sees it; ignored for the AGP aperture."),
    m("CpuTranslatedAddress", PHYSICAL_ADDRESS, doc="Segment start on the GPU's bus (e.g. a BAR) when CpuVisible."),
    m("Size", SIZE_T, doc="Bytes; a multiple of the CPU page size."),
    m("NbOfBanks", UINT, doc="Bank count when UseBanking."),
    m("pBankRangeTable", PVOID, doc="SIZE_T* of bank end offsets (all but the last) when UseBanking."),
    m("CommitLimit", SIZE_T, doc="Most bytes that may be committed; equals Size for a memory segment."),
    m("Flags", DXGK_SEGMENTFLAGS),
    doc="One segment a driver describes for DXGKQAITYPE_QUERYSEGMENT.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_segmentdescriptor]",
)

DXGK_GPUENGINETOPOLOGY = struct(
    "DXGK_GPUENGINETOPOLOGY",
    m("NbAsymetricProcessingNodes", UINT, doc="Nodes per engine; used only with MultiEngineAware."),
    m("Reserved", Array(UINT, DXGK_MAX_ASYMETRICAL_PROCESSING_NODES), doc="Must be zero."),
    doc="How many independently scheduled nodes the adapter has (DXGK_DRIVERCAPS.GpuEngineTopology).",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_gpuenginetopology]",
)

DXGK_NODEMETADATA = struct(
    "DXGK_NODEMETADATA",
    m("EngineType", ENGINE_TYPE, doc="What kind of engine the node is."),
    m("FriendlyName", Array(WCHAR, DXGK_MAX_METADATA_NAME_LENGTH),
      doc="NUL-terminated name; needed only for DXGK_ENGINE_TYPE_OTHER, else empty."),
    m("Reserved", UINT32, until="wddm2_2", doc="Must be zero; its place holds Flags from WDDM 2.2."),
    m("Flags", DXGK_NODEMETADATA_FLAGS, since="wddm2_2"),
    m("GpuMmuSupported", BOOLEAN, since="wddm2_0", doc="The node's engines work in the GpuMmu model."),
    m("IoMmuSupported", BOOLEAN, since="wddm2_0", doc="The node's engines work in the IoMmu model."),
    since="wddm1_3",
    doc="Type, name and scheduling flags of one node (DXGKARG_GETNODEMETADATA).",
    source="[D:d3dkmdt/ns-d3dkmdt-_dxgk_nodemetadata]",
)
