"""Reference scenario 5: contexts destroyed mid-flight.

A chain of 100 packets of 1 ms over 4 contexts (round robin, each waiting for the previous one's
monitored-fence value). At the 50th packet the application destroys all four contexts
(D3DKMTDestroyContext): once just after it completed, once while it runs on the GPU. Pass: the
packets still in the OS's software queues (never submitted) are cancelled, through
DxgkDdiCancelCommand for a driver that asks for it (CancelCommandAware) and with a Cancelled status
for every driver; the packet on the hardware finishes, and its context reaches the driver's
DxgkDdiDestroyContext only after it; every CPU waiter wakes; nothing leaks (kernel buffers back in
the pool, the driver's contexts destroyed, no fence wait left registered).
"""

from __future__ import annotations

import pytest

from reference.refsys import MS
from wddm2util import COSTS, ZERO, adapter, chain_processes, scenario

from wddmsim.runner.system import System
from wddmsim.trace import ListSink

MEMBERS, PACKETS, AT = 4, 100, 50


def place(k: int) -> tuple[int, int]:
    """Packet k (1-based) of the chain: (member, its seq on that member's context)."""
    return (k - 1) % MEMBERS, (k - 1) // MEMBERS + 1


@pytest.mark.parametrize("cost", [ZERO, COSTS], ids=["zero_cost", "default_cost"])
@pytest.mark.parametrize("cancel_aware", [True, False], ids=["cancel_aware", "not_cancel_aware"])
@pytest.mark.parametrize("moment", ["after_50th", "during_50th"])
def test_destroying_four_contexts_at_the_50th_of_100_chained_packets(moment, cancel_aware, cost):
    trace = ListSink()
    sc = scenario(adapter("va", cost, cancel_aware=cancel_aware), chain_processes(MEMBERS, PACKETS // MEMBERS),
                  fence=[{"name": "f"}], duration="1s")
    system = System(sc, trace=trace)
    kmt, ctxs = system.kmt, system.contexts
    pool_before = system.adapter.pool.in_use
    handles = [c.hDriver for c in ctxs]
    woke, destroyed_at = [], []

    def destroyer():
        if moment == "after_50th":
            member, seq = place(AT)
            yield kmt.WaitForPacket(ctxs[member], seq)
        else:
            member, seq = place(AT - 1)
            yield kmt.WaitForPacket(ctxs[member], seq)
            yield MS // 2  # packet 50 is on the GPU now, halfway
        destroyed_at.append(system.sim.now)
        for ctx in ctxs:
            kmt.DestroyContext(ctx)

    def waiter(ctx):
        yield kmt.WaitForPacket(ctx, PACKETS // MEMBERS)  # its last packet, which never runs
        woke.append((ctx.handle, system.sim.now))

    system.sim.process(destroyer())
    for ctx in ctxs:
        system.sim.process(waiter(ctx))
    r = system.run()
    assert r.bugcheck is None and r.summary["violations"] == []
    (t,) = destroyed_at
    events = trace.events
    member_of = {c.handle: i for i, c in enumerate(ctxs)}
    stops = [e for e in events if e["event"] == "QueuePacketStop" and e["context"] in member_of]
    on_hw = {(member_of[e["context"]], e["seq"]) for e in events if e["event"] == "DmaPacketQueued"
             and e["context"] in member_of}
    completed = [(member_of[e["context"]], e["seq"]) for e in stops if e["status"] == "Completed"]
    cancelled = [(member_of[e["context"]], e["seq"]) for e in stops if e["status"] == "Cancelled"]
    # Exactly the first 50 reached the hardware, and each of them finished, in chain order.
    assert completed == [place(k) for k in range(1, AT + 1)] and set(completed) == on_hw
    done_50 = [e["t"] for e in stops if e["status"] == "Completed"][-1]
    if moment == "after_50th":
        assert done_50 == t
    else:
        assert done_50 > t  # it was running at the destroy and finished afterwards
    # The other 50 never left the software queues: each cancelled once, at the destroy.
    assert sorted(cancelled) == sorted(place(k) for k in range(AT + 1, PACKETS + 1))
    assert {e["t"] for e in stops if e["status"] == "Cancelled"} == {t}
    cancels = [e for e in events if e["event"] == "DdiCall" and e["name"] == "DxgkDdiCancelCommand"]
    assert [e["t"] for e in cancels] == ([t] * (PACKETS - AT) if cancel_aware else [])
    assert system.driver.cancelled == len(cancels)
    # The driver's contexts are destroyed at once, except the one whose packet was on the GPU,
    # which goes when that packet is done.
    destroys = sorted((e["t"], e["args"]["hContext"]) for e in events
                      if e["event"] == "DdiCall" and e["name"] == "DxgkDdiDestroyContext")
    if moment == "after_50th":
        assert destroys == sorted((t, h) for h in handles)
    else:
        busy = handles[place(AT)[0]]
        assert destroys == sorted((t, h) for h in handles if h != busy) + [(done_50, busy)]
    # Every CPU waiter woke at the destroy.
    assert sorted(woke) == sorted((c.handle, t) for c in ctxs)
    # Nothing leaks.
    assert system.adapter.pool.in_use == pool_before and system.driver.contexts == {}
    assert all(c.destroyed and not c.queue and not c.gates and c.in_flight == 0 for c in ctxs)
    assert system.adapter.wddm2.fences.pending_waits(system.fences["f"]) == 0
    assert [(c["completed"], c["cancelled"], c["destroyed"]) for c in r.summary["contexts"]] == [
        (AT // MEMBERS + (m < AT % MEMBERS), PACKETS // MEMBERS - AT // MEMBERS - (m < AT % MEMBERS), True)
        for m in range(MEMBERS)]
