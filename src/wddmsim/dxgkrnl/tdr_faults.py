"""GPU page faults under the packet scheduler, :class:`TdrFaults` (one of the mixins
:class:`~.tdr.Tdr` is made of).

Page faults (the DXGKARGCB_NOTIFY_INTERRUPT_DATA and DXGK_PAGE_FAULT_FLAGS pages):
``DXGK_INTERRUPT_DMA_PAGE_FAULTED`` with FaultedFenceId F completes every packet before F; the reset
the flags ask for follows at PASSIVE_LEVEL (engine reset, or adapter reset for
``ADAPTER_RESET_REQUIRED`` or an unknown fence), and the device owning F goes to error. With no
reset flag only the device goes to error and the stopped engine is left to the timeout.
``FENCE_INVALID`` with a fence id, or without a reset flag, is bug check 0x119/0xD and
``FATAL_HARDWARE_ERROR`` bug check 0x119/0xC (rules 51 FenceInvalidFaultFlags and 53
FatalHardwareErrorBugChecks, in every verifier mode); a fence id that is not pending breaks rule 32
(CompletedFenceWasSubmitted), 0x119/0x1. A fault is not a timeout: it makes no live dump and does
not count toward the TDR limits. Rule numbers are the rule catalogue's: ``wddmsim rules N`` prints
rule N, docs/rules.md lists them all.
"""

from __future__ import annotations

from ..ddi.fenceid import from_ddi
from ..ddi.bugcheck import BugCheck, BugCheckCode, VidSchError
from ..ddi.rules import Violation
from ..sim import PASSIVE
from .crash import BugCheckStop, CrashRecord

NOTIFY = "DXGKARGCB_NOTIFY_INTERRUPT_DATA"
_FENCE_INVALID = 0x2
_ADAPTER_RESET_REQUIRED = 0x4
_ENGINE_RESET_REQUIRED = 0x8


class TdrFaults:
    """DXGK_INTERRUPT_DMA_PAGE_FAULTED and the recovery its flags ask for."""

    # -- page faults ----------------------------------------------------------------------------------------
    def page_fault(self, data) -> None:
        """``DXGK_INTERRUPT_DMA_PAGE_FAULTED`` (device IRQL): complete what came before the faulted
        packet, ignore the node, and recover at PASSIVE_LEVEL."""
        vs = self.vs
        adapter = self.adapter
        pf = data.DmaPageFaulted
        ordinal = pf.NodeOrdinal
        if not 0 <= ordinal < len(vs.nodes):
            adapter.invalid_interrupt(data, f"DmaPageFaulted.NodeOrdinal {ordinal} names no node")
            return
        node_queue = vs.nodes[ordinal]
        if node_queue.tdr.resetting:
            return
        facts = node_queue.notify_facts
        facts.last_submitted_fence = node_queue.last_submitted
        facts.last_completed_fence = node_queue.last_completed
        found = vs.verifier.find(NOTIFY, data, facts)
        flags = pf.PageFaultFlags
        # A 32-bit id, read past any wrap (ddi/fenceid.py); 0 with FENCE_INVALID.
        fence = pf.FaultedFenceId if flags & _FENCE_INVALID else from_ddi(pf.FaultedFenceId, node_queue.last_completed)
        stop = next((v for v in found if v.bugcheck is not None), None)
        if stop is None and not flags & _FENCE_INVALID and not node_queue.last_completed < fence <= node_queue.last_submitted:
            stop = Violation(32, "CompletedFenceWasSubmitted",
                             f"DmaPageFaulted.FaultedFenceId {fence} is not a pending fence "
                             f"({node_queue.last_completed} < fence <= {node_queue.last_submitted})",
                             BugCheck(BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR,
                                      VidSchError.DRIVER_REPORTED_INVALID_FENCE_ID, pf.FaultedFenceId))
            found = found + [stop]
        if stop is not None:
            # These stop the system in every verifier mode (bug check 0x119's page).
            bc = BugCheck(stop.bugcheck.code, stop.bugcheck.p1, stop.bugcheck.p2 or fence, adapter.interrupt_address,
                          node_queue.ordinal)
            vs.verifier.handle(found, NOTIFY, data, adapter.interrupt_address, bugcheck=bc)
            raise BugCheckStop(CrashRecord(
                time=self.sim.now, bugcheck=bc, message=str(stop), struct=NOTIFY, arch=adapter.arch,
                ddi_version=adapter.version.name, address=adapter.interrupt_address, data=bytes(data),
                rule=stop.rule, rule_name=stop.name,
            ))
        if found:
            vs.verifier.handle(found, NOTIFY, data, adapter.interrupt_address)
        self._emit("PageFault", {"node": ordinal, "fence": fence, "flags": flags,
                                 "address": pf.FaultedVirtualAddress, "hwqueue": 0})
        if not flags & _FENCE_INVALID and fence - 1 > node_queue.last_completed:
            vs.complete_through(node_queue, fence - 1)
        node_queue.tdr.resetting = True
        self.sim.soon(self._recover_fault, (node_queue, fence, flags), PASSIVE)

    def _recover_fault(self, arg) -> None:
        node_queue, fence, flags = arg
        node_queue.tdr.resetting = False
        running = node_queue.hw[node_queue.stopped] if len(node_queue.hw) > node_queue.stopped else None
        if flags & _ADAPTER_RESET_REQUIRED or (flags & _FENCE_INVALID and not self.per_engine):
            self._adapter_reset(node_queue, running, promoted=False, timeout=False)
        elif flags & (_ENGINE_RESET_REQUIRED | _FENCE_INVALID):
            if not (self.per_engine and self._engine_reset(node_queue, running, timeout=False)):
                self._adapter_reset(node_queue, running, promoted=True, timeout=False)
        elif running is not None and running.fence == fence and self.owner(running) is not None:
            self.device_error(self.owner(running), "page fault")
