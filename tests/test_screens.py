"""The verifier's screens never clear a structure that a rule would judge broken.

For every screened structure, at every DDI version and both architectures, generated structures
(each 32-bit word drawn from values that sit on the rules' edges) and generated facts: whenever
the screen says "clean", the full check must find nothing. The screen must also clear the
ordinary cases, or it buys nothing.
"""

from __future__ import annotations

import ctypes

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wddmsim.ddi import layout
from wddmsim.ddi.registry import RECORDS
from wddmsim.ddi.rules import Facts, check
from wddmsim.ddi.rules.screens import SCREENS, screen_for
from wddmsim.ddi.versions import VERSIONS, ddi_version
from wddmsim.dxgkrnl.verifier import Verifier
from wddmsim.sim import Simulator

SUBMIT = "DXGKARG_SUBMITCOMMAND"
NOTIFY = "DXGKARGCB_NOTIFY_INTERRUPT_DATA"

CASES = [(name, arch, v) for name in SCREENS for arch in ("x64", "x86") for v in VERSIONS]

#: 32-bit words on the rules' edges: zero, flag bits one by one, small ordinals and sizes, big values.
WORDS = st.one_of(
    st.sampled_from([0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 63, 64, 65, 0x200, 0x1000, 0x80000000, 0xFFFFFFFF]),
    st.sampled_from([1 << b for b in range(32)]),
    st.integers(0, 0xFFFFFFFF),
)
MAYBE_INT = st.one_of(st.none(), st.sampled_from([0, 1, 2, 3, 4, 8, 63, 64, 65]))
MAYBE_BOOL = st.one_of(st.none(), st.booleans())
FACTS = st.builds(
    Facts,
    version=st.sampled_from(VERSIONS),
    multi_engine_aware=MAYBE_BOOL,
    node_count=MAYBE_INT,
    linked_adapter_count=st.one_of(st.none(), st.sampled_from([1, 1, 2, 3])),
    physical_adapter_count=st.one_of(st.none(), st.sampled_from([1, 2])),
    dma_buffer_segment_set=st.one_of(st.none(), st.sampled_from([0, 1, 2, 6])),
    vidpn_source_count=MAYBE_INT,
    flip_interval_supported=MAYBE_BOOL,
    running_context_paging=MAYBE_BOOL,
    previously_preempted=MAYBE_BOOL,
    status=st.one_of(st.none(), st.sampled_from([0, 0, 0xC000000D, 0xC0000001, 0x103, -1073741811])),
    fence_signaled=MAYBE_BOOL,
    work_executed=MAYBE_BOOL,
    last_submitted_fence=MAYBE_INT,
    last_completed_fence=MAYBE_INT,
    submitted_fences=st.one_of(st.none(), st.frozensets(st.integers(0, 8), max_size=4)),
    outstanding_preemption_fences=st.one_of(st.none(), st.frozensets(st.integers(0, 8), max_size=3)),
    last_progress_fence_id=MAYBE_INT,
    queue_busy=MAYBE_BOOL,
    buffer_origin=st.one_of(st.none(), st.sampled_from(["umd", "present"])),
    private_data_reads_after_return=st.one_of(st.none(), st.sampled_from([0, 1, 2])),
    max_in_flight=MAYBE_INT,
    in_flight=MAYBE_INT,
    scheduling_properties_set=MAYBE_BOOL,
)


def _class(name, arch, version):
    try:
        return layout.ctype(RECORDS[name], arch, version)
    except Exception:
        return None


@pytest.mark.parametrize("name,arch,version", CASES, ids=[f"{n}-{a}-{v.name}" for n, a, v in CASES])
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_a_cleared_structure_breaks_no_rule(name, arch, version, data):
    cls = _class(name, arch, version)
    if cls is None:
        return
    size = ctypes.sizeof(cls)
    n = (size + 3) // 4
    if data.draw(st.booleans()):
        # A clean structure with a few words changed: the screen's edges.
        raw = bytearray(bytes(_clean(name, cls)) + bytes(4))
        for _ in range(data.draw(st.integers(0, 3))):
            i = data.draw(st.integers(0, n - 1))
            raw[4 * i:4 * i + 4] = data.draw(WORDS).to_bytes(4, "little")
        raw = bytes(raw[:size])
    else:
        words = data.draw(st.lists(WORDS, min_size=n, max_size=n))
        raw = b"".join(w.to_bytes(4, "little") for w in words)[:size]
    obj = cls.from_buffer_copy(raw)
    facts = data.draw(FACTS)
    screen = screen_for(name, cls)
    assert screen is not None
    if screen(obj, facts):
        assert check(name, obj, facts) == []


def _submit(cls, **over):
    a = cls()
    a.hContext = 0x1010
    a.DmaBufferPhysicalAddress.QuadPart = 0x10000000
    a.DmaBufferSize = 65536
    a.DmaBufferSubmissionEndOffset = 12
    a.pDmaBufferPrivateData = 0x10010000
    a.DmaBufferPrivateDataSize = 32
    a.DmaBufferPrivateDataSubmissionEndOffset = 32
    a.SubmissionFenceId = 9
    for k, v in over.items():
        if k == "Flags":
            a.Flags.Value = v
        else:
            setattr(a, k, v)
    return a


def _clean(name, cls):
    if name == SUBMIT:
        return _submit(cls)
    if name == "DXGKARG_SUBMITCOMMANDVIRTUAL":
        a = cls()
        a.hContext = 0x1010
        a.DmaBufferVirtualAddress = 0x40_0000_0000
        a.DmaBufferSize = 12
        a.SubmissionFenceId = 9
        return a
    if name == "DXGKARG_SUBMITCOMMANDTOHWQUEUE":
        a = cls()
        a.hHwQueue = 0x2020
        a.HwQueueProgressFenceId = 5
        a.DmaBufferVirtualAddress = 0x40_0000_0000
        a.DmaBufferSize = 32
        if hasattr(a, "HwQueueProgressFenceGpuVa"):
            a.HwQueueProgressFenceGpuVa = 0x40_0040_0008
            a.HwQueueProgressFenceCpuVa = 0x1000_2008
        return a
    d = cls()
    d.InterruptType = 1
    d.DmaCompleted.SubmissionFenceId = 3
    return d


OS_FACTS = Facts(version=ddi_version("wddm2_0"), multi_engine_aware=True, node_count=3, dma_buffer_segment_set=0,
                 status=0, previously_preempted=False)


@pytest.mark.parametrize("version", ["vista", "win7", "wddm2_0", "wddm3_2"])
def test_ordinary_submissions_are_cleared(version):
    cls = layout.ctype(RECORDS[SUBMIT], "x64", ddi_version(version))
    screen = screen_for(SUBMIT, cls)
    facts = Facts(**{**OS_FACTS.__dict__, "version": ddi_version(version)})
    assert screen(_submit(cls), facts)
    assert screen(_submit(cls, Flags=0x2), facts)  # Present


@pytest.mark.parametrize("over,facts_over", [
    ({"Flags": 0x10}, {}),                       # Flip: rules 9 and 88 need the full check
    ({"Flags": 0x8}, {}),                        # NullRendering: rule 14
    ({"hContext": 0}, {}),                       # rule 15
    ({"DmaBufferSubmissionEndOffset": 70000}, {}),  # rule 5
    ({"DmaBufferPrivateDataSubmissionStartOffset": 4}, {}),  # rule 4
    ({}, {"status": 0xC0000001}),                # rule 1
    ({}, {"previously_preempted": True}),        # rule 13
    ({"NodeOrdinal": 3}, {}),                    # rule 20
    ({"DmaBufferSegmentId": 1}, {}),             # rule 16
])
def test_submissions_the_screen_sends_to_the_full_check(over, facts_over):
    cls = layout.ctype(RECORDS[SUBMIT], "x64", ddi_version("wddm2_0"))
    facts = Facts(**{**OS_FACTS.__dict__, **facts_over})
    assert not screen_for(SUBMIT, cls)(_submit(cls, **over), facts)


def test_completed_interrupts_in_range_are_cleared_and_others_are_not():
    cls = layout.ctype(RECORDS[NOTIFY], "x64", ddi_version("wddm2_0"))
    screen = screen_for(NOTIFY, cls)
    d = cls()
    d.InterruptType = 1
    d.DmaCompleted.SubmissionFenceId = 5
    d.DmaCompleted.NodeOrdinal = 1
    facts = Facts(multi_engine_aware=True, node_count=2, last_submitted_fence=6, last_completed_fence=4)
    assert screen(d, facts)
    d.DmaCompleted.SubmissionFenceId = 7  # never submitted
    assert not screen(d, facts)
    assert [v.rule for v in check(NOTIFY, d, facts)] == [32]
    d.DmaCompleted.SubmissionFenceId = 3  # backwards
    assert not screen(d, facts)
    d.DmaCompleted.SubmissionFenceId = 5
    d.InterruptType = 2  # DMA_PREEMPTED goes to the full check
    assert not screen(d, facts)


def test_no_screen_when_the_registered_rules_differ(monkeypatch):
    covers, build = SCREENS[SUBMIT]
    monkeypatch.setitem(SCREENS, SUBMIT, (covers - {88}, build))
    cls = layout.ctype(RECORDS[SUBMIT], "x64", ddi_version("wddm2_0"))
    assert screen_for(SUBMIT, cls) is None
    assert screen_for("DXGKARG_PATCH", cls) is None


def test_verifier_counts_screened_and_full_checks():
    v = Verifier(Simulator(), "strict", "x64", ddi_version("wddm2_0"))
    cls = layout.ctype(RECORDS[SUBMIT], "x64", ddi_version("wddm2_0"))
    assert v.check(SUBMIT, _submit(cls), OS_FACTS) == []
    assert (v.screened, v.checked) == (1, 0)
    flip = _submit(cls, Flags=0x10, FlipInterval=1)
    assert v.check(SUBMIT, flip, OS_FACTS) == []
    assert (v.screened, v.checked) == (1, 1)
    off = Verifier(Simulator(), "off", "x64", ddi_version("wddm2_0"))
    assert off.find(SUBMIT, _submit(cls, hContext=0), OS_FACTS) == []
    assert (off.screened, off.checked) == (0, 0)


VIRTUAL = "DXGKARG_SUBMITCOMMANDVIRTUAL"
HWQUEUE = "DXGKARG_SUBMITCOMMANDTOHWQUEUE"


def test_ordinary_virtual_and_hardware_queue_submissions_are_cleared():
    v = ddi_version("wddm2_7")
    virt = layout.ctype(RECORDS[VIRTUAL], "x64", v)
    facts = Facts(**{**OS_FACTS.__dict__, "version": v})
    assert screen_for(VIRTUAL, virt)(_clean(VIRTUAL, virt), facts)
    hwq = layout.ctype(RECORDS[HWQUEUE], "x64", v)
    hw_facts = Facts(version=v, last_progress_fence_id=4, queue_busy=False, buffer_origin="umd", max_in_flight=2,
                     in_flight=1, scheduling_properties_set=True)
    assert screen_for(HWQUEUE, hwq)(_clean(HWQUEUE, hwq), hw_facts)


@pytest.mark.parametrize("name, change, facts_over, rule", [
    (VIRTUAL, {"Flags": 0x80}, {}, 13),                       # Resubmission without a preemption
    (VIRTUAL, {}, {"status": 0xC0000001}, 23),
    (HWQUEUE, {"HwQueueProgressFenceId": 4}, {}, 92),
    (HWQUEUE, {"Flags": 0x2}, {}, 94),                        # Present on a UMD buffer
    (HWQUEUE, {"HwQueueProgressFenceGpuVa": 0x40_0040_0004}, {}, 100),
    (HWQUEUE, {}, {"in_flight": 2}, 105),
    (HWQUEUE, {}, {"private_data_reads_after_return": 1}, 95),
])
def test_broken_wddm2_submissions_go_to_the_full_check(name, change, facts_over, rule):
    v = ddi_version("wddm2_7")
    cls = layout.ctype(RECORDS[name], "x64", v)
    base = OS_FACTS.__dict__ if name == VIRTUAL else dict(
        last_progress_fence_id=4, queue_busy=False, buffer_origin="umd", max_in_flight=2, in_flight=1,
        scheduling_properties_set=True)
    facts = Facts(**{**base, "version": v, **facts_over})
    obj = _clean(name, cls)
    for k, value in change.items():
        if k == "Flags":
            obj.Flags.Value = value
        else:
            setattr(obj, k, value)
    assert not screen_for(name, cls)(obj, facts)
    assert rule in [x.rule for x in check(name, obj, facts)]
