"""The catalogue's evidence for rules no other test links (``@pytest.mark.rule``): drivers that break
the interrupt rules 38, 42, 44 and 45 in a run, and, for the construction rules, the guarantee shown
on what the OS really built while running every example scenario.

For a registered construction rule the test runs the rule's own function on every structure the
OS handed the driver, with the facts it had, and finds nothing; then it changes one member of one
of those structures and the same function must name the rule, so the check is not vacuous."""

from __future__ import annotations

import ctypes
import dataclasses
from pathlib import Path

import pytest

from wddmsim.ddi.bugcheck import BugCheckCode
from wddmsim.ddi.enums import DXGK_BUILDPAGINGBUFFER_OPERATION as OP
from wddmsim.ddi.rules import RULES
from wddmsim.dxgkrnl.verifier import Verifier
from wddmsim.kmd import ReferenceDriver
from wddmsim.scenario import load_scenario
from wddmsim.runner.system import System

from example_files import EXAMPLES, expected_bugcheck  # noqa: E402
KEEP = 400  # structures kept per example and structure type

# Entry points of the scheduler's level-one synchronization class (rule 3).
LEVEL_ONE = {"DxgkDdiSubmitCommand", "DxgkDdiPatch", "DxgkDdiBuildPagingBuffer", "DxgkDdiPreemptCommand",
             "DxgkDdiQueryDependentEngineGroup", "DxgkDdiQueryEngineStatus", "DxgkDdiResetEngine"}


class Spy(ReferenceDriver):
    """The reference driver, with every entry point recorded: (name, the entry points running
    when it was entered, copies of its structure arguments at entry)."""

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.calls = []
        self.stack = []

    def __getattribute__(self, name):
        attr = super().__getattribute__(name)
        if not name.startswith("DxgkDdi") or not callable(attr):
            return attr
        calls = super().__getattribute__("calls")
        stack = super().__getattribute__("stack")

        def spied(*params):
            copies = [type(p).from_buffer_copy(bytes(p)) for p in params
                      if isinstance(p, (ctypes.Structure, ctypes.Union))]
            calls.append((name, tuple(stack), copies))
            stack.append(name)
            try:
                return attr(*params)
            finally:
                stack.pop()

        return spied


@pytest.fixture(scope="module")
def runs():
    """Every example run with the spy driver: {example: (system, judged)}, where judged lists
    (struct name, copy of the structure, copy of the facts) the verifier was asked about."""
    out = {}
    for path in EXAMPLES:
        judged = []
        seen: dict[str, int] = {}
        orig = Verifier.find

        def find(self, struct_name, obj, facts, judged=judged, seen=seen, orig=orig):
            if seen.get(struct_name, 0) < KEEP:
                seen[struct_name] = seen.get(struct_name, 0) + 1
                judged.append((struct_name, type(obj).from_buffer_copy(bytes(obj)), dataclasses.replace(facts)))
            return orig(self, struct_name, obj, facts)

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(Verifier, "find", find)
            system = System(load_scenario(path), driver=Spy)
            result = system.run()
        code = expected_bugcheck(path)
        assert (result.bugcheck is None if code is None else result.bugcheck.bugcheck.code == code), \
            (path, result.bugcheck)
        out[Path(path).stem] = (system, judged)
    return out


def _structs(runs, number):
    names = set(RULES[number].structs)
    return [(s, obj, facts) for _, judged in runs.values() for s, obj, facts in judged if s in names]


def _calls(runs, name):
    return [c for system, _ in runs.values() for c in system.driver.calls if c[0] == name]


# -- registered construction rules: judged on what the OS built, then on one changed copy -------------------------
def _set(path, value):
    def mutate(obj):
        *head, last = path.split(".")
        target = obj
        for part in head:
            target = getattr(target, part)
        setattr(target, last, value(getattr(target, last)) if callable(value) else value)
    return mutate


def _both(*mutations):
    def mutate(obj):
        for m in mutations:
            m(obj)
    return mutate


def _not_paging(obj, facts):
    return not obj.Flags.Paging and not getattr(obj.Flags, "ContextSwitch", 0)


CASES = {
    # rule: (which of the OS's structures the rule speaks about, the change that breaks it)
    4: (lambda o, f: not o.Flags.Paging, _set("DmaBufferPrivateDataSubmissionStartOffset", 8)),
    6: (lambda o, f: True, _set("DmaBufferPrivateDataSubmissionEndOffset", lambda v: 0xFFFFFFF0)),
    9: (lambda o, f: o.Flags.Flip, _set("FlipInterval", 5)),
    10: (lambda o, f: True, _set("Flags.Value", lambda v: v | 0x80000000)),
    15: (_not_paging, _both(_set("hDevice", 0), _set("hContext", 0))),
    16: (lambda o, f: f.dma_buffer_segment_set is not None, _set("DmaBufferSegmentId", 1)),
    18: (lambda o, f: True, _set("DmaBufferVirtualAddress", 0x1000)),
    22: (lambda o, f: True, _set("pDmaBuffer", lambda v: (v or 0) + 0x10)),
    29: (lambda o, f: True, _set("PatchLocationListSubmissionLength", lambda v: 0xFFFF)),
    31: (lambda o, f: True, _set("Flags.Value", lambda v: v | 0x80000000)),
    59: (lambda o, f: True, _set("Flags.Value", 1)),
    122: (lambda o, f: True, _both(_set("priorityBand", 3), _set("realtimeBandPriorityLevel", 32))),
    123: (lambda o, f: True, _set("inProcessPriority", 8)),
    124: (lambda o, f: True, _set("targetNormalBandPercentage", 51)),
    126: (lambda o, f: f.has_inc_base_priority is False, _set("priorityBand", 2)),
}


@pytest.mark.parametrize("number", [pytest.param(n, marks=pytest.mark.rule(n)) for n in CASES])
def test_a_registered_construction_rule_holds_on_everything_the_os_built(runs, number):
    applies, mutate = CASES[number]
    check = RULES[number].check
    built = [(s, obj, facts) for s, obj, facts in _structs(runs, number) if applies(obj, facts)]
    assert built, f"no example built a structure rule {number} speaks about"
    assert [v for _, obj, facts in built for v in check(obj, facts)] == []
    _, obj, facts = built[0]
    broken = type(obj).from_buffer_copy(bytes(obj))
    mutate(broken)
    found = check(broken, dataclasses.replace(facts))
    assert found and {v.rule for v in found} == {number}


@pytest.mark.rule(26, 27)
def test_the_os_never_patches_a_paging_buffer(runs):
    paging = [obj for s, obj, _ in _structs(runs, 11) if s == "DXGKARG_SUBMITCOMMAND" and obj.Flags.Paging]
    assert len(paging) > 0
    patches = [c for c in _calls(runs, "DxgkDdiPatch")]
    assert len(patches) > 0 and [c for c in patches if c[2][0].Flags.Paging] == []


@pytest.mark.rule(7, 8)
def test_patch_and_submit_of_one_packet_carry_the_same_offsets_and_fence(runs):
    pairs = 0
    for system, _ in runs.values():
        patched = {}
        for name, _, args in system.driver.calls:
            a = args[-1] if args else None
            if name == "DxgkDdiPatch":
                patched[a.SubmissionFenceId] = a
            elif name == "DxgkDdiSubmitCommand" and a.SubmissionFenceId in patched:
                p = patched.pop(a.SubmissionFenceId)
                assert (p.DmaBufferSubmissionStartOffset, p.DmaBufferSubmissionEndOffset,
                        p.DmaBufferPrivateDataSubmissionStartOffset, p.DmaBufferPrivateDataSubmissionEndOffset) == (
                    a.DmaBufferSubmissionStartOffset, a.DmaBufferSubmissionEndOffset,
                    a.DmaBufferPrivateDataSubmissionStartOffset, a.DmaBufferPrivateDataSubmissionEndOffset)
                pairs += 1
        assert patched == {}  # every patched packet was submitted under the patch's fence id
    assert pairs > 100


@pytest.mark.rule(3, 93, 109)
def test_no_entry_point_of_the_level_one_class_or_the_reset_overlaps_another(runs):
    level_one = hwq = 0
    for system, _ in runs.values():
        for name, running, _ in system.driver.calls:
            if name in LEVEL_ONE:
                level_one += 1
                assert not LEVEL_ONE & set(running), (name, running)
            if name == "DxgkDdiSubmitCommandToHwQueue":
                hwq += 1
                assert name not in running
    assert level_one > 1000 and hwq > 10


@pytest.mark.rule(109)
def test_nothing_but_the_isr_and_the_dpc_runs_inside_reset_from_timeout():
    system = System(load_scenario(str(Path(EXAMPLES[0]).with_name("tdr.toml"))), driver=Spy,
                    settings={"per_engine_reset": False})
    assert system.run().bugcheck is None
    calls = system.driver.calls
    assert [c for c in calls if c[0] == "DxgkDdiResetFromTimeout"]
    inside = [name for name, running, _ in calls if "DxgkDdiResetFromTimeout" in running]
    assert set(inside) <= {"DxgkDdiInterruptRoutine", "DxgkDdiDpcRoutine"}


@pytest.mark.rule(77, 78)
def test_contexts_ask_for_one_engine_and_never_for_a_system_context(runs):
    created = [c[2][0] for c in _calls(runs, "DxgkDdiCreateContext")]
    assert len(created) > 10
    assert {a.EngineAffinity for a in created} == {1}
    assert {a.Flags.SystemContext for a in created} == {0}


@pytest.mark.rule(89)
def test_presents_never_ask_for_color_fill_or_color_keys(runs):
    flags = [c[2][0].Flags for c in _calls(runs, "DxgkDdiPresent")]
    assert len(flags) > 10
    assert [(f.ColorFill, f.SrcColorKey, f.DstColorKey) for f in flags if f.ColorFill or f.SrcColorKey or f.DstColorKey] == []




@pytest.mark.rule(71, 73)
def test_paging_transfers_are_single_pieces_and_fills_target_memory_segments(runs):
    system, _ = runs["paging"]
    kinds = {i: h.kind for i, h in system.adapter.vidsch.vidmm.heaps.items()}
    assert set(kinds.values()) == {"memory", "aperture"}
    ops = [c[2][0] for c in system.driver.calls if c[0] == "DxgkDdiBuildPagingBuffer"]
    transfers = [a.Transfer for a in ops if a.Operation == OP.DXGK_OPERATION_TRANSFER]
    fills = [a.Fill for a in ops if a.Operation == OP.DXGK_OPERATION_FILL]
    assert len(transfers) > 5 and len(fills) > 5
    # A transfer starts and ends in one call: none is pending when the next one starts.
    assert {(t.Flags.TransferStart, t.Flags.TransferEnd) for t in transfers} == {(1, 1)}
    assert {kinds[f.Destination.SegmentId] for f in fills} == {"memory"}


@pytest.mark.rule(17)
def test_a_context_whose_dma_buffers_would_live_in_a_segment_is_refused():
    class SegmentDmaBuffers(ReferenceDriver):
        def DxgkDdiCreateContext(self, hDevice, pCreateContext):
            status = super().DxgkDdiCreateContext(hDevice, pCreateContext)
            pCreateContext.ContextInfo.DmaBufferSegmentSet = 0b11  # every segment, the memory one too
            return status

    from wddmsim.ddi.ntstatus import NTSTATUS
    from wddmsim.dxgkrnl.errors import ApiError

    with pytest.raises(ApiError) as err:
        System(load_scenario(EXAMPLES[0]), driver=SegmentDmaBuffers).run()
    assert err.value.status == int(NTSTATUS.STATUS_NOT_SUPPORTED) and "DMA buffers" in str(err.value)


# -- runtime: drivers that break the interrupt rules ---------------------------------------------------------------
def _run(path, driver):
    return System(load_scenario(str(Path(__file__).parent.parent / "examples" / path)), driver=driver).run()


@pytest.mark.rule(38)
def test_notifying_an_interrupt_from_the_dpc_breaks_rule_38():
    class NotifiesFromDpc(ReferenceDriver):
        def DxgkDdiDpcRoutine(self, MiniportDeviceContext):
            node = self.nodes[0]
            self.dxgk.DxgkCbNotifyInterrupt(self.dxgk.DeviceHandle, node.interrupt_data)
            return super().DxgkDdiDpcRoutine(MiniportDeviceContext)

    r = _run("deep_queue.toml", NotifiesFromDpc)
    assert (r.bugcheck.bugcheck.code, r.bugcheck.bugcheck.p1, r.bugcheck.rule) == (
        BugCheckCode.DRIVER_VERIFIER_DETECTED_VIOLATION, 38, 38)


@pytest.mark.rule(42)
def test_a_vsync_reported_before_a_completion_in_one_isr_pass_breaks_rule_42():
    class VsyncFirst(ReferenceDriver):
        def DxgkDdiInterruptRoutine(self, MiniportDeviceContext, MessageNumber):
            status = self.hw.irq_status()
            if status & ((1 << len(self.nodes)) - 1):  # a node's fence moved: report a vsync first
                data = self._vsync_data
                data.InterruptType = 3  # DXGK_INTERRUPT_CRTC_VSYNC
                data.CrtcVsync.VidPnTargetId = 0
                data.CrtcVsync.PhysicalAddress.QuadPart = self.hw.scanout(0) or 0x1000
                data.Flags.Value = 0
                self.dxgk.DxgkCbNotifyInterrupt(self.dxgk.DeviceHandle, data)
            return super().DxgkDdiInterruptRoutine(MiniportDeviceContext, MessageNumber)

    r = _run("flips.toml", VsyncFirst)
    assert (r.bugcheck.bugcheck.p1, r.bugcheck.rule, r.bugcheck.rule_name) == (42, 42, "DmaBeforeCrtc")


@pytest.mark.rule(44)
def test_a_driver_that_raises_dma_faulted_breaks_rule_44():
    class RaisesDmaFaulted(ReferenceDriver):
        def _report_completed(self, node):
            node.interrupt_data.InterruptType = 4  # DXGK_INTERRUPT_DMA_FAULTED, the system's own
            self.dxgk.DxgkCbNotifyInterrupt(self.dxgk.DeviceHandle, node.interrupt_data)
            return super()._report_completed(node)

    r = _run("deep_queue.toml", RaisesDmaFaulted)
    assert (r.bugcheck.bugcheck.p1, r.bugcheck.rule) == (44, 44)


@pytest.mark.rule(45)
def test_a_vsync_without_a_scan_out_address_breaks_rule_45():
    class NullVsyncAddress(ReferenceDriver):
        def _report_vsync(self, source):
            data = self._vsync_data
            data.InterruptType = 3  # DXGK_INTERRUPT_CRTC_VSYNC
            data.CrtcVsync.VidPnTargetId = source
            data.CrtcVsync.PhysicalAddress.QuadPart = 0
            data.CrtcVsync.PhysicalAdapterMask = 0
            data.Flags.Value = 0
            self.dxgk.DxgkCbNotifyInterrupt(self.dxgk.DeviceHandle, data)

    r = _run("flips.toml", NullVsyncAddress)
    assert (r.bugcheck.bugcheck.p1, r.bugcheck.rule) == (45, 45)


@pytest.mark.rule(72)
def test_allocation_is_idle_only_for_allocations_no_packet_on_the_gpu_uses(monkeypatch):
    """VidMm sets AllocationIsIdle on every transfer and discard it builds: at each of those calls
    no submitted, unretired packet uses the allocation (its in-use count is 0)."""
    from wddmsim.dxgkrnl.vidmm import VidMm

    seen = []
    build = VidMm.build

    def judged(self, a):
        if a.Operation == OP.DXGK_OPERATION_TRANSFER and a.Transfer.Flags.AllocationIsIdle:
            alloc = self.adapter.handles.get(a.Transfer.hAllocation)
            seen.append((a.Transfer.Source.SegmentId != 0, alloc.in_use))
        return build(self, a)

    monkeypatch.setattr(VidMm, "build", judged)
    result = System(load_scenario(Path(__file__).parent.parent / "examples" / "paging.toml")).run()
    assert result.bugcheck is None
    evictions = [u for out, u in seen if out]
    assert len(evictions) > 5 and set(u for _, u in seen) == {0}
