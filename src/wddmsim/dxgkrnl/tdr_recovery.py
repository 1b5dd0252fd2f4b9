"""What a reset does to the packets and devices it hits, :class:`TdrRecovery` (one of the mixins
:class:`~.tdr.Tdr` is made of): used by the engine reset, the adapter reset and the page-fault
recovery alike.

A packet a reset takes back had reached the hardware: it is submitted again as a resubmission,
``Flags.Resubmission = 1`` from WDDM 2.0 (Microsoft's DXGK_SUBMITCOMMANDFLAGS page), with a new
fence id. A packet a reset aborts never completes: its buffers go.

A device in error cancels the packets still in its contexts' software queues, wakes their CPU
waiters, drives the monitored fences it could signal to their maximum value unless they were created
with NoSignalMaxValueOnTdr (rule 101, MaxFenceOnTdr; Microsoft's D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS
page), and fails every later API call with STATUS_DEVICE_REMOVED. The device a reset puts in error
is the one whose packet it hit; a paging transfer of VidMm blames the device whose allocation it
moves, and VidMm's system device is never put in error ("TDR changes in Windows 8"). Rule numbers
are the rule catalogue's: ``wddmsim rules N`` prints rule N, docs/rules.md lists them all.
"""

from __future__ import annotations


class TdrRecovery:
    """Packets stopped, aborted or taken back by a reset, and devices put in error."""

    # -- packets --------------------------------------------------------------------------------------------
    def _stop(self, p, node_queue, status: str) -> None:
        p.done = self.sim.now
        self.vs.ledger.dma_stop(self.sim.now, p.context.handle, node_queue.ordinal, p.fence, p.kind, p.seq, status)
        tr = self.vs.trace
        if tr is not None:
            tr.emit(self.sim.now, "DmaPacketStop", {
                "context": p.context.handle, "node": node_queue.ordinal, "fence": p.fence, "kind": p.kind,
                "seq": p.seq, "status": status,
            })

    def _abort(self, p, node_queue) -> None:
        """A packet that will never complete: its buffers go, waiters are woken by the device error."""
        ctx = p.context
        ctx.aborted += 1
        if p.job is not None:
            ctx.jobs.dropped(p)  # its job never finishes: not judged (dxgkrnl/deadlines.py)
        self.vs.off_hardware(p)
        if p.present_t >= 0:
            self.vs.presents.forget(p)
        self.vs.adapter.free_packet(p)
        self.vs.retired_from(ctx)
        self.vs.ledger.queue_stop(self.sim.now, ctx.handle, node_queue.ordinal, p.fence, p.kind, p.seq, "Aborted", 0)
        tr = self.vs.trace
        if tr is not None:
            tr.emit(self.sim.now, "QueuePacketStop", {
                "context": ctx.handle, "node": node_queue.ordinal, "fence": p.fence, "kind": p.kind, "seq": p.seq,
                "status": "Aborted", "hwqueue": 0,
            })

    def _take_back(self, node_queue) -> None:
        """Packets still on ``node_queue``'s hardware queue (not completed) go back to their software queues.
        They had reached the hardware, so each is submitted again as a resubmission (with
        ``Flags.Resubmission = 1`` from WDDM 2.0, as after a preemption) and a new fence id."""
        hw = node_queue.hw
        taken = []
        while len(hw) > node_queue.stopped:
            taken.append(hw.pop())
        taken.reverse()
        for p in taken:
            self.vs.off_hardware(p)
            p.preempted = True
            self._stop(p, node_queue, "Reset")
        st = node_queue.preemption
        st.preempted.extend(taken)
        st.answered = True
        self.vs.idle_check(node_queue)

    def _clear_preemption(self, node_queue) -> None:
        st = node_queue.preemption
        st.fence = 0
        st.run_ctx = None
        if st.timer is not None:
            st.timer.cancel()
            st.timer = None
        self.preempt_answered(node_queue)

    @staticmethod
    def owner(p):
        """The device a reset or a fault of packet ``p`` puts in error: a process's packet, its own
        device; a paging transfer of VidMm, the device whose allocation it moves; VidMm's other
        system packets (a null-context switch, a page-table update), none. The system device is
        never put in error (Microsoft's "TDR changes in Windows 8": a reset that hits a paging
        packet puts in error the devices that own the allocations it references): VidMm's work
        goes on after the reset for every other device."""
        if not p.context.system:
            return p.context.device
        return p.moves.device if p.moves is not None else None

    def device_error(self, device, reason: str) -> None:
        """Put ``device`` in error: cancel its queued packets, wake its waiters, and drive the
        monitored fences it could signal to their maximum value (rule 101)."""
        if device.error:
            return
        device.error = True
        device.error_reason = reason
        self.devices_in_error.append(device)
        vs = self.vs
        self._emit("DeviceError", {"device": device.handle, "process": device.process.pid, "reason": reason})
        for ctx in device.contexts:
            vs.adapter.drop_queue(ctx)
        wddm2 = vs.adapter.wddm2
        if wddm2 is not None:
            # Microsoft's D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS page: unless NoSignalMaxValueOnTdr, a
            # monitored fence is signalled to its maximum when a device that can signal it is
            # affected by the GPU reset, so nothing waits forever on a value that will not come.
            wddm2.fences.signal_max_on_tdr({device})
