"""The OS's gateway into the driver (dxgkrnl/gateway.py) and the callbacks it hands the driver
(dxgkrnl/callbacks.py): every entry point at its contract's IRQL, driver faults reported with the
driver's own traceback, the ISR/DPC rules (38-43), and no driver that makes the model run away."""

from __future__ import annotations

import pytest

from wddmsim.ddi import interface
from wddmsim.ddi.bugcheck import BugCheckCode
from wddmsim.ddi.interface import CONTRACTS, DIRQL, DISPATCH_LEVEL, PASSIVE_LEVEL
from wddmsim.dxgkrnl.gateway import exception_code
from wddmsim.kmd import ReferenceDriver
from wddmsim.sim import IRQL_NAMES
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

from wddm2util import scenario_of

MS = 1_000_000
S = 1_000_000_000
ZERO_COST = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}


def script(*packets):
    return {"kind": "script", "packets": [{"at": at, "work": work} for at, work in packets]}


def build(driver=None, *, packets=((0, "1ms"), (0, "1ms"), (0, "1ms")), verifier="strict", duration="20s",
          cost=ZERO_COST, adapter=None):
    sc = scenario_of({
        "name": "gateway", "duration": duration,
        "adapter": {"nodes": [{"name": "3D", "engine": "3d", "command_cost": 0}],
                    **({"cpu_cost": cost} if cost is not None else {}), **(adapter or {})},
        "process": [{"name": "app", "context": [{"name": "c", "node": "3D", "workload": script(*packets)}]}],
    }, "<test>")
    trace = ListSink()
    return System(sc, trace=trace, driver=driver, verifier=verifier), trace


# -- the contract table -------------------------------------------------------------------------------
def test_every_protocol_entry_point_has_a_contract_and_its_docstring_states_it():
    for proto in (interface.Miniport, interface.PagingMiniport, interface.GpuVaMiniport, interface.HwSchMiniport,
                  interface.NativeFenceMiniport, interface.OverlayMiniport, interface.FlipQueueMiniport):
        for name, fn in vars(proto).items():
            if not name.startswith("DxgkDdi"):
                continue
            c = CONTRACTS[name]
            doc = fn.__doc__
            assert f"called at {c.irql}" in doc, name
            for status in c.returns:
                assert status in doc, (name, status)
            assert c.url in doc and c.url.startswith("https://learn.microsoft.com/windows-hardware/drivers/ddi/")


def test_required_entry_points_follow_the_version_and_the_caps():
    win7 = dict(interface.required_entry_points(0x2005))
    assert "DxgkDdiSubmitCommand" in win7 and "DxgkDdiSubmitCommandVirtual" not in win7
    wddm2 = dict(interface.required_entry_points(0x5023))
    assert wddm2["DxgkDdiSubmitCommandVirtual"] == "a DDI wddm2_0 or later driver implements it"
    aware = dict(interface.required_entry_points(0x300E, {"PreemptionAware": True, "SupportPerEngineTDR": True}))
    assert aware["DxgkDdiPreemptCommand"] == "the driver reports PreemptionAware"
    assert {"DxgkDdiResetEngine", "DxgkDdiQueryDependentEngineGroup"} <= set(aware)
    assert "DxgkDdiPreemptCommand" not in dict(interface.required_entry_points(0x300E, {}))


# -- IRQL ------------------------------------------------------------------------------------------------
class IrqlSpy(ReferenceDriver):
    """Records the IRQL each entry point runs at (the test looks into the model's kernel)."""

    seen: dict

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.seen = {}

    def __getattribute__(self, name):
        attr = super().__getattribute__(name)
        if name.startswith("DxgkDdi") and callable(attr) and super().__getattribute__("dxgk") is not None:
            seen = super().__getattribute__("seen")
            sim = super().__getattribute__("dxgk").adapter.sim

            def spy(*a):
                seen.setdefault(name, set()).add(IRQL_NAMES[sim.irql])
                return attr(*a)
            return spy
        return attr


@pytest.mark.rule(2)
def test_every_entry_point_runs_at_its_contracts_irql():
    system, _ = build(IrqlSpy)
    system.run(until=50 * MS)
    seen = system.driver.seen
    assert {"DxgkDdiSubmitCommand", "DxgkDdiRender", "DxgkDdiInterruptRoutine", "DxgkDdiDpcRoutine"} <= set(seen)
    for name, irqls in seen.items():
        assert irqls == {CONTRACTS[name].irql}, name
    assert seen["DxgkDdiSubmitCommand"] == {DISPATCH_LEVEL}
    assert seen["DxgkDdiInterruptRoutine"] == {DIRQL}
    assert seen["DxgkDdiRender"] == {PASSIVE_LEVEL}



def test_each_entry_point_has_one_caller_per_gateway_and_the_hot_crossings_hold_theirs():
    system, _ = build(IrqlSpy)
    adapter = system.adapter
    ddi = adapter.ddi
    assert ddi.caller("DxgkDdiSubmitCommand") is ddi.caller("DxgkDdiSubmitCommand")
    assert adapter.vidsch._submit_command is ddi.caller("DxgkDdiSubmitCommand")
    assert adapter._render_call is ddi.caller("DxgkDdiRender")
    assert adapter.dxgk._interrupt_routine is ddi.caller("DxgkDdiInterruptRoutine")
    assert adapter.dxgk._dpc_routine is ddi.caller("DxgkDdiDpcRoutine")
    system.run(until=50 * MS)
    # the callers count their calls in the gateway's table, as call() does: three packets, each
    # rendered and submitted once, each completion an interrupt and a DPC
    assert ddi.calls["DxgkDdiRender"] == 3
    assert ddi.calls["DxgkDdiSubmitCommand"] == 3
    assert ddi.calls["DxgkDdiInterruptRoutine"] == ddi.calls["DxgkDdiDpcRoutine"] >= 3
    with pytest.raises(KeyError):
        ddi.caller("DxgkDdiNoSuchEntryPoint")

# -- driver faults ------------------------------------------------------------------------------------------
class MisspeltMember(ReferenceDriver):
    """Reads a member DXGKARG_SUBMITCOMMAND does not have, in its third submission."""

    def DxgkDdiSubmitCommand(self, hAdapter, pSubmitCommand):
        if pSubmitCommand.SubmissionFenceId == 3:
            return pSubmitCommand.SubmissionFenceID  # the deliberate typo
        return super().DxgkDdiSubmitCommand(hAdapter, pSubmitCommand)


def test_an_exception_in_an_entry_point_is_a_driver_fault_with_the_drivers_traceback():
    system, trace = build(MisspeltMember)
    r = system.run()
    rec = r.bugcheck
    assert rec.bugcheck.code == BugCheckCode.KMODE_EXCEPTION_NOT_HANDLED == 0x1E
    assert rec.bugcheck.p1 == 0xC0000005  # an AttributeError stands for an access violation
    assert rec.ddi == "DxgkDdiSubmitCommand" and rec.struct == "DXGKARG_SUBMITCOMMAND"
    assert rec.message.startswith("driver fault: DxgkDdiSubmitCommand raised AttributeError")
    assert "SubmissionFenceID" in rec.message
    # The traceback is the driver's own: its frame, not the gateway's.
    assert "in DxgkDdiSubmitCommand" in rec.traceback and "return pSubmitCommand.SubmissionFenceID" in rec.traceback
    assert "dxgkrnl/gateway.py" not in rec.traceback
    # The record carries the structure as the driver got it, decodable like a dump.
    assert len(rec.data) > 0 and rec.to_json()["ddi"] == "DxgkDdiSubmitCommand"
    assert trace.of("BugCheck")[0]["code"] == 0x1E
    assert r.end == 1 * MS  # the third submission happens when the first packet is done


@pytest.mark.parametrize("exc,code", [
    (ZeroDivisionError(), 0xC0000094), (RecursionError(), 0xC00000FD), (AssertionError(), 0xC0000420),
    (KeyError(1), 0xC0000005), (IndexError(), 0xC0000005), (RuntimeError(), 0xC0000144),
])
def test_a_driver_faults_exception_code(exc, code):
    assert exception_code(exc) == code


def test_writing_an_unknown_member_of_a_ddi_structure_is_an_error():
    from wddmsim.ddi import layout
    from wddmsim.ddi.registry import RECORDS

    args = layout.ctype(RECORDS["DXGKARG_SUBMITCOMMAND"], "x64", "wddm2_0")()
    args.SubmissionFenceId = 7
    with pytest.raises(AttributeError, match="SubmissionFenceID"):
        args.SubmissionFenceID = 8
    assert args.SubmissionFenceId == 7


# -- the ISR and the DPC (rules 39, 41, 42, 43) ------------------------------------------------------------
class _Muted:
    """The OS's interface with some callbacks swallowed (a broken driver's view of it)."""

    def __init__(self, real, muted):
        self._real = real
        self._muted = muted

    def __getattr__(self, name):
        if name in self._muted:
            return lambda *a: True
        return getattr(self._real, name)


class IsrForgetsDpc(ReferenceDriver):
    """Its ISR reports completions but never queues its DPC."""

    def DxgkDdiStartDevice(self, DxgkInterface):
        return super().DxgkDdiStartDevice(_Muted(DxgkInterface, {"DxgkCbQueueDpc"}))


class SilentDpc(ReferenceDriver):
    """Its DPC never calls DxgkCbNotifyDpc."""

    def DxgkDdiDpcRoutine(self, MiniportDeviceContext):
        return None


@pytest.mark.rule(39)
def test_an_isr_that_reports_without_queueing_its_dpc_breaks_rule_39():
    system, trace = build(IsrForgetsDpc)
    r = system.run()
    assert (r.bugcheck.bugcheck.code, r.bugcheck.bugcheck.p1) == (BugCheckCode.DRIVER_VERIFIER_DETECTED_VIOLATION, 39)
    assert r.bugcheck.rule_name == "IsrQueuesDpc" and r.end == 1 * MS
    assert "without calling DxgkCbQueueDpc" in r.bugcheck.message


@pytest.mark.rule(39)
def test_a_dpc_that_never_notifies_breaks_rule_39():
    system, _ = build(SilentDpc)
    r = system.run()
    assert (r.bugcheck.bugcheck.p1, r.bugcheck.rule_name) == (39, "DpcNotifiesDpc")
    assert r.end == 1 * MS


@pytest.mark.parametrize("driver", [IsrForgetsDpc, SilentDpc])
def test_a_silent_driver_ends_in_tdr_at_tdrdelay_not_in_a_silent_stall(driver):
    """With the verifier off, Windows decides: nothing the driver reported reaches the scheduler,
    so for it the first packet is still running. The watchdog asks for preemption after 2 s, the
    answer never reaches the scheduler either, and TdrDelay (2 s) later the node has timed out:
    an engine reset, a 0x141 live dump, the application's device in error."""
    system, trace = build(driver, verifier="off", duration="30s")
    r = system.run()
    assert r.bugcheck is None
    assert [(e["t"], e["reason"]) for e in trace.of("PreemptRequest")] == [(2 * S, "watchdog")]
    assert [(e["t"], e["reason"]) for e in trace.of("TdrDetected")] == [(4 * S, "preemption_timeout")]
    assert [e["t"] for e in trace.of("EngineReset")] == [4 * S]
    assert r.summary["tdr"]["live_dumps"] == [{"t": 4 * S, "code": 0x141, "p4": 0}]
    ctx = r.summary["contexts"][0]
    # The two packets on the hardware queue are retired by the reset; the third never runs.
    assert (ctx["completed"], ctx["cancelled"], ctx["device_error"]) == (2, 1, True)
    assert ctx["latency_max_ns"] == 4 * S


def test_a_silent_windows_7_driver_ends_in_an_adapter_reset_at_the_watchdog():
    """A driver that is not preemption aware times out when its packet has run TdrDelay: adapter
    reset, 0x117 live dump."""
    system, trace = build(SilentDpc, verifier="off", duration="30s", adapter={"ddi_version": "win7"})
    r = system.run()
    assert r.bugcheck is None and not trace.of("PreemptRequest")
    assert [(e["t"], e["reason"]) for e in trace.of("TdrDetected")] == [(2 * S, "no_preemption")]
    assert [e["t"] for e in trace.of("AdapterReset")] == [2 * S]
    assert r.summary["tdr"]["live_dumps"] == [{"t": 2 * S, "code": 0x117, "p4": 0}]


class NotifyDpcFromIsr(ReferenceDriver):
    def DxgkDdiInterruptRoutine(self, MiniportDeviceContext, MessageNumber):
        claimed = super().DxgkDdiInterruptRoutine(MiniportDeviceContext, MessageNumber)
        self.dxgk.DxgkCbNotifyDpc(self.dxgk.DeviceHandle)
        return claimed


@pytest.mark.rule(41)
def test_the_isr_calls_no_callback_but_queue_dpc_and_notify_interrupt():
    system, _ = build(NotifyDpcFromIsr)
    r = system.run()
    assert (r.bugcheck.bugcheck.p1, r.bugcheck.rule_name) == (41, "IsrCallbacks")
    assert "DxgkCbNotifyDpc was called from the ISR" in r.bugcheck.message


class ClaimsWithoutDismissing(ReferenceDriver):
    """Says TRUE and leaves the interrupt asserted."""

    def DxgkDdiInterruptRoutine(self, MiniportDeviceContext, MessageNumber):
        return True


class DisownsItsInterrupt(ReferenceDriver):
    def DxgkDdiInterruptRoutine(self, MiniportDeviceContext, MessageNumber):
        return False


@pytest.mark.rule(43)
def test_an_isr_that_claims_without_dismissing_breaks_rule_43_from_the_hardwares_status():
    system, _ = build(ClaimsWithoutDismissing)
    r = system.run()
    assert (r.bugcheck.bugcheck.p1, r.bugcheck.rule_name) == (43, "IsrDismissesInterrupt")
    assert "ground truth" in r.bugcheck.message and r.end == 1 * MS


@pytest.mark.rule(43)
def test_an_isr_that_disowns_its_interrupt_breaks_rule_43():
    system, _ = build(DisownsItsInterrupt)
    r = system.run()
    assert r.bugcheck.bugcheck.p1 == 43 and "returned FALSE" in r.bugcheck.message


@pytest.mark.parametrize("driver", [ClaimsWithoutDismissing, DisownsItsInterrupt])
def test_an_interrupt_nobody_dismisses_is_bug_check_0xf2_not_a_hang(driver):
    system, trace = build(driver, verifier="off")
    r = system.run()
    bc = r.bugcheck.bugcheck
    assert (bc.code, bc.p4) == (BugCheckCode.HARDWARE_INTERRUPT_STORM, 1)
    assert r.end == 1 * MS and system.adapter.interrupts == 1001
    assert (r.bugcheck.rule, r.bugcheck.rule_name) == (43, "IsrDismissesInterrupt")


class DpcRequeuesItself(ReferenceDriver):
    def DxgkDdiDpcRoutine(self, MiniportDeviceContext):
        super().DxgkDdiDpcRoutine(MiniportDeviceContext)
        self.dxgk.DxgkCbQueueDpc(self.dxgk.DeviceHandle)


def test_a_dpc_that_never_lets_go_is_bug_check_0x133_not_a_hang():
    system, _ = build(DpcRequeuesItself, verifier="off")
    r = system.run()
    assert (r.bugcheck.bugcheck.code, r.bugcheck.bugcheck.p1) == (BugCheckCode.DPC_WATCHDOG_VIOLATION, 1)
    assert r.end == 1 * MS


@pytest.mark.rule(40)
def test_one_dpc_pending_at_a_time_a_second_queue_dpc_returns_false():
    results = []

    class QueuesTwice(ReferenceDriver):
        def DxgkDdiInterruptRoutine(self, MiniportDeviceContext, MessageNumber):
            claimed = super().DxgkDdiInterruptRoutine(MiniportDeviceContext, MessageNumber)
            results.append(self.dxgk.DxgkCbQueueDpc(self.dxgk.DeviceHandle))
            return claimed

    system, trace = build(QueuesTwice)
    r = system.run()
    assert r.bugcheck is None and results and set(results) == {False}
    assert system.adapter.dpcs == system.adapter.interrupts
