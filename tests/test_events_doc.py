"""The event log reference (docs/events.md) and the model agree: every event a run emits is in the
table with exactly the fields the table lists, and every event in the table is emitted by some run
below (the examples plus a few runs that reach the rarer events)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from wddmsim.scenario import load_scenario
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

from wddm2util import scenario_of

ROOT = Path(__file__).parent.parent
DOC = ROOT / "docs" / "events.md"
ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}


def documented() -> dict[str, set[str]]:
    """Event name -> field names, from the table's rows (backticked words outside parentheses)."""
    out = {}
    for line in DOC.read_text().splitlines():
        m = re.match(r"^\| `(\w+)` \| .*? \| (.*) \|$", line)
        if not m:
            continue
        fields = m.group(2)
        depth, kept = 0, []
        for ch in fields:
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            elif depth == 0:
                kept.append(ch)
        out[m.group(1)] = set(re.findall(r"`(\w+)`", "".join(kept)))
    return out


def _run(sc, until=None, **kw):
    trace = ListSink()
    System(sc, trace=trace, **kw).run(until=until)
    return trace.events


def _rare_runs():
    base = {"cpu_cost": ZERO, "per_engine_reset": False,
            "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0}]}
    app = {"name": "app", "context": [{"name": "c", "node": "3D", "destroy_at": "20ms", "workload": {
        "kind": "script", "packets": [{"at": 0, "work": "10ms", "repeat": 3}]}}]}
    hang = scenario_of({"name": "rare", "duration": "6s", "adapter": base, "process": [app],
                               "fault": [{"kind": "hang", "node": "3D", "at": "1ms"}]}, "<rare>")
    yield _run(hang)
    # A driver contract broken in report mode, and a run that stops.
    fail = scenario_of({"name": "stop", "duration": "1s", "adapter": dict(base, null_rendering=True),
                               "process": [app], "fault": [{"kind": "ddi_error", "ddi": "DxgkDdiSubmitCommand", "call": 2}]},
                              "<stop>")
    yield _run(fail)
    from test_null_rendering import IgnoresNullRendering
    viol = scenario_of({"name": "viol", "duration": "1s", "adapter": dict(base, null_rendering=True),
                               "process": [app]}, "<viol>")
    yield _run(viol, verifier="report", driver=IgnoresNullRendering)
    # Under hardware scheduling a hang ends in the GPU's engine reset (HwEngineReset).
    hw = {"ddi_version": "wddm2_7", "scheduling": "hardware", "cpu_cost": ZERO,
          "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0},
                    {"name": "Copy", "engine": "copy", "command_cost": 0}]}
    hang2 = [{"kind": "hang", "process": "app", "context": "c", "packet": 2}]
    hw_hang = scenario_of({"name": "hwhang", "duration": "3s", "adapter": hw, "process": [app],
                                  "fault": hang2}, "<hwhang>")
    yield _run(hw_hang)
    # The adapter stopped with work pending (AdapterStop).
    stop = scenario_of({"name": "adapterstop", "duration": "50ms", "adapter": dict(base, stop_at="5ms"),
                        "process": [app]}, "<adapterstop>")
    yield _run(stop)
    # Multiplane-overlay vsync reports (PlaneVSync), from a driver that declares two planes.
    from test_overlays import CASE as OVERLAY_CASE, WDDM2_1, TwoPlanes
    yield _run(scenario_of(OVERLAY_CASE.scenario(None), "<overlays>"), driver=TwoPlanes, settings=WDDM2_1)
    # Multiplane-overlay flips (MpoFlip, PlaneDisplayed, PlaneDropped): two writes of one plane in a frame.
    from test_mpo3 import latest_write_wins_run
    yield latest_write_wins_run()
    # A window leaving its overlay plane (PlaneRelease): the overlays example to its end, where the
    # player stops (the 300 ms the examples above run are not enough).
    yield _run(load_scenario(str(ROOT / "examples" / "overlays.toml")))


@pytest.fixture(scope="module")
def emitted() -> dict[str, list[dict]]:
    seen: dict[str, list[dict]] = {}
    runs = []
    for path in sorted((ROOT / "examples").glob("*.toml")):
        sc = load_scenario(str(path))
        # NullRendering makes packets free: a few milliseconds already hold tens of thousands.
        limit = 5_000_000 if path.stem == "null_rendering" else 300_000_000
        runs.append(_run(sc, until=min(sc.duration, limit)))
    runs.extend(_rare_runs())
    for events in runs:
        for e in events:
            seen.setdefault(e["event"], []).append(e)
    return seen


def test_every_emitted_event_is_documented_with_exactly_its_fields(emitted):
    doc = documented()
    problems = []
    for name, events in emitted.items():
        if name not in doc:
            problems.append(f"{name}: not in docs/events.md")
            continue
        for e in events:
            fields = set(e) - {"t", "event"}
            if fields != doc[name]:
                problems.append(f"{name}: emitted {sorted(fields)}, documented {sorted(doc[name])}")
                break
    assert problems == []


def test_every_documented_event_is_emitted(emitted):
    assert sorted(set(documented()) - set(emitted)) == []


def test_events_are_in_time_order(emitted):
    # Within one run the log is in time order (each run's events were collected in emission order).
    for path in sorted((ROOT / "examples").glob("*.toml"))[:3]:
        sc = load_scenario(str(path))
        ts = [e["t"] for e in _run(sc, until=min(sc.duration, 200_000_000))]
        assert ts == sorted(ts), path.name


def test_the_schema_in_code_is_the_documented_one():
    from wddmsim.trace import EVENT_FIELDS

    assert {k: set(v) for k, v in EVENT_FIELDS.items()} == documented()


def test_typed_records_and_flat_rows(tmp_path, emitted):
    from wddmsim.trace import JsonlSink, read_records, record, rows

    sc = load_scenario(str(ROOT / "examples" / "preemption.toml"))
    path = tmp_path / "log.jsonl"
    sink = JsonlSink(str(path))
    System(sc, trace=sink).run(until=50_000_000)
    sink.close()
    recs = read_records(str(path))
    from wddmsim.trace import read_events
    assert read_events(str(path), typed=True) == recs and read_events(str(path))[0]["event"] == "LogStart"
    assert type(recs[0]).__name__ == "LogStart" and recs[0].format == "wddmsim-events"
    pre = next(r for r in recs if r.event == "PreemptRequest")
    assert getattr(pre, "for") > 0 and pre.reason == "priority"
    with pytest.raises(AttributeError, match="no field 'nope'"):
        pre.nope
    with pytest.raises(ValueError, match="unknown event"):
        record({"t": 0, "event": "Nope"})
    with pytest.raises(ValueError, match="expected"):
        record({"t": 0, "event": "Dropped", "source": 0})
    # Rows: scalars only, nested DDI arguments as dotted columns.
    calls = rows(recs, "DdiCall")
    assert calls and all(isinstance(v, (int, float, str, type(None))) for row in calls for v in row.values())
    submit = next(r for r in calls if r["name"] == "DxgkDdiSubmitCommand")
    assert submit["args.SubmissionFenceId"] >= 1 and "args.Flags.Present" in submit
    assert len(rows(recs)) == len(recs)
    (start,) = rows(recs, "AdapterStart")
    assert [n["name"] for n in json.loads(start["nodes"])] == ["3D_0", "COPY_0"]
