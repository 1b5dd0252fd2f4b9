"""The shipped reference policies (src/wddmsim/policies/), each held to its defining property on a
real run, read from the event log in virtual time.

Every scenario here has zero CPU costs and no engine cost per command, and its engine preempts
every 10 us of its own work (unless said), so the instants and GPU times asserted are exact. Each
test also runs a policy without the property on the same scenario, to show the property is the
policy's and not the scenario's.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from wddmsim import api

DATA = Path(__file__).parent / "data" / "policies"
MS = 1_000_000

HEAD = """
duration = "{duration}"
[adapter]
hw_queue_depth = {depth}
[adapter.cpu_cost]
render = 0
patch = 0
submit = 0
isr = 0
dpc = 0
present = 0
[[adapter.nodes]]
name = "3D"
engine = "3d"
command_cost = 0
preemption = "{preemption}"
preemption_interval = "10us"
[scheduler]
policy = "{policy}"
{settings}
"""


def context(process: str, workload: str, **hints) -> str:
    """A process ``process`` with one context ``c`` on the 3D node: ``workload`` (inline TOML) and
    the context's other keys given (hints ``period="2ms"``, ``weight=2.0``, ``priority=7``, ...)."""
    lines = "".join(f"{k} = {v!r}\n".replace("'", '"') for k, v in hints.items())
    return (f'[[process]]\nname = "{process}"\n[[process.context]]\nname = "c"\nnode = "3D"\n'
            f"workload = {workload}\n{lines}")


def run(body: str, policy: str, *, duration: str = "20ms", depth: int = 1, preemption: str = "interval",
        settings: str = ""):
    """Run the contexts ``body`` under ``policy``: the Result and its event log as ``(t, event,
    process, fields)`` tuples."""
    text = HEAD.format(duration=duration, depth=depth, preemption=preemption, policy=policy,
                       settings=settings) + body
    return _run(api.parse(text))


def _run(scenario):
    result = api.run(scenario, events=True)
    assert result.crash is None
    names = {e.fields["context"]: e.fields["name"].split("/")[0] for e in result.events if e.event == "ContextCreate"}
    log = [(e.t, e.event, names.get(e.fields.get("context")), e.fields) for e in result.events]
    return result, log


def starts(log, since: int = 0, until: int | None = None) -> list[tuple[int, str, int]]:
    """``(t, process, seq)`` of every DmaPacketStart in [since, until)."""
    return [(t, who, f["seq"]) for t, ev, who, f in log
            if ev == "DmaPacketStart" and t >= since and (until is None or t < until)]


def latencies(log, process: str) -> list[tuple[int, int]]:
    """``(queued, completed - queued)`` of every packet of ``process`` that completed."""
    queued, out = {}, []
    for t, ev, who, f in log:
        if who != process:
            continue
        if ev == "QueuePacketStart":
            queued[f["seq"]] = t
        elif ev == "DmaPacketStop" and f["status"] == "Completed":
            out.append((queued[f["seq"]], t - queued[f["seq"]]))
    return out


def gpu_runs(log) -> dict[str, list[tuple[int, int]]]:
    """Each process's spans on the GPU: from a DmaPacketStart to the DmaPacketStop that ends it
    (completed or preempted), one node."""
    running, out = None, {}
    for t, ev, who, f in log:
        if ev == "DmaPacketStart":
            running = (who, t)
        elif ev == "DmaPacketStop" and running is not None and running[0] == who:
            out.setdefault(who, []).append((running[1], t))
            running = None
    return out


def per_window(log, window: int, end: int) -> dict[str, list[int]]:
    """Each process's GPU ns in each window [k x window, (k + 1) x window) up to ``end``."""
    return {who: [sum(max(0, min(b, w + window) - max(a, w)) for a, b in spans) for w in range(0, end, window)]
            for who, spans in gpu_runs(log).items()}


def deadline_misses(log, deadline: dict[str, int], end: int) -> list[tuple[str, int, int | None]]:
    """The jobs (one packet each) whose completion came after release + the process's relative
    deadline, or never though the deadline was before ``end``: ``(process, release, completed)``.
    A job's release is when its packet was queued (with zero CPU costs, the frame's start)."""
    released, done = {}, {}
    for t, ev, who, f in log:
        if ev == "QueuePacketStart":
            released[who, f["seq"]] = t
        elif ev == "DmaPacketStop" and f["status"] == "Completed":
            done[who, f["seq"]] = t
    return [(who, r, done.get((who, seq))) for (who, seq), r in released.items()
            if r + deadline[who] <= end and done.get((who, seq), end + 1) > r + deadline[who]]


def script(*packets: tuple[str, str, int]) -> str:
    """A script workload: ``(at, work, repeat)`` per submission."""
    items = ", ".join(f'{{ at = "{at}", work = "{work}", repeat = {n} }}' for at, work, n in packets)
    return f'{{ kind = "script", packets = [{items}] }}'


def backlog(work: str, **extra) -> str:
    """A compute job that always has packets queued (up to 8 in flight, never waiting for a batch)."""
    more = "".join(f", {k} = {v!r}".replace("'", '"') for k, v in extra.items())
    return f'{{ kind = "compute_batch", batch = 1, work = "{work}", window = 8, sync = false{more} }}'


# -- fifo: packets start in the order they were queued -------------------------------------------------------

INTERLEAVED = (context("a", script(("0ns", "1ms", 1), ("300us", "1ms", 1)))
               + context("b", script(("100us", "1ms", 2)))
               + context("c", script(("200us", "1ms", 1))))


def test_fifo_starts_packets_in_the_order_they_were_queued():
    # Queued: a1 at 0, b1 and b2 at 0.1 ms, c1 at 0.2 ms, a2 at 0.3 ms, while a1 runs (hw queue of 1).
    _, log = run(INTERLEAVED, "fifo")
    queued = [(who, f["seq"]) for t, ev, who, f in log if ev == "QueuePacketStart"]
    assert [(who, seq) for _, who, seq in starts(log)] == queued
    assert starts(log) == [(0, "a", 1), (MS, "b", 1), (2 * MS, "b", 2), (3 * MS, "c", 1), (4 * MS, "a", 2)]
    # Round robin, on the same queue, gives c its turn before b's second packet.
    _, rr = run(INTERLEAVED, "round_robin")
    assert [(who, seq) for _, who, seq in starts(rr)] != queued


# -- round_robin: one packet each, in turn ---------------------------------------------------------------------


def test_round_robin_gives_each_ready_context_one_packet_per_turn():
    # a queues 3 packets at 0, b 3 at 0.1 ms, c 3 at 0.2 ms: after a's first, turns go b, c, a, ...
    body = (context("a", script(("0ns", "1ms", 3))) + context("b", script(("100us", "1ms", 3)))
            + context("c", script(("200us", "1ms", 3))))
    _, log = run(body, "round_robin")
    order = [who for _, who, _ in starts(log)]
    assert order == ["a", "b", "c", "a", "b", "c", "a", "b", "c"]
    assert [t for t, _, _ in starts(log)] == [k * MS for k in range(9)]
    # FIFO serves a's three first: they were queued first.
    _, fifo = run(body, "fifo")
    assert [who for _, who, _ in starts(fifo)] == ["a"] * 3 + ["b"] * 3 + ["c"] * 3


# -- priority: strict, preempting, FIFO among equals -------------------------------------------------------------


def test_priority_preempts_for_a_higher_priority_and_is_fifo_among_equals():
    # low (context priority -7) queues three 1 ms packets at 0; hi1 and hi2 (priority 7) queue 0.3 ms
    # packets at 0.5 ms (hi1), 0.55 ms (hi2) and 0.6 ms (hi1 again).
    body = (context("low", script(("0ns", "1ms", 3)), priority=-7)
            + context("hi1", script(("500us", "300us", 1), ("600us", "300us", 1)), priority=7)
            + context("hi2", script(("550us", "300us", 1)), priority=7))
    result, log = run(body, "priority")
    # hi1 preempts low at 0.5 ms (a 10 us boundary of low's work: no wait at all), then the high ones
    # run in the order they were queued, then low resumes its first packet with the 0.5 ms it owed.
    assert starts(log) == [(0, "low", 1), (500_000, "hi1", 1), (800_000, "hi2", 1), (1_100_000, "hi1", 2),
                           (1_400_000, "low", 1), (1_900_000, "low", 2), (2_900_000, "low", 3)]
    assert result.summary.context("low/c").preempted == 1
    assert result.summary.context("low/c").gpu_ns == 3 * MS  # nothing redone
    # FIFO makes the high ones wait for low's whole queue.
    _, fifo = run(body, "fifo")
    assert [who for _, who, _ in starts(fifo)][:3] == ["low"] * 3


# -- fair: GPU time follows the weights ------------------------------------------------------------------------


def test_fair_share_gives_backlogged_contexts_gpu_time_in_proportion_to_their_weights():
    body = (context("w1", backlog("100us"), weight=1.0) + context("w2", backlog("100us"), weight=2.0)
            + context("w3", backlog("100us"), weight=3.0))
    result, _ = run(body, "fair", duration="30ms", depth=2)
    gpu = {c.context: c.gpu_ns for c in result.summary.contexts}
    assert gpu == {"w1/c": 5 * MS, "w2/c": 10 * MS, "w3/c": 15 * MS}  # 1 : 2 : 3 of 30 ms, exactly
    # Round robin ignores weights: a third each.
    rr, _ = run(body, "round_robin", duration="30ms", depth=2)
    assert {c.context: c.gpu_ns for c in rr.summary.contexts} == {"w1/c": 10 * MS, "w2/c": 10 * MS, "w3/c": 10 * MS}


def test_fair_share_a_context_that_wakes_late_gets_its_share_not_the_time_it_slept():
    # "late" starts at 10 ms: it enters at the others' virtual runtime, so from then on the three
    # take thirds (33 packets each of 0.1 ms in 10 ms), rather than late running alone to catch up.
    body = (context("w1", backlog("100us")) + context("w2", backlog("100us"))
            + context("late", backlog("100us", start="10ms")))
    _, log = run(body, "fair", duration="20ms", depth=2)
    first = Counter(who for _, who, _ in starts(log, 10 * MS, 13 * MS))
    assert first == {"w1": 10, "w2": 10, "late": 10}
    assert Counter(who for _, who, _ in starts(log, 10 * MS, 20 * MS)) == {"w1": 34, "w2": 33, "late": 33}


def test_fair_share_slice_cuts_the_light_contexts_long_packets_at_the_slice():
    body = context("w1", backlog("4ms"), weight=1.0) + context("w3", backlog("4ms"), weight=3.0)
    result, log = run(body, "fair", settings='slice = "1ms"')
    light = gpu_runs(log)["w1"]
    assert max(b - a for a, b in light) == MS  # every run of w1's 4 ms packets is cut at its slice
    assert result.summary.context("w1/c").preempted > 0
    gpu = {c.context: c.gpu_ns for c in result.summary.contexts}
    # Within a slice of 1 : 3 (4.5 and 13.5 ms) of the 18 ms run by 20 ms (2 ms more are running then).
    assert gpu == {"w1/c": 5 * MS, "w3/c": 13 * MS}
    # Without a slice w1 runs a whole 4 ms packet.
    _, whole = run(body, "fair")
    assert max(b - a for a, b in gpu_runs(whole)["w1"]) == 4 * MS


# -- edf: no deadline missed while utilization <= 1 ----------------------------------------------------------------

PERIODS = {"a": 2 * MS, "b": 5 * MS, "c": 20 * MS}  # each context's period = its relative deadline


def _periodic(policy: str, **overrides):
    return _run(api.load(DATA / "periodic.toml", overrides={"scheduler.policy": policy, **overrides}))


@pytest.mark.parametrize("depth", [1, 2])
def test_edf_misses_no_deadline_at_utilization_0_85(depth):
    result, log = _periodic("edf", **{"adapter.hw_queue_depth": depth})
    assert deadline_misses(log, PERIODS, 40 * MS) == []
    # Every frame was released on time (so the deadlines above are the task set's), and every job ran.
    for who, period in PERIODS.items():
        released = [t for t, ev, p, _ in log if ev == "QueuePacketStart" and p == who]
        assert released == list(range(0, 40 * MS + 1, period))
    assert result.summary.nodes[0].preemptions > 0  # c's 8 ms packet gives way to a and b
    # FIFO and the Windows-like policy miss on the same set.
    for blind in ("fifo", "windows"):
        _, other = _periodic(blind, **{"adapter.hw_queue_depth": depth})
        assert len(deadline_misses(other, PERIODS, 40 * MS)) >= 7


# -- llf: the least slack first, even with the later deadline --------------------------------------------------------


def test_llf_runs_the_job_with_least_slack_first_even_with_a_later_deadline():
    # Every 10 ms: a releases 12 packets of 0.5 ms (deadline 10 ms: 6 ms of work, 4 ms of slack), b
    # one of 0.5 ms (deadline 6.2 ms: 5.7 ms of slack), c (no deadline) 1 ms at 9.9, 19.9, ...
    body = (context("a", '{ kind = "frame_loop", fps = 100, packets_per_frame = 12, work = "500us", present = false }',
                    period="10ms")
            + context("b", '{ kind = "frame_loop", fps = 100, work = "500us", present = false }', period="10ms",
                      deadline="6200us")
            + context("c", '{ kind = "frame_loop", fps = 100, work = "1ms", present = false, start = "9900us" }'))
    _, log = run(body, "llf")
    # Second frame (the estimates learnt from the first): a's slack 4 ms < b's 5.7 ms, so a goes
    # first (c, without a deadline, is preempted); a's slack holds while it runs and b's shrinks,
    # until after a's 4th packet b's is 3.7 ms < 4 ms: b runs, then a's other 8.
    order = [(t, who) for t, who, _ in starts(log, 10 * MS, 20 * MS)]
    assert order == ([(10 * MS + k * 500_000, "a") for k in range(4)] + [(12 * MS, "b")]
                     + [(12_500_000 + k * 500_000, "a") for k in range(8)] + [(16_500_000, "c"), (19_900_000, "c")])
    assert deadline_misses(log, {"a": 10 * MS, "b": 6_200_000, "c": 10**12}, 20 * MS) == []
    # EDF takes b's earlier deadline first.
    _, edf = run(body, "edf")
    assert [who for _, who, _ in starts(edf, 10 * MS, 20 * MS)][:2] == ["b", "a"]


def test_llf_misses_no_deadline_on_the_periodic_set():
    _, log = _periodic("llf")
    assert deadline_misses(log, PERIODS, 40 * MS) == []


# -- partition: each context capped at its utilization hint ------------------------------------------------------


def test_partition_caps_each_context_at_its_utilization_in_every_window():
    # a may have 30 % of each 10 ms window, b 20 %, c (no hint) the rest; all three always have work.
    body = (context("a", backlog("700us"), utilization=0.3) + context("b", backlog("700us"), utilization=0.2)
            + context("c", backlog("700us")))
    _, log = run(body, "partition", duration="30ms", depth=2, settings='window = "10ms"')
    shares = per_window(log, 10 * MS, 30 * MS)
    # Exactly the cap, though 0.7 ms packets do not divide it: the budget's end preempts mid-packet.
    assert shares["a"] == [3 * MS] * 3
    assert shares["b"] == [2 * MS] * 3
    assert shares["c"][:2] == [5 * MS] * 2
    # The cap holds when the GPU would otherwise idle: with a and b alone, half of each window idles.
    _, alone = run(context("a", backlog("700us"), utilization=0.3) + context("b", backlog("700us"), utilization=0.2),
                   "partition", duration="30ms", depth=2, settings='window = "10ms"')
    assert per_window(alone, 10 * MS, 30 * MS) == {"a": [3 * MS] * 3, "b": [2 * MS] * 3}
    # Without preemption (a DMA buffer runs to its end) a context overruns by less than a packet.
    _, coarse = run(body, "partition", duration="30ms", depth=2, preemption="dma_buffer", settings='window = "10ms"')
    shares = per_window(coarse, 10 * MS, 30 * MS)
    assert all(3 * MS <= s < 3 * MS + 700_000 for s in shares["a"])
    assert all(2 * MS <= s < 2 * MS + 700_000 for s in shares["b"])


# -- mlfq: the interactive stays on top; the boost bounds starvation ----------------------------------------------


def test_mlfq_keeps_an_interactive_context_on_top_of_a_batch_hog():
    # ui: 0.1 ms every 2 ms (1 ms per 20 ms boost period, under its 2 ms quantum); hog: 1 ms
    # packets, always backlogged, two on the hardware queue.
    body = (context("ui", '{ kind = "frame_loop", fps = 500, work = "100us", present = false }')
            + context("hog", backlog("1ms")))
    _, log = run(body, "mlfq", duration="40ms", depth=2, settings='boost = "20ms"')
    lat = latencies(log, "ui")
    assert len(lat) == 20
    # Once the hog has used its 2 ms quantum it sinks, and ui's frames wait for nothing: each takes
    # its own 0.1 ms. Only the frames in the hog's first quantum, at the start and after the boost at
    # 20 ms, wait for it.
    slow = [(q, d) for q, d in lat if d != 100_000]
    assert slow == [(2 * MS, 200_000), (20 * MS, 2_100_000), (22 * MS, 200_000)]
    # FIFO and round robin make every frame wait for the hog.
    for other in ("fifo", "round_robin"):
        _, o = run(body, other, duration="40ms", depth=2)
        assert min(d for q, d in latencies(o, "ui") if q > 0) > MS


def test_mlfq_boost_bounds_the_starvation_of_a_sunk_context():
    # The hog runs alone 0-12 ms and sinks (its 12 ms quantum used); from 12 ms three contexts that
    # would take 120 % of the node keep the top level busy, each using under its quantum.
    busy = '{ kind = "frame_loop", fps = 1000, work = "400us", present = false, start = "12ms" }'
    body = (context("i1", busy) + context("i2", busy) + context("i3", busy) + context("hog", backlog("500us")))
    levels = 'levels = 2\nquanta = ["12ms", "12ms"]\n'
    _, boosted = run(body, "mlfq", duration="40ms", settings=levels + 'boost = "20ms"')
    hog = [t for t, who, _ in starts(boosted) if who == "hog"]
    later = [t for t in hog if 12 * MS <= t < 40 * MS]
    assert later[0] == 20 * MS  # starved from 12 ms until the boost lifts it, at the boost's instant
    # then one packet a round of the top level: its 0.5 ms and the three others' 0.4 ms each
    assert {b - a for a, b in zip(later, later[1:])} == {1_700_000}
    # Without the boost it starves to the end of the run.
    _, unboosted = run(body, "mlfq", duration="40ms", settings=levels + "boost = 0")
    assert max(t for t, who, _ in starts(unboosted) if who == "hog") < 12 * MS


# -- copying a policy, its settings -------------------------------------------------------------------------------

EXAMPLE = Path(__file__).parents[1] / "examples" / "policies" / "periodic.toml"
SHIPPED = {"fifo": "Fifo", "round_robin": "RoundRobin", "priority": "Priority", "fair": "FairShare", "edf": "Edf",
           "llf": "LeastLaxity", "partition": "UtilizationPartition", "mlfq": "Mlfq"}


@pytest.mark.parametrize("policy", SHIPPED)
def test_a_copy_of_a_shipped_policy_runs_as_the_shipped_one(tmp_path, policy):
    # examples/policies/README.md: `wddmsim policies --show NAME > mypolicy.py`, then
    # `--policy mypolicy.py:Class`. The copy makes the same run as the shipped policy (default costs).
    from click.testing import CliRunner

    from wddmsim.cli import main

    shown = CliRunner().invoke(main, ["policies", "--show", policy])
    assert shown.exit_code == 0
    copy = tmp_path / "mypolicy.py"
    copy.write_text(shown.output)
    shipped = api.run(api.load(EXAMPLE, overrides={"scheduler.policy": policy}), until="30ms")
    mine = api.run(api.load(EXAMPLE, overrides={"scheduler.policy": f"{copy}:{SHIPPED[policy]}"}), until="30ms")
    assert shipped.crash is None and mine.crash is None
    assert all(c.completed > 0 for c in shipped.summary.contexts)
    assert [(c.context, c.completed, c.gpu_ns) for c in mine.summary.contexts] == \
           [(c.context, c.completed, c.gpu_ns) for c in shipped.summary.contexts]


@pytest.mark.parametrize("policy, settings, problem", [
    ("mlfq", 'levels = 2\nquanta = ["1ms"]', "scheduler: quanta: give one per level (2 levels), got 1"),
    ("fair", 'slice = "soon"', "scheduler: slice: expected a duration such as '2ms' or '250us', got 'soon'"),
    ("partition", "budget = 1", "scheduler.budget: unknown field (policy partition: its settings are window)"),
])
def test_a_reference_policys_settings_are_checked(policy, settings, problem):
    with pytest.raises(api.ScenarioError) as info:
        run(context("a", backlog("1ms")), policy, settings=settings)
    assert problem in str(info.value)


def test_mlfq_quanta_default_to_one_per_level():
    from wddmsim.policies.load import make_policy

    assert make_policy("mlfq", {"levels": 4})._settings.quanta == [2 * MS, 8 * MS, 32 * MS, 128 * MS]
    assert make_policy("mlfq", {"quanta": ["1ms", "2ms", "3ms"]})._settings.quanta == [MS, 2 * MS, 3 * MS]
