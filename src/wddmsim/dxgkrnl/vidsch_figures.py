"""VidSch's scheduling figures: how long contexts wait, GPU time, hand-offs, idle while waiting.

What the summary reports of the software scheduler, kept as the packets move (each a few
comparisons where a packet starts, stops or a context becomes ready or held):

- a context's wait: from when it has work it could run to when a packet of it starts on the GPU;
  the longest one is its ``worst_wait`` (:meth:`VidSchFigures.worst_wait`). A context held back by
  something other than the GPU (a GPU wait, paging, a full flip queue) is not waiting for the GPU,
  so its wait ends there.
- GPU time as the OS sees it: from a packet's ``DmaPacketStart`` (it reached the bottom of its
  node's hardware queue) to its ``DmaPacketStop``, counted for the node and for the packet's
  process (the per-process view GPUView draws: :meth:`VidSchFigures.charge`).
- hand-offs: the gap between one context stopping on a node and another context that was waiting
  there starting.
- ``idle_while_waiting_ns``: the stretches where a node's hardware queue holds nothing to run while
  the OS holds work for it (a ready context, or a packet its worker is submitting).

:class:`VidSchFigures` is a base class of :class:`~wddmsim.dxgkrnl.vidsch.VidSch` (one object, so
the per-packet path pays no extra call for the split); ``complete_through`` in
:mod:`.vidsch_complete` does the work of :meth:`~VidSchFigures.charge` and
:meth:`~VidSchFigures.stopped_running` inline, once per interrupt.
"""

from __future__ import annotations

from itertools import islice

from .vidsch_node import NodeQueue


class VidSchFigures:
    """The scheduling figures of :class:`~wddmsim.dxgkrnl.vidsch.VidSch` (see the module doc). It
    uses VidSch's ``sim``, ``policy``, ``nodes`` and ``os_busy``."""

    def idle_check(self, node_queue: NodeQueue) -> None:
        """Called where ``node_queue``'s state may have changed: its hardware queue holds nothing to
        run (nothing at the bottom) while the OS holds work for it (the policy has a ready context
        there, or the worker is submitting a packet), or not; the summary's
        ``idle_while_waiting_ns`` adds up the stretches of the first."""
        if len(node_queue.hw) == node_queue.stopped and (
                node_queue.submitting is not None or self.policy.has_ready(node_queue.ordinal)):
            if node_queue.idle_since < 0:
                node_queue.idle_since = self.sim.now
        elif node_queue.idle_since >= 0:
            node_queue.idle_waiting_ns += self.sim.now - node_queue.idle_since
            node_queue.idle_since = -1

    def idle_waiting(self, node_queue: NodeQueue) -> int:
        """``node_queue``'s idle time while the OS held work for it, the stretch going on included."""
        since = node_queue.idle_since
        return node_queue.idle_waiting_ns + (self.sim.now - since if since >= 0 else 0)

    def _waiting(self, node_queue: NodeQueue, ctx, now: int) -> None:
        """``ctx`` has work it could run: unless it runs now, its wait starts."""
        if ctx.wait_since < 0 and not (node_queue.stopped < len(node_queue.hw) and node_queue.hw[node_queue.stopped].context is ctx):
            ctx.wait_since = now

    def _blocked(self, node_queue: NodeQueue, ctx) -> None:
        """``ctx`` is held back by something other than the GPU (a GPU wait, paging, a full flip
        queue): unless a packet of it waits on the hardware queue, its wait ends here."""
        if ctx.wait_since >= 0 and not any(p.context is ctx for p in islice(node_queue.hw, node_queue.stopped, None)):
            w = self.sim.now - ctx.wait_since
            if w > ctx.worst_wait:
                ctx.worst_wait = w
            ctx.wait_since = -1

    def stopped_running(self, node_queue: NodeQueue, ctx, now: int) -> None:
        """``ctx``'s run on ``node_queue`` (since ``node_queue.busy_since``) ended now (completed or preempted)."""
        ctx.gpu_ns += now - node_queue.busy_since
        node_queue.last_stop = now
        node_queue.last_stop_ctx = ctx

    def _runs(self, node_queue: NodeQueue, ctx, now: int) -> None:
        """A packet of ``ctx`` starts on ``node_queue``: its wait, if any, ends; if another context ran
        before it while it waited, the gap between the two is a hand-off."""
        since = ctx.wait_since
        if since < 0:
            return
        w = now - since
        if w > ctx.worst_wait:
            ctx.worst_wait = w
        ctx.wait_since = -1
        prev = node_queue.last_stop_ctx
        if prev is not None and prev is not ctx and since <= node_queue.last_stop:
            node_queue.handoffs.add(now - node_queue.last_stop)
            prev.contended = ctx.contended = True

    def worst_wait(self, ctx) -> int:
        """``ctx``'s longest wait so far, the one still going on included."""
        w = ctx.worst_wait
        if ctx.wait_since >= 0 and not ctx.destroyed and not ctx.device.error:
            node_queue = self.nodes[ctx.node]
            if ctx.ready or any(p.context is ctx for p in islice(node_queue.hw, node_queue.stopped, None)):
                w = max(w, self.sim.now - ctx.wait_since)
        return w

    def charge(self, node_queue: NodeQueue, bottom, now: int) -> None:
        """The node was busy, as the OS sees it, from ``busy_since`` (the DmaPacketStart of
        ``bottom``, the packet at the bottom of its hardware queue) to ``now`` (its DmaPacketStop):
        count it for the node and for ``bottom``'s process (the per-process view GPUView draws)."""
        d = now - node_queue.busy_since
        node_queue.busy_ns += d
        proc = bottom.context.device.process
        self.os_busy[proc] = self.os_busy.get(proc, 0) + d
