"""Bytes to fields and back: any bytes of the right size round-trip, values set survive, flags and
enumerations read by name, and the interrupt union shows the arm its tag selects."""

import ctypes

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wddmsim.ddi import codec, layout, registry
from wddmsim.ddi.enums import DXGK_INTERRUPT_TYPE
from wddmsim.ddi.schema import Array, Record

RECORDS = sorted(registry.RECORDS)
VERSIONS = ("vista", "win7", "win8", "wddm2_0", "wddm2_2", "wddm2_4", "latest")
CASES = [(n, a, v) for n in RECORDS for a in layout.ARCHES for v in VERSIONS if layout.exists(registry.RECORDS[n], v)]


@pytest.mark.parametrize("name,arch,version", CASES)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_any_bytes_round_trip(name, arch, version, data):
    rec = registry.RECORDS[name]
    size = ctypes.sizeof(layout.ctype(rec, arch, version))
    raw = data.draw(st.binary(min_size=size, max_size=size))
    assert codec.to_bytes(codec.from_bytes(rec, raw, arch, version)) == raw
    # decoding never fails and reads every member
    fields = codec.decode(rec, raw, arch, version, all_arms=True)
    assert [f.path for f in fields] == [ml.path for ml in layout.members(rec, arch, version)]


def _top_scalars(rec, arch, version):
    out = []
    for ml in layout.members(rec, arch, version):
        t = ml.type
        if "." in ml.path or ml.bit_width is not None or isinstance(t, Array):
            continue
        if isinstance(t, Record) and not (t.leaf or t.flags):
            continue
        out.append(ml)
    return out


def _range(ml, t):
    signed = getattr(getattr(t, "base", t), "signed", False) or type(t).__name__ == "EnumType" or (isinstance(t, Record) and t.leaf)
    bits = ml.size * 8
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


@pytest.mark.parametrize("name", ["DXGKARG_SUBMITCOMMAND", "DXGKARG_SUBMITCOMMANDTOHWQUEUE", "DXGKARG_PATCH",
                                  "DXGKARG_PREEMPTCOMMAND", "DXGKARG_CANCELCOMMAND", "DXGK_CONTEXTINFO",
                                  "DXGKARG_RESETENGINE", "DXGKARG_QUERYCURRENTFENCE", "DXGKARG_SUBMITCOMMANDVIRTUAL"])
@pytest.mark.parametrize("arch", layout.ARCHES)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_field_values_survive_encode_decode(name, arch, data):
    rec = registry.RECORDS[name]
    wanted = {}
    for ml in _top_scalars(rec, arch, "latest"):
        if ml.path == "hContext":  # shares its bytes with hDevice
            continue
        lo, hi = _range(ml, ml.type)
        wanted[ml.path] = data.draw(st.integers(lo, hi), label=ml.path)
    obj = codec.new(rec, arch, "latest", **wanted)
    got = codec.values(rec, codec.to_bytes(obj), arch, "latest")
    for path, value in wanted.items():
        key = f"{path}.Value" if isinstance(ml_type := next(m.type for m in layout.members(rec, arch, "latest") if m.path == path), Record) and ml_type.flags else path
        assert got[key] == value, path


def test_wrong_size_names_expected_and_got():
    rec = registry.RECORDS["DXGKARG_SUBMITCOMMAND"]
    with pytest.raises(codec.WrongSize) as e:
        codec.decode(rec, b"\0" * 95)
    assert (e.value.expected, e.value.got) == (96, 95)


def test_flags_read_by_bit_name():
    rec = registry.RECORDS["DXGKARG_SUBMITCOMMAND"]
    obj = codec.new(rec, Flags=0x41, FlipInterval=2)
    fields = {f.path: f for f in codec.decode(rec, codec.to_bytes(obj))}
    assert fields["Flags"].text == "0x00000041 (Paging|ContextSwitch)"
    assert fields["Flags.Paging"].value == 1 and fields["Flags.Present"].value == 0
    assert fields["FlipInterval"].text == "2 (D3DDDI_FLIPINTERVAL_TWO)"


def test_multi_bit_flag_shows_its_value():
    rec = registry.RECORDS["DXGK_VIDSCHCAPS"]
    obj = codec.new(rec, Value=0x1 | (5 << 7))
    fields = {f.path: f for f in codec.decode(rec, codec.to_bytes(obj))}
    assert fields["HwQueuePacketCap"].value == 5
    assert fields["HwQueuePacketCap"].text == "5 (0x5)"
    caps = {f.path: f.text for f in codec.decode(registry.RECORDS["DXGK_CONTEXTINFO"], bytes(32))}
    assert caps["Caps"] == "0x00000000 (none)"
    flags = {f.path: f.text for f in codec.decode(registry.RECORDS["DXGKARG_SUBMITCOMMANDTOHWQUEUE"], bytes(64))}
    assert flags["Flags"] == "0x00000000 (none)"


def test_interrupt_union_shows_the_selected_arm():
    rec = registry.RECORDS["DXGKARGCB_NOTIFY_INTERRUPT_DATA"]
    obj = codec.new(rec, InterruptType=DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_PREEMPTED)
    obj.DmaPreempted.PreemptionFenceId = 9
    obj.DmaPreempted.LastCompletedFenceId = 7
    fields = {f.path: f for f in codec.decode(rec, codec.to_bytes(obj))}
    assert fields["InterruptType"].text == "2 (DXGK_INTERRUPT_DMA_PREEMPTED)"
    assert fields["DmaPreempted.PreemptionFenceId"].value == 9
    assert fields["DmaPreempted.LastCompletedFenceId"].value == 7
    assert not any(p.startswith(("DmaCompleted", "CrtcVsync", "Reserved")) for p in fields)
    everything = {f.path for f in codec.decode(rec, codec.to_bytes(obj), all_arms=True)}
    assert "DmaCompleted.SubmissionFenceId" in everything


def test_ntstatus_and_page_fault_flags_by_name():
    rec = registry.RECORDS["DXGKARGCB_NOTIFY_INTERRUPT_DATA"]
    obj = codec.new(rec, InterruptType=DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_PAGE_FAULTED)
    obj.DmaPageFaulted.PageFaultFlags = 0x2 | 0x4
    obj.DmaPageFaulted.FaultErrorCode.GeneralErrorCode = 1
    fields = {f.path: f.text for f in codec.decode(rec, codec.to_bytes(obj))}
    assert fields["DmaPageFaulted.PageFaultFlags"] == "0x6 (DXGK_PAGE_FAULT_FENCE_INVALID|DXGK_PAGE_FAULT_ADAPTER_RESET_REQUIRED)"
    assert fields["DmaPageFaulted.FaultErrorCode.GeneralErrorCode"] == "1 (DXGK_GENERAL_ERROR_INVALID_INSTRUCTION)"
    faulted = codec.new(rec, InterruptType=DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_FAULTED)
    faulted.DmaFaulted.Status = -0x3FFFFFE9  # 0xC0000017
    assert {f.path: f.text for f in codec.decode(rec, codec.to_bytes(faulted))}["DmaFaulted.Status"] == "0xC0000017 (STATUS_NO_MEMORY)"


def test_physical_address_is_one_64_bit_value():
    rec = registry.RECORDS["DXGKARG_SUBMITCOMMAND"]
    obj = codec.new(rec, "x86", "win7", DmaBufferPhysicalAddress=0x1_2345_6000)
    assert obj.DmaBufferPhysicalAddress.LowPart == 0x2345_6000 and obj.DmaBufferPhysicalAddress.HighPart == 1
    assert codec.values(rec, codec.to_bytes(obj), "x86", "win7")["DmaBufferPhysicalAddress"] == 0x1_2345_6000


def test_64_bit_bitfields_of_the_miracast_chunk_id():
    rec = registry.RECORDS["DXGK_MIRACAST_CHUNK_ID"]
    obj = codec.new(rec, Value=(0xABC << 40) | 0x12_3456_789A)
    vals = codec.values(rec, codec.to_bytes(obj))
    assert (vals["FrameNumber"], vals["PartNumber"]) == (0x12_3456_789A, 0xABC)
