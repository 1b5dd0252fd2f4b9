"""Scheduling quality under the software scheduler's ``priority_quantum`` policy: round robin
through every ready context of a priority on quantum expiry, a starvation boost that buys the
starved context real GPU time, and the summary's figures that show both (per context latency
min/mean/max, GPU time and worst wait; Jain's fairness index per priority; per node hand-offs).

Windows gives the threads of one priority time slices in turn ("Scheduling Priorities",
https://learn.microsoft.com/windows/win32/procthread/scheduling-priorities) and boosts a starved
one so that it runs ("Priority Boosts",
https://learn.microsoft.com/windows/win32/procthread/priority-boosts); the GPU scheduler's policy
follows that model (docs/scheduling.md)."""

from __future__ import annotations

import pytest

from wddmsim.runner.system import System
from wddmsim.trace import ListSink

from wddm2util import scenario_of

ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}
MS = 1_000_000
US = 1_000


def build(procs, *, granularity="interval", quantum="2ms", costs=ZERO, duration="1s", depth=None):
    node = {"name": "3D", "engine": "3d", "command_cost": 0, "preemption": granularity, "preemption_interval": "100us"}
    if depth is not None:
        node["hw_queue_depth"] = depth
    sc = scenario_of({
        "name": "quality", "duration": duration,
        "adapter": {"ddi_version": "wddm2_0", "cpu_cost": costs, "nodes": [node]},
        "scheduler": {"policy": "priority_quantum", "quantum": quantum},
        "process": [{"name": name, "priority": prio, "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "script", "packets": [{"at": 0, "work": work}] * count}}]} for name, prio, work, count in procs],
    }, "<test>")
    trace = ListSink()
    system = System(sc, trace=trace)
    return system, trace, system.run()


def runs(trace, ctx):
    """``ctx``'s turns on the GPU from the log: (start, stop) of each maximal stretch of its packets."""
    out = []
    running = None
    for e in trace.of("DmaPacketStart", "DmaPacketStop"):
        if e["event"] == "DmaPacketStart":
            if e["context"] == ctx.handle and running is None:
                running = e["t"]
            elif e["context"] != ctx.handle and running is not None:
                out.append((running, e["t"]))
                running = None
        elif e["context"] == ctx.handle and running is not None and e.get("status") == "Preempted":
            out.append((running, e["t"]))
            running = None
    if running is not None:
        out.append((running, max(e["t"] for e in trace.of("DmaPacketStop"))))
    # A packet queued next on the hardware queue is taken back with the rest by a preemption that
    # lands as it starts: a turn of no length.
    return [(a, b) for a, b in out if b > a]


def worst_gap(trace, ctx):
    """The longest time ``ctx`` (which has work from t = 0 to its last packet) did not run."""
    turns = runs(trace, ctx)
    gaps = [turns[0][0]] + [b[0] - a[1] for a, b in zip(turns, turns[1:])]
    return max(gaps)


@pytest.mark.parametrize("n", [3, 4, 7])
def test_equal_contexts_take_turns_round_robin(n):
    """n equal contexts, 12 x 1 ms each, quantum 2 ms, preemption at 100 us: every context runs
    once in every n quanta, so none waits longer than (n - 1) quanta (the bound is (n - 1) x quantum
    plus one packet; at this granularity the preemption lands exactly on the quantum's end)."""
    system, trace, result = build([(f"p{i}", "normal", "1ms", 12) for i in range(n)])
    assert result.bugcheck is None
    ctxs = system.contexts
    # The turns go p0, p1, ..., p(n-1), p0, ... each of exactly one quantum.
    first = sorted((runs(trace, c)[0][0], i) for i, c in enumerate(ctxs))
    assert first == [(2 * MS * i, i) for i in range(n)]
    for c in ctxs:
        assert all(b - a == 2 * MS for a, b in runs(trace, c))
        assert worst_gap(trace, c) == (n - 1) * 2 * MS
    by_name = {c["context"]: c for c in result.summary["contexts"]}
    for i in range(n):
        row = by_name[f"p{i}/c"]
        assert row["worst_wait_ns"] == (n - 1) * 2 * MS
        assert row["gpu_ns"] == 12 * MS
        assert row["completed"] == 12
    # Equal GPU time: Jain's index is exactly 1 over the n contending contexts.
    assert result.summary["fairness"] == [{
        "node": "3D_0", "priority_class": "normal", "priority": 0, "contexts": [f"p{i}/c" for i in range(n)],
        "gpu_ns": [12 * MS] * n, "jain": 1.0}]


def test_a_turn_at_dma_buffer_granularity_ends_with_the_packet_it_was_in():
    """Three equal contexts of 1.5 ms packets, quantum 2 ms, DMA-buffer granularity: the quantum
    expires 0.5 ms into a context's second packet, which runs to its end, so a turn is 3 ms and the
    worst wait is (n - 1) x (quantum + the rest of one packet) = 2 x 3 ms."""
    system, trace, result = build([(f"p{i}", "normal", "1500us", 8) for i in range(3)], granularity="dma_buffer")
    for c in system.contexts:
        assert all(b - a == 3 * MS for a, b in runs(trace, c))
        assert worst_gap(trace, c) == 6 * MS
    assert [c["worst_wait_ns"] for c in result.summary["contexts"]] == [6 * MS] * 3


def test_a_starvation_boost_buys_a_quantum_of_gpu_time():
    """A high-class hog and a below-normal context, 100 x 8 ms each, preemption at 50 us. The low
    context is boosted the instant it has waited 10 quanta (20 ms): the hog is preempted for it
    (reason ``starvation``); once its packet runs, the hog waits one whole quantum before it
    preempts it. Before, the hog preempted the boosted packet the instant it started: the low
    context ran nothing until the hog had finished, 800 ms later; and until issue 26 the boost
    waited for a free hardware-queue slot and then behind the hog's next 8 ms packet (2 ms of every
    34 ms; tests/test_boost_depth.py)."""
    system, trace, result = build([("hi", "high", "8ms", 100), ("lo", "below_normal", "8ms", 100)])
    hi, lo = system.contexts
    hog_done = max(e["t"] for e in trace.of("DmaPacketStop") if e["context"] == hi.handle)
    turns = [t for t in runs(trace, lo) if t[0] < hog_done]
    # Every boosted turn is exactly one quantum (2 ms), the first at 20 ms, then one every 22 ms:
    # 39 turns of 2 ms lent by the hog, whose 800 ms of work end at 878 ms.
    assert turns == [(20 * MS + 22 * MS * k, 22 * MS + 22 * MS * k) for k in range(39)]
    assert hog_done == 800 * MS + 39 * 2 * MS
    # The low context asks for the node at each turn's start; the hog asks for it back exactly at
    # each turn's end, never earlier, except at every fourth turn, where the low context's 8 ms
    # packet completes after its four quanta.
    reqs = [(e["t"], e["reason"]) for e in trace.of("PreemptRequest") if e["t"] < hog_done]
    assert reqs == sorted([(a, "starvation") for a, _b in turns]
                          + [(b, "priority") for k, (_a, b) in enumerate(turns) if k % 4 != 3])
    rows = {c["context"]: c for c in result.summary["contexts"]}
    # The low context's worst wait: its 20 ms of starvation.
    assert rows["lo/c"]["worst_wait_ns"] == 20 * MS
    assert rows["hi/c"]["worst_wait_ns"] == 2 * MS
    # After the hog, the low context runs alone to the end of the run: 200 ms of GPU time in all.
    assert rows["lo/c"]["gpu_ns"] == 200 * MS and rows["hi/c"]["gpu_ns"] == 800 * MS


def test_summary_latency_waits_handoffs_and_fairness_exactly():
    """Two equal contexts, 4 x 1 ms each, one packet in the hardware queue at a time, CPU costs
    ISR 1 us, DPC 2 us, submission 5 us. Every switch from one context to the other costs the
    ISR, the DPC and the next submission: a hand-off of 8 us."""
    costs = {"render": 0, "patch": 0, "submit": 5 * US, "isr": 1 * US, "dpc": 2 * US, "present": 0}
    system, trace, result = build([("a", "normal", "1ms", 4), ("b", "normal", "1ms", 4)], costs=costs, depth=1)
    s = result.summary
    node = s["nodes"][0]
    assert (node["handoffs"], node["handoff_min_ns"], node["handoff_mean_ns"], node["handoff_max_ns"]) == (
        3, 8 * US, 8 * US, 8 * US)
    # The log agrees: a's packet stops, b's starts 8 us later (2.013 -> 2.021 ms, then twice more).
    starts = [(e["t"], e["context"]) for e in trace.of("DmaPacketStart")]
    stops = {e["t"] for e in trace.of("DmaPacketStop")}
    switches = [t for (t, c), (_t0, c0) in zip(starts[1:], starts) if c != c0]
    assert switches == [2_021_000, 4_037_000, 6_053_000] and all(t - 8 * US in stops for t in switches)
    rows = {c["context"]: c for c in s["contexts"]}
    # Latency, queued at 0 to retired: a's four packets retire at 1.006, 2.014, 5.038, 6.046 ms.
    a, b = rows["a/c"], rows["b/c"]
    assert (a["latency_min_ns"], a["latency_mean_ns"], a["latency_max_ns"]) == (
        1_006_000, (1_006_000 + 2_014_000 + 5_038_000 + 6_046_000) // 4, 6_046_000)
    assert (b["latency_min_ns"], b["latency_max_ns"]) == (3_022_000, 8_062_000)
    # Worst waits: a from its stop at 2.013 ms to 4.037 ms, b from 4.029 ms to 6.053 ms.
    assert a["worst_wait_ns"] == b["worst_wait_ns"] == 2_024_000
    assert a["gpu_ns"] == b["gpu_ns"] == 4 * MS
    assert [f["jain"] for f in s["fairness"]] == [1.0]


def test_jain_index_of_unequal_shares():
    """Equal priority, unequal demand (2 x 1 ms against 6 x 1 ms): GPU time 2 and 6 ms, Jain's index
    (2 + 6)^2 / (2 x (4 + 36)) = 0.8; a higher-class context is a group of its own."""
    system, trace, result = build([("a", "normal", "1ms", 2), ("b", "normal", "1ms", 6), ("h", "high", "1ms", 1)])
    f = result.summary["fairness"]
    assert f == [{"node": "3D_0", "priority_class": "normal", "priority": 0, "contexts": ["a/c", "b/c"],
                  "gpu_ns": [2 * MS, 6 * MS], "jain": 0.8}]


def test_a_window_below_one_is_refused_with_its_field_named():
    from wddmsim.scenario import ScenarioError, scenario_from_dict

    with pytest.raises(ScenarioError) as err:
        scenario_from_dict({"name": "w", "process": [{"name": "p", "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "compute_batch", "work": "1ms", "window": 0}}]}]}, "w.toml")
    assert "w.toml: process[0].context[0].workload.window: " in str(err.value)
