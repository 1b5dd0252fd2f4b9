"""The workload kinds of a scenario file, as generator processes.

- ``frame_loop``: a game's render thread. Every ``1/fps`` it renders ``packets_per_frame`` packets
  of ``work`` GPU time (varied by ``jitter``) and, with ``present``, presents the frame (a blt of a
  128x128 back buffer to the primary). At most ``max_frame_latency`` frames are queued: as DXGI's
  ``IDXGIDevice1::SetMaximumFrameLatency`` says, the present of frame N blocks, inside the present
  call, until frame N - max_frame_latency has left the queue (its last packet, the present, retired),
  so with a maximum of 3 the fourth present is the first that can block, and the time it waits is
  part of the call (PresentMon's MsInPresentAPI). Without ``present`` the same wait ends the frame.
  A frame that starts late starts at once; missed frame slots are skipped, not bunched.
  ``fps_changes`` change the target rate: the gap after a frame slot is that of the rate in
  effect at the slot.
- ``compute_batch``: submits ``batch`` packets of ``work``, waits for the last to retire (unless
  ``sync`` is false), idles ``interval``, and repeats: a client of drm_sched's scheduling tests.
  With ``window``, no more than that many of its packets are in flight: each submission first
  waits for the packet ``window`` back (drm_sched's interleaved submitters).
- ``copy_stream``: every ``interval``, one COPY of ``size`` bytes between two allocations (the bytes
  really move; the copy's duration is the engine's bandwidth model).
- ``memory_pressure``: more allocations than video memory holds; each packet fills some of them
  with their own pattern (``pattern_of``), so VidMm evicts and pages in.
- ``bursty``: bursts of ``burst`` packets of ``work``, separated by exponential idle gaps of mean
  ``mean_gap`` (drawn from the context's own random stream).
- ``script``: explicit packets at given times (tests and small examples); a packet may wait for a
  monitored fence value (held by the OS, or a WAIT command under hardware scheduling) and end with
  the GPU's write of one.
- ``chain``: one member of a chain of packets passed along through a shared monitored fence (GPU
  virtual addressing): packet k waits for the fence to reach ``initial + k`` and its buffer ends
  with the GPU's write of ``initial + k + 1``; the packets are dealt round robin to the chain's
  members. Everything is submitted at once; the OS (``wait = "os"``) or the GPU (``"gpu"``) holds
  each until its turn. With ``window``, no more than that many of the member's packets are in
  flight (each submission first waits for its packet ``window`` back to retire), so a long chain
  is submitted as it runs.

All times are integer ns; ``start`` delays the first submission; ``count`` bounds frames, batches,
copies or bursts (None: until the run ends).

Work is made as it is submitted: a generator holds counters and the few packet numbers it may
still wait for, never a list of the work it describes, so a ``count`` or ``repeat`` of 10^9 in a
short run costs what the run submits, and memory follows the work in flight. (What is in flight is
the workload's own doing: a client that never waits, such as ``compute_batch`` with ``sync =
false`` and no ``window``, a ``script`` packet's ``repeat``, or a ``chain`` without ``window``,
queues everything it submits in the OS.)

Spec: the reference scenarios (tests/reference/).
"""

from __future__ import annotations

from collections import deque

from ..ddi.ntstatus import NTSTATUS, status_name
from ..dxgkrnl.errors import ApiError
from ..umd import Copy, Fill, Target, Work
from .surfaces import SURFACE_BYTES, SURFACE_H, SURFACE_W
from .swapchain import SwapChainApp

DEVICE_REMOVED = int(NTSTATUS.STATUS_DEVICE_REMOVED)



def _jittered(rng, work: int, jitter: float) -> int:
    if not jitter:
        return work
    return max(0, round(work * (1.0 + rng.uniform(-jitter, jitter))))


def _present(rt, ctx, w, surfaces, frame, start):
    """The frame's present, as ``w.present_mode`` says, for a present call that began at ``start``
    (generator; returns the packet's seq)."""
    kmt = rt.kmt
    back, primary, second = surfaces
    mode = w.present_mode
    if mode == "composed":
        seq = yield from rt.present_composed(ctx, back, primary, SURFACE_BYTES, w.vidpn_source, call_start=start)
        return seq
    if mode == "blt":
        seq = yield from kmt.Present(ctx, back, primary, SURFACE_W, SURFACE_H, "blt", 1, w.vidpn_source,
                                     call_start=start)
        return seq
    # Flips alternate between two back buffers (a swap chain of two).
    buf = back if frame % 2 else second
    seq = yield from kmt.Present(ctx, buf, None, SURFACE_W, SURFACE_H, mode, w.sync_interval, w.vidpn_source,
                                 call_start=start)
    return seq


def frame_loop(rt, ctx, w, rng, surfaces):
    kmt = rt.kmt
    sim = kmt.sim
    period = round(1e9 / w.fps)
    if w.start:
        yield w.start
    changes = [(sim.now + c.at, round(1e9 / c.fps)) for c in w.fps_changes]
    frame = 0
    # The last packet of each of the latest max_frame_latency frames, oldest first: all a present
    # may wait for, so memory does not grow with the frames run.
    last_of_frame: deque[int] = deque(maxlen=w.max_frame_latency)
    next_slot = sim.now
    while w.count is None or frame < w.count:
        while changes and changes[0][0] <= next_slot:
            period = changes.pop(0)[1]
        frame += 1
        seq = 0
        rt.release(ctx)  # the frame is one job: its packets share its deadline
        for _ in range(w.packets_per_frame):
            seq = yield from rt.submit(ctx, (Work(_jittered(rng, w.work, w.jitter)),))
        # The present call begins; it blocks while max_frame_latency frames are queued, until the
        # oldest of them (frame N - max_frame_latency) leaves the queue.
        start = sim.now
        if len(last_of_frame) == w.max_frame_latency:
            yield rt.wait(ctx, last_of_frame[0])  # frame N - max_frame_latency
        if w.present:
            seq = yield from _present(rt, ctx, w, surfaces, frame, start)
        last_of_frame.append(seq)
        next_slot += period
        if next_slot > sim.now:
            yield next_slot - sim.now
        else:
            # Late: start the next frame at once and count the following slots from now.
            next_slot = sim.now


def compute_batch(rt, ctx, w, rng):
    if w.start:
        yield w.start
    n = 0
    ops = (Work(w.work),)
    window = w.window
    seq = 0
    while w.count is None or n < w.count:
        n += 1
        for _ in range(w.batch):
            if window is not None and seq >= window:
                # A sliding window: the packet ``window`` back must retire before the next goes.
                yield rt.wait(ctx, seq - window + 1)
            seq = yield from rt.submit(ctx, ops)
        if w.sync:
            yield rt.wait(ctx, seq)
        if w.interval:
            yield w.interval


def copy_stream(rt, ctx, w, rng, allocations):
    src, dst = allocations
    if w.start:
        yield w.start
    ops = (Copy(Target(src), Target(dst), w.size),)
    n = 0
    while w.count is None or n < w.count:
        n += 1
        yield from rt.submit(ctx, ops)
        yield w.interval


def pattern_of(index: int) -> int:
    """The u32 a memory_pressure workload fills its allocation ``index`` with."""
    return 0xA5000000 | (index * 0x10101) & 0xFFFFFF


def _allocation_call(arg) -> None:
    """D3DKMTOfferAllocations or D3DKMTReclaimAllocations2 by the workload of ``ctx``; a device in
    error fails it (STATUS_DEVICE_REMOVED), which the application ignores."""
    call, ctx, allocations = arg
    try:
        call(ctx.device, allocations)
    except ApiError:
        pass


def memory_pressure(rt, ctx, w, rng, allocations):
    if w.start:
        yield w.start
    n = 0
    turn = 0
    while w.count is None or n < w.count:
        n += 1
        picked = [(turn + k) % w.allocations for k in range(w.touch)]
        turn = (turn + w.touch) % w.allocations
        if w.offer:
            picked = [i for i in picked if not allocations[i].offered]  # offered: not used until reclaimed
        ops = tuple(Fill(Target(allocations[i]), w.size, pattern_of(i)) for i in picked) + (Work(w.work),)
        yield from rt.submit(ctx, ops)
        if w.interval:
            yield w.interval


def bursty(rt, ctx, w, rng):
    if w.start:
        yield w.start
    n = 0
    ops = (Work(w.work),)
    while w.count is None or n < w.count:
        n += 1
        for _ in range(w.burst):
            yield from rt.submit(ctx, ops)
        yield max(1, round(rng.expovariate(1.0 / w.mean_gap)))


def script(rt, ctx, w, rng, fences=None):
    sim = rt.sim
    base = sim.now + w.start
    for p in sorted(w.packets, key=lambda p: p.at):
        t = base + p.at
        if t > sim.now:
            yield t - sim.now
        wait = (fences[p.wait_fence], p.wait_value) if p.wait_fence is not None else None
        signal = (fences[p.signal_fence], p.signal_value) if p.signal_fence is not None else None
        for i in range(p.repeat):
            if signal is not None and p.signal_step:
                signal = (signal[0], p.signal_value + i * p.signal_step)
            if wait is not None and p.wait_by == "os":
                rt.kmt.WaitForSynchronizationObjectFromGpu(ctx, *wait)
                yield from rt.submit(ctx, (Work(p.work),), signal=signal, null_rendering=p.null_rendering)
            else:
                yield from rt.submit(ctx, (Work(p.work),), wait=wait, signal=signal, null_rendering=p.null_rendering)


def chain(rt, ctx, w, rng, fence):
    if w.start:
        yield w.start
    ops = (Work(w.work),)
    base = fence.initial
    window = w.window
    recent: deque[int] = deque()
    for j in range(w.count):
        if window is not None and len(recent) == window:
            # At most ``window`` of this member's packets in flight: wait for the one ``window`` back.
            yield rt.wait(ctx, recent.popleft())
        k = base + w.position + j * w.members
        if w.wait == "os":
            rt.kmt.WaitForSynchronizationObjectFromGpu(ctx, fence, k)
            seq = yield from rt.submit(ctx, ops, signal=(fence, k + 1))
        else:
            seq = yield from rt.submit(ctx, ops, wait=(fence, k), signal=(fence, k + 1))
        if window is not None:
            recent.append(seq)


def _until_removed(sim, ctx, gen):
    """Run ``gen`` until an API call fails: STATUS_DEVICE_REMOVED after its device went to error,
    or the error of a failing driver entry point. The application stops submitting (a real one
    would recreate its device); the status is kept in the context's ``api_error``."""
    try:
        return (yield from gen)
    except ApiError as e:
        if e.status == DEVICE_REMOVED:
            ctx.removed_at = sim.now
        ctx.api_error = getattr(e, "api_error", None) or status_name(e.status)
        return None


def start_workload(rt, ctx, w, rng, fences=None):
    """Start the process for workload ``w`` (a scenario workload model) on ``ctx`` through the
    runtime ``rt`` (:class:`~wddmsim.workloads.runtime.Runtime`); ``fences``: the scenario's
    monitored fences by name."""
    kmt = rt.kmt
    sim = kmt.sim
    kind = w.kind
    if kind == "frame_loop":
        dev = ctx.device
        surfaces = [kmt.CreateAllocation(dev, SURFACE_BYTES), kmt.CreateAllocation(dev, SURFACE_BYTES)]
        surfaces.append(kmt.CreateAllocation(dev, SURFACE_BYTES) if w.present_mode.startswith("flip") else None)
        gen = frame_loop(rt, ctx, w, rng, surfaces)
    elif kind == "swap_chain":
        gen = SwapChainApp(rt, ctx, w, rt.compositors.get(w.vidpn_source)).run()
    elif kind == "compute_batch":
        gen = compute_batch(rt, ctx, w, rng)
    elif kind == "copy_stream":
        dev = ctx.device
        allocs = (kmt.CreateAllocation(dev, w.size), kmt.CreateAllocation(dev, w.size))
        ctx.workload_allocations = allocs
        gen = copy_stream(rt, ctx, w, rng, allocs)
    elif kind == "memory_pressure":
        allocs = [kmt.CreateAllocation(ctx.device, w.size, w.segment) for _ in range(w.allocations)]
        ctx.workload_allocations = allocs
        gen = memory_pressure(rt, ctx, w, rng, allocs)
        for call in w.offer:
            sim.at(call.at, _allocation_call, (kmt.OfferAllocations, ctx, [allocs[i] for i in call.allocations]))
        for call in w.reclaim:
            sim.at(call.at, _allocation_call, (kmt.ReclaimAllocations, ctx, [allocs[i] for i in call.allocations]))
    elif kind == "bursty":
        gen = bursty(rt, ctx, w, rng)
    elif kind == "script":
        gen = script(rt, ctx, w, rng, fences)
    elif kind == "chain":
        gen = chain(rt, ctx, w, rng, fences[w.fence])
    else:
        raise ValueError(f"unknown workload kind {kind!r}")
    return sim.process(_until_removed(sim, ctx, gen))
