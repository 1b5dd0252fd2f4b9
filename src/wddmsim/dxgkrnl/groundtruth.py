"""Ground truth: what the GPU model really fetched and ran, held against what the driver reported.

Windows knows a GPU only through its driver: a fence the driver reports in
``DXGK_INTERRUPT_DMA_COMPLETED`` is complete, a ``LastCompletedFenceId`` in
``DXGK_INTERRUPT_DMA_PREEMPTED`` names work that finished, and nothing tells the OS whether the
engine ever read the DMA buffer it was given (see "Submitting a command buffer",
https://learn.microsoft.com/windows-hardware/drivers/display/submitting-a-command-buffer, and
DXGKARGCB_NOTIFY_INTERRUPT_DATA,
https://learn.microsoft.com/windows-hardware/drivers/ddi/d3dkmddi/ns-d3dkmddi-_dxgkargcb_notify_interrupt_data).
The model can see more. The GPU's bus observer (:attr:`wddmsim.gpu.device.GPU.bus`) tells this
module each time an engine starts executing an indirect buffer and each time it has executed a
buffer called from its ring to the end; the checks below hold the driver's reports against that
(rule numbers and names are the rule catalogue's: ``wddmsim rules N`` prints rule N, docs/rules.md
lists them all):

- rule 37, LastCompletedAdvancesOnlyOnCompletion: a packet a DMA_COMPLETED report completes (the
  report is cumulative: every packet of the node up to its fence) must have been executed to the
  end of its submitted range by some engine at or before the report. This catches a driver whose
  DxgkDdiSubmitCommand returns success without putting the buffer on its ring (the next fence
  retires it), one that reports a fence before the buffer ahead of it has run, and a completion
  reported on the wrong node;
- rule 36, PreemptLastCompletedValid: the same for the packets DMA_PREEMPTED's
  LastCompletedFenceId declares complete (work a preemption stopped in the middle of, or never
  started, reported as done and so lost);
- rule 14, NullRenderingFenceOnly: the GPU fetched no byte of a NullRendering packet's DMA buffer
  (judged by the registered rule when the packet's fence comes back);
- rule 5, DmaSubmissionRangeInBuffer: every fetch from a ring that touches the DMA buffer of a
  packet in flight lies inside the submitted range of some packet in flight (a driver that runs
  bytes of a DMA buffer outside ``DmaBufferSubmissionStartOffset..EndOffset``);
- rule 65, PreemptionGranularityCoarsest: the granularities a PreemptionAware driver reports in
  D3DKMDT_PREEMPTION_CAPS are, for graphics and for compute, the coarsest of the engines that run
  that kind of work, as the GPU model's engines really stop
  (https://learn.microsoft.com/windows-hardware/drivers/ddi/d3dkmdt/ns-d3dkmdt-_d3dkmdt_preemption_caps;
  the engines' granularities by their caps values: docs/gpu-programming.md);
- rule 96, ProgressFenceReleaseTiming: under hardware scheduling, a queue's progress fence reaching
  V completes every submission with an id up to V; each must have had its buffer run to the end
  by an engine by the time the OS reads the value (whether the value is written by the buffer's
  last instruction or after retirement; DxgkDdiSubmitCommandToHwQueue,
  https://learn.microsoft.com/windows-hardware/drivers/ddi/d3dkmddi/nc-d3dkmddi-dxgkddi_submitcommandtohwqueue);
- rule 114, ResetEngineLeavesQueueEmpty: when DxgkDdiResetEngine returns success, the engine that
  ran the node's packets is idle with nothing on its ring (DxgkDdiResetEngine,
  https://learn.microsoft.com/windows-hardware/drivers/ddi/d3dkmddi/nc-d3dkmddi-dxgkddi_resetengine);
- rule 110, NoGpuMemoryAccessAfterReset: when DxgkDdiResetFromTimeout returns success, every engine
  is idle with nothing on its ring: from then until DxgkDdiRestartFromTimeout the GPU must not
  touch memory (https://learn.microsoft.com/windows-hardware/drivers/ddi/d3dkmddi/nc-d3dkmddi-dxgkddi_resetfromtimeout),
  and an engine still running or with commands queued would. (The OS calls the two at one virtual
  instant, so the model judges the state the reset left rather than accesses in between.)

Beside the checks, the bus gives the GPU's own account of its time per process (software scheduler,
:meth:`GroundTruth.gpu_busy`), in engine busy time (``Engine.busy_ns``: command costs, WORK,
transfers, a flip's wait for its vsync, time hung):

- the time an engine spends in a packet's DMA buffer called from its ring, from the moment it
  starts executing it until it leaves it (its end, a preemption stop, a reset or a fault), counts
  for the packet's process;
- the rest of the engine's time on its ring (the INDIRECT, the fence, an address-space switch, the
  WORK a driver puts on the ring for what a preemption left owed) counts for the submission it
  belongs to: the ring runs submissions in the order the driver was given them, and each ends in
  an interrupting FENCE on the ring with its fence id, so the ring time up to a fence (or up to a
  preemption stop, a reset or a fault) belongs to the oldest packet of the node not yet fenced.

Windows has no such truth: its per-process GPU time (GPUView, Task Manager) is what the OS saw,
the packet at the bottom of each node's hardware queue from DmaPacketStart to DmaPacketStop; the
run summary shows both.

A broken check is the verifier's: in strict mode bug check 0xC4 DRIVER_VERIFIER_DETECTED_VIOLATION
with the rule's number, the message starting "ground truth:" (Windows could not have raised it; the
report names these checks apart).

Time: the observer reports the engine's local time, which may run ahead of the clock (an engine
computes when later commands will land); a buffer "finished" at a time still to come has not
finished yet, so a report is judged against the finish time, not merely its existence.
"""

from __future__ import annotations

from dataclasses import replace

from ..ddi import rules as R
from .present import FLAG_NULL_RENDERING

#: The rules this module judges, for the report's "exercised" list.
RULES = (5, 14, 36, 37, 65, 96, 110, 114)
#: How a ground-truth violation's message begins (reports name these checks apart).
MARK = "ground truth:"

_NEVER = -1

#: An engine granularity of the GPU model as D3DKMDT_{GRAPHICS,COMPUTE}_PREEMPTION_GRANULARITY
#: (docs/gpu-programming.md), coarsest first.
_GRANULARITY = {"none": 0, "dma_buffer": 100, "primitive": 200, "interval": 300, "instruction": 500}


class GroundTruth:
    """The bus observer of one adapter's GPU and the checks that use it (see the module doc)."""

    __slots__ = ("vidsch", "verifier", "_by_end", "_buffers", "_null", "judged", "fetches", "engines",
                 "_engine_of", "_queued", "_open", "_ahead", "busy", "_ring", "_mark", "_in_buffers")

    def __init__(self, vidsch, verifier):
        self.vidsch = vidsch
        self.verifier = verifier
        #: (address space, end address of a packet's submitted range) -> the packet (the latest
        #: submitted there; space 0: physical addresses, else the root table of its process)
        self._by_end: dict[tuple[int, int], object] = {}
        #: start address of a packet's DMA buffer -> the packets in flight in it (a paging buffer
        #: serves several submissions, each with its own range)
        self._buffers: dict[int, list] = {}
        #: start address of a NullRendering packet's DMA buffer -> the packet in flight
        self._null: dict[int, object] = {}
        #: whether a check has been judged at least once (rules exercised)
        self.judged: set[int] = set()
        self.fetches = 0
        #: the GPU's engines (``idle``, ``state``, ``ring_used``), set by whoever connects the bus
        self.engines = ()
        #: node ordinal -> the engine last seen finishing one of its packets
        self._engine_of: dict[int, int] = {}
        #: (address space, end address of a hardware-queue buffer) -> its queue entry
        self._queued: dict[tuple[int, int], object] = {}
        #: engine -> (process, engine busy_ns, local time) when it began the DMA buffer it is in
        self._open: dict[int, tuple[object, int, int]] = {}
        #: engine -> [(process, start, end)]: buffers credited when the engine reached their end at a
        #: local time still to come (a rewind takes back what it will not run)
        self._ahead: dict[int, list[tuple[object, int, int]]] = {}
        #: process -> engine ns spent for it (:meth:`gpu_busy` adds what is in progress)
        self.busy: dict[object, int] = {}
        #: node ordinal -> its packets given to the driver and not yet fenced, in submission order
        self._ring: dict[int, list] = {}
        #: engine -> its busy_ns when its current ring segment began (the last fence or stop)
        self._mark: dict[int, int] = {}
        #: engine -> busy ns credited to DMA buffers since then
        self._in_buffers: dict[int, int] = {}

    # -- what the OS tells it ----------------------------------------------------------------------
    @staticmethod
    def span(p) -> tuple[int, int, int, int]:
        """(buffer start, buffer end, submitted start, submitted end) of packet ``p``'s DMA buffer:
        physical (``dma`` and the submission offsets) or GPU virtual (``va``, all of it)."""
        if p.va:
            return p.va, p.va + p.dma_size, p.va, p.va + p.dma_size
        return p.dma, p.dma + p.dma_size, p.dma + p.start_off, p.dma + p.end_off

    def _space(self, ctx, virtual: bool) -> int:
        """The address space a buffer of ``ctx`` runs in: its process's root table, or 0."""
        if not virtual or ctx.system:
            return 0
        return self.vidsch.adapter.wddm2.gpuva.space(ctx.device.process).root

    def submitted(self, p) -> None:
        """The driver is given packet ``p`` (it enters its node's hardware queue on success)."""
        va = p.va
        if va:
            base, lo, hi = va, va, va + p.dma_size
        else:
            base = p.dma
            lo, hi = base + p.start_off, base + p.end_off
        ctx = p.context
        ring = self._ring.get(ctx.node)
        if ring is None:
            ring = self._ring[ctx.node] = [p]
        elif p not in ring:
            ring.append(p)
        if p.flags & FLAG_NULL_RENDERING:
            p.executed = False
            self._null[base] = p
            return
        if hi <= lo or p.rejected:
            return
        if p.ran_at is None:
            # A resubmission keeps what the engine did: a buffer a preemption stopped after its
            # last command, owing only WORK time, is not fetched again (its finish time, projected
            # when it ran, is at or before the resubmitted WORK can end).
            p.ran_at = _NEVER
        if va:
            self._by_end[(self._space(ctx, True), hi)] = p
            return  # the range check (rule 5) is made on physical DMA buffers
        self._by_end[(0, hi)] = p
        live = self._buffers.get(base)
        if live is None:
            self._buffers[base] = [p]
        elif p not in live:
            live.append(p)

    def left(self, p) -> None:
        """Packet ``p`` left the hardware queue: retired, aborted, or taken back by a preemption or
        a reset (a resubmission registers it again)."""
        ctx = p.context
        ring = self._ring.get(ctx.node)
        if ring and p in ring:
            ring.remove(p)
        va = p.va
        base = va or p.dma
        live = self._buffers.get(base)
        if live is not None and p in live:
            live.remove(p)
            if not live:
                del self._buffers[base]
        key = (self._space(ctx, True), va + p.dma_size) if va else (0, base + p.end_off)
        by_end = self._by_end
        if by_end.get(key) is p:
            del by_end[key]

    # -- what the bus shows ------------------------------------------------------------------------
    def fetched(self, engine: int, address: int, size: int, t: int, nested: bool, space: int = 0) -> None:
        """An engine began executing the indirect buffer at ``address``."""
        self.fetches += 1
        mine = None
        if not nested:
            mine = self._by_end.get((space, address + size))
            if mine is not None:
                self._open[engine] = (mine.context.device.process, self.engines[engine].busy_ns, t)
        if self._null:
            for start, p in self._null.items():
                if start <= address < start + p.dma_size:
                    p.executed = True
        if nested or space or not self._buffers:
            return
        end = address + size
        if mine is not None and not mine.va and mine.dma + mine.start_off <= address:
            # The usual fetch: exactly up to the end of a physical packet's submitted range, from
            # inside it. If that packet is in flight the range check below would pass on it.
            live = self._buffers.get(mine.dma)
            if live is not None and mine in live:
                return
        touched = False
        for start, live in self._buffers.items():
            for p in live:
                b_lo, b_hi, lo, hi = self.span(p)
                if address < b_hi and end > b_lo:
                    touched = True
                    if lo <= address and end <= hi:
                        return
        if touched:
            self.judged.add(5)
            self._violation(5, "DmaSubmissionRangeInBuffer",
                            f"{MARK} engine {engine} fetched [{address:#x}, {end:#x}), outside the submitted "
                            f"range of every DMA buffer in flight there")

    def finished(self, engine: int, end: int, t: int, space: int = 0) -> None:
        """An engine executed the buffer called from its ring up to ``end`` (in address space
        ``space``)."""
        p = self._by_end.get((space, end))
        if p is not None:
            p.ran_at = t
            self._engine_of[p.context.node] = engine
        if self._open:
            self._close(engine, t)
        if self._queued:
            e = self._queued.get((space, end))
            if e is not None:
                e.ran_at = t

    def rewound(self, engine: int, t: int) -> None:
        """The engine's work past local time ``t`` will not happen: take back what was credited for
        it (the engine's ``busy_ns`` is already rewound, so a buffer still open needs nothing)."""
        ahead = self._ahead.get(engine)
        if not ahead:
            return
        keep = []
        for process, start, end in ahead:
            if end > t:
                back = end - max(start, t)
                self.busy[process] -= back
                self._in_buffers[engine] = self._in_buffers.get(engine, 0) - back
                if start < t:
                    keep.append((process, start, t))
            else:
                keep.append((process, start, end))
        self._ahead[engine] = keep

    def stopped(self, engine: int, t: int) -> None:
        """The engine stopped at ``t`` (a preemption stop, a reset, a fault): the buffer it was in,
        if any, and its ring time so far count for the packet it was running, the oldest of its
        node not yet fenced (the OS takes back or aborts the packets behind it)."""
        if self._open:
            self._close(engine, t)
        ring = self._ring.get(self._node_of(engine))
        self._segment(engine, ring[0] if ring else None)

    def ring_fence(self, engine: int, value: int) -> None:
        """An interrupting FENCE of the ring wrote ``value`` (now): the submissions of the node
        with a fence id up to it are done on the GPU; the ring time since the last fence or stop
        counts for the one it ends."""
        node = engine  # _node_of(engine), inline
        for n, e in self._engine_of.items():
            if e == engine:
                node = n
                break
        ring = self._ring.get(node)
        last = None
        value &= 0xFFFFFFFF
        while ring and (value - ring[0].fence) & 0xFFFFFFFF < 0x80000000:
            last = ring.pop(0)
        self._segment(engine, last)

    def _node_of(self, engine: int) -> int:
        for node, e in self._engine_of.items():
            if e == engine:
                return node
        return engine  # until seen otherwise: node n runs on engine n

    def _segment(self, engine: int, p) -> None:
        """Close the engine's ring segment, crediting its time outside DMA buffers to ``p``."""
        busy = self.engines[engine].busy_ns
        ring_ns = busy - self._mark.get(engine, 0) - self._in_buffers.get(engine, 0)
        self._mark[engine] = busy
        self._in_buffers[engine] = 0
        if p is not None and ring_ns > 0:
            proc = p.context.device.process
            self.busy[proc] = self.busy.get(proc, 0) + ring_ns

    def _close(self, engine: int, t: int) -> None:
        opened = self._open.pop(engine, None)
        if opened is None:
            return
        process, mark, _start = opened
        ns = self.engines[engine].busy_ns - mark
        self.busy[process] = self.busy.get(process, 0) + ns
        self._in_buffers[engine] = self._in_buffers.get(engine, 0) + ns
        now = self.vidsch.sim.now
        ahead = self._ahead.get(engine)
        if ahead:
            ahead[:] = [x for x in ahead if x[2] > now]
        if t > now:
            if ahead is None:
                self._ahead[engine] = [(process, _start, t)]
            else:
                ahead.append((process, _start, t))

    def gpu_busy(self, now: int) -> dict:
        """Process -> engine ns spent for it up to ``now``: what has been credited, less what
        engines ran ahead past ``now``, plus what is in progress (the buffer an engine is in, and
        the ring time of the submission it is running)."""
        out = dict(self.busy)
        for engine, eng in enumerate(self.engines):
            done = eng.busy_ns - eng.ahead_ns  # the engine's busy time up to now
            beyond = 0
            for process, start, end in self._ahead.get(engine, ()):
                if end > now:
                    d = end - max(start, now)
                    out[process] -= d
                    beyond += d
            buffers = self._in_buffers.get(engine, 0) - beyond
            opened = self._open.get(engine)
            if opened is not None:
                process, mark, _start = opened
                d = max(0, done - mark)  # (a buffer the engine reaches only after now: nothing yet)
                out[process] = out.get(process, 0) + d
                buffers += d
            ring = self._ring.get(self._node_of(engine))
            rest = done - self._mark.get(engine, 0) - buffers
            if ring and rest > 0:
                proc = ring[0].context.device.process
                out[proc] = out.get(proc, 0) + rest
        return out

    # -- what the driver reports -------------------------------------------------------------------
    def completing(self, node_queue, fence: int, preempted: bool) -> None:
        """The driver reports every packet of ``node_queue`` up to ``fence`` complete (DMA_COMPLETED, or
        DMA_PREEMPTED's LastCompletedFenceId when ``preempted``): each must have run by now."""
        now = self.vidsch.sim.now
        rule, name = (36, "PreemptLastCompletedValid") if preempted else (37, "LastCompletedAdvancesOnlyOnCompletion")
        hw = node_queue.hw
        for i in range(node_queue.stopped, len(hw)):
            p = hw[i]
            if p.fence > fence:
                break
            ran = p.ran_at
            if ran is None or p.rejected:
                continue  # nothing to run (an empty range, NullRendering, refused)
            self.judged.add(rule)
            if ran == _NEVER or ran > now:
                how = "never ran it" if ran == _NEVER else f"is still running it (it ends at {ran} ns)"
                report = "DMA_PREEMPTED.LastCompletedFenceId" if preempted else "DMA_COMPLETED"
                self._violation(rule, name,
                                f"{MARK} {report} {fence} on node {node_queue.ordinal} completes fence {p.fence} "
                                f"({p.kind} packet of context {p.context.handle}), but the GPU {how}")
                return

    def queued(self, q, e) -> None:
        """A buffer entry of hardware queue ``q`` goes to DxgkDdiSubmitCommandToHwQueue."""
        if e.size:
            e.ran_at = _NEVER
            self._queued[(self._space(q.context, True), e.va + e.size)] = e

    def progress_reached(self, q, e, value: int) -> None:
        """Rule 96: queue ``q``'s progress fence reads ``value``, which completes entry ``e``."""
        ran = e.ran_at
        if ran is None:
            return
        self.judged.add(96)
        key = (self._space(q.context, True), e.va + e.size)
        if self._queued.get(key) is e:
            del self._queued[key]
        now = self.vidsch.sim.now
        if ran == _NEVER or ran > now:
            how = "never ran it" if ran == _NEVER else f"is still running it (it ends at {ran} ns)"
            self._violation(96, "ProgressFenceReleaseTiming",
                            f"{MARK} the progress fence of hardware queue {q.handle} reads {value}, which completes "
                            f"submission {e.progress_id}, but the GPU {how}")

    def null_rendering_done(self, node_queue, p) -> None:
        """Rule 14 on a NullRendering packet whose fence came back (it is completing)."""
        del self._null[p.va or p.dma]
        vs = self.vidsch
        if self.verifier.mode == "off":
            return
        self.judged.add(14)
        facts = replace(node_queue.facts, fence_signaled=True, work_executed=p.executed)
        if p.va:
            name, args = "DXGKARG_SUBMITCOMMANDVIRTUAL", type(node_queue.virtual_args).from_buffer_copy(p.submit_bytes)
        else:
            name, args = "DXGKARG_SUBMITCOMMAND", vs._submit_cls.from_buffer_copy(p.submit_bytes)
        found = self.verifier.find(name, args, facts)
        if found:
            found = [replace(v, message=f"{MARK} {v.message}") if v.rule == 14 else v for v in found]
            self.verifier.handle(found, name, args, node_queue.submit_address)

    def engine_reset(self, node_queue) -> None:
        """Rule 114: DxgkDdiResetEngine returned success for ``node_queue``."""
        e = self._engine_of.get(node_queue.ordinal)
        if e is not None and e < len(self.engines):
            self._stopped((e,), 114, "ResetEngineLeavesQueueEmpty", f"DxgkDdiResetEngine on node {node_queue.ordinal}")

    def preemption_caps(self, graphics: int, compute: int) -> None:
        """Rule 65: a PreemptionAware driver reported these D3DKMDT_PREEMPTION_CAPS granularities."""
        self.judged.add(65)
        for is_compute, reported, what in ((False, graphics, "Graphics"), (True, compute, "Compute")):
            stops = [e.granularity for e in self.engines if (e.kind == "compute") == is_compute]
            if not stops:
                continue
            coarsest = min(stops, key=lambda g: _GRANULARITY[g])
            if reported != _GRANULARITY[coarsest]:
                self._violation(65, "PreemptionGranularityCoarsest",
                                f"{MARK} D3DKMDT_PREEMPTION_CAPS.{what}PreemptionGranularity is {reported}, but the "
                                f"coarsest {'compute' if is_compute else 'graphics'} engine stops at {coarsest!r} "
                                f"granularity ({_GRANULARITY[coarsest]})")
                return

    def adapter_reset(self) -> None:
        """Rule 110: DxgkDdiResetFromTimeout returned success."""
        self._stopped(range(len(self.engines)), 110, "NoGpuMemoryAccessAfterReset", "DxgkDdiResetFromTimeout")

    def _stopped(self, engines, rule: int, name: str, call: str) -> None:
        self.judged.add(rule)
        for e in engines:
            eng = self.engines[e]
            if not eng.idle or eng.ring_used:
                self._violation(rule, name, f"{MARK} {call} returned success but engine {e} is {eng.state} with "
                                            f"{eng.ring_used} bytes of commands on its ring")
                return

    def _violation(self, rule: int, name: str, message: str) -> None:
        if self.verifier.mode == "off":
            return
        self.verifier.judged_rules.add(rule)
        self.verifier.handle([R.Violation(rule, name, message, None)], "", None, 0)
