"""The WDDM 2.x structures of the GpuMmu, hardware-scheduling and monitored-fence DDIs: registered,
laid out at the documented bit positions and offsets, present exactly from their DDI version, and
readable and writable by the codec. (The full compiler comparison at every version is
tests/test_layouts.py; these are the facts a reader checks against the reference pages.)
Sources: Microsoft's DXGK_BUILDPAGINGBUFFER_OPERATION and DXGKARG_BUILDPAGINGBUFFER pages, its pages
for the priority-band, context-scheduling, hardware-queue, monitored-fence and engine-reset DDIs, and
its "Context monitoring" page."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.ddi import codec, layout, registry
from wddmsim.ddi.enums import (
    DXGK_BUILDPAGINGBUFFER_OPERATION as OP,
)
from wddmsim.ddi.enums import (
    DXGK_KERNEL_SUBMISSION_TYPE,
    DXGK_PAGETABLEUPDATEMODE,
    DXGK_SCHEDULING_PRIORITY_BAND,
)
from wddmsim.ddi.versions import VERSIONS, ddi_version

ARCHES = ("x64", "x86")

NEW_RECORDS = {
    # name: first DDI version
    "DXGK_PTE": "wddm2_0",
    "D3DGPU_PHYSICAL_ADDRESS": "wddm2_0",
    "DXGK_PAGETABLEUPDATEADDRESS": "wddm2_0",
    "DXGK_UPDATEPAGETABLEFLAGS": "wddm2_0",
    "DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE": "wddm2_0",
    "DXGK_BUILDPAGINGBUFFER_FLUSHTLB": "wddm2_0",
    "DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE": "wddm2_2",
    "DXGK_GPUMMUCAPS": "wddm2_0",
    "DXGK_PAGE_TABLE_LEVEL_DESC": "wddm2_0",
    "DXGKARG_SETROOTPAGETABLE": "wddm2_0",
    "DXGKARG_GETROOTPAGETABLESIZE": "wddm2_0",
    "DXGK_CREATEPROCESSFLAGS": "wddm2_0",
    "DXGKARG_CREATEPROCESS": "wddm2_0",
    "D3DDDI_CREATEHWCONTEXTFLAGS": "wddm2_2",
    "DXGK_HWCONTEXT_CAPS": "wddm2_2",
    "DXGKARG_CREATEHWCONTEXT": "wddm2_2",
    "D3DDDI_CREATEHWQUEUEFLAGS": "wddm2_2",
    "DXGKARG_CREATEHWQUEUE": "wddm2_2",
    "DXGKARG_RESETHWENGINE": "wddm2_2",
    "DXGKARGCB_INVALIDATEHWCONTEXT": "wddm2_2",
    "DXGKARG_SETUPPRIORITYBANDS": "wddm2_4",
    "DXGKARG_SETCONTEXTSCHEDULINGPROPERTIES": "wddm2_4",
    "DXGKARG_SUSPENDCONTEXT": "wddm2_4",
    "DXGKARG_RESUMECONTEXT": "wddm2_4",
    "DXGKARG_RESUMEHWENGINE": "wddm2_4",
    "DXGK_INVALIDATEHWCONTEXTFLAGS": "wddm2_4",
    "DXGKARG_SIGNALMONITOREDFENCE": "wddm2_5",
    "DXGKARG_CREATENATIVEFENCE_FLAGS": "wddm3_1",
    "DXGKARG_CREATENATIVEFENCE": "wddm3_1",
    "DXGK_DESTROYNATIVEFENCE_FLAGS": "wddm3_1",
    "DXGKARG_DESTROYNATIVEFENCE": "wddm3_1",
    "DXGKARG_UPDATEMONITOREDVALUES_FLAGS": "wddm3_1",
    "DXGKARG_UPDATEMONITOREDVALUES": "wddm3_1",
    "DXGK_NATIVE_FENCE_CAPS": "wddm3_1",
    "DXGK_UPDATECURRENTVALUESFROMCPU_FLAGS": "wddm3_1",
    "DXGKARG_UPDATECURRENTVALUESFROMCPU": "wddm3_1",
    "D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS": "win7",
    "D3DDDICB_SIGNALFLAGS": "vista",
}
NEW_SCALARS = ("D3DKMT_HANDLE", "DXGK_PTE_PAGE_SIZE", "DXGK_PAGETABLEUPDATEMODE", "DXGK_SCHEDULING_PRIORITY_BAND",
               "DXGK_KERNEL_SUBMISSION_TYPE", "D3DDDI_NATIVEFENCE_TYPE")

runner = CliRunner()


def masks(name, version="latest", arch="x64"):
    """{bit member path: mask within its storage unit} of a record at ``version``."""
    rec = registry.RECORDS[name]
    return {ml.path: ((1 << ml.bit_width) - 1) << ml.bit_offset
            for ml in layout.members(rec, arch, version) if ml.bit_width is not None}


def offsets(name, version="latest", arch="x64"):
    rec = registry.RECORDS[name]
    return {ml.path: ml.offset for ml in layout.members(rec, arch, version)}


def size(name, version="latest", arch="x64"):
    return layout.layout_table(registry.RECORDS[name], arch, version)["size"]


# -- registration and presence ---------------------------------------------------------------


def test_every_new_type_is_registered_with_a_source_and_docs():
    for name, since in NEW_RECORDS.items():
        rec = registry.RECORDS[name]
        assert rec.since == (None if since == "vista" else since), name
        assert rec.source.startswith("[D:") and rec.doc, name
    for name in NEW_SCALARS:
        assert registry.lookup(name).name == name


@pytest.mark.parametrize("name", sorted(NEW_RECORDS))
def test_structure_exists_from_its_version(name):
    first = ddi_version(NEW_RECORDS[name])
    rec = registry.RECORDS[name]
    assert [v.name for v in VERSIONS if layout.exists(rec, v)] == [v.name for v in VERSIONS if v.value >= first.value]


@pytest.mark.parametrize("name", sorted(NEW_RECORDS))
@pytest.mark.parametrize("arch", ARCHES)
def test_codec_round_trip_at_every_version(name, arch):
    rec = registry.RECORDS[name]
    for v in VERSIONS:
        if not layout.exists(rec, v):
            continue
        obj = codec.new(rec, arch, v)
        data = bytes(range(256)) * ((len(codec.to_bytes(obj)) // 256) + 1)
        data = data[: len(codec.to_bytes(obj))]
        again = codec.from_bytes(rec, data, arch, v)
        assert codec.to_bytes(again) == data
        fields = codec.decode(rec, data, arch, v)
        assert fields and all(f.offset + f.size <= len(data) for f in fields)


def test_layout_command_shows_a_hardware_queue_at_wddm2_4_x86():
    r = runner.invoke(main, ["layout", "DXGKARG_CREATEHWQUEUE", "--arch", "x86", "--ddi-version", "wddm2_4", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["size"] == 32 and d["align"] == 8
    assert {k: v["offset"] for k, v in d["members"].items() if "." not in k} == {
        "hHwQueue": 0, "Flags": 4, "PrivateDriverDataSize": 8, "pPrivateDriverData": 12, "hHwQueueProgressFence": 16,
        "HwQueueProgressFenceCPUVirtualAddress": 20, "HwQueueProgressFenceGPUVirtualAddress": 24,
    }
    text = runner.invoke(main, ["layout", "DXGKARG_CREATEHWQUEUE", "--arch", "x86", "--ddi-version", "wddm2_4"])
    assert text.exit_code == 0 and "DisableGpuTimeout" in text.stdout and "NoBroadcastSignal" not in text.stdout


def test_layout_command_refuses_a_structure_before_its_version():
    r = runner.invoke(main, ["layout", "DXGKARG_SUSPENDCONTEXT", "--ddi-version", "wddm2_3"])
    assert r.exit_code == 2 and "appeared in wddm2_4" in r.output


# -- DXGK_PTE and the GpuMmu structures --------------------------------------------------------


def test_pte_bits_are_those_of_the_reference_page():
    assert size("DXGK_PTE") == size("DXGK_PTE", arch="x86") == 16
    assert masks("DXGK_PTE") == {
        "Valid": 0x1, "Zero": 0x2, "CacheCoherent": 0x4, "ReadOnly": 0x8, "NoExecute": 0x10, "Segment": 0x3E0,
        "LargePage": 0x400, "PhysicalAdapterIndex": 0x1F800, "PageTablePageSize": 0x60000, "SystemReserved0": 0x80000,
        "Reserved": 0xFFFFFFFFFFF00000,
    }
    assert offsets("DXGK_PTE") == {**{k: 0 for k in masks("DXGK_PTE")}, "Flags": 0, "PageAddress": 8,
                                   "PageTableAddress": 8}


def test_pte_decodes_segment_and_page_size_by_name():
    rec = registry.RECORDS["DXGK_PTE"]
    obj = codec.new(rec)
    obj.Valid, obj.Segment, obj.PageTablePageSize, obj.PageAddress = 1, 3, 1, 0x12345
    fields = {f.path: f for f in codec.decode(rec, codec.to_bytes(obj))}
    assert fields["Flags"].value == 0x1 | (3 << 5) | (1 << 17)
    assert fields["Segment"].value == 3
    assert fields["PageTablePageSize"].text == "1 (DXGK_PTE_PAGE_TABLE_PAGE_64KB)"
    assert fields["PageAddress"].value == 0x12345


def test_gpummu_caps_bits_follow_the_version():
    assert masks("DXGK_GPUMMUCAPS", "wddm2_0")["Reserved"] == 0xFFFFFF00
    assert masks("DXGK_GPUMMUCAPS", "wddm2_1")["SysMem64KBPageSupported"] == 0x200
    assert masks("DXGK_GPUMMUCAPS", "wddm2_6")["InvalidTlbEntriesNotCached"] == 0x400
    assert masks("DXGK_GPUMMUCAPS", "wddm2_9")["SysMemLargePageSupported"] == 0x800
    latest = masks("DXGK_GPUMMUCAPS")
    assert latest["CachedPageTables"] == 0x1000 and latest["Reserved"] == 0xFFFFE000
    assert latest["LegacyBehaviors.SourcePageTableVaInTransfer"] == 0x1
    assert {k: v for k, v in offsets("DXGK_GPUMMUCAPS").items() if "." not in k and k not in latest} == {
        "Value": 0, "PageTableUpdateMode": 4, "VirtualAddressBitCount": 8, "LeafPageTableSizeFor64KPagesInBytes": 12,
        "PageTableLevelCount": 16, "LegacyBehaviors": 20,
    }


def test_update_page_table_payload_and_flags():
    assert masks("DXGK_UPDATEPAGETABLEFLAGS", "wddm3_0") == {
        "Repeat": 0x1, "InitialUpdate": 0x2, "NotifyEviction": 0x4, "Use64KBPages": 0x8, "Reserved": 0xFFFFFFF0}
    assert masks("DXGK_UPDATEPAGETABLEFLAGS")["NativeFence"] == 0x10
    top = {k: v for k, v in offsets("DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE").items() if "." not in k}
    assert top == {
        "PageTableLevel": 0, "hAllocation": 8, "PageTableAddress": 16, "pPageTableEntries": 32, "StartIndex": 40,
        "NumPageTableEntries": 44, "Reserved0": 48, "Flags": 52, "DriverProtection": 56, "AllocationOffsetInBytes": 64,
        "hProcess": 72, "UpdateMode": 80, "pPageTableEntries64KB": 88, "FirstPteVirtualAddress": 96,
    }
    assert offsets("DXGK_PAGETABLEUPDATEADDRESS")["GpuPhysical.SegmentOffset"] == 8
    assert [int(m) for m in DXGK_PAGETABLEUPDATEMODE] == [0, 1, 2]


def test_flush_tlb_and_root_page_table():
    assert offsets("DXGK_BUILDPAGINGBUFFER_FLUSHTLB") == {
        "RootPageTableAddress": 0, "RootPageTableAddress.SegmentId": 0, "RootPageTableAddress.Padding": 4,
        "RootPageTableAddress.SegmentOffset": 8, "hProcess": 16, "StartVirtualAddress": 24, "EndVirtualAddress": 32,
    }
    assert size("DXGKARG_SETROOTPAGETABLE", arch="x86") == 32  # the 8-aligned address pads hContext on x86
    assert offsets("DXGKARG_SETROOTPAGETABLE", arch="x86")["Address"] == 8
    assert size("DXGK_PAGE_TABLE_LEVEL_DESC") == 20


def test_create_process_grows_at_wddm2_4():
    assert size("DXGKARG_CREATEPROCESS", "wddm2_3") == 32
    assert offsets("DXGKARG_CREATEPROCESS", "wddm2_4")["pProcessName"] == 48
    assert masks("DXGK_CREATEPROCESSFLAGS", "wddm2_5")["SessionIsolatedContainer"] == 0x10
    assert "VirtualMachineWorkerProcess" not in masks("DXGK_CREATEPROCESSFLAGS", "wddm2_3")


def test_create_device_has_its_kmd_process_from_wddm2_0():
    assert "hKmdProcess" not in offsets("DXGKARG_CREATEDEVICE", "wddm1_3")
    assert offsets("DXGKARG_CREATEDEVICE", "wddm2_0")["hKmdProcess"] == 24


# -- DXGKARG_BUILDPAGINGBUFFER: new arms, unchanged size ----------------------------------------


@pytest.mark.parametrize("arch", ARCHES)
def test_paging_union_keeps_its_size_and_gains_arms_by_version(arch):
    rec = registry.RECORDS["DXGKARG_BUILDPAGINGBUFFER"]
    for v in VERSIONS:
        off = offsets(rec.name, v, arch)
        assert off["hSystemContext"] - off["Reserved"] == 256, v.name
        assert ("UpdatePageTable" in off) == ("FlushTlb" in off) == (v.value >= ddi_version("wddm2_0").value)
        assert ("SignalMonitoredFence" in off) == (v.value >= ddi_version("wddm2_2").value)
        if "UpdatePageTable" in off:
            assert off["UpdatePageTable"] == off["FlushTlb"] == off["Reserved"]
    assert size(rec.name, "latest", arch) == {"x64": 320, "x86": 304}[arch]


def test_paging_operation_values():
    assert (OP.DXGK_OPERATION_UPDATE_PAGE_TABLE, OP.DXGK_OPERATION_FLUSH_TLB, OP.DXGK_OPERATION_SIGNAL_MONITORED_FENCE) \
        == (11, 12, 16)


def test_signal_monitored_fence_arm_decodes():
    rec = registry.RECORDS["DXGKARG_BUILDPAGINGBUFFER"]
    obj = codec.new(rec, Operation=int(OP.DXGK_OPERATION_SIGNAL_MONITORED_FENCE))
    obj.SignalMonitoredFence.MonitoredFenceGpuVa = 0x7F0000
    obj.SignalMonitoredFence.MonitoredFenceValue = 42
    values = codec.values(rec, codec.to_bytes(obj))
    assert values["SignalMonitoredFence.MonitoredFenceGpuVa"] == 0x7F0000
    assert values["SignalMonitoredFence.MonitoredFenceValue"] == 42
    # The arms share the union's bytes: the fence VA's low half is UpdatePageTable's level, the value its handle.
    assert (values["UpdatePageTable.PageTableLevel"], values["UpdatePageTable.hAllocation"]) == (0x7F0000, 42)


# -- hardware scheduling -----------------------------------------------------------------------


def test_create_hw_queue_flags_are_those_of_the_spec():
    assert masks("D3DDDI_CREATEHWQUEUEFLAGS") == {
        "DisableGpuTimeout": 0x1, "NoBroadcastSignal": 0x2, "NoBroadcastWait": 0x4, "NoKmdAccess": 0x8,
        "UserModeSubmission": 0x10, "NativeProgressFence": 0x20, "TestQueue": 0x40, "Reserved": 0xFFFFFF80,
    }
    assert masks("D3DDDI_CREATEHWQUEUEFLAGS", "wddm2_2") == {"DisableGpuTimeout": 0x1, "Reserved": 0xFFFFFFFE}
    rec = registry.RECORDS["DXGKARG_CREATEHWQUEUE"]
    obj = codec.new(rec, Flags=0x21, hHwQueueProgressFence=0x40000002)
    fields = {f.path: f for f in codec.decode(rec, codec.to_bytes(obj))}
    assert fields["Flags"].text == "0x00000021 (DisableGpuTimeout|NativeProgressFence)"
    assert fields["hHwQueueProgressFence"].text == "0x40000002"


def test_create_hw_queue_native_fence_handle_only_at_wddm3_2():
    assert "hHwQueueNativeProgressFence" not in offsets("DXGKARG_CREATEHWQUEUE", "wddm3_1")
    assert offsets("DXGKARG_CREATEHWQUEUE")["hHwQueueNativeProgressFence"] == 48
    assert size("DXGKARG_CREATEHWQUEUE", "wddm3_1", "x86") == 32 and size("DXGKARG_CREATEHWQUEUE", "latest", "x86") == 40


def test_priority_bands_and_scheduling_properties():
    assert [int(b) for b in DXGK_SCHEDULING_PRIORITY_BAND] == [0, 1, 2, 3, 4]
    assert offsets("DXGKARG_SETUPPRIORITYBANDS") == {
        "gracePeriodForBand": 0, "processQuantumForBand": 32, "processGracePeriodForBand": 64,
        "targetNormalBandPercentage": 96}
    assert offsets("DXGKARG_SETCONTEXTSCHEDULINGPROPERTIES", arch="x86") == {
        "hContext": 0, "priorityBand": 4, "realtimeBandPriorityLevel": 8, "inProcessPriority": 12, "quantum": 16,
        "gracePeriodSamePriority": 24, "gracePeriodLowerPriority": 32}
    rec = registry.RECORDS["DXGKARG_SETCONTEXTSCHEDULINGPROPERTIES"]
    obj = codec.new(rec, priorityBand=3, inProcessPriority=-7)
    fields = {f.path: f for f in codec.decode(rec, codec.to_bytes(obj))}
    assert fields["priorityBand"].text == "3 (DXGK_SCHEDULING_PRIORITY_BAND_REALTIME)"
    assert fields["inProcessPriority"].value == -7


def test_invalidate_hw_context_gains_adapter_and_flags_at_wddm2_4():
    assert offsets("DXGKARGCB_INVALIDATEHWCONTEXT", "wddm2_3") == {"hHwContext": 0}
    assert offsets("DXGKARGCB_INVALIDATEHWCONTEXT", "wddm2_4") == {
        "hAdapter": 0, "hHwContext": 8, "Flags": 16, "Flags.CollateralDamage": 16, "Flags.Reserved": 16, "Flags.Value": 16}
    assert masks("DXGK_INVALIDATEHWCONTEXTFLAGS") == {"CollateralDamage": 0x1, "Reserved": 0xFFFFFFFE}


def test_suspend_resume_and_engine_reset():
    assert offsets("DXGKARG_SUSPENDCONTEXT", arch="x86") == {"hContext": 0, "contextSuspendFence": 8}
    assert size("DXGKARG_RESUMECONTEXT", arch="x86") == 4
    assert offsets("DXGKARG_RESETHWENGINE") == offsets("DXGKARG_RESUMEHWENGINE") == {"NodeOrdinal": 0, "EngineOrdinal": 4}


def test_signal_monitored_fence_arguments():
    assert [int(k) for k in DXGK_KERNEL_SUBMISSION_TYPE] == [0, 1, 2]
    assert offsets("DXGKARG_SIGNALMONITOREDFENCE") == {
        "KernelSubmissionType": 0, "pDmaBuffer": 8, "DmaBufferGpuVirtualAddress": 16, "DmaSize": 24,
        "pDmaBufferPrivateData": 32, "DmaBufferPrivateDataSize": 40, "MultipassOffset": 44, "MonitoredFenceGpuVa": 48,
        "MonitoredFenceValue": 56, "MonitoredFenceCpuVa": 64, "hHwQueue": 72}
    assert size("DXGKARG_SIGNALMONITOREDFENCE", arch="x86") == 56


# -- monitored-fence flags (d3dukmdt) ----------------------------------------------------------


def test_sync_object_flags_in_the_order_of_the_spec():
    assert masks("D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS") == {
        "Shared": 0x1, "NtSecuritySharing": 0x2, "CrossAdapter": 0x4, "TopOfPipeline": 0x8, "NoSignal": 0x10,
        "NoWait": 0x20, "NoSignalMaxValueOnTdr": 0x40, "NoGPUAccess": 0x80, "SignalByKmd": 0x100, "Unused": 0x200,
        "UnwaitCpuWaitersOnlyOnDestroy": 0x400, "Reserved": 0x7FFFF800, "Reserved0": 0x80000000,
    }
    assert masks("D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS", "win7") == {"Shared": 0x1, "Reserved": 0xFFFFFFFE}
    assert masks("D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS", "wddm2_0")["Reserved"] == 0x7FFFFF00


def test_signal_flags():
    assert masks("D3DDDICB_SIGNALFLAGS") == {
        "SignalAtSubmission": 0x1, "EnqueueCpuEvent": 0x2, "AllowFenceRewind": 0x4, "Reserved": 0x7FFFFFF8,
        "DXGK_SIGNAL_FLAG_INTERNAL0": 0x80000000}
    assert masks("D3DDDICB_SIGNALFLAGS", "vista") == {"SignalAtSubmission": 0x1, "Reserved": 0xFFFFFFFE}
    rec = registry.RECORDS["D3DDDICB_SIGNALFLAGS"]
    text = {f.path: f.text for f in codec.decode(rec, codec.to_bytes(codec.new(rec, Value=0x5)))}["Value"]
    assert text == "5"


def test_the_reference_driver_and_the_os_implement_the_declared_interfaces():
    """Every entry point a protocol of wddmsim.ddi.interface declares exists on the reference driver
    with the DDI's parameter names, and every callback on the interface the OS hands the driver."""
    import inspect

    from wddmsim.ddi import interface
    from wddmsim.dxgkrnl.callbacks import DxgkInterface
    from wddmsim.kmd import ReferenceDriver

    def methods(proto):
        return {n: f for n, f in vars(proto).items() if n.startswith(("DxgkDdi", "DxgkCb", "Mm")) and callable(f)}

    for proto in (interface.Miniport, interface.PagingMiniport, interface.GpuVaMiniport, interface.HwSchMiniport,
                  interface.NativeFenceMiniport, interface.FlipQueueMiniport):
        for name, fn in methods(proto).items():
            mine = getattr(ReferenceDriver, name)
            assert list(inspect.signature(mine).parameters) == list(inspect.signature(fn).parameters), name
    for name, fn in methods(interface.DxgkrnlInterface).items():
        mine = getattr(DxgkInterface, name)
        assert len(inspect.signature(mine).parameters) == len(inspect.signature(fn).parameters), name


def test_native_fence_arguments_at_wddm3_1_and_later():
    """DXGKARG_CREATENATIVEFENCE: the 64 bytes of private data sit inside the structure, after the
    two system-process GPU addresses; the update of monitored values carries three arrays by pointer."""
    assert offsets("DXGKARG_CREATENATIVEFENCE")["pPrivateDriverData"] == 32
    assert offsets("DXGKARG_CREATENATIVEFENCE", arch="x86")["pPrivateDriverData"] == 24
    assert (size("DXGKARG_CREATENATIVEFENCE"), size("DXGKARG_CREATENATIVEFENCE", arch="x86")) == (136, 128)
    upd = offsets("DXGKARG_UPDATEMONITOREDVALUES")
    assert (upd["NativeFenceArray"], upd["UpdatedValueArray"], upd["MonitoredValueKernelCpuVa"], upd["NumFences"]) \
        == (0, 8, 16, 24)
    assert (size("DXGKARG_UPDATEMONITOREDVALUES"), size("DXGKARG_UPDATEMONITOREDVALUES", arch="x86")) == (64, 48)
    assert size("DXGKARG_DESTROYNATIVEFENCE") == 48
    caps = offsets("DXGK_NATIVE_FENCE_CAPS")
    assert (caps["MapToGpuSystemProcess"], caps["MinimumAddress"], caps["MaximumAddress"]) == (4, 8, 16)
    assert (size("DXGK_NATIVE_FENCE_CAPS"), size("DXGK_NATIVE_FENCE_CAPS", arch="x86")) == (56, 56)
    assert masks("DXGK_DESTROYNATIVEFENCE_FLAGS") == {"Reserved": 0xFFFFFFFF}
    assert masks("DXGK_UPDATECURRENTVALUESFROMCPU_FLAGS") == {
        "AlwaysSignaled": 0x1, "NotificationOnly": 0x2, "Reserved": 0xFFFFFFFC}
    assert offsets("DXGKARG_UPDATECURRENTVALUESFROMCPU", arch="x86")["CurrentValueKernelCpuVa"] == 8
    assert not layout.exists(registry.RECORDS["DXGKARG_CREATENATIVEFENCE"], ddi_version("wddm3_0"))
