"""``--set PATH=VALUE``: a scenario's values changed from the command line with the file's own
paths, checked by the same schema, a problem named by the assignment it comes from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.scenario import (OverrideError, ScenarioError, load_scenario, parse_override, read_scenario_data,
                              scenario_from_dict)
from wddmsim.scenario.overrides import apply_overrides, parse_path, parse_value, split_values
from wddmsim.util.units import BareNumber

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
DEEP = str(EXAMPLES / "deep_queue.toml")
GAME = str(EXAMPLES / "game_and_compute.toml")


def _sets(*texts):
    return [parse_override(t) for t in texts]


@pytest.mark.parametrize(("text", "value"), [
    ("5", BareNumber(5)), ("-3", BareNumber(-3)), ("2.5", 2.5), ("true", True), ("false", False), ('"a, b"', "a, b"), ("'lit'", "lit"),
    ("[60, 144]", [60, 144]), ('{ kind = "bursty" }', {"kind": "bursty"}),
    ("2ms", "2ms"), ("dma_buffer", "dma_buffer"), ("64KiB", "64KiB"), ("", ""), ("1e3", 1000.0),
])
def test_values_are_toml_when_they_parse_else_strings(text, value):
    assert parse_value(text) == value and type(parse_value(text)) is type(value)


def test_paths_take_dots_or_the_messages_brackets():
    assert parse_path("adapter.nodes.0.preemption") == ("adapter", "nodes", 0, "preemption")
    assert parse_path("adapter.nodes[0].preemption") == ("adapter", "nodes", 0, "preemption")
    assert parse_path("process[1].context[2].workload.fps") == ("process", 1, "context", 2, "workload", "fps")
    for bad, reason in [("a..b", "empty part"), ("a.b c", "not a key"), ("", "empty")]:
        with pytest.raises(OverrideError, match=reason):
            parse_path(bad)


def test_an_assignment_needs_an_equals_sign():
    with pytest.raises(OverrideError, match=r"--set 'quantum': expected PATH=VALUE"):
        parse_override("quantum")
    ov = parse_override(" scheduler.quantum = 1ms ")
    assert (ov.path, ov.value, ov.label) == (("scheduler", "quantum"), "1ms", "--set scheduler.quantum=1ms")


def test_values_split_at_commas_outside_brackets_and_quotes():
    assert split_values("1ms, 2ms,4ms") == ["1ms", "2ms", "4ms"]
    assert split_values('[60,144],[60],"a,b",\'c,d\'') == ["[60,144]", "[60]", '"a,b"', "'c,d'"]
    assert split_values("{ a = 1, b = 2 },x") == ["{ a = 1, b = 2 }", "x"]
    assert split_values("x,,y") == ["x", "", "y"]


def test_the_file_data_is_not_changed_and_missing_tables_come_from_the_defaults():
    data = read_scenario_data(GAME)
    before = json.dumps(data, sort_keys=True)
    sc = scenario_from_dict(data, GAME, _sets("adapter.nodes.1.preemption=primitive", "scheduler.quantum=1ms"))
    assert json.dumps(data, sort_keys=True) == before
    base = scenario_from_dict(data, GAME)
    # game_and_compute.toml has no nodes: the three default nodes are there, the second one changed
    assert [n.name for n in sc.adapter.nodes] == ["3D", "Compute", "Copy"]
    assert [n.preemption for n in sc.adapter.nodes] == ["dma_buffer", "primitive", "dma_buffer"]
    assert sc.scheduler.quantum == 1_000_000 and base.scheduler.quantum == 2_000_000
    assert sc.adapter.bands == base.adapter.bands  # a table made from the defaults keeps their values
    sc.adapter.nodes[1].preemption = "dma_buffer"
    sc.scheduler.quantum = base.scheduler.quantum
    assert sc == base


def test_the_last_assignment_of_a_path_holds_and_driver_short_form_becomes_a_table():
    sc = scenario_from_dict({"driver": "wddmsim.kmd.reference:ReferenceDriver", "process": [
        {"name": "p", "context": [{"name": "c", "node": "3D", "workload": {"kind": "bursty", "work": "1ms",
                                                                            "mean_gap": "1ms"}}]}]},
        "<t>", _sets("duration=5ms", "duration=7ms", "driver.ring_size=8192"))
    assert sc.duration == 7_000_000
    assert sc.driver.class_ == "wddmsim.kmd.reference:ReferenceDriver" and sc.driver.settings == {"ring_size": 8192}


def test_a_run_with_set_changes_exactly_what_it_names():
    r = CliRunner().invoke(main, ["run", DEEP, "--json", "--set", "process.0.context.0.workload.packets.0.repeat=10",
                                  "--set", "process[0].context[0].workload.packets[0].work=2ms"])
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["packets_completed"] == 10 and s["makespan_ns"] == 20_000_000
    assert s["contexts"][0]["latency_max_ns"] == 20_000_000


def test_a_preemption_mode_set_on_a_node_changes_the_run():
    r = CliRunner().invoke(main, ["run", str(EXAMPLES / "preemption.toml"), "--json",
                                  "--set", "adapter.nodes.0.preemption=dma_buffer"])
    s = json.loads(r.stdout)
    assert (s["nodes"][0]["preemption"], s["resubmissions"], s["contexts"][0]["latency_max_ns"]) == (
        "dma_buffer", 3, 22_005_900)


@pytest.mark.parametrize(("setting", "message"), [
    ("adapter.nodes.0.preemption=bogus", "--set adapter.nodes.0.preemption=bogus: adapter.nodes[0].preemption: must be "
                                         "one of 'none', 'dma_buffer', 'primitive', 'interval' or 'instruction', got 'bogus'"),
    ("adapter.nodez=1", "--set adapter.nodez=1: adapter.nodez: unknown field; did you mean 'nodes'?"),
    ("adapter.nodes.7.name=x", "--set adapter.nodes.7.name=x: adapter.nodes has 1 entry; there is no entry 7"),
    ("adapter.nodes.name=x", "--set adapter.nodes.name=x: adapter.nodes is an array of tables: give an entry number, "
                             "e.g. adapter.nodes[0]"),
    ("duration.x=1", "--set duration.x=1: duration is a value, not a table"),
    ("fence.0.name=f", "--set fence.0.name=f: fence has no entries; there is no entry 0"),
    ("duration=0ms", "--set duration=0ms: duration: must be greater than 0, got 0 (range: above 0 .. 3600s; an event log of a busy run grows about 3 MB per virtual second, so an hour is already gigabytes of log)"),
    ("process.0.context.0.workload.packets.0.repeat=true",
     "--set process.0.context.0.workload.packets.0.repeat=true: process[0].context[0].workload.packets[0].repeat: "
     "expected an integer, got true"),
    ("scheduler.quantum=soon", "--set scheduler.quantum=soon: scheduler.quantum: "),
    ("adapter.nodes.0.name=Gfx", f"{DEEP} with --set adapter.nodes.0.name=Gfx: process[0].context[0].node: "),
    ("quantum", "--set 'quantum': expected PATH=VALUE"),
])
def test_a_bad_setting_names_the_option_path_and_reason_with_exit_2(setting, message):
    r = CliRunner().invoke(main, ["run", DEEP, "--set", setting])
    assert r.exit_code == 2
    assert f"wddmsim: error: {message}" in r.output and "Traceback" not in r.output


def test_a_files_own_problem_is_the_files_even_with_a_set(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('duration = "fast"\n[[process]]\nname = "a"\n[[process.context]]\nname = "c"\nnode = "3D"\n'
                   'workload = { kind = "frame_loop", fps = 60, work = "1ms" }\n')
    with pytest.raises(ScenarioError) as e:
        load_scenario(bad, _sets("process.0.context.0.workload.fps=0"))
    assert e.value.problems == [
        f"{bad}: duration: expected a duration such as '2ms' or '250us', got 'fast'",
        "--set process.0.context.0.workload.fps=0: process[0].context[0].workload.fps: must be greater than 0, got 0 (range: above 0 .. 1000; frames per second; no display and no frame limiter goes past 1000)",
    ]
    # a --set may mend what the file lacks
    assert load_scenario(bad, _sets("duration=5ms")).duration == 5_000_000


def test_unknown_fields_named_by_a_set_are_told_apart_from_bad_values():
    with pytest.raises(ScenarioError) as e:
        load_scenario(DEEP, _sets("scheduler.quantun=1ms", "duration=0ms"))
    assert e.value.unknown_paths == ["--set scheduler.quantun=1ms: scheduler.quantun: unknown field; did you mean 'quantum'?"]
    assert len(e.value.problems) == 2


def test_overrides_apply_in_order_on_a_copy():
    data = {"a": {"b": [{"c": 1}]}}
    out = apply_overrides(data, _sets("a.b.0.c=2", "a.b.0.d=x", "a.e.f=3"))
    assert out == {"a": {"b": [{"c": 2, "d": "x"}], "e": {"f": 3}}} and data == {"a": {"b": [{"c": 1}]}}


def test_the_documented_commands_and_messages_are_what_wddmsim_does(monkeypatch):
    import re
    import shlex

    root = EXAMPLES.parent
    doc = (root / "docs" / "scenarios.md").read_text()
    section = doc.split("## Changing a scenario from the command line (`--set`)", 1)[1].split("\n## ", 1)[0]
    monkeypatch.chdir(root)
    commands = re.findall(r"^uv run wddmsim (run .+)$", section, re.M)
    assert len(commands) == 4
    for line in commands:
        r = CliRunner().invoke(main, shlex.split(line) + ["--json"])
        assert r.exit_code == 0, (line, r.output)
    (block,) = re.findall(r"```console\n(.*?)```", section, re.S)
    for expected in block.splitlines():
        setting = re.match(r"wddmsim: error: (?:examples/game_and_compute.toml with )?--set (\S+?):", expected)[1]
        r = CliRunner().invoke(main, ["run", "examples/game_and_compute.toml", "--set", setting])
        assert (r.exit_code, r.output) == (2, expected + "\n")
