"""Reference scenario 20: the two-client fairness set under the software scheduler.

drm_sched's ``two_clients`` cases, ten parameter sets: a client loops "submit N jobs of U us, wait
for the last if synchronous, sleep W us" for one second's worth of cycles. drm's NORMAL, LOW and
HIGH priorities are the process classes normal, below_normal and high; drm's one and two credits
are the node's hardware-queue depth (packets the OS lets the driver hold). Judged per policy:

- equal priorities share the GPU about 50/50 under ``priority_quantum``;
- a lower-priority client is not starved under ``priority_quantum`` (its starvation boost), but is
  starved under ``strict_priority`` while the higher one has work;
- an interactive 1 ms / 10 ms client keeps >= 90 cycles/s beside the 75 % hog and beside the
  4 x 50 ms hog that oversubscribes the GPU;
- latency min/mean/max per client comes out of the run's summary, equal to the log's.
"""

from __future__ import annotations

import pytest

from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

MS = 1_000_000
US = 1_000
COSTS = {"render": 5000, "patch": 1000, "submit": 2000, "isr": 1000, "dpc": 2000, "present": 3000}
PRIORITY = {"normal": "normal", "low": "below_normal", "high": "high"}
#: (priority, job_cnt, job_us, wait_us, sync) of client 0 and client 1, drm_sched's ten cases.
CASES = {
    "normal_normal": [("normal", 1, 8000, 0, False), ("normal", 1, 8000, 0, False)],
    "normal_low": [("normal", 1, 8000, 0, False), ("low", 1, 8000, 0, False)],
    "high_normal": [("high", 1, 8000, 0, False), ("normal", 1, 8000, 0, False)],
    "high_low": [("high", 1, 8000, 0, False), ("low", 1, 8000, 0, False)],
    "50_50": [("normal", 1, 1500, 1500, True), ("normal", 1, 2500, 2500, True)],
    "50_50_low": [("normal", 1, 1500, 1500, True), ("low", 1, 2500, 2500, True)],
    "50_high_50": [("high", 1, 1500, 1500, True), ("normal", 1, 2500, 2500, True)],
    "low_hog_interactive": [("low", 3, 2500, 500, False), ("normal", 1, 500, 10000, True)],
    "heavy_interactive": [("normal", 3, 2500, 2500, True), ("normal", 1, 1000, 9000, True)],
    "very_heavy_interactive": [("normal", 4, 50000, 1, True), ("normal", 1, 1000, 9000, True)],
}
QUANTUM = 2 * MS
STARVATION = 10 * QUANTUM


def cycles_of(job_cnt, job_us, wait_us):
    return -(-1_000_000 // (job_cnt * job_us + wait_us))  # DIV_ROUND_UP(1 s, period)


def run(case: str, depth: int, policy: str = "priority_quantum"):
    procs = []
    for i, (prio, job_cnt, job_us, wait_us, sync) in enumerate(CASES[case]):
        procs.append({"name": f"c{i}", "priority": PRIORITY[prio], "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "compute_batch", "batch": job_cnt, "work": f"{job_us}us", "interval": f"{wait_us}us",
            "sync": sync, "count": cycles_of(job_cnt, job_us, wait_us)}}]})
    sc = scenario_from_dict({
        "name": f"two-clients-{case}", "duration": "5s",
        "adapter": {"cpu_cost": COSTS, "hw_queue_depth": depth,
                    "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0, "preemption": "interval",
                               "preemption_interval": "50us"}]},
        "driver": {"ddi_version": "wddm2_0", "preemption_aware": True},
        "scheduler": {"policy": policy, "quantum": "2ms"},
        "process": procs,
    }, "<ref20>")
    trace = ListSink()
    system = System(sc, trace=trace)
    result = system.run()
    assert result.bugcheck is None
    return system, trace, result


class Client:
    """One client's run from the log: when each cycle ended, its cycle times."""

    def __init__(self, trace, ctx, params):
        _prio, self.job_cnt, self.job_us, self.wait_us, self.sync = params
        self.cycles = cycles_of(self.job_cnt, self.job_us, self.wait_us)
        start = {e["seq"]: e["t"] for e in trace.of("QueuePacketStart") if e["context"] == ctx.handle}
        stop = {e["seq"]: e["t"] for e in trace.of("QueuePacketStop")
                if e["context"] == ctx.handle and e["status"] == "Completed"}
        self.latencies = [stop[s] - start[s] for s in sorted(stop)]
        self.done = [stop[(c + 1) * self.job_cnt] for c in range(self.cycles) if (c + 1) * self.job_cnt in stop]
        self.first = min(start.values())
        self.end = max(stop.values())

    def completed_by(self, t: int) -> int:
        return sum(1 for x in self.done if x <= t)

    def per_second(self) -> float:
        return len(self.done) / ((self.end - self.first) / 1e9)


@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize("case", list(CASES))
def test_two_clients_under_priority_quantum(case, depth):
    system, trace, result = run(case, depth)
    c0, c1 = (Client(trace, ctx, p) for ctx, p in zip(system.contexts, CASES[case]))
    rows = {r["context"]: r for r in result.summary["contexts"]}
    for c, name in ((c0, "c0/c"), (c1, "c1/c")):
        assert len(c.done) == c.cycles  # every cycle completes
        row = rows[name]
        # Latency min/mean/max as the summary reports them are the log's, exactly.
        assert (row["latency_min_ns"], row["latency_mean_ns"], row["latency_max_ns"]) == (
            min(c.latencies), sum(c.latencies) // len(c.latencies), max(c.latencies))
    p0, p1 = CASES[case]
    if p0[0] == p1[0] and not p0[4] and not p1[4]:
        # Equal priorities, both always ready: 50/50, never more than one 8 ms job apart per
        # packet the hardware queue holds, at every 100 ms.
        for t in range(100 * MS, min(c0.end, c1.end), 100 * MS):
            assert abs(c0.completed_by(t) - c1.completed_by(t)) <= depth
        assert [f["jain"] for f in result.summary["fairness"]] == [pytest.approx(1.0, abs=1e-4)]
    if p0[0] != p1[0] and not p0[4] and not p1[4]:
        # The lower client is not starved: the boost lets it run within the starvation time plus
        # the packets ahead of it on the hardware queue and the one running.
        low = rows["c1/c"]
        assert low["worst_wait_ns"] <= STARVATION + (depth + 1) * 8 * MS
        assert c1.completed_by(c0.end) >= 1
    if case.endswith("interactive") and case != "low_hog_interactive":
        assert c1.per_second() >= 90


@pytest.mark.parametrize("case", ["normal_low", "high_normal", "high_low"])
def test_strict_priority_starves_the_lower_client(case):
    """Under strict_priority the lower client runs nothing while the higher one has work: its
    first job completes only after the higher one's 125, and its worst wait spans the 124 jobs
    run from its first submission on (its packet goes to the hardware queue behind the last)."""
    system, trace, result = run(case, 2, "strict_priority")
    c0, c1 = (Client(trace, ctx, p) for ctx, p in zip(system.contexts, CASES[case]))
    assert c1.completed_by(c0.end) == 0
    assert result.summary["contexts"][1]["worst_wait_ns"] >= 124 * 8 * MS
