"""The hardware-scheduling and monitored-fence contract rules (100, 104, 105, 122-126): a well-formed
structure passes, each violation names the member, the value and what the rule requires, and rules
whose members or DDIs do not exist at a version are not judged there. Rule 127 is documented as not
checkable and is not registered. The rules are catalogued in docs/rules.md; the facts behind them
are on Microsoft's pages for the priority-band, context-scheduling, hardware-queue and
monitored-fence DDIs and its "Context monitoring" page."""

from __future__ import annotations

import pytest

from wddmsim.ddi import codec, layout, registry
from wddmsim.ddi.enums import DXGK_BUILDPAGINGBUFFER_OPERATION as OP
from wddmsim.ddi.enums import DXGK_SCHEDULING_PRIORITY_BAND as BAND
from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.ddi.rules import RULES, Facts, check, rules_for
from wddmsim.ddi.rules import hwsched

HWQUEUE = "DXGKARG_SUBMITCOMMANDTOHWQUEUE"
CREATEHWQUEUE = "DXGKARG_CREATEHWQUEUE"
SIGNALFENCE = "DXGKARG_SIGNALMONITOREDFENCE"
BUILD = "DXGKARG_BUILDPAGINGBUFFER"
SUSPEND = "DXGKARG_SUSPENDCONTEXT"
SCHEDPROPS = "DXGKARG_SETCONTEXTSCHEDULINGPROPERTIES"
BANDS = "DXGKARG_SETUPPRIORITYBANDS"

ARCHES = ("x64", "x86")
SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
PENDING = int(NTSTATUS.STATUS_PENDING)
UNSUCCESSFUL = int(NTSTATUS.STATUS_UNSUCCESSFUL)


def new(name, arch="x64", version="latest", **fields):
    return codec.new(registry.RECORDS[name], arch, version, **fields)


def messages(name, obj, facts=None, number=None):
    return [v.message for v in check(name, obj, facts) if number is None or v.rule == number]


def hw_submission(arch="x64", version="latest", **over):
    fields = dict(hHwQueue=0x2000, HwQueueProgressFenceId=12, DmaBufferVirtualAddress=0x1000000, DmaBufferSize=4096)
    if version in ("latest", "wddm2_4", "wddm2_5", "wddm2_7", "wddm3_0", "wddm3_2"):
        fields.update(HwQueueProgressFenceGpuVa=0x800000, HwQueueProgressFenceCpuVa=0x9000)
    fields.update(over)
    return new(HWQUEUE, arch, version, **fields)


def hw_queue(arch="x64", **over):
    fields = dict(hHwQueue=0x2100, hHwQueueProgressFence=0x40000010, HwQueueProgressFenceCPUVirtualAddress=0x9008,
                  HwQueueProgressFenceGPUVirtualAddress=0x800008)
    fields.update(over)
    return new(CREATEHWQUEUE, arch, **fields)


def fence_signal(arch="x64", **over):
    fields = dict(KernelSubmissionType=0, pDmaBuffer=0x100000, DmaBufferGpuVirtualAddress=0x4000000, DmaSize=4096,
                  MonitoredFenceGpuVa=0x800010, MonitoredFenceValue=7, MonitoredFenceCpuVa=0x9010, hHwQueue=0x2000)
    fields.update(over)
    return new(SIGNALFENCE, arch, **fields)


def paging_signal(gpu_va, operation=OP.DXGK_OPERATION_SIGNAL_MONITORED_FENCE, arch="x64", version="latest"):
    obj = new(BUILD, arch, version, Operation=int(operation), pDmaBuffer=0x200000, DmaSize=4096)
    if hasattr(obj, "SignalMonitoredFence"):
        obj.SignalMonitoredFence.MonitoredFenceGpuVa = gpu_va
        obj.SignalMonitoredFence.MonitoredFenceValue = 3
    return obj


def props(arch="x64", **over):
    fields = dict(hContext=0x3000, priorityBand=int(BAND.DXGK_SCHEDULING_PRIORITY_BAND_NORMAL), inProcessPriority=0,
                  quantum=20000, gracePeriodSamePriority=10000)
    fields.update(over)
    return new(SCHEDPROPS, arch, **fields)


def bands(arch="x64", **over):
    obj = new(BANDS, arch, targetNormalBandPercentage=over.pop("targetNormalBandPercentage", 10))
    for i in range(4):
        obj.processQuantumForBand[i] = 20000
    return obj


# -- registration --------------------------------------------------------------------------------


def test_the_new_rules_are_registered_on_their_structures():
    assert [r.number for r in rules_for(HWQUEUE) if r.number >= 100] == [100, 105, 125]
    assert [r.number for r in rules_for(CREATEHWQUEUE)] == [100]
    assert [r.number for r in rules_for(SIGNALFENCE)] == [100]
    assert 100 in [r.number for r in rules_for(BUILD)]
    assert [r.number for r in rules_for(SUSPEND)] == [104]
    assert [r.number for r in rules_for(SCHEDPROPS)] == [122, 123, 126]
    assert [r.number for r in rules_for(BANDS)] == [124]


def test_rule_127_is_documented_but_not_registered():
    assert 127 not in RULES
    assert "Rule 127" in hwsched.__doc__ and "not registered" in hwsched.__doc__


@pytest.mark.parametrize("number", [100, 104, 105, 122, 123, 124, 125, 126])
def test_docstrings_name_the_facts_they_read(number):
    doc = RULES[number].check.__doc__
    assert "facts." in doc or "no facts" in doc


# -- well-formed structures pass ------------------------------------------------------------------


@pytest.mark.parametrize("arch", ARCHES)
def test_well_formed_structures_are_clean(arch):
    facts = Facts(last_progress_fence_id=11, queue_busy=False, buffer_origin="umd", private_data_reads_after_return=0,
                  max_in_flight=8, in_flight=7, scheduling_properties_set=True, last_suspend_fence=4,
                  already_suspended=False, status=PENDING, has_inc_base_priority=True)
    assert check(HWQUEUE, hw_submission(arch), facts) == []
    assert check(CREATEHWQUEUE, hw_queue(arch), facts) == []
    assert check(SIGNALFENCE, fence_signal(arch), facts) == []
    assert check(BUILD, paging_signal(0x800018, arch=arch), Facts(status=SUCCESS)) == []
    assert check(SUSPEND, new(SUSPEND, arch, hContext=0x3000, contextSuspendFence=5), facts) == []
    assert check(SCHEDPROPS, props(arch, priorityBand=3, realtimeBandPriorityLevel=31, inProcessPriority=7), facts) == []
    assert check(BANDS, bands(arch, targetNormalBandPercentage=50), facts) == []


# -- rule 100: fence addresses are 8-byte aligned -------------------------------------------------


@pytest.mark.parametrize("arch", ARCHES)
def test_rule100_names_each_misaligned_address(arch):
    assert messages(HWQUEUE, hw_submission(arch, HwQueueProgressFenceGpuVa=0x800004, HwQueueProgressFenceCpuVa=0x9002),
                    number=100) == [
        "HwQueueProgressFenceGpuVa is 0x800004 but must be 8-byte aligned (a monitored fence value is 64 bits)",
        "HwQueueProgressFenceCpuVa is 0x9002 but must be 8-byte aligned (a monitored fence value is 64 bits)",
    ]
    assert messages(CREATEHWQUEUE, hw_queue(arch, HwQueueProgressFenceCPUVirtualAddress=0x900C), number=100) == [
        "HwQueueProgressFenceCPUVirtualAddress is 0x900C but must be 8-byte aligned (a monitored fence value is 64 bits)"]
    assert messages(CREATEHWQUEUE, hw_queue(arch, HwQueueProgressFenceGPUVirtualAddress=0x800001), number=100) == [
        "HwQueueProgressFenceGPUVirtualAddress is 0x800001 but must be 8-byte aligned (a monitored fence value is 64 bits)"]
    assert len(messages(SIGNALFENCE, fence_signal(arch, MonitoredFenceGpuVa=0x800014, MonitoredFenceCpuVa=0x9014),
                        number=100)) == 2


def test_rule100_on_the_paging_signal_operation_only():
    assert messages(BUILD, paging_signal(0x80000C), number=100) == [
        "SignalMonitoredFence.MonitoredFenceGpuVa is 0x80000C but must be 8-byte aligned (a monitored fence value is "
        "64 bits)"]
    # The same bytes under another operation are another arm's data, not a fence address.
    assert messages(BUILD, paging_signal(0x80000C, OP.DXGK_OPERATION_FLUSH_TLB), number=100) == []
    # Before WDDM 2.2 there is no SignalMonitoredFence arm to judge.
    assert messages(BUILD, paging_signal(0, arch="x86", version="wddm2_1"), Facts(version="wddm2_1"), number=100) == []


def test_rule100_not_judged_on_the_wddm2_3_submission_layout():
    obj = hw_submission("x64", "wddm2_3")
    assert not hasattr(obj, "HwQueueProgressFenceGpuVa")
    assert messages(HWQUEUE, obj, Facts(version="wddm2_3"), number=100) == []


# -- rule 104: suspend fences increase; the return status -----------------------------------------


def test_rule104_fence_must_increase():
    obj = new(SUSPEND, hContext=0x3000, contextSuspendFence=4)
    assert messages(SUSPEND, obj, Facts(last_suspend_fence=9), 104) == [
        "contextSuspendFence is 4 but must be > the context's previous suspend fence (9)"]
    assert messages(SUSPEND, obj, Facts(last_suspend_fence=4), 104) == [
        "contextSuspendFence is 4 but must be > the context's previous suspend fence (4)"]
    assert messages(SUSPEND, obj, Facts(last_suspend_fence=3), 104) == []
    assert messages(SUSPEND, obj, Facts(), 104) == []


@pytest.mark.parametrize(
    "status,already,expected",
    [
        (SUCCESS, True, None),
        (PENDING, False, None),
        (SUCCESS, None, None),
        (PENDING, None, None),
        (PENDING, True, "DxgkDdiSuspendContext returned 0x00000103 (STATUS_PENDING) for hContext 0x3000 but must return "
                        "STATUS_SUCCESS for a context that is already suspended"),
        (SUCCESS, False, "DxgkDdiSuspendContext returned 0x00000000 (STATUS_SUCCESS) for hContext 0x3000 but must "
                         "return STATUS_PENDING while the suspension has not completed"),
        (UNSUCCESSFUL, None, "DxgkDdiSuspendContext returned 0xC0000001 (STATUS_UNSUCCESSFUL) but must return "
                             "STATUS_SUCCESS or STATUS_PENDING"),
    ],
)
def test_rule104_status(status, already, expected):
    obj = new(SUSPEND, hContext=0x3000, contextSuspendFence=8)
    found = messages(SUSPEND, obj, Facts(status=status, already_suspended=already, last_suspend_fence=7), 104)
    assert found == ([] if expected is None else [expected])


def test_rule104_reports_both_halves_and_no_bugcheck():
    obj = new(SUSPEND, "x86", hContext=0x30, contextSuspendFence=2)
    found = check(SUSPEND, obj, Facts(last_suspend_fence=2, status=UNSUCCESSFUL))
    assert [v.rule for v in found] == [104, 104] and all(v.bugcheck is None for v in found)


# -- rule 105: MaxInFlightHwQueueBuffers ----------------------------------------------------------


def test_rule105_limit_and_unlimited():
    obj = hw_submission()
    assert messages(HWQUEUE, obj, Facts(max_in_flight=2, in_flight=2), 105) == [
        "hHwQueue 0x2000 submission 12 would be command buffer 3 in flight but the node's MaxInFlightHwQueueBuffers "
        "allows at most 2"]
    assert messages(HWQUEUE, obj, Facts(max_in_flight=2, in_flight=1), 105) == []
    assert messages(HWQUEUE, obj, Facts(max_in_flight=0, in_flight=500), 105) == []  # 0 = unlimited
    assert messages(HWQUEUE, obj, Facts(max_in_flight=2), 105) == []


def test_rule105_not_judged_before_wddm2_5():
    obj = hw_submission("x64", "wddm2_4")
    assert messages(HWQUEUE, obj, Facts(version="wddm2_4", max_in_flight=1, in_flight=3), 105) == []
    assert messages(HWQUEUE, hw_submission("x64", "wddm2_5"), Facts(version="wddm2_5", max_in_flight=1, in_flight=3),
                    105)


# -- rules 122-126: scheduling properties and priority bands ---------------------------------------


@pytest.mark.parametrize("arch", ARCHES)
def test_rule122_realtime_level(arch):
    assert messages(SCHEDPROPS, props(arch, priorityBand=3, realtimeBandPriorityLevel=32), number=122) == [
        "realtimeBandPriorityLevel is 32 but must be 0..31 in the REALTIME band"]
    assert messages(SCHEDPROPS, props(arch, priorityBand=3, realtimeBandPriorityLevel=-1), number=122) == [
        "realtimeBandPriorityLevel is -1 but must be 0..31 in the REALTIME band"]
    assert messages(SCHEDPROPS, props(arch, priorityBand=3, realtimeBandPriorityLevel=0), number=122) == []
    # Ignored for the other bands.
    assert messages(SCHEDPROPS, props(arch, priorityBand=1, realtimeBandPriorityLevel=99), number=122) == []


def test_rule123_in_process_priority():
    assert messages(SCHEDPROPS, props(inProcessPriority=8), number=123) == ["inProcessPriority is 8 but must be -7..+7"]
    assert messages(SCHEDPROPS, props(inProcessPriority=-8), number=123) == ["inProcessPriority is -8 but must be -7..+7"]
    assert messages(SCHEDPROPS, props(inProcessPriority=-7), number=123) == []
    assert messages(SCHEDPROPS, props(inProcessPriority=7), number=123) == []


def test_rule124_target_normal_band_percentage():
    assert messages(BANDS, bands(targetNormalBandPercentage=51)) == [
        "targetNormalBandPercentage is 51 but must be 0..50"]
    assert messages(BANDS, bands(targetNormalBandPercentage=0)) == []
    assert messages(BANDS, bands("x86", targetNormalBandPercentage=0xFFFFFFFF)) == [
        "targetNormalBandPercentage is 4294967295 but must be 0..50"]


def test_rule125_scheduling_properties_before_first_submission():
    assert messages(HWQUEUE, hw_submission(), Facts(scheduling_properties_set=False), 125) == [
        "hHwQueue 0x2000 is submitted to before DxgkDdiSetContextSchedulingProperties was called for its context but "
        "the properties must be set before the first submission"]
    assert messages(HWQUEUE, hw_submission(), Facts(scheduling_properties_set=True), 125) == []
    assert messages(HWQUEUE, hw_submission(), Facts(), 125) == []
    # WDDM 2.2/2.3 hardware queues have no scheduling-properties DDI.
    assert messages(HWQUEUE, hw_submission("x64", "wddm2_3"), Facts(version="wddm2_3", scheduling_properties_set=False),
                    125) == []


@pytest.mark.parametrize("band", list(BAND)[:4])
def test_rule126_privileged_bands(band):
    found = messages(SCHEDPROPS, props(priorityBand=int(band)), Facts(has_inc_base_priority=False), 126)
    if band in (BAND.DXGK_SCHEDULING_PRIORITY_BAND_FOCUS, BAND.DXGK_SCHEDULING_PRIORITY_BAND_REALTIME):
        assert found == [f"priorityBand is {int(band)} ({band.name}) for hContext 0x3000 but the FOCUS and REALTIME "
                         f"bands need the caller to hold SE_INC_BASE_PRIORITY_NAME"]
    else:
        assert found == []
    assert messages(SCHEDPROPS, props(priorityBand=int(band)), Facts(has_inc_base_priority=True), 126) == []
    assert messages(SCHEDPROPS, props(priorityBand=int(band)), Facts(), 126) == []


@pytest.mark.parametrize("name", [HWQUEUE, CREATEHWQUEUE, SIGNALFENCE, BUILD, SUSPEND, SCHEDPROPS, BANDS])
@pytest.mark.parametrize("arch", ARCHES)
def test_zeroed_structures_with_nothing_known_break_no_new_rule(name, arch):
    rec = registry.RECORDS[name]
    for version in ("wddm2_2", "wddm2_4", "wddm2_5", "latest"):
        if not layout.exists(rec, version):
            continue
        obj = new(name, arch, version)
        assert [v for v in check(name, obj, Facts(version=version)) if v.rule in (100, 104, 105, 122, 123, 124, 125, 126)] \
            == []
