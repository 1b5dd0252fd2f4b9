"""The adapter-wide reset, :class:`TdrAdapterReset` (one of the mixins :class:`~.tdr.Tdr` is made
of), for a driver without ``SupportPerEngineTDR`` or an engine reset that had to be promoted
("Thread synchronization and TDR", the DxgkDdiResetFromTimeout and DxgkDdiRestartFromTimeout pages).

A timeout's adapter reset is counted and makes a 0x117 live dump; the 6th adapter timeout within
``TdrLimitTime`` (more than ``TdrLimitCount``) is bug check 0x116
(:meth:`~.tdr.Tdr.adapter_timeout`). Then ``DxgkDdiResetFromTimeout``, every node's last completed
fence := its last submitted fence, the hung device's packets are aborted and the device goes to
error, every other packet on a hardware queue goes back to its software queue;
``DxgkDdiRestartFromTimeout``. Either call failing is bug check 0x116. Paging packets taken back get
new fence ids: the old ones now count as complete, so a paging packet cannot keep its id as it does
after a preemption or an engine reset (rule 61, PagingResubmitFirstSameFence). A hung paging
transfer is abandoned and the device whose allocation it moved goes to error: VidMm's system device
never does (:meth:`~.tdr_recovery.TdrRecovery.owner`). Rule numbers are the rule catalogue's:
``wddmsim rules N`` prints rule N, docs/rules.md lists them all.
"""

from __future__ import annotations

FLAG_PAGING = 0x1  # DXGK_SUBMITCOMMANDFLAGS.Paging


class TdrAdapterReset:
    """DxgkDdiResetFromTimeout, the packets of every node, DxgkDdiRestartFromTimeout."""

    def _adapter_reset(self, node_queue, running, promoted: bool, timeout: bool = True) -> None:
        """Adapter-wide reset (DxgkDdiResetFromTimeout); ``timeout``: a TDR (live dump, counted) rather than a fault."""
        vs = self.vs
        now = self.sim.now
        if timeout:
            self.adapter_timeout(promoted)
        guilty = self.owner(running) if running is not None else None
        # A hung paging transfer is abandoned like the packets of the device it worked for.
        hung = running if running is not None and running.moves is not None else None
        for q in vs.nodes:
            q.tdr.resetting = True
        try:
            self.must_succeed("DxgkDdiResetFromTimeout")
            if vs.truth is not None:
                vs.truth.adapter_reset()
            for q in vs.nodes:
                hw = q.hw
                busy = len(hw) > q.stopped
                bottom = hw[q.stopped] if busy else None
                keep = []
                while len(hw) > q.stopped:
                    p = hw.pop()
                    if p is hung or guilty is not None and p.context.device is guilty:
                        self._stop(p, q, "Aborted")
                        self._abort(p, q)
                    else:
                        keep.append(p)
                for p in reversed(keep):
                    hw.append(p)
                self._take_back(q)
                q.last_completed = q.last_submitted
                # Every fence id submitted so far now counts as complete: a paging packet that goes
                # back to the hardware cannot keep its id (as after a preemption or an engine reset,
                # rule 61) without reporting a fence below the last completed one (0x119/0x1).
                for p in q.preemption.preempted:
                    if p.flags & FLAG_PAGING:
                        p.fence = 0
                if busy and q.busy_since >= 0:
                    vs.charge(q, bottom, now)
                self._clear_preemption(q)
            self.must_succeed("DxgkDdiRestartFromTimeout")
            self.adapter_resets += 1
            self._emit("AdapterReset", {"node": node_queue.ordinal, "promoted": int(promoted),
                                        "device": guilty.handle if guilty else 0})
            if guilty is not None:
                self.device_error(guilty, "adapter reset" if timeout else "page fault")
        finally:
            for q in vs.nodes:
                q.tdr.resetting = False
            vs.retire()
