"""The DxgkDdiQueryAdapterInfo structures: DXGKARG_QUERYADAPTERINFO and its query types, the capability
block DXGK_DRIVERCAPS with the records it embeds, and the segment queries. tests/test_layouts.py
already holds every member of every one of them to the clang-14 tables at every version; these are
the numbers a driver engineer checks by hand, written out, and the places where the model has to say
the same thing as the tables.
Sources: Microsoft's DXGK_GPUENGINETOPOLOGY, DXGK_NODEMETADATA and DXGK_ENGINE_TYPE pages, and its
"TDR changes in Windows 8" page for what a node and an engine are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.ddi import codec, layout, registry
from wddmsim.ddi.enums import QUERYADAPTERINFOTYPE_SINCE, DXGK_QUERYADAPTERINFOTYPE
from wddmsim.ddi.versions import DXGK_WDDMVERSION, VERSIONS, ddi_version

TABLES = json.loads((Path(__file__).parent / "data" / "msvc_layouts.json").read_text())
runner = CliRunner()

NEW_RECORDS = {
    # name: first DDI version
    "DXGKARG_QUERYADAPTERINFO": "vista",
    "DXGK_QUERYADAPTERINFOFLAGS": "wddm2_2",
    "DXGK_DRIVERCAPS": "vista",
    "DXGK_POINTERFLAGS": "vista",
    "DXGK_GAMMARAMPCAPS": "vista",
    "DXGK_COLORTRANSFORMCAPS": "wddm2_2",
    "DXGK_PRESENTATIONCAPS": "vista",
    "DXGK_FLIPCAPS": "vista",
    "DXGK_VIDMMCAPS": "vista",
    "DXGK_VIRTUALADDRESSCAPS_DEPRECATED": "win7",
    "DXGK_DMABUFFERCAPS_DEPRECATED": "win7",
    "D3DKMDT_PREEMPTION_CAPS": "win8",
    "DXGK_HWQUEUEDFLIP_CAPS": "wddm2_9",
    "DXGK_QUERYSEGMENTIN": "vista",
    "DXGK_QUERYSEGMENTOUT": "vista",
    "DXGK_SEGMENTDESCRIPTOR3": "win8",
    "DXGK_QUERYSEGMENTOUT3": "win8",
}
NEW_SCALARS = ("DXGK_QUERYADAPTERINFOTYPE", "DXGK_WDDMVERSION", "D3DKMDT_GRAPHICS_PREEMPTION_GRANULARITY",
               "D3DKMDT_COMPUTE_PREEMPTION_GRANULARITY")


def table(name, arch, version):
    """The compiler's entry for ``name`` at ``version``, in the form of :func:`layout.layout_table`."""
    entry = next(e for e in TABLES["layouts"][arch][name] if version in e["versions"])
    return {k: v for k, v in entry.items() if k != "versions"}


def model(name, arch, version):
    return layout.layout_table(registry.RECORDS[name], arch, version)


# -- registration ----------------------------------------------------------------------------------


def test_every_new_type_is_registered_with_a_source_and_docs():
    for name, since in NEW_RECORDS.items():
        rec = registry.RECORDS[name]
        assert rec.since == (None if since == "vista" else since), name
        assert rec.source.startswith("[D:") and rec.doc, name
    for name in NEW_SCALARS:
        assert registry.lookup(name).name == name
        assert name in TABLES["layouts"]["x64"] and name in TABLES["layouts"]["x86"]


@pytest.mark.parametrize("name", sorted(NEW_RECORDS))
def test_structure_exists_from_its_version_in_model_and_tables(name):
    first = ddi_version(NEW_RECORDS[name])
    rec = registry.RECORDS[name]
    expected = [v.name for v in VERSIONS if v.value >= first.value]
    assert [v.name for v in VERSIONS if layout.exists(rec, v)] == expected
    for arch in layout.ARCHES:
        assert [v for e in TABLES["layouts"][arch][name] for v in e["versions"]] == expected


# -- DXGK_DRIVERCAPS: the sizes and offsets a driver engineer checks --------------------------------

SIZES = {  # (version, arch): sizeof(DXGK_DRIVERCAPS)
    ("vista", "x64"): 336, ("vista", "x86"): 328,
    ("win7", "x64"): 528, ("win7", "x86"): 520,
    ("win8", "x64"): 544, ("win8", "x86"): 536,
    ("wddm2_0", "x64"): 576, ("wddm2_0", "x86"): 568,
    ("wddm2_4", "x64"): 584, ("wddm2_4", "x86"): 576,
    ("wddm3_2", "x64"): 592, ("wddm3_2", "x86"): 584,
}


@pytest.mark.parametrize("version,arch", sorted(SIZES))
def test_drivercaps_size_is_the_compilers(version, arch):
    assert model("DXGK_DRIVERCAPS", arch, version)["size"] == table("DXGK_DRIVERCAPS", arch, version)["size"] \
        == SIZES[version, arch]
    assert table("DXGK_DRIVERCAPS", arch, version)["align"] == 8  # PHYSICAL_ADDRESS is 8-aligned on x86 too


OFFSETS = {  # member: {arch: offset}; the same from the version that added the member to WDDM 3.2
    "SchedulingCaps": {"x64": 64, "x86": 56},
    "MemoryManagementCaps": {"x64": 68, "x86": 60},
    "GpuEngineTopology": {"x64": 76, "x86": 68},
    "WDDMVersion": {"x64": 336, "x86": 328},
    "Reserved": {"x64": 340, "x86": 332},
    "Reserved1": {"x64": 368, "x86": 360},
    "PreemptionCaps": {"x64": 528, "x86": 520},
    "SupportNonVGA": {"x64": 536, "x86": 528},
    "SupportPerEngineTDR": {"x64": 538, "x86": 530},
    "HybridDiscrete": {"x64": 543, "x86": 535},
    "MaxOverlayPlanes": {"x64": 544, "x86": 536},
    "InternalGpuVirtualAddressRangeStart": {"x64": 552, "x86": 544},
    "MaxQueuedMultiPlaneOverlayFlipVSync": {"x64": 572, "x86": 564},
    "MiscCaps": {"x64": 576, "x86": 568},
    "MaxHwQueuedFlips": {"x64": 580, "x86": 572},
    "HwQueuedFlipCaps": {"x64": 584, "x86": 576},
}


@pytest.mark.parametrize("arch", layout.ARCHES)
@pytest.mark.parametrize("version", ["win7", "win8", "wddm1_3", "wddm2_0", "wddm2_4", "wddm2_9", "wddm3_2"])
def test_drivercaps_offsets_are_the_compilers(arch, version):
    mine, ref = model("DXGK_DRIVERCAPS", arch, version)["members"], table("DXGK_DRIVERCAPS", arch, version)["members"]
    for member, where in OFFSETS.items():
        if member not in ref:  # not yet added at this version
            assert member not in mine
            continue
        assert mine[member]["offset"] == ref[member]["offset"] == where[arch], member


def test_drivercaps_version_groups():
    members = {v.name: set(model("DXGK_DRIVERCAPS", "x64", v)["members"]) for v in VERSIONS}
    assert "WDDMVersion" not in members["vista_sp1"] and "WDDMVersion" in members["win7"]
    assert "PreemptionCaps" not in members["win7"] and "SupportPerEngineTDR" in members["win8"]
    assert "HybridDiscrete" not in members["win8"] and "MaxOverlayPlanes" in members["wddm1_3"]
    assert "HybridIntegrated" not in members["wddm1_3"] and "SupportSurpriseRemoval" in members["wddm2_0"]
    assert "HybridAcpiChainingRequired" not in members["wddm2_0"] and "HybridAcpiChainingRequired" in members["wddm2_1"]
    assert "ColorTransformCaps" not in members["wddm2_1"] and "ColorTransformCaps" in members["wddm2_2"]
    assert "MiscCaps" not in members["wddm2_3"] and "MiscCaps.Detachable" in members["wddm2_4"]
    assert "MaxHwQueuedFlips" not in members["wddm2_8"] and "HwQueuedFlipCaps" in members["wddm2_9"]
    # the GammaRampCaps / ColorTransformCaps union shares one UINT
    caps = model("DXGK_DRIVERCAPS", "x86", "wddm2_2")["members"]
    assert caps["GammaRampCaps"] == caps["ColorTransformCaps"] == {"offset": 40, "size": 4}


def masks(name, version, arch="x64", prefix=""):
    rec = registry.RECORDS[name]
    return {ml.path[len(prefix):]: ((1 << ml.bit_width) - 1) << ml.bit_offset
            for ml in layout.members(rec, arch, version) if ml.bit_width is not None and ml.path.startswith(prefix)}


def test_cap_bit_positions():
    assert masks("DXGK_PRESENTATIONCAPS", "vista") == {"NoScreenToScreenBlt": 1, "NoOverlapScreenBlt": 2,
                                                       "Reserved": 0xFFFFFFFC}
    win8 = masks("DXGK_PRESENTATIONCAPS", "win8")
    assert (win8["AlignmentShift"], win8["MaxTextureWidthShift"], win8["MaxTextureHeightShift"]) == (
        0x3C00, 0x1C000, 0xE0000)
    assert (win8["SupportAllBltRops"], win8["SupportSoftwareDeviceBitmaps"], win8["Reserved"]) == (
        0x100000, 0x10000000, 0x80000000)
    assert masks("DXGK_PRESENTATIONCAPS", "win7")["Reserved"] == 0xF0000000
    assert masks("DXGK_FLIPCAPS", "wddm2_0") == {
        "FlipOnVSyncWithNoWait": 0x1, "FlipOnVSyncMmIo": 0x2, "FlipInterval": 0x4, "FlipImmediateMmIo": 0x8,
        "FlipIndependent": 0x10, "DdiPresentForIFlip": 0x20, "FlipImmediateOnHSync": 0x40, "Reserved": 0xFFFFFF80}
    vidmm = masks("DXGK_VIDMMCAPS", "latest")
    assert (vidmm["CrossAdapterResource"], vidmm["GpuMmuSupported"], vidmm["ParavirtualizationSupported"]) == (
        0x10, 0x40, 0x400)
    assert (vidmm["CrossAdapterResourceTexture"], vidmm["CrossAdapterResourceScanout"], vidmm["Reserved"]) == (
        0x8000, 0x10000, 0xFFFC0000)
    assert masks("DXGK_VIDMMCAPS", "win7")["Reserved"] == 0xFFFFFFF8  # SectionBackedPrimary is Windows 8
    misc = masks("DXGK_DRIVERCAPS", "wddm3_2", prefix="MiscCaps.")
    assert (misc["Detachable"], misc["DisplayableSupport"], misc["Reserved"]) == (0x2, 0x40, 0xFFFFFE00)
    assert masks("DXGK_DRIVERCAPS", "wddm2_4", prefix="MiscCaps.")["Reserved"] == 0xFFFFFFFC
    for version in ("win8", "wddm2_4", "latest"):
        for arch in layout.ARCHES:
            assert model("DXGK_VIDMMCAPS", arch, version)["members"]["PagingNode"] == {"offset": 4, "size": 4}


def test_deprecated_records_keep_their_size():
    for arch in layout.ARCHES:
        assert model("DXGK_VIRTUALADDRESSCAPS_DEPRECATED", arch, "latest")["size"] == 28
        dma = model("DXGK_DMABUFFERCAPS_DEPRECATED", arch, "latest")
        assert dma["size"] == 160 and dma["members"]["PagingDmaBuffer"]["offset"] == 80
        assert dma["members"]["PagingDmaBuffer.Reserved"] == {"offset": 96, "size": 64}


# -- DXGKARG_QUERYADAPTERINFO and its query types -----------------------------------------------------


@pytest.mark.parametrize(
    "arch,version,size,offsets",
    [
        ("x64", "vista", 40, {"Type": 0, "pInputData": 8, "InputDataSize": 16, "pOutputData": 24, "OutputDataSize": 32}),
        ("x86", "vista", 20, {"Type": 0, "pInputData": 4, "InputDataSize": 8, "pOutputData": 12, "OutputDataSize": 16}),
        ("x64", "wddm2_2", 40, {"OutputDataSize": 32, "Flags": 36}),
        ("x86", "wddm2_2", 24, {"OutputDataSize": 16, "Flags": 20}),
        ("x64", "wddm2_4", 48, {"Flags": 36, "hKmdProcessHandle": 40}),
        ("x86", "wddm2_4", 28, {"Flags": 20, "hKmdProcessHandle": 24}),
    ],
)
def test_queryadapterinfo_layout(arch, version, size, offsets):
    mine = model("DXGKARG_QUERYADAPTERINFO", arch, version)
    assert mine == table("DXGKARG_QUERYADAPTERINFO", arch, version)
    assert mine["size"] == size
    assert {k: mine["members"][k]["offset"] for k in offsets} == offsets


def test_queryadapterinfo_flags():
    assert masks("DXGK_QUERYADAPTERINFOFLAGS", "wddm2_2") == {"VirtualMachineData": 0x1, "Reserved": 0xFFFFFFFE}
    assert masks("DXGK_QUERYADAPTERINFOFLAGS", "wddm2_4") == {"VirtualMachineData": 0x1, "SecureVirtualMachine": 0x2,
                                                              "Reserved": 0xFFFFFFFC}


def test_query_types_have_their_documented_values_and_versions():
    T = DXGK_QUERYADAPTERINFOTYPE
    assert (T.DXGKQAITYPE_UMDRIVERPRIVATE, T.DXGKQAITYPE_DRIVERCAPS, T.DXGKQAITYPE_QUERYSEGMENT) == (0, 1, 2)
    assert (T.DXGKQAITYPE_QUERYSEGMENT3, T.DXGKQAITYPE_QUERYSEGMENT4, T.DXGKQAITYPE_GPUMMUCAPS) == (5, 11, 13)
    assert (T.DXGKQAITYPE_WDDMDEVICECAPS, T.DXGKQAITYPE_SCANOUT_CAPS, T.DXGKQAITYPE_PHYSICAL_MEMORY_CAPS) == (29, 33, 34)
    assert (T.DXGKQAITYPE_NATIVE_FENCE_CAPS, T.DXGKQAITYPE_PAGINGPROCESSGPUVASIZE) == (37, 48)
    assert 32 not in {int(t) for t in T}
    assert set(QUERYADAPTERINFOTYPE_SINCE) == set(T)
    assert QUERYADAPTERINFOTYPE_SINCE[T.DXGKQAITYPE_QUERYSEGMENT3] == "win8"
    assert QUERYADAPTERINFOTYPE_SINCE[T.DXGKQAITYPE_GPUMMUCAPS] == "wddm2_0"
    assert QUERYADAPTERINFOTYPE_SINCE[T.DXGKQAITYPE_WDDMDEVICECAPS] == "wddm2_6"
    assert QUERYADAPTERINFOTYPE_SINCE[T.DXGKQAITYPE_IOMMU_CAPS] == "wddm2_9"
    # values were handed out in order: a later value never predates an earlier one
    order = [ddi_version(QUERYADAPTERINFOTYPE_SINCE[t]).value for t in sorted(T)]
    assert order == sorted(order)


# -- segment queries ---------------------------------------------------------------------------------


def test_segment_queries():
    for arch, ptr in (("x64", 8), ("x86", 4)):
        out = model("DXGK_QUERYSEGMENTOUT", arch, "vista")
        assert out == table("DXGK_QUERYSEGMENTOUT", arch, "vista")
        assert out["members"]["pSegmentDescriptor"] == {"offset": ptr, "size": ptr}
        assert out["members"]["PagingBufferPrivateDataSize"]["offset"] == 2 * ptr + 8
        assert model("DXGK_QUERYSEGMENTOUT3", arch, "win8")["members"] == out["members"]
        assert model("DXGK_QUERYSEGMENTIN", arch, "vista")["members"]["AgpFlags"]["offset"] == 16
    d3 = model("DXGK_SEGMENTDESCRIPTOR3", "x64", "latest")
    assert (d3["size"], d3["members"]["BaseAddress"]["offset"], d3["members"]["SystemMemoryEndAddress"]["offset"]) == (
        72, 8, 56)
    assert model("DXGK_SEGMENTDESCRIPTOR3", "x86", "win8")["size"] == 48


# -- reading a capability block as a debugger would ---------------------------------------------------


def test_codec_names_the_wddm_version_and_the_caps_bits():
    rec = registry.RECORDS["DXGK_DRIVERCAPS"]
    obj = codec.new(rec, "x64", "wddm2_0", WDDMVersion=int(DXGK_WDDMVERSION.DXGKDDI_WDDMv2), SchedulingCaps=0x5,
                    MaxQueuedFlipOnVSync=1)
    obj.MemoryManagementCaps.Value = 0x61  # OutOfOrderLock | VirtualAddressingSupported | GpuMmuSupported
    obj.PreemptionCaps.GraphicsPreemptionGranularity = 200
    fields = {f.path: f for f in codec.decode(rec, codec.to_bytes(obj), "x64", "wddm2_0")}
    assert "DXGKDDI_WDDMv2" in fields["WDDMVersion"].text
    assert "MultiEngineAware" in fields["SchedulingCaps"].text and "PreemptionAware" in fields["SchedulingCaps"].text
    assert fields["MemoryManagementCaps.GpuMmuSupported"].value == 1
    assert fields["MemoryManagementCaps.IoMmuSupported"].value == 0
    assert "PRIMITIVE_BOUNDARY" in fields["PreemptionCaps.GraphicsPreemptionGranularity"].text


# -- the command line ---------------------------------------------------------------------------------


def test_layout_command_prints_every_drivercaps_member_at_wddm2_0():
    rec = registry.RECORDS["DXGK_DRIVERCAPS"]
    expected = [(ml.offset, ml.path.rsplit(".", 1)[-1]) for ml in layout.members(rec, "x64", "wddm2_0")]
    r = runner.invoke(main, ["layout", "DXGK_DRIVERCAPS", "--ddi-version", "wddm2_0"])
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].startswith("DXGK_DRIVERCAPS  x64  DDI wddm2_0") and "size 576" in lines[0]
    rows = [(int(line.split()[0], 16), line.split()[1]) for line in lines if line.startswith("+0x")]
    assert rows == expected
    assert len(rows) == len(table("DXGK_DRIVERCAPS", "x64", "wddm2_0")["members"])
    names = {name for _, name in rows}
    assert {"WDDMVersion", "PreemptionCaps", "SupportPerEngineTDR", "SupportSurpriseRemoval", "HybridIntegrated",
            "InternalGpuVirtualAddressRangeEnd", "PresentDmaBuffer", "IdealGPUPageSize"} <= names
    assert "MiscCaps" not in names and "ColorTransformCaps" not in names  # WDDM 2.4 and 2.2 additions

    j = runner.invoke(main, ["layout", "DXGK_DRIVERCAPS", "--ddi-version", "wddm2_0", "--json"])
    assert j.exit_code == 0
    members = json.loads(j.stdout)["members"]  # the compiler-table form, plus each member's C type
    assert {path: {k: v for k, v in m.items() if k != "type"} for path, m in members.items()} == table(
        "DXGK_DRIVERCAPS", "x64", "wddm2_0")["members"]
