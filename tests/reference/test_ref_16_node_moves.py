"""Reference scenario 16: work moved between nodes while it runs.

Three nodes, 13 contexts, 1000 packets; every context's work is moved to another node again and
again by ``MoveWork`` calls of the scenario file. A context is bound to the node it was created on
(DXGKARG_CREATECONTEXT.NodeOrdinal), so a move is what an application does on Windows: it creates a
context on the new node (D3DKMTCreateContext, once) and sends its next packets there after the
previous context retired its last one. Pass: nothing is lost, no packet runs on two nodes, and
each workload's packets run in the order it submitted them. Times are virtual ns.
"""

from __future__ import annotations

from collections import defaultdict

from wddmsim.scenario import parse_scenario
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

NODES = ("3D", "Compute", "Copy")


def scenario() -> str:
    out = ['name = "node_moves"', 'seed = 16', 'duration = "10ms"', "[adapter]",
           "cpu_cost = { render = 0, patch = 0, submit = 0, isr = 0, dpc = 0, present = 0 }"]
    for name, engine in zip(NODES, ("3d", "compute", "copy")):
        out += ["[[adapter.nodes]]", f'name = "{name}"', f'engine = "{engine}"', "command_cost = 0"]
    for i in range(13):
        # 12 workloads of 11 batches of 7 packets and one of 76 (4 batches of 19): 1000 packets.
        batch, count = (7, 11) if i < 12 else (19, 4)
        out += ["[[process]]", f'name = "p{i}"', "[[process.context]]", f'name = "w{i}"', f'node = "{NODES[i % 3]}"',
                f'workload = {{ kind = "compute_batch", batch = {batch}, count = {count}, work = "20us" }}']
    for i in range(13):
        turn = [NODES[(i + k) % 3] for k in (1, 2, 0)]
        out += ["[[call]]", 'api = "MoveWork"', f'process = "p{i}"', f'context = "w{i}"', f"node = {turn!r}",
                f'at = "{100 + 37 * i}us"', 'every = "200us"', 'every_max = "700us"']
    return "\n".join(out).replace("'", '"') + "\n"


def run():
    trace = ListSink()
    system = System(parse_scenario(scenario(), "<ref16>"), trace=trace)
    result = system.run()
    assert result.bugcheck is None
    return system, result, trace.events


def test_moved_work_loses_nothing_and_no_packet_runs_on_two_nodes():
    system, result, events = run()
    created = {e["context"]: (e["name"], e["node"]) for e in events if e["event"] == "ContextCreate"}
    # Each workload got a context on each of the three nodes (two created by its moves).
    by_workload = defaultdict(set)
    for name, node in created.values():
        by_workload[name.split("/")[1].split("@")[0]].add(node)
    assert len(by_workload) == 13 and all(nodes == {0, 1, 2} for nodes in by_workload.values())
    # Nothing lost: 1000 packets submitted, 1000 completed, none cancelled or aborted.
    contexts = result.summary["contexts"]
    assert len(contexts) == 39
    assert sum(c["submitted"] for c in contexts) == sum(c["completed"] for c in contexts) == 1000
    assert all(c["cancelled"] == c["aborted"] == 0 and not c["api_error"] for c in contexts)
    # No packet runs on two nodes: every start and stop of a packet is on its context's node, and
    # each packet completes exactly once.
    completions = defaultdict(int)
    for e in events:
        if e["event"] in ("DmaPacketQueued", "DmaPacketStart", "DmaPacketStop"):
            assert e["node"] == created[e["context"]][1]
            if e["event"] == "DmaPacketStop" and e["status"] == "Completed":
                completions[(e["context"], e["seq"])] += 1
    assert len(completions) == 1000 and set(completions.values()) == {1}
    # The moves really happened while work ran: dozens per workload, every call succeeding.
    moves = [e for e in events if e["event"] == "ScenarioCall" and e["api"] == "MoveWork"]
    assert all(e["status"] == "STATUS_SUCCESS" for e in moves)
    last = max(e["t"] for e in events if e["event"] == "QueuePacketStop")
    assert sum(e["t"] < last for e in moves) >= 13 * 10


def test_each_workload_keeps_its_order_across_nodes():
    """A workload's packets, in the order it submitted them, retire in that order; the first
    packet on a new node is queued only after the last one on the previous node retired."""
    _, _, events = run()
    names = {e["context"]: e["name"].split("/")[1].split("@")[0] for e in events if e["event"] == "ContextCreate"}
    queued = defaultdict(list)  # workload -> [(t, context, seq)] in submission order
    retired = {}
    for e in events:
        if e["event"] == "QueuePacketStart":
            queued[names[e["context"]]].append((e["t"], e["context"], e["seq"]))
        elif e["event"] == "QueuePacketStop":
            retired[(e["context"], e["seq"])] = e["t"]
    switches = 0
    for packets in queued.values():
        done = [retired[(c, s)] for _, c, s in packets]
        assert done == sorted(done)
        for (t0, c0, s0), (t1, c1, s1) in zip(packets, packets[1:]):
            if c1 != c0:
                switches += 1
                assert t1 >= retired[(c0, s0)]
    assert switches >= 13 * 5
