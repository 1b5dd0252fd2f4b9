"""Work is made as it is submitted: a workload (or a ``[[call]]`` table) whose ``count`` or
``repeat`` describes 10^9 units runs in a 10 ms scenario exactly as one whose count just lasts the
10 ms, event for event. Had the described work been listed in advance the 10^9 run could not
finish; had anything depended on the count beyond the run, the logs would differ. Memory and speed
themselves are measured in ``benchmarks/memory.py``, not here."""

from __future__ import annotations

import pytest

from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

HUGE = 10**9


def _scenario(workload: dict, *, gpu_va: bool = False, fences=(), calls=(), members: int = 1) -> dict:
    d = {"name": "lazy", "seed": 5, "duration": "10ms",
         "adapter": {"nodes": [{"name": "3D", "engine": "3d"}], **({"gpu_va": True} if gpu_va else {})},
         "process": [{"name": f"p{i}", "context": [{"name": "c", "node": "3D",
                                                     "workload": {**workload, **({"position": i} if members > 1 else {})}}]}
                     for i in range(members)]}
    if gpu_va:
        d["driver"] = {"ddi_version": "wddm2_1"}
    if fences:
        d["fence"] = [{"name": f} for f in fences]
    if calls:
        d["call"] = list(calls)
    return d


def _run(d: dict):
    trace = ListSink()
    system = System(scenario_from_dict(d, "<lazy>"), trace=trace)
    result = system.run()
    assert result.bugcheck is None
    return result.summary, trace.events, system


def _with_count(d: dict, n: int) -> dict:
    d = {**d, "process": [{**p, "context": [{**c, "workload": {**c["workload"], "count": n}} for c in p["context"]]}
                          for p in d["process"]]}
    return d


# (name, scenario, a count that just lasts the 10 ms, packets submitted, packets retired)
CASES = [
    ("compute_batch", _scenario({"kind": "compute_batch", "batch": 4, "work": "50us"}), 60, 192, 190),
    ("compute_batch async", _scenario({"kind": "compute_batch", "batch": 4, "work": "50us", "sync": False}), 600, 200, 198),
    ("compute_batch window", _scenario({"kind": "compute_batch", "batch": 4, "work": "50us", "sync": False,
                                                         "window": 3}), 600, 200, 198),
    ("frame_loop", _scenario({"kind": "frame_loop", "fps": 1000, "work": "400us", "max_frame_latency": 2,
                              "packets_per_frame": 2}), 12, 30, 30),
    ("copy_stream", _scenario({"kind": "copy_stream", "size": "4KiB", "interval": "10us"}), 800, 667, 667),
    ("memory_pressure", _scenario({"kind": "memory_pressure", "allocations": 4, "size": "4KiB", "interval": "10us"}),
     800, 667, 667),
    ("bursty", _scenario({"kind": "bursty", "burst": 4, "work": "10us", "mean_gap": "50us"}), 200, 622, 620),
    ("chain window", _scenario({"kind": "chain", "fence": "f", "members": 2, "work": "50us", "window": 2},
                               gpu_va=True, fences=["f"], members=2), 120, 183, 182),
]


@pytest.mark.parametrize(("name", "scenario", "covering", "submitted", "retired"), CASES, ids=[c[0] for c in CASES])
def test_a_count_of_a_billion_runs_as_one_that_lasts_the_run(name, scenario, covering, submitted, retired):
    big, big_events, _ = _run(_with_count(scenario, HUGE))
    small, small_events, _ = _run(_with_count(scenario, covering))
    assert (big["packets_submitted"], big["packets_completed"]) == (submitted, retired)
    assert big_events == small_events
    assert big == small


def test_a_script_packet_repeated_a_billion_times_runs_as_one_that_lasts_the_run():
    def script(repeat: int) -> dict:
        return _scenario({"kind": "script", "packets": [{"at": "1ms", "work": "50us", "repeat": repeat}]})

    big, big_events, _ = _run(script(HUGE))
    small, small_events, _ = _run(script(4000))
    # 5 us of DxgkDdiRender per packet: 1800 queued in the 9 ms, 180 of them given to the driver.
    assert (big["packets_submitted"], big["packets_completed"], big["contexts"][0]["submitted"]) == (180, 178, 1800)
    assert big_events == small_events
    assert big == small


def test_a_call_table_of_a_billion_calls_runs_as_one_that_lasts_the_run():
    def calls(count: int) -> dict:
        return _scenario({"kind": "compute_batch", "batch": 2, "work": "30us"}, calls=[
            {"api": "SetContextSchedulingPriority", "process": "p0", "context": "c", "priority": [2, -3, 0],
             "at": "50us", "every": "100us", "count": count}])

    big, big_events, system = _run(calls(HUGE))
    small, small_events, _ = _run(calls(150))
    assert sum(1 for e in big_events if e["event"] == "ScenarioCall") == 100
    assert system.calls.returned == {("SetContextSchedulingPriority", "STATUS_SUCCESS"): 100}
    assert big_events == small_events


def test_work_moved_between_nodes_keeps_only_the_runs_in_flight():
    def moves(count: int) -> dict:
        d = _scenario({"kind": "compute_batch", "batch": 3, "work": "20us"}, calls=[
            {"api": "MoveWork", "process": "p0", "context": "c", "node": ["Compute", "3D"], "at": "100us",
             "every": "150us", "count": count}])
        d["adapter"]["nodes"].append({"name": "Compute", "engine": "compute"})
        return d

    big, big_events, system = _run(moves(HUGE))
    small, small_events, _ = _run(moves(100))
    assert big_events == small_events
    assert sum(c["completed"] for c in big["contexts"]) == 414
    ctx = system.contexts[0]
    st = system.runtime.moves[ctx]
    # Every move made a run of numbers; those whose packets all retired were dropped.
    assert len(st.spans) <= 2 and st.count == sum(c["submitted"] for c in big["contexts"])
    # A wait for a submission long retired is over at once, wherever it ran.
    for seq in (1, st.base + 1, st.count - 10):
        assert system.runtime.wait(ctx, seq).triggered
