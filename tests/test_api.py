"""The public Python API (:mod:`wddmsim.api`, docs/api.md): every function and class with exact
outcomes, the examples of docs/api.md run block by block, and examples/api_tour.py run as a
script."""

from __future__ import annotations

import dataclasses
import json
import re
import runpy
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from pydantic import ValidationError

import wddmsim
from wddmsim import api
from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.kmd import ReferenceDriver
from wddmsim.scenario import load_scenario
from wddmsim.runner.system import System

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
DEEP = EXAMPLES / "deep_queue.toml"
TDR_FAILURE = EXAMPLES / "tdr_failure.toml"
MS = 1_000_000


def _doc_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "api.md").read_text(), re.S)


def _tiny(**top) -> dict:
    """A one-context scenario as a dict: a 100 fps frame loop of 1 ms buffers."""
    return {"duration": "20ms", **top, "process": [{"name": "game.exe", "context": [
        {"name": "render", "node": "3D",
         "workload": {"kind": "frame_loop", "fps": 100, "work": "1ms", "present": False}}]}]}


# ------------------------------------------------------------------------------------- the page
def test_the_page_has_an_example_for_every_public_name():
    text = (ROOT / "docs" / "api.md").read_text()
    code = "\n".join(_doc_blocks())
    for name in api.__all__:
        assert re.search(rf"`[^`]*\b{name}\b[^`]*`", text), f"docs/api.md does not describe {name}"
    for name in ("load", "parse", "validate", "run", "Simulation", "read_events"):
        assert f"api.{name}(" in code, f"no example calls api.{name}"


@pytest.mark.parametrize("index", range(len(_doc_blocks())))
def test_the_pages_examples_run(index, tmp_path, monkeypatch):
    """Each ```python block of docs/api.md on its own, from a folder with the examples in it (what
    a block writes lands in that folder)."""
    (tmp_path / "examples").symlink_to(EXAMPLES, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    block = _doc_blocks()[index]
    exec(compile(block, f"docs/api.md block {index + 1}", "exec"), {"__name__": f"api_doc_{index}"})


def test_the_tour_script_runs_and_prints_what_it_finds(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the script finds its scenarios next to itself
    runpy.run_path(str(EXAMPLES / "api_tour.py"), run_name="__main__")
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "deep_queue: 100 x 1 ms on one context, zero overhead: makespan exactly 100 ms."
    assert "100/100 packets retired, makespan 100000000 ns" in out
    assert ("refused: hw_queue_depth = 0 (must be at least 1, got 0 (range: 1 .. 64; the model's limit on a hardware "
            "queue (VidSch's queue of submitted packets)))") in out
    assert ("queue depth 1 with 10 us per submission: makespan 101000000 ns (1000000 ns of submission overhead)"
            in out)
    assert "  at  50 ms:  50 retired, 613 events so far, next event at 51000000 ns" in out
    assert "stopped at 1033341334 ns: BugCheck 0x116 (VIDEO_TDR_FAILURE) {0x0, 0x0, 0xC0000001, 0x0}" in out
    assert "timeout detected at 1033341334 ns on node 0: preemption_timeout, fence 3" in out
    assert out[-1] == "last events: ['DdiCall', 'BugCheck', 'LogEnd']"


# ------------------------------------------------------------------------------------ the names
def test_the_package_root_gives_the_api_names():
    assert wddmsim.__all__ == sorted([*api.__all__, "__version__"])
    for name in api.__all__:
        assert getattr(wddmsim, name) is getattr(api, name)
    with pytest.raises(AttributeError, match="module 'wddmsim' has no attribute 'System'"):
        wddmsim.System  # noqa: B018 - internal names are not in the package root


def test_importing_the_package_imports_no_model():
    code = "import sys, wddmsim; print(sorted(m for m in sys.modules if m.startswith('wddmsim')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    # Only the tuple of the API's names (wddmsim.publicnames) comes with the package, and the
    # switch between the compiled modules and their sources (wddmsim._native: os and sys only).
    assert out.strip() == "['wddmsim', 'wddmsim._native', 'wddmsim.publicnames']"


def test_the_api_modules_helpers_are_private():
    public = {n for n, v in vars(api).items() if not n.startswith("_") and getattr(v, "__module__", None) == api.__name__}
    assert public == set(api.__all__) - {"BugCheck", "CrashRecord", "EventRecord", "Scenario", "ScenarioError"}


# ------------------------------------------------------------------------------------ scenarios
def test_load_reads_validates_and_takes_overrides():
    sc = api.load(DEEP)
    assert (sc.name, sc.duration, sc.adapter.hw_queue_depth, sc.adapter.cpu_cost.submit) == \
        ("deep_queue", 1000 * MS, 2, 0)
    changed = api.load(str(DEEP), overrides={"adapter.hw_queue_depth": 1, "adapter.cpu_cost.submit": "10us"})
    assert (changed.adapter.hw_queue_depth, changed.adapter.cpu_cost.submit) == (1, 10_000)


def test_load_names_a_scenario_without_a_name_after_its_file(tmp_path):
    path = tmp_path / "unnamed.toml"
    path.write_text('[[process]]\nname = "a"\n[[process.context]]\nname = "c"\nnode = "3D"\n'
                    'workload = { kind = "frame_loop", fps = 60, work = "1ms" }\n')
    assert api.load(path).name == "unnamed"


def test_load_finds_a_drivers_file_next_to_the_scenario(tmp_path):
    path = tmp_path / "with_driver.toml"
    path.write_text((EXAMPLES / "deep_queue.toml").read_text() + '\n[driver]\nclass = "drivers/mine.py:Mine"\n')
    assert api.load(path).driver.class_ == f"{tmp_path / 'drivers' / 'mine.py'}:Mine"


def test_load_errors_name_the_file_and_the_override(tmp_path):
    with pytest.raises(api.ScenarioError) as e:
        api.load(tmp_path / "missing.toml")
    assert e.value.problems == [f"{tmp_path / 'missing.toml'}: cannot read: no such file"]
    with pytest.raises(api.ScenarioError) as e:
        api.load(DEEP, overrides={"scheduler.quantum": "soon"})
    assert e.value.problems == ["overrides scheduler.quantum=soon: scheduler.quantum: expected a duration such as "
                                "'2ms' or '250us', got 'soon'"]
    with pytest.raises(api.ScenarioError) as e:
        api.load(DEEP, overrides={"adapter.colour": "blue"})
    assert e.value.problems == e.value.unknown_paths == ["overrides adapter.colour=blue: adapter.colour: unknown field"]
    with pytest.raises(api.ScenarioError) as e:
        api.load(DEEP, overrides={"adapter..nodes": 1})
    assert e.value.problems == ["overrides adapter..nodes: the path has an empty part"]
    with pytest.raises(TypeError, match="overrides: expected a dict of path -> value, got list"):
        api.load(DEEP, overrides=["adapter.hw_queue_depth=1"])


def test_parse_takes_toml_text():
    text = (EXAMPLES / "deep_queue.toml").read_text().replace('name = "deep_queue"\n', "")
    assert api.parse(text).name == ""
    assert api.parse(text, source="games/queue.toml").name == "queue"
    assert api.parse(text, overrides={"seed": 9}).seed == 9
    with pytest.raises(api.ScenarioError) as e:
        api.parse("duration = \n", source="broken.toml")
    assert e.value.problems == ["broken.toml: line 1, column 12: invalid value"]
    with pytest.raises(TypeError, match=r"text: expected TOML text \(a str\), got PosixPath"):
        api.parse(DEEP)


def test_validate_takes_a_dict_or_a_scenario_and_gives_a_new_one():
    data = _tiny()
    sc = api.validate(data)
    assert (sc.name, sc.duration, sc.process[0].context[0].workload.work) == ("", 20 * MS, MS)
    assert data["duration"] == "20ms"  # the dict is left as it is
    again = api.validate(sc, overrides={"seed": 4})
    assert again is not sc and (again.seed, sc.seed) == (4, 0)
    assert api.validate(sc) == sc
    with pytest.raises(api.ScenarioError) as e:
        api.validate(_tiny(seed=-1))
    assert e.value.problems == ["<scenario>: seed: must be at least 0, got -1 (range: 0 .. 2**64-1; a seed is a 64-bit unsigned number)"]
    with pytest.raises(api.ScenarioError) as e:
        api.validate(_tiny(name="mine", seed=-1))
    assert e.value.problems == ["mine: seed: must be at least 0, got -1 (range: 0 .. 2**64-1; a seed is a 64-bit unsigned number)"]
    with pytest.raises(TypeError, match="data: expected a dict or a Scenario, got str"):
        api.validate("seed = 1")


def test_a_scenario_validates_each_assignment_and_keeps_the_old_value_when_refused():
    sc = api.load(DEEP)
    sc.duration = "150ms"
    sc.adapter.cpu_cost.submit = "2us"
    sc.process[0].context[0].priority = 3
    assert (sc.duration, sc.adapter.cpu_cost.submit, sc.process[0].context[0].priority) == (150 * MS, 2000, 3)
    refusals = [(sc, "seed", -1, "out_of_range"), (sc, "duration", "soon", "value_error"),
                (sc.adapter, "hw_queue_depth", "2", "int_type"), (sc.adapter, "scheduling", "magic", "literal_error"),
                (sc, "colour", "blue", "no_such_attribute")]
    for model, field, value, kind in refusals:
        before = getattr(model, field, None)
        with pytest.raises(ValidationError) as e:
            setattr(model, field, value)
        assert (e.value.errors()[0]["loc"], e.value.errors()[0]["type"]) == ((field,), kind)
        assert getattr(model, field, None) == before


def test_an_assignment_runs_the_checks_of_the_table_it_is_in():
    sc = api.load(DEEP)
    with pytest.raises(ValidationError, match="duplicate node name"):
        sc.adapter.nodes = [*sc.adapter.nodes, sc.adapter.nodes[0]]
    assert len(sc.adapter.nodes) == 1
    with pytest.raises(ValidationError, match="no node named 'Video'"):
        sc.process = [sc.process[0].model_copy(update={"context": [
            sc.process[0].context[0].model_copy(update={"node": "Video"})]})]
    assert sc.process[0].context[0].node == "3D"


# ------------------------------------------------------------------------------------- running
def test_run_gives_the_summary_wddmsim_run_prints():
    result = api.run(DEEP)
    expected = System(load_scenario(DEEP)).run().summary
    assert result.summary.as_dict() == expected
    assert (result.scenario, result.seed, result.end, result.crash, result.events) == \
        ("deep_queue", 0, 1000 * MS, None, None)
    assert result.wall_s > 0
    assert repr(result) == "<Result 'deep_queue' seed 0: ran to the end at 1000000000 ns>"


def test_run_takes_a_scenario_a_dict_or_a_path():
    by_path = api.run(str(DEEP)).summary
    assert api.run(api.load(DEEP)).summary == by_path
    assert api.run(api.load(DEEP).model_dump(by_alias=True)).summary == by_path
    with pytest.raises(TypeError, match="scenario: expected a Scenario, a dict or a file path, got int"):
        api.run(3)


def test_run_checks_the_whole_scenario_again():
    sc = api.load(DEEP)
    sc.process[0].context[0].node = "Video"  # the context alone cannot tell: it knows no nodes
    with pytest.raises(api.ScenarioError) as e:
        api.run(sc)
    assert e.value.problems == ["deep_queue: process[0].context[0].node: no node named 'Video'; "
                                "the adapter's nodes are '3D'"]


def test_run_seed_and_until():
    r = api.run(EXAMPLES / "tdr.toml", seed=7, until="100ms")
    assert (r.seed, r.summary.seed, r.end, r.summary.virtual_time_ns) == (7, 7, 100 * MS, 100 * MS)
    assert api.run(DEEP, until=30 * MS).summary.packets_completed == 30
    for seed, message in ((-1, "seed: must be a whole number, 0 or more, got -1"),
                          (True, "seed: must be a whole number, 0 or more, got True"),
                          ("1", "seed: must be a whole number, 0 or more, got '1'")):
        with pytest.raises(ValueError, match=re.escape(message)):
            api.run(DEEP, seed=seed)
    with pytest.raises(ValueError, match="until: expected a duration such as '2ms' or '250us', got 'later'"):
        api.run(DEEP, until="later")


class NotifiesFromDpc(ReferenceDriver):
    """Breaks rule 38: DxgkCbNotifyInterrupt from its DPC, after every interrupt."""

    def DxgkDdiDpcRoutine(self, MiniportDeviceContext):
        self.dxgk.DxgkCbNotifyInterrupt(self.dxgk.DeviceHandle, self.nodes[0].interrupt_data)
        return super().DxgkDdiDpcRoutine(MiniportDeviceContext)


class RefusesContexts(ReferenceDriver):
    """Fails DxgkDdiCreateContext with a status rule 76 does not allow."""

    def DxgkDdiCreateContext(self, hDevice, pCreateContext):
        return NTSTATUS.STATUS_INVALID_PARAMETER


def test_run_verifier_modes():
    with pytest.raises(ValueError, match="verifier: must be one of strict, report, off, got 'loud'"):
        api.run(DEEP, verifier="loud")
    strict = api.run(DEEP, driver=NotifiesFromDpc)
    assert (strict.end, strict.crash.bugcheck.code, strict.crash.bugcheck.p1, strict.crash.rule) == (MS, 0xC4, 38, 38)
    report = api.run(DEEP, driver=NotifiesFromDpc, verifier="report", until="3ms")
    assert (report.crash, report.end, report.summary.packets_completed) == (None, 3 * MS, 3)
    assert report.summary.violations == tuple(
        api.Violation(t=k * MS, rule=38, name="NotifyInterruptAtDirql",
                      message="DxgkCbNotifyInterrupt was called outside the ISR and DxgkCbSynchronizeExecution")
        for k in (1, 2, 3))
    assert api.run(DEEP, driver=NotifiesFromDpc, verifier="off", until="3ms").crash is None


def test_run_driver_by_class_or_name_and_its_settings():
    by_name = api.run(DEEP, driver=f"{EXAMPLES / 'drivers' / 'minimal.py'}:MinimalDriver")
    assert (by_name.summary.packets_completed, by_name.summary.makespan_ns) == (100, 100 * MS)

    class Counting(ReferenceDriver):
        submits = 0

        def DxgkDdiSubmitCommand(self, hAdapter, pSubmitCommand):
            Counting.submits += 1
            return super().DxgkDdiSubmitCommand(hAdapter, pSubmitCommand)

    api.run(DEEP, driver=Counting)
    assert Counting.submits == 100
    tdr = EXAMPLES / "tdr.toml"
    engine, adapter = api.run(tdr).summary.tdr, api.run(tdr, settings={"per_engine_reset": False}).summary.tdr
    assert (engine.engine_resets, engine.adapter_resets, [d.code for d in engine.live_dumps]) == (1, 0, [0x141])
    assert (adapter.engine_resets, adapter.adapter_resets, [d.code for d in adapter.live_dumps]) == (0, 1, [0x117])


def test_a_run_that_cannot_be_built_is_a_scenario_error_with_the_lines_the_cli_prints():
    with pytest.raises(api.ScenarioError) as e:
        api.run(EXAMPLES / "tdr.toml", settings={"per_engine_reset": "maybe"})
    assert e.value.problems == ["tdr: driver.per_engine_reset: Input should be a valid boolean, unable to "
                                "interpret input"]
    with pytest.raises(api.ScenarioError) as e:
        api.run(DEEP, driver="no_such_module:Driver")
    assert e.value.problems == ["deep_queue: driver.class: driver 'no_such_module:Driver': no module named "
                                "'no_such_module' (is it installed, or on PYTHONPATH?)"]
    with pytest.raises(api.ScenarioError) as e:  # the call fails instead of stopping the machine
        api.run(DEEP, driver=RefusesContexts, verifier="report")
    assert e.value.problems == ["deep_queue: the scenario cannot start: STATUS_INVALID_PARAMETER: "
                                "DxgkDdiCreateContext failed"]
    with pytest.raises(api.ScenarioError) as e:
        api.run(_tiny(adapter={"scheduling": "hardware"}))
    assert e.value.problems == ['<scenario>: the adapter does not start: the OS was asked for hardware scheduling '
                                '(adapter.scheduling = "hardware"), but the driver is wddm2_0; hardware scheduling '
                                'needs wddm2_5 or later']


# -------------------------------------------------------------------------------------- events
def test_events_in_memory_in_a_file_or_in_a_sink_are_the_same(tmp_path):
    memory = api.run(TDR_FAILURE, events=True)
    path = tmp_path / "log.jsonl"
    filed = api.run(TDR_FAILURE, events=path)
    assert filed.events == memory.events
    assert [e.event for e in memory.events[:2]] == ["LogStart", "AdapterStart"]
    assert [(e.t, e.event) for e in memory.events[-2:]] == [(1033341334, "BugCheck"), (1033341334, "LogEnd")]
    assert memory.events[-1].reason == "bugcheck"
    assert api.read_events(path) == memory.events
    assert [json.loads(line)["event"] for line in path.read_text().splitlines()][-1] == "LogEnd"

    class Tally:
        def __init__(self):
            self.counts = Counter()

        def emit(self, t, event, fields):
            self.counts[event] += 1

    tally = Tally()
    mine = api.run(TDR_FAILURE, events=tally)
    assert mine.events is None
    assert tally.counts == Counter(e.event for e in memory.events)
    with pytest.raises(TypeError, match="events: expected None, True, a file path or a sink with emit"):
        api.run(DEEP, events=3)


def test_a_typed_event_has_its_fields_as_attributes():
    r = api.run(TDR_FAILURE, events=True)
    stop = next(e for e in r.events if e.event == "BugCheck")
    assert (stop.t, stop.code, stop.name, stop.p3, stop.rule) == (1033341334, 0x116, "VIDEO_TDR_FAILURE", 0xC0000001, 108)
    assert stop.as_dict() == {"t": 1033341334, "event": "BugCheck", "code": 0x116, "name": "VIDEO_TDR_FAILURE",
                              "p1": 0, "p2": 0, "p3": 0xC0000001, "p4": 0, "rule": 108,
                              "message": r.crash.message}
    with pytest.raises(AttributeError, match="BugCheck has no field 'fence'"):
        stop.fence  # noqa: B018


def test_a_log_file_is_read_back_when_first_asked_for(tmp_path):
    path = tmp_path / "log.jsonl"
    r = api.run(DEEP, events=path)
    path.write_text(path.read_text().splitlines()[0] + "\n")  # only LogStart left
    assert [e.event for e in r.events] == ["LogStart"]


# -------------------------------------------------------------------------------------- results
def test_the_crash_record_of_a_bug_check(tmp_path):
    r = api.run(TDR_FAILURE)
    c = r.crash
    assert (c.time, c.rule, c.rule_name, c.ddi, r.end) == (1033341334, 108, "ResetFromTimeoutSucceeds",
                                                            "DxgkDdiResetFromTimeout", 1033341334)
    assert (c.bugcheck.code, c.bugcheck.name, c.bugcheck.p1, c.bugcheck.p2, c.bugcheck.p3, c.bugcheck.p4) == \
        (0x116, "VIDEO_TDR_FAILURE", 0, 0, 0xC0000001, 0)
    assert isinstance(c, api.CrashRecord) and isinstance(c.bugcheck, api.BugCheck)
    assert c.message == ("DxgkDdiResetFromTimeout returned STATUS_UNSUCCESSFUL; it must return STATUS_SUCCESS "
                         "(rule 108)")
    c.write(tmp_path / "crash.json")
    assert json.loads((tmp_path / "crash.json").read_text())["bugcheck"]["code"] == 0x116
    assert repr(r) == ("<Result 'tdr_failure' seed 1: stopped by BugCheck 0x116 (VIDEO_TDR_FAILURE) "
                       "{0x0, 0x0, 0xC0000001, 0x0} at 1033341334 ns>")


def test_the_summary_is_typed_entry_by_entry():
    s = api.run(DEEP).summary
    assert s.nodes == (api.NodeSummary(
        node=0, name="3D_0", engine="3d", packets=100, busy_pct=10.0, gpu_busy_pct=10.0, hw_queue_depth=2,
        max_queued=2, last_fence=100, preemption="dma_buffer", preemptions=0, preempt_latency_p50_ns=None,
        preempt_latency_max_ns=None, handoffs=0, handoff_min_ns=None, handoff_mean_ns=None, handoff_max_ns=None,
        idle_while_waiting_ns=0),)
    assert s.contexts == (api.ContextSummary(
        context="bench.exe/queue", node="3D_0", submitted=100, completed=100, null_rendering=0, preempted=0,
        aborted=0, cancelled=0, device_error=False, api_error="", destroyed=False, latency_min_ns=MS,
        latency_mean_ns=50_500_000, latency_p50_ns=50 * MS, latency_p99_ns=99 * MS, latency_max_ns=100 * MS,
        gpu_ns=100 * MS, worst_wait_ns=0, weight=1.0, share=1.0, share_target=None, share_error=None,
        deadline_misses=None, jobs=None, tardiness_p50_ns=None, tardiness_p99_ns=None, tardiness_max_ns=None,
        preemptions=0, preemption_cost_ns=0),)
    assert (s.scenario, s.seed, s.virtual_time_ns, s.events, s.packets_submitted, s.packets_completed) == \
        ("deep_queue", 0, 1000 * MS, 400, 100, 100)
    assert (s.makespan_ns, s.interrupts, s.gpu_faults, s.scheduling, s.policy, s.gpu_va, s.wddm2) == \
        (100 * MS, 100, 0, "software", "priority_quantum", False, None)
    assert s.tdr == api.TdrSummary(engine_resets=0, adapter_resets=0, live_dumps=())
    assert s.cpu == api.CpuSummary(total_ns=0, submissions=100, per_submission_ns=0.0)
    assert s.memory.segments[0] == api.SegmentSummary(id=1, kind="memory", size=256 << 20, used=0)
    assert s.processes[0].process == "bench.exe" and s.processes[0].gpu_busy_ns == 100 * MS
    assert (s.displays[0].presents, s.fairness, s.violations) == (0, (), ())


def test_displays_and_lookups():
    s = api.run(EXAMPLES / "flips.toml", until="500ms").summary
    assert s.display(0) == api.DisplaySummary(
        source=0, refresh_hz=60.0, presents=25, displayed=24, dropped=0, frame_time_p50_ns=16_666_667,
        frame_time_p99_ns=33_330_000, latency_p50_ns=13_320_000, latency_p99_ns=19_990_000,
        latency_max_ns=19_990_008)
    # (88, 34, 51 before issue 27: the game's flips on source 0 are MMIO flips now, which no longer stall
    # the shared 3D engine until their vsync, so the video player's composed frames run sooner.)
    assert (s.display(1).presents, s.display(1).displayed, s.display(1).dropped) == (100, 57, 43)
    assert s.context("player.exe/video").node == s.node("3D_0").name
    with pytest.raises(KeyError, match=r"no display 2; there are: 0, 1"):
        s.display(2)
    with pytest.raises(KeyError, match=r"no context 'game.exe'; there are: 'game.exe/render', 'player.exe/video'"):
        s.context("game.exe")
    with pytest.raises(KeyError, match=r"no node '3D'; there are: '3D_0'"):
        s.node("3D")


@pytest.mark.parametrize("example", ["game_and_compute", "hardware_scheduling", "paging", "priorities", "tdr"])
def test_the_typed_summary_holds_every_figure_of_the_dict(example):
    """Every key of the summary dict is an attribute, at every level the types cover, and the
    values are the dict's (the hardware-scheduling example gives the wddm2 dict)."""
    system = System(load_scenario(EXAMPLES / f"{example}.toml"))
    raw = system.run(until=200 * MS).summary
    typed = api.Summary.from_dict(raw)

    def same(obj, data, where):
        names = [f.name for f in dataclasses.fields(obj)]
        assert sorted(names) == sorted(data), f"{where}: {sorted(set(names) ^ set(data))}"
        for name in names:
            value, expected = getattr(obj, name), data[name]
            if dataclasses.is_dataclass(value):
                same(value, expected, f"{where}.{name}")
            elif isinstance(value, tuple) and value and dataclasses.is_dataclass(value[0]):
                assert len(value) == len(expected)
                for i, (v, e) in enumerate(zip(value, expected)):
                    same(v, e, f"{where}.{name}[{i}]")
            else:
                assert (list(value) if isinstance(value, tuple) else value) == expected, f"{where}.{name}"

    same(typed, raw, example)
    assert typed.as_dict() == raw
    assert (typed.wddm2 is not None) == (example == "hardware_scheduling")


# -------------------------------------------------------------------------------------- stepping
def test_a_run_in_steps_is_the_run_at_once(tmp_path):
    at_once = api.run(TDR_FAILURE, events=tmp_path / "once.jsonl")
    with api.Simulation(TDR_FAILURE, events=tmp_path / "steps.jsonl") as sim:
        steps = 0
        while sim.step(by="100ms"):
            steps += 1
        stepped = sim.close()
    assert steps == 10  # the eleventh step reaches the bug check at 1033.3 ms
    assert stepped.summary == at_once.summary and stepped.crash == at_once.crash
    assert (tmp_path / "steps.jsonl").read_bytes() == (tmp_path / "once.jsonl").read_bytes()


def test_stepping_to_a_time_by_a_span_and_to_the_next_instant():
    sim = api.Simulation(DEEP, events=True)
    assert (sim.now, sim.end, sim.next_time, sim.done, sim.crash) == (0, 1000 * MS, 0, False, None)
    assert repr(sim) == "<Simulation 'deep_queue' at 0 ns of 1000000000>"
    # Building it started the adapter and made the process and its context; nothing ran yet.
    assert [e.event for e in sim.events] == ["LogStart", "AdapterStart", "ProcessCreate", "DdiCall", "DdiCall",
                                             "ContextCreate"]
    assert sim.step() is True  # everything due at time 0: the first two buffers go to the hardware queue
    assert (sim.now, len(sim.events), sim.summary.packets_submitted, sim.summary.packets_completed) == (0, 213, 2, 0)
    assert sim.step(until="10ms") and (sim.now, sim.summary.packets_completed) == (10 * MS, 10)
    assert sim.step(by=5 * MS) and (sim.now, sim.summary.packets_completed) == (15 * MS, 15)
    assert sim.next_time == 16 * MS
    assert sim.step() and (sim.now, sim.summary.packets_completed) == (16 * MS, 16)
    assert sim.summary.context("bench.exe/queue").latency_max_ns == 16 * MS
    with pytest.raises(ValueError, match="until: cannot go back to 5000000 ns, the run is at 16000000 ns"):
        sim.step(until="5ms")
    with pytest.raises(TypeError, match="step: give until or by, not both"):
        sim.step(until="20ms", by="1ms")
    assert "LogEnd" not in [e.event for e in sim.events]  # the log ends once, when the run does
    result = sim.run()
    assert sim.done and sim.now == 1000 * MS and sim.step(by="1ms") is False
    assert result.summary == api.run(DEEP).summary
    assert [e.event for e in result.events].count("LogEnd") == 1
    assert sim.close() is result and sim.run() is result
    assert repr(sim) == "<Simulation 'deep_queue' closed>"


def test_a_step_never_goes_past_the_end():
    sim = api.Simulation(DEEP, until="20ms")
    assert sim.step(until="1s") is False
    assert (sim.now, sim.done, sim.close().end) == (20 * MS, True, 20 * MS)


def test_close_ends_the_run_where_it_is(tmp_path):
    path = tmp_path / "log.jsonl"
    sim = api.Simulation(DEEP, events=path)
    sim.step(until="30ms")
    result = sim.close()
    assert (result.end, result.summary.packets_completed, sim.done) == (30 * MS, 30, True)
    assert [(e.t, e.event) for e in api.read_events(path)][-1] == (30 * MS, "LogEnd")
    assert sim.step() is False and sim.now == 30 * MS


def test_a_bug_check_while_the_scenario_is_built_stops_the_first_step():
    sim = api.Simulation(DEEP, driver=RefusesContexts, events=True)
    assert sim.crash is None
    assert sim.step(by="10ms") is False
    assert (sim.now, sim.crash.bugcheck.code, sim.crash.rule_name) == (0, 0xC4, "CreateContextStatus")
    assert [e.event for e in sim.close().events][-2:] == ["BugCheck", "LogEnd"]
    closed_at_once = api.Simulation(DEEP, driver=RefusesContexts).close()
    assert (closed_at_once.end, closed_at_once.crash.rule) == (0, 76)


def test_a_with_block_closes_the_log_file_even_when_the_body_raises(tmp_path):
    path = tmp_path / "log.jsonl"
    with pytest.raises(RuntimeError, match="stop here"):
        with api.Simulation(DEEP, events=path) as sim:
            sim.step(until="1ms")
            raise RuntimeError("stop here")
    assert api.read_events(path)[0].event == "LogStart"


def test_a_scenario_that_cannot_be_built_closes_the_log_file_it_opened(tmp_path):
    path = tmp_path / "log.jsonl"
    with pytest.raises(api.ScenarioError):
        api.Simulation(DEEP, driver="no_such_module:Driver", events=path)
    assert [e.event for e in api.read_events(path)] == []
