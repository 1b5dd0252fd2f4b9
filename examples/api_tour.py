"""A tour of wddmsim's Python API (docs/api.md), one cell per step: load a scenario, change it, run
it, read the summary, step a run and look at it between steps, catch a bug check, read the event
log. Cells are separated by ``# %%`` lines, so VS Code, PyCharm and Jupytext open the file as a
notebook; run it as a script from anywhere (``uv run python examples/api_tour.py``) and it prints
what each cell finds. ``tests/test_api.py`` runs it.
"""

# %% Load a scenario file: 100 DMA buffers of 1 ms on one context, every CPU cost zero.
from pathlib import Path

from wddmsim import api

HERE = Path(__file__).resolve().parent
scenario = api.load(HERE / "deep_queue.toml")
print(f"{scenario.name}: {scenario.description}")
print(f"  duration {scenario.duration} ns, nodes {[n.name for n in scenario.adapter.nodes]}, "
      f"hardware queue depth {scenario.adapter.hw_queue_depth}")

# %% Run it and read the summary: typed objects, the figures `wddmsim run` prints.
result = api.run(scenario)
summary = result.summary
print(f"{summary.packets_completed}/{summary.packets_submitted} packets retired, makespan {summary.makespan_ns} ns")
for node in summary.nodes:
    print(f"  node {node.name} ({node.engine}): {node.packets} packets, {node.busy_pct:.1f} % busy")
for ctx in summary.contexts:
    print(f"  {ctx.context}: latency p50 {ctx.latency_p50_ns} ns, max {ctx.latency_max_ns} ns")
assert summary.makespan_ns == 100_000_000

# %% Change the scenario in Python: a field is checked when it is assigned.
from pydantic import ValidationError

scenario.adapter.hw_queue_depth = 1
scenario.adapter.cpu_cost.submit = "10us"          # a duration may be given as text
try:
    scenario.adapter.hw_queue_depth = 0
except ValidationError as e:
    print(f"refused: hw_queue_depth = 0 ({e.errors()[0]['msg']})")
slower = api.run(scenario).summary
print(f"queue depth 1 with 10 us per submission: makespan {slower.makespan_ns} ns "
      f"({slower.makespan_ns - summary.makespan_ns} ns of submission overhead)")
assert slower.makespan_ns == 101_000_000

# %% Step a run and look at it in between: the state is readable after every step.
with api.Simulation(HERE / "deep_queue.toml", events=True) as sim:
    while sim.step(by="25ms") and sim.now <= 100_000_000:
        queue = sim.summary.context("bench.exe/queue")
        print(f"  at {sim.now // 1_000_000:3d} ms: {queue.completed:3d} retired, "
              f"{len(sim.events)} events so far, next event at {sim.next_time} ns")
    stepped = sim.run()
assert stepped.summary == result.summary            # steps change nothing in the run

# %% A faulty scenario: a hang whose adapter reset fails ends in bug check 0x116.
failed = api.run(HERE / "tdr_failure.toml", events=True)
crash = failed.crash
print(f"stopped at {crash.time} ns: {crash.bugcheck}")
print(f"  rule {crash.rule} ({crash.rule_name}): {crash.message}")
print(f"  live dumps before it: {[hex(d.code) for d in failed.summary.tdr.live_dumps]}")
assert crash.bugcheck.code == 0x116

# %% Read the event log: typed records, fields as attributes (docs/events.md).
by_kind: dict[str, int] = {}
for event in failed.events:
    by_kind[event.event] = by_kind.get(event.event, 0) + 1
print("most frequent events:", sorted(by_kind.items(), key=lambda kv: -kv[1])[:5])
detected = next(e for e in failed.events if e.event == "TdrDetected")
print(f"timeout detected at {detected.t} ns on node {detected.node}: {detected.reason}, fence {detected.fence}")
print("last events:", [e.event for e in failed.events[-3:]])
assert [e.event for e in failed.events[-2:]] == ["BugCheck", "LogEnd"]
