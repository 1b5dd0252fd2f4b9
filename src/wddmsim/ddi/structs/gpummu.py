"""The GpuMmu model of WDDM 2.0: page-table entries and the paging operations that write them, the
driver's MMU capabilities, root page tables and the per-process objects that own an address space.

* ``DXGK_PTE`` (d3dukmdt.h): one 16-byte page-table entry as VidMm hands it to the driver, a 64-bit
  flag word and a 64-bit page (or lower page table) address.
* ``D3DGPU_PHYSICAL_ADDRESS``: a segment id and an offset in it.
* The operation arms of ``DXGKARG_BUILDPAGINGBUFFER`` that are named structures of their own:
  ``DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE`` (with ``DXGK_PAGETABLEUPDATEADDRESS`` and
  ``DXGK_UPDATEPAGETABLEFLAGS``), ``DXGK_BUILDPAGINGBUFFER_FLUSHTLB`` and
  ``DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE``. :mod:`.paging` puts them in the operation union.
* ``DXGK_GPUMMUCAPS`` and ``DXGK_PAGE_TABLE_LEVEL_DESC`` (DxgkDdiQueryAdapterInfo answers),
  ``DXGKARG_SETROOTPAGETABLE``, ``DXGKARG_GETROOTPAGETABLESIZE``.
* ``DXGKARG_CREATEPROCESS`` with ``DXGK_CREATEPROCESSFLAGS`` (the driver's process object, whose
  handle later arrives as ``hKmdProcess`` in DXGKARG_CREATEDEVICE and as ``hProcess`` in the page
  table operations).

Spec: Microsoft's DXGK_BUILDPAGINGBUFFER_OPERATION and DXGKARG_BUILDPAGINGBUFFER pages (the paging
operations and their payloads) and its GpuMmu pages. Version keys (tools/msvc_layouts/DECISIONS.md
has the reasoning):

* Everything here exists from WDDM 2.0 except ``DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE``
  (WDDM 2.2, the SIGNAL_MONITORED_FENCE operation). ``DXGK_PTE`` is modelled from WDDM 2.0: the
  reference page says "Windows 7", but the structure of that name in pre-WDDM 2.0 headers was a
  different, system-reserved 8-byte entry; the 16-byte form belongs to the GpuMmu model.
  ``DXGK_PTE.BlockAccessMode`` (newest doc revision only) is newer than WDDM 3.2 and left out.
* ``DXGK_GPUMMUCAPS``: AllowNonAlignedLargePageAddress and SysMem64KBPageSupported WDDM 2.1,
  InvalidTlbEntriesNotCached WDDM 2.6, SysMemLargePageSupported WDDM 2.9, CachedPageTables WDDM 3.1
  (header guards, confirmed by the member pages); PerPtePageSize and
  OpportunisticSysMem64KBPageSupported are newer than WDDM 3.2 and left out.
* ``DXGK_UPDATEPAGETABLEFLAGS.NativeFence``: WDDM 3.1 (the syntax block guards it but does not say
  by what; native GPU fences arrive with WDDM 3.1).
* ``DXGK_CREATEPROCESSFLAGS``: VirtualMachineProcess WDDM 2.2, VirtualMachineWorkerProcess WDDM 2.4,
  SessionIsolatedContainer WDDM 2.5 (member pages). ``DXGKARG_CREATEPROCESS.hKmdVmWorkerProcess``,
  ``ProcessNameLength`` and ``pProcessName`` WDDM 2.4 (with VirtualMachineWorkerProcess; absent from
  the WDDM 2.3 header).
"""

from ..enums import PAGETABLEUPDATEMODE, PTE_PAGE_SIZE
from ..schema import (
    D3DGPU_VIRTUAL_ADDRESS,
    HANDLE,
    PVOID,
    UINT,
    UINT64,
    ULONGLONG,
    Bit,
    Member,
    anon_struct,
    flags,
    m,
    struct,
    union,
)

#: ``DXGK_MAX_PAGE_TABLE_LEVEL_COUNT`` / ``DXGK_MIN_PAGE_TABLE_LEVEL_COUNT`` (d3dukmdt.h).
DXGK_MAX_PAGE_TABLE_LEVEL_COUNT = 6
DXGK_MIN_PAGE_TABLE_LEVEL_COUNT = 2


def _bit(name: str, width: int = 1, storage=UINT, **kw) -> Member:
    """A bitfield member of a plain (non-flag-union) bit group."""
    return Member(name, storage, width=width, **kw)


def _reserved(storage=UINT) -> Member:
    """The group's reserved bits: whatever the active bits leave of the storage unit."""
    return Member("Reserved", storage, width=-8 * storage.size_x64, doc="Must be zero.")


DXGK_PTE = struct(
    "DXGK_PTE",
    union(
        anon_struct(
            _bit("Valid", storage=ULONGLONG, doc="The entry maps something; an invalid entry faults unless Zero is set."),
            _bit("Zero", storage=ULONGLONG, doc="With Valid: accesses read zero (tiled resources)."),
            _bit("CacheCoherent", storage=ULONGLONG, doc="The page is cache coherent between CPU and GPU."),
            _bit("ReadOnly", storage=ULONGLONG, doc="The page may only be read."),
            _bit("NoExecute", storage=ULONGLONG, doc="The page holds data, never commands to execute."),
            _bit("Segment", 5, storage=ULONGLONG, doc="Memory segment of the page; 0 is system memory."),
            _bit("LargePage", storage=ULONGLONG,
                 doc="Non-leaf entry maps a whole lower-level range directly (needs LargePageSupported)."),
            _bit("PhysicalAdapterIndex", 6, storage=ULONGLONG, doc="Linked adapter that owns the memory."),
            _bit("PageTablePageSize", 2, storage=ULONGLONG, display=PTE_PAGE_SIZE.values,
                 doc="Level-1 entry: page size of the leaf table (DXGK_PTE_PAGE_SIZE)."),
            _bit("SystemReserved0", storage=ULONGLONG, doc="For the OS."),
            _reserved(ULONGLONG),
        ),
        m("Flags", ULONGLONG, doc="All flag bits as one value."),
    ),
    union(
        m("PageAddress", ULONGLONG, doc="Page frame: bits 12..63 of the page's address (segment offset or system address)."),
        m("PageTableAddress", ULONGLONG, doc="Non-leaf entry: bits 12..63 of the lower-level page table's address."),
    ),
    since="wddm2_0",
    doc="One GPU page-table entry in the OS's hardware-neutral form; the driver translates it into its own format.",
    source="[D:d3dukmdt/ns-d3dukmdt-_dxgk_pte]",
)

D3DGPU_PHYSICAL_ADDRESS = struct(
    "D3DGPU_PHYSICAL_ADDRESS",
    m("SegmentId", UINT, doc="Memory segment; 0 = system memory."),
    m("Padding", UINT, doc="Alignment padding (explicit in current headers, implicit before; same layout)."),
    m("SegmentOffset", UINT64, doc="Byte offset in the segment (or the system physical address)."),
    since="wddm2_0",
    doc="A GPU physical address: a segment and an offset in it.",
    source="[D:d3dukmdt/ns-d3dukmdt-_d3dgpu_physical_address]",
)

DXGK_PAGETABLEUPDATEADDRESS = struct(
    "DXGK_PAGETABLEUPDATEADDRESS",
    union(
        m("CpuVirtual", PVOID, doc="With DXGK_PAGETABLEUPDATE_CPU_VIRTUAL: kernel CPU address of the table."),
        m("GpuPhysical", D3DGPU_PHYSICAL_ADDRESS, doc="With DXGK_PAGETABLEUPDATE_GPU_PHYSICAL."),
        m("GpuVirtual", D3DGPU_VIRTUAL_ADDRESS, doc="With DXGK_PAGETABLEUPDATE_GPU_VIRTUAL (system context's space)."),
    ),
    since="wddm2_0",
    doc="Where the page table to update lives; GpuMmuCaps.PageTableUpdateMode says which arm is valid.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_pagetableupdateaddress]",
)

DXGK_UPDATEPAGETABLEFLAGS = struct(
    "DXGK_UPDATEPAGETABLEFLAGS",
    anon_struct(
        _bit("Repeat", doc="pPageTableEntries holds one entry to replicate into every updated slot."),
        _bit("InitialUpdate", doc="First initialization of the table after it was made resident."),
        _bit("NotifyEviction", doc="The table is about to be evicted."),
        _bit("Use64KBPages", doc="The entries point at page tables of 64 KB pages."),
        _bit("NativeFence", since="wddm3_1", doc="Native GPU fence mapping (native fence feature)."),
        _reserved(),
    ),
    since="wddm2_0",
    doc="How an UpdatePageTable paging operation is to be done (a plain bitfield struct, no Value).",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_updatepagetableflags]",
)

DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE = struct(
    "DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE",
    m("PageTableLevel", UINT, doc="Level of the table being updated (0 = root)."),
    m("hAllocation", HANDLE, doc="Driver handle of the mapped allocation; NULL for page tables themselves."),
    m("PageTableAddress", DXGK_PAGETABLEUPDATEADDRESS, doc="The table to write, in the form UpdateMode names."),
    m("pPageTableEntries", PVOID, doc="DXGK_PTE*: the entries to copy; [0] goes to StartIndex."),
    m("StartIndex", UINT, doc="First entry of the table to write (zero-based)."),
    m("NumPageTableEntries", UINT, doc="How many entries to write."),
    m("Reserved0", UINT, doc="Must be zero."),
    m("Flags", DXGK_UPDATEPAGETABLEFLAGS),
    m("DriverProtection", UINT64, doc="Driver-specific protection from the UMD's MapGpuVirtualAddressCb."),
    m("AllocationOffsetInBytes", UINT64, doc="With hAllocation: offset of the first mapped page in the allocation."),
    m("hProcess", HANDLE, doc="Driver process handle (from DxgkDdiCreateProcess) that owns the tables."),
    m("UpdateMode", PAGETABLEUPDATEMODE,
      doc="Meaning of PageTableAddress; CPU_VIRTUAL (and no DMA buffer) when paging-process tables are set up."),
    m("pPageTableEntries64KB", PVOID, doc="DXGK_PTE*: the 64 KB-page entries (only with DualPteSupported)."),
    m("FirstPteVirtualAddress", D3DGPU_VIRTUAL_ADDRESS, doc="GPU VA the first updated entry maps."),
    since="wddm2_0",
    doc="Payload of DXGK_OPERATION_UPDATE_PAGE_TABLE: write page-table entries.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_buildpagingbuffer_updatepagetable]",
)

DXGK_BUILDPAGINGBUFFER_FLUSHTLB = struct(
    "DXGK_BUILDPAGINGBUFFER_FLUSHTLB",
    m("RootPageTableAddress", D3DGPU_PHYSICAL_ADDRESS, doc="Physical address of the root table being invalidated."),
    m("hProcess", HANDLE, doc="Driver process handle the table belongs to."),
    m("StartVirtualAddress", D3DGPU_VIRTUAL_ADDRESS, doc="Start of the affected GPU VA range."),
    m("EndVirtualAddress", D3DGPU_VIRTUAL_ADDRESS, doc="End of the range; start and end both 0 = the whole space."),
    since="wddm2_0",
    doc="Payload of DXGK_OPERATION_FLUSH_TLB: invalidate cached translations of an address space.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_buildpagingbuffer_flushtlb]",
)

DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE = struct(
    "DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE",
    m("MonitoredFenceGpuVa", D3DGPU_VIRTUAL_ADDRESS, doc="GPU VA of the fence value (8-byte aligned)."),
    m("MonitoredFenceValue", UINT64, doc="Value the paging buffer writes there."),
    since="wddm2_2",
    doc="Payload of DXGK_OPERATION_SIGNAL_MONITORED_FENCE: write a monitored fence value from the paging buffer.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_buildpagingbuffer]",
)

DXGK_GPUMMUCAPS = struct(
    "DXGK_GPUMMUCAPS",
    union(
        anon_struct(
            _bit("ReadOnlyMemorySupported", doc="Read-only page protection."),
            _bit("NoExecuteMemorySupported", doc="No-execute page protection."),
            _bit("ZeroInPteSupported", doc="The PTE Zero flag works at every level."),
            _bit("ExplicitPageTableInvalidation", doc="Entries must be invalidated through UpdatePageTable before a table is freed."),
            _bit("CacheCoherentMemorySupported", doc="PTE CacheCoherent bits and I/O-coherent system memory transfers."),
            _bit("PageTableUpdateRequireAddressSpaceIdle",
                 doc="Tables/TLB of an address space cannot change while an engine uses it; VidMm suspends its contexts."),
            _bit("LargePageSupported", doc="Non-leaf levels take LargePage entries."),
            _bit("DualPteSupported", doc="Level-1 entries can point at both a 4 KB and a 64 KB leaf table."),
            _bit("AllowNonAlignedLargePageAddress", since="wddm2_1", doc="LargePage allowed on unaligned physical addresses."),
            _bit("SysMem64KBPageSupported", since="wddm2_1", doc="64 KB pages for system memory."),
            _bit("InvalidTlbEntriesNotCached", since="wddm2_6", doc="No FlushTlb for ranges turning from invalid to valid."),
            _bit("SysMemLargePageSupported", since="wddm2_9", doc="Large pages for system memory."),
            _bit("CachedPageTables", since="wddm3_1", doc="Cached page tables are supported."),
            _reserved(),
        ),
        m("Value", UINT, doc="All capability bits as one value."),
    ),
    m("PageTableUpdateMode", PAGETABLEUPDATEMODE, doc="Address form UpdatePageTable operations use."),
    m("VirtualAddressBitCount", UINT, doc="Bits in a GPU virtual address."),
    m("LeafPageTableSizeFor64KPagesInBytes", UINT, doc="Size of a 64 KB-page leaf table; a multiple of 4096."),
    m("PageTableLevelCount", UINT, doc="Levels of page tables, 2..6; with 2 the root table is resizable."),
    m("LegacyBehaviors", struct(
        "GpuMmuLegacyBehaviors_t",
        anon_struct(
            _bit("SourcePageTableVaInTransfer", doc="VidMm fills SourcePageTable of TransferVirtual on eviction."),
            _reserved(),
        ),
    )),
    since="wddm2_0",
    doc="The GpuMmu capabilities a driver reports for DXGKQAITYPE_GPUMMUCAPS.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_gpummucaps]",
)

DXGK_PAGE_TABLE_LEVEL_DESC = struct(
    "DXGK_PAGE_TABLE_LEVEL_DESC",
    m("PageTableIndexBitCount", UINT, doc="VA bits that index this level; the table has 2^count entries."),
    m("PageTableSegmentId", UINT, doc="Segment the tables of this level live in."),
    m("PagingProcessPageTableSegmentId", UINT, doc="Segment for the paging process's tables of this level."),
    m("PageTableSizeInBytes", UINT, doc="Size of one table of this level."),
    m("PageTableAlignmentInBytes", UINT, doc="Alignment of a table; 0 = the segment's page size."),
    since="wddm2_0",
    doc="One page-table level a driver describes for DXGKQAITYPE_PAGETABLELEVELDESC.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_page_table_level_desc]",
)

DXGKARG_SETROOTPAGETABLE = struct(
    "DXGKARG_SETROOTPAGETABLE",
    m("hContext", HANDLE, doc="Context whose address space gets the root table."),
    m("Address", D3DGPU_PHYSICAL_ADDRESS, doc="Physical address of the root page table."),
    m("NumEntries", UINT, doc="Valid entries in the root table (it can be resized)."),
    since="wddm2_0",
    doc="Arguments of DxgkDdiSetRootPageTable.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_setrootpagetable]",
)

DXGKARG_GETROOTPAGETABLESIZE = struct(
    "DXGKARG_GETROOTPAGETABLESIZE",
    m("NumberOfPte", UINT, doc="In/out: entries wanted; the driver may round it up."),
    m("PhysicalAdapterIndex", UINT, doc="Linked adapter the table is for."),
    since="wddm2_0",
    doc="Arguments of DxgkDdiGetRootPageTableSize (the DDI returns the size in bytes).",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_getrootpagetablesize]",
)

DXGK_CREATEPROCESSFLAGS = flags(
    "DXGK_CREATEPROCESSFLAGS",
    Bit("SystemProcess", doc="The OS's system process."),
    Bit("GdiProcess", doc="The GDI process."),
    Bit("VirtualMachineProcess", since="wddm2_2", doc="A process of a virtual machine (GPU paravirtualization)."),
    Bit("VirtualMachineWorkerProcess", since="wddm2_4", doc="A virtual machine's worker process; renders nothing."),
    Bit("SessionIsolatedContainer", since="wddm2_5", doc="The process runs in a session-isolated container."),
    since="wddm2_0",
    doc="What kind of Dxgkrnl process DxgkDdiCreateProcess is creating a driver object for.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_createprocessflags]",
)

DXGKARG_CREATEPROCESS = struct(
    "DXGKARG_CREATEPROCESS",
    m("hDxgkProcess", HANDLE, doc="In: Dxgkrnl's process (DXGPROCESS)."),
    m("hKmdProcess", HANDLE, doc="Out: the driver's process object."),
    m("Flags", DXGK_CREATEPROCESSFLAGS),
    m("NumPasid", UINT, doc="Entries in pPasid (one per physical GPU)."),
    m("pPasid", PVOID, doc="ULONG*: process address space ids."),
    m("hKmdVmWorkerProcess", HANDLE, since="wddm2_4", doc="Driver handle of the VM worker process (VirtualMachineProcess only)."),
    m("ProcessNameLength", UINT, since="wddm2_4", doc="WCHARs in pProcessName, terminator excluded."),
    m("pProcessName", PVOID, since="wddm2_4", doc="WCHAR*: NUL-terminated process name; may be NULL."),
    since="wddm2_0",
    doc="Arguments of DxgkDdiCreateProcess: a driver process object for a Dxgkrnl process.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_createprocess]",
)
