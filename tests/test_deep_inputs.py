"""Input nested deeper than a parser can follow is one line and exit 2 on every command that reads
it, never a RecursionError traceback: scenario files and ``--set`` values (TOML), event logs and
crash records (JSON), and a log whose lines are JSON but not events."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CAPTURE = Path(__file__).resolve().parent / "data" / "presentmon" / "test_case_0_v1.csv"
DEEP_TOML_VALUE = "[" * 3000 + "]" * 3000
DEEP_JSON = "[" * 100_000 + "]" * 100_000


def invoke(*args: str):
    result = CliRunner().invoke(main, list(args))
    assert "Traceback" not in result.output and "RecursionError" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


@pytest.fixture
def deep_toml(tmp_path):
    path = tmp_path / "deep.toml"
    path.write_text(f"x = {DEEP_TOML_VALUE}\n")
    return path


@pytest.mark.parametrize("command", [
    ["run"], ["compare"], ["sweep", "--json", "--set", "scheduler.quantum=1ms,2ms"],
])
def test_a_scenario_file_nested_thousands_deep_is_refused_in_one_line(deep_toml, command):
    result = invoke(command[0], str(deep_toml), *command[1:])
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1] == (
        f"wddmsim: error: {deep_toml}: a value is nested too deeply to read (arrays or tables inside each other "
        f"some thousand levels down)")


def test_replay_of_a_deep_scenario_is_refused_in_one_line(deep_toml):
    result = invoke("replay", str(CAPTURE), "--scenario", str(deep_toml))
    assert result.exit_code == 2
    assert result.output.strip().endswith("a value is nested too deeply to read (arrays or tables inside each other "
                                          "some thousand levels down)")


@pytest.mark.parametrize("args, said", [
    (["run", str(EXAMPLES / "priorities.toml"), "--until", "1ms", "--set", f"x={DEEP_TOML_VALUE}"], "--set x=..."),
    (["sweep", str(EXAMPLES / "priorities.toml"), "--json", "--set", f"x={DEEP_TOML_VALUE}"], "--set x=..."),
    (["sweep", str(EXAMPLES / "priorities.toml"), "--json", "--set", f"scheduler.quantum={DEEP_TOML_VALUE},1ms"],
     "--set scheduler.quantum=..."),
    (["verify", "wddmsim.kmd:ReferenceDriver", "--set", f"x={DEEP_TOML_VALUE}"], "--set x=..."),
])
def test_a_set_value_nested_thousands_deep_is_refused_naming_the_option_and_key(args, said):
    result = invoke(*args)
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1] == f"wddmsim: error: {said}: the value is nested too deeply to read"


@pytest.mark.parametrize("command", [["check"], ["trace", "-o", "OUT"]])
def test_an_event_log_nested_a_hundred_thousand_deep_is_not_a_log(tmp_path, command):
    log = tmp_path / "deep.jsonl"
    log.write_text(DEEP_JSON + "\n")
    args = [a.replace("OUT", str(tmp_path / "out.json")) for a in command[1:]]
    result = invoke(command[0], str(log), *args)
    assert result.exit_code == 2
    assert result.output.strip() == f"wddmsim: error: {log}: not a wddmsim event log: line 1: nested too deeply to read"


def test_a_log_whose_first_line_is_a_json_array_is_not_a_log(tmp_path):
    log = tmp_path / "array.jsonl"
    log.write_text("[1, 2]\n")
    result = invoke("check", str(log))
    assert result.exit_code == 2
    assert result.output.strip() == (f"wddmsim: error: {log}: not a wddmsim event log: line 1: a JSON list, not an "
                                     f"event (a JSON object)")


def test_a_log_with_a_json_number_among_its_events_names_the_line(tmp_path):
    good = tmp_path / "good.jsonl"
    assert invoke("run", str(EXAMPLES / "priorities.toml"), "--until", "1ms", "--events", str(good)).exit_code == 0
    lines = good.read_text().splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0], "7", *lines[1:]]) + "\n")
    result = invoke("check", str(bad))
    assert result.exit_code == 2
    assert result.output.strip() == (f"wddmsim: error: {bad}: not a wddmsim event log: line 2: a JSON int, not an "
                                     f"event (a JSON object)")


def test_a_crash_record_nested_a_hundred_thousand_deep_is_refused(tmp_path):
    record = tmp_path / "deep.json"
    record.write_text('{"a": ' + DEEP_JSON + "}")
    result = invoke("decode", f"@{record}")
    assert result.exit_code == 2
    assert result.output.strip() == (f"wddmsim: error: {record}: not a crash record (nested too deeply to read); "
                                     f"give STRUCT and DATA to decode raw bytes")
