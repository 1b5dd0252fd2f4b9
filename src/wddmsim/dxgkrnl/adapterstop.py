"""Stopping the adapter's GPU scheduler with work pending.

When Windows stops a display adapter (Plug and Play stops or disables the device, or the driver is
replaced) the GPU scheduler is stopped first: no packet may stay with the driver or in the OS's
queues. The model does what Microsoft documents for each kind of pending packet:

- a packet still in a context's software queue never reached the hardware queue: it is cancelled
  (so is one the scheduler's worker took from the queue to patch and submit but had not yet handed
  to the driver when the stop came),
  and a driver that reports ``DXGK_VIDSCHCAPS.CancelCommandAware`` is told through
  ``DxgkDdiCancelCommand`` (Microsoft's DxgkDdiCancelCommand page: a packet that was in the
  scheduler's software queue and never reached the hardware queue);
- packets the driver has (on a hardware queue, not completed) are abandoned through the adapter
  reset the driver already implements for recovery, ``DxgkDdiResetFromTimeout`` then
  ``DxgkDdiRestartFromTimeout`` (Microsoft's pages: by the reset's return the GPU no longer touches
  memory and the driver holds nothing; every node's last completed fence becomes its last
  submitted one). Only when something is on a hardware queue; it is no timeout: no live dump, not
  counted toward TdrLimitCount.

So the driver sees exactly one cancel or one reset for each pending packet. Every pending packet's
fence completes with status ``Cancelled`` (``QueuePacketStop``), every process's devices go to
error (``DeviceError`` reason ``adapter stopped``): their CPU waiters wake, their monitored fences go
to the maximum value (as for a device a reset affects, unless ``NoSignalMaxValueOnTdr``) and their
later calls fail with ``STATUS_DEVICE_REMOVED``. The scheduler submits nothing after the stop;
VidMm's own queued paging packets are cancelled with the rest. The model has no Plug and Play
teardown (``DxgkDdiStopDevice``), so the run simply goes on with an idle GPU until its end.

The stop is logged as ``AdapterStop`` (docs/events.md); the scenario field is ``[adapter] stop_at``
(docs/scenarios.md). Software scheduler only: under hardware scheduling the scenario is refused.
"""

from __future__ import annotations


class AdapterStop:
    """The stop of one adapter's :class:`~wddmsim.dxgkrnl.vidsch.VidSch` (see the module doc)."""

    def __init__(self, adapter):
        self.adapter = adapter
        self.stopped_at: int | None = None

    def stop(self) -> None:
        """Stop the scheduler now (PASSIVE_LEVEL): cancel, reset, remove (see the module doc)."""
        adapter = self.adapter
        if self.stopped_at is not None:
            return
        vs = adapter.vidsch
        tdr = vs.tdr
        sim = adapter.sim
        now = sim.now
        self.stopped_at = now
        vs.stopped = True
        for q in vs.nodes:
            held = q.submitting
            if held is not None:
                # The node's worker took this packet from its context's queue to patch and submit it
                # and has not yet called the driver: it never reached the hardware queue, so it is
                # pending like the packets still queued, and is cancelled with them (the worker's
                # own submission, when its time comes, finds it gone: VidSch._submit_later).
                q.submitting = None
                q.worker_busy = False
                held.context.queue.appendleft(held)
        system = list(vs.vidmm._system_contexts.values())
        contexts = [c for c in adapter.contexts if not c.destroyed] + system
        pending = sum(len(c.queue) for c in contexts)
        on_hw = sum(len(q.hw) - q.stopped + len(q.preemption.preempted) for q in vs.nodes)
        if adapter.trace is not None:
            adapter.trace.emit(now, "AdapterStop", {"pending": pending, "on_hardware": on_hw})
        if any(len(q.hw) > q.stopped for q in vs.nodes):
            self._reset(vs, tdr)
        else:
            self._cancel_taken_back(vs)
        for ctx in system:
            adapter.drop_queue(ctx)
        for proc in adapter.processes:
            for dev in proc.devices:
                tdr.device_error(dev, "adapter stopped")

    def _reset(self, vs, tdr) -> None:
        """The driver abandons what it holds: DxgkDdiResetFromTimeout, every packet on a hardware
        queue is cancelled, DxgkDdiRestartFromTimeout (either failing is bug check 0x116)."""
        now = self.adapter.sim.now
        for q in vs.nodes:
            q.tdr.resetting = True
        try:
            tdr.must_succeed("DxgkDdiResetFromTimeout")
            if vs.truth is not None:
                vs.truth.adapter_reset()
            for q in vs.nodes:
                hw = q.hw
                busy = len(hw) > q.stopped
                taken = []
                while len(hw) > q.stopped:
                    taken.append(hw.pop())
                taken.reverse()
                for p in taken:
                    vs.off_hardware(p)
                    tdr._stop(p, q, "Reset")
                    self._cancel(vs, p)
                q.last_completed = q.last_submitted
                if busy and q.busy_since >= 0:
                    vs.charge(q, taken[0], now)
                tdr._clear_preemption(q)
            self._cancel_taken_back(vs)
            tdr.must_succeed("DxgkDdiRestartFromTimeout")
        finally:
            for q in vs.nodes:
                q.tdr.resetting = False
            vs.retire()

    def _cancel_taken_back(self, vs) -> None:
        """Packets a preemption took off the hardware whose DPC has not put them back yet: they had
        reached the hardware, so they are cancelled without DxgkDdiCancelCommand."""
        for q in vs.nodes:
            st = q.preemption
            for p in st.preempted:
                self._cancel(vs, p)
            st.preempted.clear()
            st.answered = False
            st.cand = None

    def _cancel(self, vs, p) -> None:
        """``p`` had reached the hardware: its fence completes as cancelled, the reset told the driver."""
        self.adapter.cancel_packet(p, reached_hardware=True)
        vs.retired_from(p.context)
